/**
 * What the rooms core puts on the RoomBus: a one-line JSON header naming the sending node and how
 * to deliver, then the already-serialised frame. Receivers read the header and pass the frame on
 * untouched, so a frame is serialised once on its first node and never again.
 */
import type { AnswerTag } from './types.js';

/** How a receiving node delivers the frame. */
export type Delivery =
  /** to every member */
  | 'all'
  /** to every member, and the frame's message joins the room's history */
  | 'history'
  /** to every member but `except`'s connections, skipped for slow consumers */
  | 'typing'
  /** only to `user`'s connections */
  | 'user'
  /**
   * nothing to deliver: the room's presence changed on the sender; the frame is a PresenceDelta,
   * or empty (an older node, or a change the sender cannot describe): read the presence again
   */
  | 'presence'
  /** the sender is back after being cut off: read presence again, and messages after `{from}` from the store */
  | 'sync'
  /** nothing to deliver: a thread merged, split or deleted; the frame is a ThreadMove for the room's cached history */
  | 'threads';

export interface Envelope {
  node: string;
  delivery: Delivery;
  /** The user a `typing` frame is not echoed to, or the recipient of a `user` frame. */
  user?: string;
  /** The answer an `all` frame of the assistant is part of, and its question's seq (header `a`, `q`). */
  answer?: AnswerTag;
  frame: string;
}

/** Serialises an envelope for RoomBus.publish, with the time it was sent (`t`, epoch ms: the bus-lag metric reads it). */
export function encodeEnvelope(e: Envelope): string {
  const t = Date.now();
  // Chat messages (no answer, no user) take the first branch: one small literal per publish.
  const header = e.answer
    ? JSON.stringify({ n: e.node, d: e.delivery, ...(e.user ? { u: e.user } : {}), a: e.answer.answer, q: e.answer.questionSeq, t })
    : JSON.stringify(e.user ? { n: e.node, d: e.delivery, u: e.user, t } : { n: e.node, d: e.delivery, t });
  return `${header}\n${e.frame}`;
}

/** When an envelope was sent (epoch ms, by the sender's clock), read from its header alone; undefined when it does not say. */
export function sentAtOf(payload: string): number | undefined {
  const nl = payload.indexOf('\n');
  const m = nl > 0 ? /"t":(\d+)/.exec(payload.slice(0, nl)) : null;
  return m ? Number(m[1]) : undefined;
}

const DELIVERIES = new Set<string>(['all', 'history', 'typing', 'user', 'presence', 'sync', 'threads']);

/** What a `threads` envelope carries: the moves of a split, the thread a merge absorbed, or a deleted thread. */
export type ThreadMove = { moves: { ids: string[]; threadId: string }[] } | { merged: { absorbedId: string; survivorId: string } } | { deleted: string };

/** A `threads` frame read back; null when it is not one. */
export function parseThreadMove(frame: string): ThreadMove | null {
  let v: { moves?: unknown; merged?: unknown; deleted?: unknown } | null;
  try {
    v = JSON.parse(frame);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  if (Array.isArray(v.moves)) {
    const moves = v.moves.filter(
      (m): m is { ids: string[]; threadId: string } =>
        typeof m?.threadId === 'string' && Array.isArray(m.ids) && m.ids.every((id: unknown) => typeof id === 'string'),
    );
    return moves.length === v.moves.length ? { moves } : null;
  }
  if (typeof v.deleted === 'string') return { deleted: v.deleted };
  const m = v.merged as { absorbedId?: unknown; survivorId?: unknown } | undefined;
  return typeof m?.absorbedId === 'string' && typeof m.survivorId === 'string' ? { merged: { absorbedId: m.absorbedId, survivorId: m.survivorId } } : null;
}

/**
 * What a `presence` frame carries: the sender's members who joined the room or took another name,
 * and those whose last connection there left it. Every entry names the sender (`node`).
 */
export interface PresenceDelta {
  joined: { id: string; name: string; since: number; node: string }[];
  left: { id: string; node: string }[];
}

/** A `presence` frame read back; null when it is not one (empty, or another shape): read the presence instead. */
export function parsePresenceDelta(frame: string, node: string): PresenceDelta | null {
  if (!frame) return null;
  let v: { joined?: unknown; left?: unknown } | null;
  try {
    v = JSON.parse(frame);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null || !Array.isArray(v.joined) || !Array.isArray(v.left)) return null;
  const joinedOk = v.joined.every(
    (j: { id?: unknown; name?: unknown; since?: unknown; node?: unknown } | null) =>
      isName(j?.id) && isName(j.name) && Number.isFinite(j.since) && j.node === node,
  );
  const leftOk = v.left.every((l: { id?: unknown; node?: unknown } | null) => isName(l?.id) && l.node === node);
  if (!joinedOk || !leftOk) return null;
  return {
    joined: (v.joined as PresenceDelta['joined']).map(({ id, name, since }) => ({ id, name, since, node })),
    left: (v.left as PresenceDelta['left']).map(({ id }) => ({ id, node })),
  };
}

/** Longest node or user id an envelope's header may carry. */
export const MAX_ENVELOPE_NAME_CHARS = 256;

const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_ENVELOPE_NAME_CHARS;

/**
 * Parses a bus payload; null when it is not an envelope (a `user` one names its recipient). An
 * envelope from a node that tags no answer (`a`) has none: its frames wait during a catch-up as before.
 */
export function decodeEnvelope(payload: string): Envelope | null {
  const nl = payload.indexOf('\n');
  if (nl < 0) return null;
  let h: { n?: unknown; d?: unknown; u?: unknown; a?: unknown; q?: unknown };
  try {
    h = JSON.parse(payload.slice(0, nl));
  } catch {
    return null;
  }
  if (!isName(h.n) || typeof h.d !== 'string' || !DELIVERIES.has(h.d)) return null;
  if (h.u !== undefined && !isName(h.u)) return null;
  if (h.d === 'user' && h.u === undefined) return null;
  if (h.a !== undefined && !isName(h.a)) return null;
  if (h.q !== undefined && !(Number.isSafeInteger(h.q) && (h.q as number) > 0)) return null;
  return {
    node: h.n,
    delivery: h.d as Delivery,
    ...(typeof h.u === 'string' ? { user: h.u } : {}),
    ...(typeof h.a === 'string' ? { answer: { answer: h.a, ...(typeof h.q === 'number' ? { questionSeq: h.q } : {}) } } : {}),
    frame: payload.slice(nl + 1),
  };
}
