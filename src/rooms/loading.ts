/** What a joiner gets: the room's state read on first join, `hello {lastSeq}` replays, the welcome. */
import type { Member, Message, RoomInfo, WelcomeFrame } from '../protocol/messages.js';
import type { Store } from '../store/types.js';
import type { LoadState, Room } from './room.js';
import type { PendingAnswer } from './types.js';

/** Loads a resolved room's main thread, recent history and seq into `room`. */
export async function loadRoom(store: Store, info: RoomInfo, room: Room, historySize: number): Promise<LoadState> {
  const [thread, recent, lastSeq] = await Promise.all([store.ensureMainThread(room.id), store.recentMessages(room.id, historySize), store.lastSeq(room.id)]);
  room.init(info, thread.id, recent, lastSeq);
  return 'ok';
}

/**
 * Messages a replay reads from the store in its first page; each further page is twice as long.
 * A welcome keeps at most `maxBytes` (256 KiB) of history, about 20 messages of 4,000 characters:
 * reading all `limit` (500) missed messages first, as a replay used to, read 4-6 MB to keep
 * 256 KiB of it (20-65 ms on the event loop, inside the room's queue, per `hello {lastSeq}`).
 */
const REPLAY_FIRST_PAGE = 32;

/** What `m` adds to a welcome's history: its JSON and the comma after it. */
function historyBytes(m: Message): number {
  return Buffer.byteLength(JSON.stringify(m)) + 1;
}

/** Messages of all the lists once, by seq, oldest first; a later list's copy wins (it is the fresher). */
function mergeBySeq(...lists: readonly (readonly Message[])[]): Message[] {
  const bySeq = new Map<number, Message>();
  for (const list of lists) for (const m of list) bySeq.set(m.seq, m);
  return [...bySeq.values()].sort((x, y) => x.seq - y.seq);
}

/** A joiner's replay under way (readReplay): what was read for it, and what the room delivers meanwhile. */
export interface ReplayRead {
  /**
   * The room's memory when the read began; when that did not reach back to `lastSeq`, the store's
   * messages after it; and the store's messages of the room's late runs at or below `lastSeq`
   * (Room.lateUpTo), as many as the replay has room for.
   */
  readonly read: readonly Message[];
  /** Whether some late seqs at or below `lastSeq` were left unread: the replay is truncated. */
  readonly lateCut: boolean;
  /** Every message the room remembered since the read began. */
  readonly arrived: readonly Message[];
  /** Stops catching arrivals: once joined, or when the join is given up. */
  stop(): void;
}

/**
 * Starts a joiner's replay: reads from the store what the room's memory does not hold (a `lastSeq`
 * older than the memory), catching every message the room delivers while it reads. Writes that do
 * not go through room.run (HTTP asks, answers, fusions, other nodes' messages) land during the read
 * and reach only the members already joined; replayHistory, in the tick of the join, adds them.
 */
export async function readReplay(store: Store, room: Room, lastSeq: number | undefined, limit: number, maxBytes = Infinity): Promise<ReplayRead> {
  const caught = room.catchArrivals();
  const memory = room.recent();
  try {
    const inMemory = lastSeq === undefined || lastSeq > room.seq || lastSeq >= room.oldestSeq() - 1 || lastSeq === room.seq;
    const stored = inMemory ? [] : await newestAfter(store, room.id, lastSeq, limit, maxBytes);
    const late =
      lastSeq === undefined || lastSeq > room.seq ? { messages: [], cut: false } : await lateRead(store, room, lastSeq, limit - (room.seq - lastSeq), memory);
    return { read: mergeBySeq(late.messages, stored, memory), lateCut: late.cut, arrived: caught.arrived, stop: caught.stop };
  } catch (err) {
    caught.stop();
    throw err;
  }
}

/**
 * The history a welcome carries, built in the tick of the join from `replay` (whose catching it
 * stops) and the room's memory then: every message delivered before the join is in it (or cut as
 * below), every one after reaches the joiner live. Without `lastSeq`: the recent messages. With
 * it: the messages after `lastSeq`, and those the room delivered late (Room.cameLate) that it
 * still holds; more than `limit` missed messages give the newest
 * `limit` and `truncated`. A `lastSeq` ahead of the room (a store that was reset) gets the recent
 * messages, as a fresh join does. Either way the history is cut, oldest first, to `maxBytes` of
 * JSON (then `truncated` too): a welcome must fit the socket's send limit, or the client would be
 * dropped and reconnect forever. What was cut can be paged with
 * `GET /api/v1/rooms/:id/messages?before=`.
 */
export function replayHistory(
  room: Room,
  replay: ReplayRead,
  lastSeq: number | undefined,
  limit: number,
  maxBytes = Infinity,
): { history: Message[]; truncated: boolean } {
  replay.stop();
  const memory = room.recent();
  if (lastSeq === undefined) return cutToBytes(memory, false, maxBytes);
  // What came late (after a newer seq) may have missed a member whose lastSeq is past it: given
  // again, as the client drops a message it holds already.
  const missed = mergeBySeq(replay.read, replay.arrived, memory).filter((m) => m.seq > lastSeq || room.cameLate(m.seq, lastSeq));
  const top = Math.max(room.seq, missed.at(-1)?.seq ?? 0);
  if (lastSeq > top) return cutToBytes(memory, false, maxBytes);
  return top - lastSeq > limit || missed.length > limit ? cutToBytes(missed.slice(-limit), true, maxBytes) : cutToBytes(missed, replay.lateCut, maxBytes);
}

/**
 * The stored messages of the room's late runs at or below `lastSeq` (Room.lateUpTo) that `memory`
 * does not hold, newest run first, at most `room` of them; `cut` when more were late. A member
 * whose socket dropped while the room delivered them (an import, readable below a live message
 * said meanwhile) asks back from past them, and gets them from here.
 */
async function lateRead(store: Store, room: Room, lastSeq: number, space: number, memory: readonly Message[]): Promise<{ messages: Message[]; cut: boolean }> {
  const held = new Set(memory.map((m) => m.seq));
  const messages: Message[] = [];
  for (const [first, last] of room.lateUpTo(lastSeq)) {
    let top = last;
    while (top >= first && held.has(top)) top--;
    if (top < first) continue;
    if (messages.length >= space) return { messages, cut: true };
    const want = Math.min(top - first + 1, space - messages.length);
    const page = await store.messagesBefore(room.id, top + 1, want);
    messages.push(...page.filter((m) => m.seq >= first));
    if (want < top - first + 1) return { messages, cut: true };
  }
  return { messages, cut: false };
}

/** The newest of `messages` that fit `maxBytes`; `truncated` when it was already, or when some were cut. */
function cutToBytes(messages: Message[], truncated: boolean, maxBytes: number): { history: Message[]; truncated: boolean } {
  const history = newestWithin(messages, maxBytes);
  return { history, truncated: truncated || history.length < messages.length };
}

/**
 * The newest stored messages with seq > `afterSeq`, at most `limit`, oldest first, read a page at
 * a time from the newest back until `maxBytes` of JSON are held: what the welcome can carry.
 */
async function newestAfter(store: Store, roomId: string, afterSeq: number, limit: number, maxBytes: number): Promise<Message[]> {
  const pages: Message[][] = [];
  let held = 0;
  let bytes = 0;
  let before = Number.MAX_SAFE_INTEGER;
  for (let size = REPLAY_FIRST_PAGE; held < limit && bytes <= maxBytes; size *= 2) {
    const want = Math.min(size, limit - held);
    const page = await store.messagesBefore(roomId, before, want);
    let from = page.length;
    while (from > 0 && page[from - 1].seq > afterSeq && bytes <= maxBytes) {
      bytes += historyBytes(page[from - 1]);
      from--;
    }
    pages.unshift(page.slice(from));
    held += page.length - from;
    if (from > 0 || page.length < want) break;
    before = page[0].seq;
  }
  return pages.flat();
}

/** The newest messages (oldest first) whose JSON together stays within `maxBytes`. */
function newestWithin(messages: Message[], maxBytes: number): Message[] {
  let bytes = 0;
  let from = messages.length;
  while (from > 0) {
    bytes += historyBytes(messages[from - 1]);
    if (bytes > maxBytes) break;
    from--;
  }
  return from === 0 ? messages : messages.slice(from);
}

/** The `welcome` frame for a member who just joined `room`. */
export function welcomeFrame(
  room: Room,
  member: Member,
  token: string,
  replay: { history: Message[]; truncated: boolean },
  pending: PendingAnswer[],
): WelcomeFrame {
  return {
    type: 'welcome',
    you: { id: member.id, name: member.name, token },
    room: room.info!,
    threadId: room.threadId,
    history: replay.history,
    members: room.listedMembers(),
    memberCount: room.memberCount,
    // A message read from the store before this node delivered it may be newer than room.seq.
    seq: Math.max(room.seq, replay.history.at(-1)?.seq ?? 0),
    ...(pending.length ? { pending } : {}),
    ...(replay.truncated ? { truncated: true } : {}),
  };
}
