/**
 * Threads over the HTTP API (docs/api.md; the shapes are src/protocol/threads.ts, shared with the
 * server) and the slash commands the browser sends to change them (docs/protocol.md §3.1).
 */
import type { Message } from '../../../src/protocol/messages.js';
import { getJson } from './api.js';

export { SPLIT_LOCKS, SPLIT_MAX_PARTS, TITLE_MAX_CHARS, type MergeSuggestion, type SplitLock, type ThreadView } from '../../../src/protocol/threads.js';
import { SPLIT_MAX_PARTS, TITLE_MAX_CHARS, type MergeSuggestion, type SplitLock, type ThreadView } from '../../../src/protocol/threads.js';

/** The part of `GET /api/v1/threads/:id` the browser shows. */
export interface ThreadDetail {
  thread: ThreadView;
  messages: number;
  /** The room's newest seq when `messages` was counted: a message of the thread at or below it is counted. */
  seq?: number;
  /** Seq ranges an import had not made readable when `messages` was counted: the thread's messages in them are not in it. */
  unsettledImports?: { fromSeq: number; toSeq: number }[];
  suggestions: MergeSuggestion[];
}

export interface ThreadPage {
  messages: Message[];
  hasMore: boolean;
}

/** Longest text the room accepts in one frame (the command included). */
const COMMAND_MAX_CHARS = 4_000;
/** Message id prefix used when full ids make the command too long (the server takes ≥ 8). */
const SHORT_ID_CHARS = 12;

const enc = encodeURIComponent;

/** A room's list: its active threads and newest archived ones, and how many are archived in all. */
export interface ThreadList {
  threads: ThreadView[];
  archivedTotal: number;
}

export async function listThreads(roomId: string, signal?: AbortSignal): Promise<ThreadList> {
  const { threads, archivedTotal } = await getJson<ThreadList>(`/api/v1/rooms/${enc(roomId)}/threads`, signal);
  return { threads, archivedTotal: archivedTotal ?? threads.filter((t) => t.status !== 'active').length };
}

export function threadDetail(threadId: string, signal?: AbortSignal): Promise<ThreadDetail> {
  return getJson<ThreadDetail>(`/api/v1/threads/${enc(threadId)}`, signal);
}

/** The `limit` messages of a thread before seq `before` (the newest when 0), oldest first. */
export function threadMessages(threadId: string, before: number, limit: number, signal?: AbortSignal): Promise<ThreadPage> {
  const query = new URLSearchParams({ limit: String(limit) });
  if (before > 0) query.set('before', String(before));
  return getJson<ThreadPage>(`/api/v1/threads/${enc(threadId)}/messages?${query}`, signal);
}

/** Why a thread title cannot be used, or null when it can. */
export function titleProblem(title: string, inSplit = false): string | null {
  const t = title.trim();
  if (!t) return 'Give it a title.';
  if (t.length > TITLE_MAX_CHARS) return `A title has at most ${TITLE_MAX_CHARS} characters.`;
  if (inSplit && t.includes(',')) return 'A part’s title cannot contain a comma.';
  if (inSplit && t.includes('_')) return 'A part’s title cannot contain an underscore.';
  return null;
}

export function newThreadCommand(title: string): string {
  return `/thread new ${title.replace(/\s+/g, ' ').trim()}`;
}

export function mergeCommand(survivorId: string, absorbedId: string): string {
  return `/merge ${survivorId} ${absorbedId}`;
}

export interface SplitPart {
  title: string;
  messageIds: string[];
}

/**
 * `/split <id> confirm titles=A,B msgs_0=… msgs_1=… lock=…`. Titles travel with `_` for spaces
 * (the server turns each back); ids are shortened when the full ones would not fit in a message.
 * Throws an Error naming the problem when the parts cannot be sent.
 */
export function splitCommand(threadId: string, parts: readonly SplitPart[], lock: SplitLock): string {
  if (!parts.length || parts.length > SPLIT_MAX_PARTS) throw new Error(`Make between 1 and ${SPLIT_MAX_PARTS} parts.`);
  parts.forEach((p, i) => {
    const problem = titleProblem(p.title, true);
    if (problem) throw new Error(`Part ${i + 1}: ${problem}`);
    if (!p.messageIds.length) throw new Error(`Part ${i + 1} has no messages: pick at least one.`);
  });
  const build = (idChars: number) => {
    const titles = parts.map((p) => p.title.trim().replace(/\s+/g, '_')).join(',');
    const msgs = parts.map((p, i) => `msgs_${i}=${p.messageIds.map((id) => id.slice(0, idChars)).join(',')}`);
    return `/split ${threadId} confirm titles=${titles} ${msgs.join(' ')} lock=${lock}`;
  };
  const full = build(Infinity);
  if (full.length <= COMMAND_MAX_CHARS) return full;
  const short = build(SHORT_ID_CHARS);
  if (short.length <= COMMAND_MAX_CHARS) return short;
  throw new Error('Too many messages for one split: split off fewer at a time.');
}

/** The badges a thread shows: main, fused, memory off, locked (with its mode), split, archived or merged. */
export function threadBadges(t: ThreadView, titleOf: (id: string) => string | undefined): { kind: string; label: string }[] {
  const out: { kind: string; label: string }[] = [];
  if (t.main) out.push({ kind: 'main', label: 'main' });
  if (t.isMerged) out.push({ kind: 'fused', label: 'fused' });
  if (memoryOff(t)) out.push({ kind: 'memory-off', label: 'memory off' });
  if (t.splitLockedUntil) out.push({ kind: 'locked', label: `locked · ${t.splitLockedUntil.replace('_', ' ')}` });
  if (t.mergedInto) out.push({ kind: 'merged', label: `merged into ${titleOf(t.mergedInto) ?? 'another thread'}` });
  else if (t.status === 'archived') out.push({ kind: 'archived', label: 'archived' });
  return out;
}

/** The assistant does not search or cite what the thread discussed before (`/memory off`). */
export function memoryOff(t: ThreadView): boolean {
  return t.config?.enable_chat_history_rag === false;
}
