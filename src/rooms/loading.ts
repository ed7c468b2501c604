/** What a joiner gets: the room's state read on first join, `hello {lastSeq}` replays, the welcome. */
import type { Member, Message, WelcomeFrame } from '../protocol/messages.js';
import type { Store } from '../store/types.js';
import type { LoadState, Room } from './room.js';
import type { PendingAnswer, RoomResolver } from './types.js';

/** Resolves the room and loads its main thread, recent history and seq into `room`. */
export async function loadRoom(store: Store, resolve: RoomResolver, room: Room, historySize: number): Promise<LoadState> {
  const info = await resolve(room.id);
  if (!info) return 'missing';
  const [thread, recent, lastSeq] = await Promise.all([store.ensureMainThread(room.id), store.recentMessages(room.id, historySize), store.lastSeq(room.id)]);
  room.init(info, thread.id, recent, lastSeq);
  return 'ok';
}

/** Messages in both lists once, by seq, oldest first. */
function mergeBySeq(a: Message[], b: Message[]): Message[] {
  const bySeq = new Map<number, Message>();
  for (const m of a) bySeq.set(m.seq, m);
  for (const m of b) bySeq.set(m.seq, m);
  return [...bySeq.values()].sort((x, y) => x.seq - y.seq);
}

/**
 * The history a welcome carries. Without `lastSeq`: the recent messages. With it: exactly the
 * messages after `lastSeq`, from memory when it reaches back far enough, else from the store; more
 * than `limit` missed messages give the newest `limit` and `truncated`. A `lastSeq` ahead of the
 * room (a store that was reset) gets the recent messages, as a fresh join does. Either way the
 * history is cut, oldest first, to `maxBytes` of JSON (then `truncated` too): a welcome must fit
 * the socket's send limit, or the client would be dropped and reconnect forever. What was cut can
 * be paged with `GET /api/v1/rooms/:id/messages?before=`.
 */
export async function replayHistory(
  store: Store,
  room: Room,
  lastSeq: number | undefined,
  limit: number,
  maxBytes = Infinity,
): Promise<{ history: Message[]; truncated: boolean }> {
  const replay = await missedMessages(store, room, lastSeq, limit);
  const history = newestWithin(replay.history, maxBytes);
  return { history, truncated: replay.truncated || history.length < replay.history.length };
}

async function missedMessages(store: Store, room: Room, lastSeq: number | undefined, limit: number): Promise<{ history: Message[]; truncated: boolean }> {
  const memory = room.recent();
  if (lastSeq === undefined || lastSeq > room.seq) return { history: memory, truncated: false };
  if (lastSeq >= room.oldestSeq() - 1 || lastSeq === room.seq) {
    return { history: memory.filter((m) => m.seq > lastSeq), truncated: false };
  }
  const missed = room.seq - lastSeq;
  const stored = missed > limit ? await store.recentMessages(room.id, limit) : await store.messagesAfter(room.id, lastSeq, limit);
  const merged = mergeBySeq(stored, memory).filter((m) => m.seq > lastSeq);
  return missed > limit ? { history: merged.slice(-limit), truncated: true } : { history: merged, truncated: false };
}

/** The newest messages (oldest first) whose JSON together stays within `maxBytes`. */
function newestWithin(messages: Message[], maxBytes: number): Message[] {
  let bytes = 0;
  let from = messages.length;
  while (from > 0) {
    bytes += Buffer.byteLength(JSON.stringify(messages[from - 1])) + 1;
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
    seq: room.seq,
    ...(pending.length ? { pending } : {}),
    ...(replay.truncated ? { truncated: true } : {}),
  };
}
