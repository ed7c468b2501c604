/**
 * Thread slash commands (docs/protocol.md §3.1): `/threads`, `/thread new <title>`, `/merge`,
 * `/split` (list, then confirm), `/unlock` and `/fuse`. They act on threads of the sender's room
 * only and answer the sender alone. THREAD_OPS=admin leaves every change to the admin's HTTP API
 * (listing stays open); otherwise changes go through a ThreadChangeGate (one at a time per room, a
 * budget per member), and what `/fuse` writes through a FusionBudget (passages a day per room and address). Message ids may be shortened to a prefix the thread's messages share with
 * no other (the listing shows 8 characters). Replies are rendered as markdown: the titles and
 * messages they quote are escaped (markdownLiteral), so they show as typed.
 */
import { errors } from '../../errors.js';
import type { SlashCommand } from '../../rooms/commands.js';
import type { SplitLock, Thread } from '../../store/types.js';
import { SPLIT_LOCKS } from '../../protocol/threads.js';
import { ThreadChangeGate } from './change-gate.js';
import { FusionBudget } from './fusion-budget.js';
import { FUSION_FALLBACK_NOTICE, type FuseOutcome, type SplitListing, type ThreadService } from './thread-service.js';
import { markdownLiteral as literal } from '../../protocol/markdown-literal.js';
import { plural } from '../../text.js';

/** Characters of a message id the split listing shows (and the shortest prefix accepted). */
export const SHORT_ID_CHARS = 8;
/** Messages `/split <id>` lists in the room at most (the HTTP listing has them all). */
const LISTED = 60;

/** Archived threads `/threads` lists at most (the newest); the HTTP listing has them all. */
export const ARCHIVED_LISTED = 20;

/**
 * One line per thread: id, title, badges, message count. Active threads are bounded by the room's
 * limit; archived ones pile up with every merge, so only the newest ARCHIVED_LISTED are described.
 * Each line costs two counts: the whole detail read every bridge's other thread, and a room whose
 * 100 threads were all bridged (members can make that) held the event loop ~130 ms a listing.
 */
export async function describeThreads(threads: ThreadService, roomId: string): Promise<string> {
  const { threads: list, archivedTotal } = await threads.list(roomId, ARCHIVED_LISTED);
  const hidden = archivedTotal - list.filter((t) => t.status !== 'active').length;
  const lines = await Promise.all(
    list.map(async (t) => {
      const { messages, chunks } = await threads.counts(t.id);
      return `${t.id} · ${literal(t.title)} · ${badges(t).join(', ')} · ${plural(messages, 'message', 'messages')}, ${chunks} remembered`;
    }),
  );
  const more = hidden
    ? [`… and ${plural(hidden, 'older archived thread', 'older archived threads')} (GET /api/v1/rooms/${roomId}/threads lists them all)`]
    : [];
  return ['Threads of this room:', ...lines, ...more].join('\n');
}

function badges(t: Thread): string[] {
  return [
    t.main ? 'main' : null,
    t.status,
    t.isMerged ? 'fused' : null,
    t.splitLockedUntil ? `locked (${t.splitLockedUntil})` : null,
    t.parentId ? `split from ${t.parentId}` : null,
    t.mergedInto ? `merged into ${t.mergedInto}` : null,
  ].filter((b): b is string => b !== null);
}

export function threadCommands(
  threads: ThreadService,
  threadOps: 'members' | 'admin',
  gate = new ThreadChangeGate(),
  fusionBudget = new FusionBudget(),
): SlashCommand[] {
  const mayChange = () => {
    if (threadOps !== 'members') throw new errors.ERR_FORBIDDEN('thread changes are the admin’s here (THREAD_OPS=admin)');
  };
  /** A thread of the sender's room. */
  const inRoom = async (roomId: string, id: string | undefined): Promise<Thread> => {
    if (!id) throw new errors.ERR_BAD_MESSAGE('name the thread by its id (see /threads)');
    const t = await threads.get(id);
    if (t.roomId !== roomId) throw new errors.ERR_THREAD_NOT_FOUND(id);
    return t;
  };
  const actorOf = (user: { id: string }) => user.id;
  return [
    {
      name: 'threads',
      usage: '/threads',
      summary: 'the threads of this room',
      run: ({ roomId }) => describeThreads(threads, roomId),
    },
    {
      name: 'thread',
      usage: '/thread new <title>',
      summary: 'start a new thread in this room',
      async run({ roomId, args, user, address }) {
        const m = /^new\s+([\s\S]+)$/i.exec(args);
        if (!m) throw new errors.ERR_BAD_MESSAGE('use /thread new <title>');
        mayChange();
        const t = await gate.run(roomId, { userId: user.id, address }, () => threads.create(roomId, m[1], actorOf(user)));
        return `Started thread “${literal(t.title)}” (${t.id}).`;
      },
    },
    {
      name: 'merge',
      usage: '/merge <survivorId> <absorbedId>',
      summary: 'the first thread absorbs the second (which is archived)',
      async run({ roomId, args, user, address }) {
        const [survivor, absorbed] = args.split(/\s+/);
        mayChange();
        await inRoom(roomId, survivor);
        await inRoom(roomId, absorbed);
        const t = await gate.run(roomId, { userId: user.id, address }, () => threads.merge(survivor, absorbed, actorOf(user)));
        return `Merged ${absorbed} into “${literal(t.title)}” (${t.id}).`;
      },
    },
    {
      name: 'fuse',
      usage: '/fuse <threadA> <threadB> [threshold]',
      summary: 'a new thread whose memory fuses both threads’ memories (no messages copied)',
      async run({ roomId, args, user, address }) {
        const [a, b, threshold] = args.split(/\s+/);
        mayChange();
        const first = await inRoom(roomId, a);
        const second = await inRoom(roomId, b);
        const value = threshold === undefined ? undefined : Number(threshold);
        const r = await gate.run(roomId, { userId: user.id, address }, () =>
          fusionBudget.run({ roomId, address }, async () => {
            const outcome = await threads.fuse([a, b], actorOf(user), value);
            // The fusion is done: a failed count must not tell the member it was not.
            return { outcome, written: await threads.storedChunks(outcome.thread.id).catch(() => 0) };
          }),
        );
        return fusedReply(first, second, r);
      },
    },
    {
      name: 'split',
      usage: '/split <threadId> [confirm titles=A,B msgs_0=m1,m2 msgs_1=m3 lock=compaction]',
      summary: 'list a thread’s messages, then split some of them off into new threads',
      async run({ roomId, args, user, address }) {
        const [id, word, ...rest] = args.split(/\s+/);
        if (word && word.toLowerCase() !== 'confirm')
          throw new errors.ERR_BAD_MESSAGE('use /split <threadId>, then /split <threadId> confirm titles=… msgs_0=… …');
        // Refusals that need no read come first: a confirm reads up to SPLIT_MAX_MESSAGES messages.
        if (word) mayChange();
        const spec = word ? parseSplitWords(rest) : null;
        const thread = await inRoom(roomId, id);
        if (!spec) {
          const { messages, total } = await threads.splitListing(thread.id, LISTED);
          return listing(thread, messages, total);
        }
        const r = await gate.run(roomId, { userId: user.id, address }, async () => {
          const { parts, lock } = resolveSplit(spec, (await threads.splitListing(thread.id)).messages);
          return threads.split(thread.id, parts, lock, actorOf(user));
        });
        return [
          `Split “${literal(r.parent.title)}” (${r.parent.id}):`,
          ...r.threads.map((t) => `${t.id} · ${literal(t.title)} · locked (${t.splitLockedUntil})`),
        ].join('\n');
      },
    },
    {
      name: 'unlock',
      usage: '/unlock <threadId>',
      summary: 'release a split thread’s lock',
      async run({ roomId, args, user, address }) {
        mayChange();
        const t = await inRoom(roomId, args.split(/\s+/)[0]);
        await gate.run(roomId, { userId: user.id, address }, () => threads.unlock(t.id, actorOf(user)));
        return `Unlocked “${literal(t.title)}” (${t.id}).`;
      },
    },
  ];
}

/**
 * What a member is told of their fusion, in words: what the new thread holds, not the plan's
 * terms ("0 pairs made one, 0 kept" meant nothing to whoever typed /fuse).
 */
export function fusedReply(a: Thread, b: Thread, r: FuseOutcome): string {
  const [first, second] = [`“${literal(a.title)}”`, `“${literal(b.title)}”`];
  const fromSecond = r.kept ? `${plural(r.kept, 'passage', 'passages')} only ${second} had` : `nothing more from ${second}`;
  const both = r.fused ? ` (${plural(r.fused, 'passage', 'passages')} said in both ${r.fused === 1 ? 'is' : 'are'} kept once)` : '';
  return (
    `Fused ${first} and ${second} into a new thread, “${literal(r.thread.title)}” (${r.thread.id}). It copies no messages; ` +
    `its memory holds what ${first} remembers and ${fromSecond}${both}.${r.fallback ? ` ${FUSION_FALLBACK_NOTICE}` : ''}`
  );
}

function listing(thread: Thread, shown: SplitListing[], total: number): string {
  return [
    `Messages of “${literal(thread.title)}” (${total}${total > shown.length ? `, the last ${shown.length} shown` : ''}):`,
    ...shown.map((m) => `${m.id.slice(0, SHORT_ID_CHARS)} · ${literal(m.author)}: ${literal(m.text)}`),
    `Then: /split ${thread.id} confirm titles=First,Second msgs_0=<ids> msgs_1=<ids> lock=${SPLIT_LOCKS.join('|')}`,
  ].join('\n');
}

/** What `/split <id> confirm titles=A,B msgs_0=… msgs_1=… lock=…` asks for, ids as typed. */
export interface SplitWords {
  titles: string[];
  /** Per part, the message ids or id prefixes given. */
  ids: string[][];
  lock: SplitLock;
}

/** Reads the words after `confirm`; refuses what is malformed before any message is read. */
export function parseSplitWords(words: string[]): SplitWords {
  const fields = new Map<string, string>();
  for (const w of words) {
    const m = /^([a-z_0-9]+)=(.*)$/i.exec(w);
    if (!m) throw new errors.ERR_BAD_MESSAGE(`expected key=value, got "${w.slice(0, 40)}"`);
    fields.set(m[1].toLowerCase(), m[2]);
  }
  const titles = (fields.get('titles') ?? '').split(',').map((t) => t.replace(/_/g, ' ').trim());
  if (!titles[0]) throw new errors.ERR_BAD_MESSAGE('titles=A,B is missing');
  const lock = (fields.get('lock') ?? 'compaction') as SplitLock;
  if (!SPLIT_LOCKS.includes(lock)) throw new errors.ERR_BAD_THREAD_OP(`lock must be one of ${SPLIT_LOCKS.join(', ')}`);
  return { titles, ids: titles.map((_, i) => (fields.get(`msgs_${i}`) ?? '').split(',').filter(Boolean)), lock };
}

/** The parts of a split, each id given resolved among the thread's `messages` (unique prefixes of SHORT_ID_CHARS or more). */
export function resolveSplit(spec: SplitWords, messages: SplitListing[]): { parts: { title: string; messageIds: string[] }[]; lock: SplitLock } {
  // The thread's messages by their first SHORT_ID_CHARS characters: each id given is looked up, not
  // compared with every message (a command may name hundreds, a thread hold thousands).
  const byPrefix = new Map<string, SplitListing[]>();
  for (const m of messages) {
    const key = m.id.slice(0, SHORT_ID_CHARS);
    const same = byPrefix.get(key);
    if (same) same.push(m);
    else byPrefix.set(key, [m]);
  }
  const resolve = (short: string): string => {
    const candidates = byPrefix.get(short.slice(0, SHORT_ID_CHARS)) ?? [];
    if (short.length < SHORT_ID_CHARS && !candidates.some((m) => m.id === short)) throw new errors.ERR_BAD_MESSAGE(`message id ${short} is too short`);
    const found = candidates.filter((m) => m.id.startsWith(short));
    if (found.length !== 1) throw new errors.ERR_BAD_MESSAGE(found.length ? `message id ${short} is ambiguous` : `no message ${short} in this thread`);
    return found[0].id;
  };
  return { parts: spec.titles.map((title, i) => ({ title, messageIds: spec.ids[i].map(resolve) })), lock: spec.lock };
}
