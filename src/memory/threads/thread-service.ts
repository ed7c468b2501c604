/**
 * Thread operations (docs/architecture.md, "Threads: merge, split, fusion and bridges"): start,
 * merge, split, unlock, compact and fuse. Each reads what it needs, checks it, and writes
 * everything it changes as one ThreadChange (one store transaction that also checks nobody changed
 * the threads meanwhile); on any error nothing is changed and the caller gets a catalogue code.
 * Only after the commit are the vector index, the rooms and the thread summaries told, in the
 * background where they can be.
 */
import { randomUUID } from 'node:crypto';
import type { ChatModel } from '../../ai/types.js';
import { errors, type SalonError } from '../../errors.js';
import { silentLogger, type Logger } from '../../logger.js';
import type { Message, ServerMessage } from '../../protocol/messages.js';
import type {
  MemoryChunkAudience,
  NewMemoryEntry,
  NewThread,
  SplitLock,
  Store,
  StoredMemoryChunk,
  Thread,
  ThreadBridge,
  ThreadChange,
  ThreadChangeResult,
  ThreadEvent,
  UnsettledSeqs,
} from '../../store/types.js';
import { ROOM_MAX_ACTIVE_THREADS, SPLIT_LOCKS, SPLIT_MAX_MESSAGES, SPLIT_MAX_PARTS, TITLE_MAX_CHARS } from '../../protocol/threads.js';
import { clip, plural, squash } from '../../text.js';
import { markdownLiteral as literal } from '../../protocol/markdown-literal.js';
import { ASSISTANT_NAME, hasHiddenCharacters, nameKey } from '../../protocol/names.js';
import type { IndexWatch, MemoryService, MemoryStats } from '../memory-service.js';
import { ThreadBridges, type MergeSuggestion } from './bridges.js';
import { Turns } from './turns.js';
import { MAIN_THREAD_TITLE, roomFull } from '../../store/thread-rows.js';
import {
  consolidate,
  DEFAULT_FUSION_THRESHOLD,
  fuseMemories,
  lineageOf,
  newChunkOf,
  startNeighbours,
  type FusionResult,
  type PlannedChunk,
  type SameMeaningGate,
  type StoredVectors,
  type VectorChunk,
} from './fusion.js';

/** A thread's history events looked through for the fusions it fed (a thread's history is short). */
const FUSIONS_LOOKED_UP = 1000;
/** Added to the heavier weight of two merged threads. */
export const MERGE_WEIGHT_BONUS = 0.1;
/** A split thread's weight, as a share of its parent's. */
export const SPLIT_WEIGHT_SHARE = 0.8;
export { SPLIT_MAX_MESSAGES };
/** Messages read per page looking for a straddling window's messages older than those a split read. */
const OLDER_PAGE = 500;
/** Characters of each message the split listing shows. */
const SPLIT_TEXT_CHARS = 200;
/** Exchanges compaction leaves as they are (the newest); older long ones are summarised. */
export const COMPACT_KEEP_EXCHANGES = 20;
/** An exchange longer than this is summarised by compaction (once it is old). */
export const COMPACT_SUMMARY_CHARS = 900;
/** Memory chunks read per page (without vectors: ~10 ms a page). */
const PAGE = 250;
/** Counts of a thread read at most per detail while messages keep coming in (countAtSeq). */
const COUNT_SEQ_TRIES = 3;
/** Chunks' ids and audiences read at once (a few bytes each: ~2–5 ms a page). */
const AUDIENCE_PAGE = 2_048;
/** Characters of each message a thread's summary is made from (as in the recent chat). */
const SUMMARY_LINE_CHARS = 400;
/** History entries a thread's detail shows. */
const HISTORY_SHOWN = 50;
/**
 * What members and the public are told of a fusion that fell back (the rooms' warning, a member's
 * /fuse, the thread's history): why it failed is an internal detail (docs/errors.md), for the log
 * and the admin's reply only.
 */
export const FUSION_FALLBACK_NOTICE = 'Smart fusion failed; the memories were joined as they are.';

/** Who asked for an operation: a member's id, or `admin` (the HTTP API and the CLI). */
export type Actor = string;

/** What a room needs to hear about thread operations. */
export interface ThreadOutlet {
  broadcast(roomId: string, frame: ServerMessage): void;
  /** Messages moved between threads of a live room (its cached history follows). */
  messagesMoved(roomId: string, moves: { ids: string[]; threadId: string }[]): void;
  /** Every message of `absorbedId` now belongs to `survivorId`. */
  threadMerged(roomId: string, absorbedId: string, survivorId: string): void;
}

export interface ThreadServiceOptions {
  store: Store;
  memory: MemoryService;
  chat: ChatModel;
  bridges: ThreadBridges;
  outlet?: ThreadOutlet;
  log?: Logger;
  /** The second fusion gate (default: same-meaning.ts). */
  gate?: SameMeaningGate;
  /** Active threads a room may hold (default ROOM_MAX_ACTIVE_THREADS). */
  maxActiveThreads?: number;
}

export interface ThreadDetail {
  thread: Thread;
  messages: number;
  /**
   * The room's newest seq when `messages` was counted: a live message of the thread at or below it
   * is counted already, one above it is not (the page adds those to the count as they arrive).
   */
  seq: number;
  /**
   * The room's seq ranges an import took and had not made readable when `messages` was counted
   * (Store.unsettledSeqs): the thread's messages in them are not in the count, whatever their seq;
   * the page adds them as they arrive, once the import makes them readable.
   */
  unsettledImports: UnsettledSeqs[];
  memory: MemoryStats & { fused: number; kept: number };
  bridges: ThreadBridge[];
  suggestions: MergeSuggestion[];
  history: ThreadEvent[];
}

/** A message as step 1 of a split lists it. */
export interface SplitListing {
  id: string;
  role: 'user' | 'assistant' | 'system';
  author: string;
  text: string;
  ts: string;
}

export interface SplitPart {
  title: string;
  messageIds: string[];
}

export interface FuseOutcome {
  thread: Thread;
  /** Public passages made one (a member's /fuse and its message read them: private asks are not counted, as in MemoryStats). */
  fused: number;
  /** Public passages kept from the second thread as they were. */
  kept: number;
  /** Why smart fusion failed, when the memories were simply joined (for the admin: an internal detail). */
  fallback?: string;
}

export class ThreadService {
  private readonly log: Logger;

  constructor(private readonly options: ThreadServiceOptions) {
    this.log = options.log ?? silentLogger;
  }

  get bridges(): ThreadBridges {
    return this.options.bridges;
  }

  async get(id: string): Promise<Thread> {
    const thread = await this.options.store.getThread(id);
    if (!thread) throw new errors.ERR_THREAD_NOT_FOUND(id);
    return thread;
  }

  /**
   * The threads still standing that a fusion of `id` made (`/fuse`, POST …/fuse): they hold copies
   * of its memory, which deleting `id` leaves in place (docs/api.md, DELETE a thread).
   */
  async fusedFrom(id: string): Promise<string[]> {
    const { store } = this.options;
    const events = await store.threadHistory(id, FUSIONS_LOOKED_UP);
    const made = [...new Set(events.flatMap((e) => (e.action === 'fuse' && typeof e.details.fusedInto === 'string' ? [e.details.fusedInto] : [])))];
    const standing = await Promise.all(made.map((t) => store.getThread(t)));
    return made.filter((_, i) => standing[i] !== null);
  }

  /** The threads merged into `thread`, and into those (merges of merges): the archived shells it absorbed. */
  async absorbedBy(thread: Thread): Promise<string[]> {
    const mergedInto = new Map<string, string[]>();
    for (const t of await this.options.store.listThreads(thread.roomId)) {
      if (!t.mergedInto) continue;
      // Pushed, not copied per shell: a main thread may have absorbed thousands.
      const shells = mergedInto.get(t.mergedInto);
      if (shells) shells.push(t.id);
      else mergedInto.set(t.mergedInto, [t.id]);
    }
    // Breadth first, each thread once: a cycle (which merges cannot make) would end, not loop.
    const seen = new Set([thread.id]);
    const absorbed: string[] = [];
    for (const next = [thread.id]; next.length;) {
      for (const id of mergedInto.get(next.shift()!) ?? []) {
        if (seen.has(id)) continue;
        seen.add(id);
        absorbed.push(id);
        next.push(id);
      }
    }
    return absorbed;
  }

  /**
   * The room's threads: main first, then by age; every active one and the newest `archived`
   * archived ones (all when omitted), marked by status, and how many are archived in all.
   */
  async list(roomId: string, archived?: number): Promise<{ threads: Thread[]; archivedTotal: number }> {
    const { store } = this.options;
    await store.ensureMainThread(roomId);
    const [threads, archivedTotal] = await Promise.all([store.listThreads(roomId, archived), store.countArchivedThreads(roomId)]);
    return { threads, archivedTotal };
  }

  /**
   * What `/threads` shows of a thread beside its fields: its messages and public memory chunks.
   * Two counts, where `detail` also reads bridges, each bridged thread and the history.
   */
  async counts(id: string): Promise<{ messages: number; chunks: number }> {
    const { store, memory } = this.options;
    const [messages, stats] = await Promise.all([store.countThreadMessages(id), memory.stats(id)]);
    return { messages, chunks: stats.chunks };
  }

  /** Memory passages `id` holds, private ones too (what its rows cost the store; `counts` tells members the public ones). */
  storedChunks(id: string): Promise<number> {
    return this.options.store.countMemoryChunks(id, 'all');
  }

  async detail(id: string): Promise<ThreadDetail> {
    const { store, memory } = this.options;
    const thread = await this.get(id);
    const [{ messages, seq, unsettledImports }, stats, fusion, bridges, suggestions, history] = await Promise.all([
      this.countAtSeq(thread),
      memory.stats(id),
      store.countFusedMemory(id),
      store.threadBridges(id),
      this.bridges.suggestions(thread),
      store.threadHistory(id, HISTORY_SHOWN),
    ]);
    return { thread, messages, seq, unsettledImports, memory: { ...stats, ...fusion }, bridges, suggestions, history };
  }

  /**
   * The thread's message count and the room's seq it stands at: read between two reads of the
   * room's newest seq that agree, no message came in while it was counted. A room too busy to agree
   * after COUNT_SEQ_TRIES gives the later seq: a message that came in meanwhile may then be missed,
   * never counted twice. So with the room's unsettled imports (their messages are not counted, and
   * their seqs lie below `seq`): read before and after the count, the same both times, else an
   * import made readable meanwhile may be in the count or not; the later reading is given, its
   * messages then missed, never counted twice. Given without them, the page took every message an
   * import delivered after the count for counted (its seq at or below `seq`), and the count stayed
   * short by the import until the thread's next detail.
   */
  private async countAtSeq(thread: Thread): Promise<{ messages: number; seq: number; unsettledImports: UnsettledSeqs[] }> {
    const { store } = this.options;
    const reading = async () => ({ seq: await store.lastSeq(thread.roomId), unsettled: await store.unsettledSeqs(thread.roomId) });
    let before = await reading();
    for (let tries = 1; ; tries++) {
      const messages = await store.countThreadMessages(thread.id);
      const after = await reading();
      const same = after.seq === before.seq && JSON.stringify(after.unsettled) === JSON.stringify(before.unsettled);
      if (same || tries >= COUNT_SEQ_TRIES) return { messages, seq: after.seq, unsettledImports: after.unsettled };
      before = after;
    }
  }

  /** `/thread new <title>`: a new active thread in the room. */
  async create(roomId: string, title: string, actor: Actor): Promise<Thread> {
    const { store } = this.options;
    const checked = checkTitle(title);
    await store.ensureMainThread(roomId);
    await this.makeRoom(roomId, 1);
    const id = newThreadId();
    await store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      createThreads: [{ id, roomId, title: checked }],
      maxActiveThreads: this.maxActive,
      history: [{ threadId: id, actor, action: 'created', details: { title: checked } }],
    });
    const thread = await this.get(id);
    this.announce(thread, `A new thread started: “${literal(thread.title)}”.`);
    return thread;
  }

  /**
   * Switches whether the assistant searches and cites the thread's memory (`/memory on|off`, `PUT
   * …/config`). A change is told to everyone in the room, as every thread operation is: it changes
   * what the assistant answers all of them, not only whoever switched it.
   */
  async setMemory(id: string, enabled: boolean): Promise<Thread> {
    return this.configure(id, { memoryEnabled: enabled });
  }

  /**
   * Sets the thread's memory switch and privileged flag (`PUT …/config`) in one write: both or
   * neither (written one after the other, a failure between them left the flag changed under an
   * error). A field given as it already is is no change: it leaves the thread's version alone, so
   * it fails no operation under way. What changed is told to the room, in one notice (configNotices).
   * An archived thread is refused (ERR_THREAD_ARCHIVED), nothing written: its memory is its
   * survivor's now, so a switch on the shell would change nothing the assistant does.
   */
  async configure(id: string, config: { memoryEnabled?: boolean; privileged?: boolean }): Promise<Thread> {
    const before = await this.get(id);
    if (before.status !== 'active') throw new errors.ERR_THREAD_ARCHIVED(before.id, before.mergedInto ? `merged into ${before.mergedInto}` : before.status);
    const update: { id: string; memoryEnabled?: boolean; privileged?: boolean } = { id };
    if (config.memoryEnabled !== undefined && config.memoryEnabled !== before.memoryEnabled) update.memoryEnabled = config.memoryEnabled;
    if (config.privileged !== undefined && config.privileged !== before.privileged) update.privileged = config.privileged;
    if (update.memoryEnabled === undefined && update.privileged === undefined) return before;
    await this.options.store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [update] });
    const thread = await this.get(id);
    const told = configNotices(before, thread);
    if (told.length) this.announce(thread, told.join(' '));
    return thread;
  }

  /**
   * The survivor absorbs the other thread: its messages (in time order, by seq), its memory and
   * centroid, its topics and bridges. The absorbed thread is archived and tagged, never deleted.
   */
  async merge(survivorId: string, absorbedId: string, actor: Actor): Promise<Thread> {
    const { store } = this.options;
    if (survivorId === absorbedId) throw new errors.ERR_BAD_THREAD_OP('a thread cannot absorb itself');
    const [a, b] = [await this.get(survivorId), await this.get(absorbedId)];
    if (a.roomId !== b.roomId) throw new errors.ERR_BAD_THREAD_OP('threads of different rooms cannot merge; fuse them instead');
    for (const t of [a, b]) {
      if (t.status !== 'active') throw new errors.ERR_THREAD_ARCHIVED(t.id, t.mergedInto ? `merged into ${t.mergedInto}` : t.status);
      if (t.splitLockedUntil) throw new errors.ERR_THREAD_LOCKED(t.id, t.splitLockedUntil);
    }
    if (b.main) throw new errors.ERR_BAD_THREAD_OP('the main thread can only survive a merge');
    const messages = await store.countThreadMessages(b.id);
    const absorbed = await this.allMemory(b.id);
    const overCap = await this.overCapAfterMerge(a.id, absorbed);
    const dropped = new Set(overCap.map((c) => c.id));
    const memoryIds = absorbed.filter((c) => !dropped.has(c.id)).map((c) => c.id);
    const bridgesOfB = (await store.threadBridges(b.id)).filter((x) => x.otherId !== a.id);
    const bridgesOfA = new Map((await store.threadBridges(a.id)).filter((x) => x.otherId !== b.id).map((x) => [x.otherId, x.weight]));
    for (const x of bridgesOfB) bridgesOfA.set(x.otherId, Math.max(bridgesOfA.get(x.otherId) ?? 0, x.weight));
    const change: ThreadChange = {
      at: new Date().toISOString(),
      expect: [a, b].map(({ id, version }) => ({ id, version })),
      updateThreads: [
        {
          id: a.id,
          tags: union(
            a.tags,
            b.tags.filter((t) => !isMark(t)),
          ),
          weight: round(Math.max(a.weight, b.weight) + MERGE_WEIGHT_BONUS),
          origin: 'merged',
          // The absorbed thread's people go on in the survivor: their privacy choices go with them.
          privileged: a.privileged || b.privileged,
          memoryEnabled: a.memoryEnabled && b.memoryEnabled,
        },
        { id: b.id, status: 'archived', mergedInto: a.id, tags: union(b.tags, [`merged_into:${a.id}`]) },
      ],
      // In the one transaction, not sliced as a fusion's memory is: slices would show the messages
      // parted between both threads (docs/architecture.md, "A merge moves … in its one transaction").
      moveThreadMessages: [{ fromThreadId: b.id, threadId: a.id }],
      moveMemory: [{ ids: memoryIds, threadId: a.id, roomId: a.roomId }],
      deleteMemory: [...dropped],
      // What was remembered in the absorbed thread after the read above goes along too.
      moveThreadMemory: [{ fromThreadId: b.id, threadId: a.id, roomId: a.roomId }],
      dropBridgesOf: [a.id, b.id],
      setBridges: [...bridgesOfA].map(([otherId, weight]) => ({ threadId: a.id, otherId, weight })),
      history: [
        // The history is anyone's to read (GET /api/v1/threads/:id): private asks are not counted in it.
        {
          threadId: a.id,
          actor,
          action: 'merge',
          details: { absorbedId: b.id, messages, memoryChunks: publicCount(absorbed), ...(dropped.size ? { dropped: publicCount(overCap) } : {}) },
        },
        { threadId: b.id, actor, action: 'merged_into', details: { survivorId: a.id } },
      ],
    };
    const { movedMemoryIds } = await store.applyThreadChange(change);
    const moved = [...memoryIds, ...movedMemoryIds];
    this.log.info({ survivorId: a.id, absorbedId: b.id, messages, memoryChunks: moved.length, dropped: dropped.size }, 'threads merged');
    await this.forgetCommitted(a.id, [...dropped]);
    await this.reindexCommitted(a.id, moved);
    this.bridges.invalidate([a.id, b.id]);
    this.options.outlet?.threadMerged(a.roomId, b.id, a.id);
    this.announce(a, `“${literal(b.title)}” was merged into “${literal(a.title)}”.`);
    this.resummarise(a.id);
    return this.get(a.id);
  }

  /**
   * Step 1 of a split: the thread's newest `newest` messages (at most SPLIT_MAX_MESSAGES, what a
   * split takes from), oldest first, with ids, roles and a short text, and how many it holds. Only
   * those are read: a room's `/split <id>` shows 60 of a thread that may hold thousands.
   */
  async splitListing(id: string, newest = SPLIT_MAX_MESSAGES): Promise<{ thread: Thread; messages: SplitListing[]; total: number }> {
    const thread = await this.get(id);
    const { store } = this.options;
    const [messages, total] = await Promise.all([store.threadMessages(id, Math.min(newest, SPLIT_MAX_MESSAGES)), store.countThreadMessages(id)]);
    return {
      thread,
      messages: messages.map((m) => ({
        id: m.id,
        role: m.author.kind,
        author: m.author.name,
        // Squashed after a first cut: the listing shows 200 characters of messages up to 4,000 long.
        text: clip(squash(m.text.slice(0, SPLIT_TEXT_CHARS * 4)), SPLIT_TEXT_CHARS),
        ts: m.ts,
      })),
      total,
    };
  }

  /**
   * Step 2: each part becomes a child thread (origin split, locked with `lock`, 0.8 × the parent's
   * weight) with its messages; the parent keeps the rest. Memory chunks wholly inside one part move
   * with it; windows that straddled parts are rebuilt from their messages where those now are, and
   * an exchange goes whole with its question.
   */
  async split(id: string, parts: SplitPart[], lock: SplitLock = 'compaction', actor: Actor): Promise<{ parent: Thread; threads: Thread[] }> {
    const { store, memory } = this.options;
    checkSplitSize(parts);
    const parent = await this.get(id);
    if (parent.status !== 'active') throw new errors.ERR_THREAD_ARCHIVED(parent.id, parent.status);
    if (!SPLIT_LOCKS.includes(lock)) throw new errors.ERR_BAD_THREAD_OP(`lock must be one of ${SPLIT_LOCKS.join(', ')}`);
    await this.makeRoom(parent.roomId, parts.length);
    const messages = await this.allMessages(id);
    const known = new Map(messages.map((m) => [m.id, m]));
    const partOf = new Map<string, number>();
    const titles = parts.map((p, i) => checkTitle(p.title, `parts[${i}].title`));
    parts.forEach((p, i) => {
      if (!p.messageIds?.length) throw new errors.ERR_BAD_THREAD_OP(`parts[${i}] is empty`);
      for (const m of p.messageIds) {
        if (!known.has(m)) throw new errors.ERR_BAD_THREAD_OP(`parts[${i}]: message ${m} is not in thread ${id}`);
        const earlier = partOf.get(m);
        if (earlier === i) throw new errors.ERR_BAD_THREAD_OP(`message ${m} is twice in parts[${i}]`);
        if (earlier !== undefined) throw new errors.ERR_BAD_THREAD_OP(`message ${m} is in parts[${earlier}] and parts[${i}]`);
        partOf.set(m, i);
      }
    });
    if (partOf.size === messages.length && partOf.size >= (await store.countThreadMessages(id))) throw emptiedBySplit(parent);
    const children: NewThread[] = parts.map((_, i) => ({
      id: newThreadId(),
      roomId: parent.roomId,
      title: titles[i],
      origin: 'split',
      parentId: parent.id,
      splitLockedUntil: lock,
      weight: round(parent.weight * SPLIT_WEIGHT_SHARE),
      tags: parent.tags.filter((t) => !isMark(t)),
      memoryEnabled: parent.memoryEnabled,
      privileged: parent.privileged,
    }));
    // Memory: a chunk wholly inside one part moves with it; a window that straddles is rebuilt.
    const moves = children.map((c) => ({ ids: [] as number[], threadId: c.id, roomId: c.roomId }));
    const rebuilt: number[] = [];
    const straddled = new Set<string>();
    const read = await this.allMemory(id);
    for (const chunk of read) {
      // An exchange (question, then answer) goes whole with its question: rebuilt from messages it
      // would be a window of the question alone (windows hold members' messages), and a privileged
      // one would no longer be its asker's alone.
      const where = new Set((chunk.kind === 'exchange' ? chunk.messageIds.slice(0, 1) : chunk.messageIds).map((m) => partOf.get(m) ?? -1));
      if (!chunk.messageIds.length || (where.size === 1 && where.has(-1))) continue;
      if (where.size === 1) moves[[...where][0]].ids.push(chunk.id);
      else {
        rebuilt.push(chunk.id);
        // Taken from the rows read here: reading them again, vectors and all (8 KB each), held the
        // event loop ~50 ms per 256 windows, and a member's split can part every window of a thread.
        for (const m of chunk.messageIds) straddled.add(m);
      }
    }
    const at = new Date().toISOString();
    const { movedMemoryIds, partedMemory = [] } = await store.applyThreadChange({
      at,
      expect: [{ id: parent.id, version: parent.version }],
      createThreads: children,
      maxActiveThreads: this.maxActive,
      updateThreads: [{ id: parent.id }],
      moveMessages: children.map((c, i) => ({ ids: parts[i].messageIds, threadId: c.id })),
      moveMemory: moves.filter((m) => m.ids.length),
      deleteMemory: rebuilt,
      // A window filed while this planned (adding memory changes no version) goes with its messages too.
      memoryRead: { threadId: parent.id, ids: read.map((c) => c.id) },
      setBridges: children.map((c) => ({ threadId: parent.id, otherId: c.id, weight: SPLIT_WEIGHT_SHARE })),
      history: [
        {
          threadId: parent.id,
          actor,
          action: 'split',
          details: { lock, parts: children.map((c, i) => ({ threadId: c.id, title: c.title, messages: parts[i].messageIds.length })) },
        },
        ...children.map((c, i) => ({
          threadId: c.id,
          actor,
          action: 'split_off' as const,
          details: { parentId: parent.id, lock, messages: parts[i].messageIds.length },
        })),
      ],
    });
    this.log.info({ threadId: parent.id, parts: children.length, lock }, 'thread split');
    for (const chunk of partedMemory) for (const m of chunk.messageIds) straddled.add(m);
    await this.forgetCommitted(parent.id, [...rebuilt, ...partedMemory.map((c) => c.id)]);
    await this.reindexCommitted(parent.id, [...moves.flatMap((m) => m.ids), ...movedMemoryIds]);
    // Rebuild what straddled: each message's window now forms where the message is. A window may
    // begin before the newest SPLIT_MAX_MESSAGES read above: its older messages stayed in the parent,
    // and are read to be windowed there again (deleted with the window, they were remembered nowhere).
    const byThread = new Map<string, Message[]>();
    const older = new Set([...straddled].filter((m) => !known.has(m)));
    if (older.size && messages.length) {
      // The split is done: a read that fails leaves them unremembered, as before, and the rooms are still told.
      const before = await this.messagesBefore(parent.id, messages[0].seq, older).catch((err: unknown) => {
        this.log.warn({ threadId: parent.id, err: (err as Error)?.message }, 'older messages of a split window not read; they stay unremembered');
        return [];
      });
      if (before.length) byThread.set(parent.id, before);
    }
    for (const m of messages) {
      if (!straddled.has(m.id)) continue;
      const to = partOf.has(m.id) ? children[partOf.get(m.id)!].id : parent.id;
      // Pushed, not copied per message: up to SPLIT_MAX_MESSAGES of them may straddle.
      const list = byThread.get(to);
      if (list) list.push({ ...m, threadId: to });
      else byThread.set(to, [{ ...m, threadId: to }]);
    }
    for (const list of byThread.values()) await memory.rememberMessages(list);
    this.bridges.invalidate([parent.id, ...children.map((c) => c.id)]);
    this.options.outlet?.messagesMoved(
      parent.roomId,
      children.map((c, i) => ({ ids: parts[i].messageIds, threadId: c.id })),
    );
    this.announce(
      parent,
      `“${literal(parent.title)}” was split: ${children.map((c) => `“${literal(c.title)}”`).join(', ')} ${children.length > 1 ? 'are threads' : 'is a thread'} of ${children.length > 1 ? 'their' : 'its'} own now.`,
    );
    return { parent: await this.get(parent.id), threads: await Promise.all(children.map((c) => this.get(c.id))) };
  }

  /**
   * Clears a split lock, whatever its mode (the only way to release agent_release and force). An
   * archived thread is refused (ERR_THREAD_ARCHIVED), nothing written, as compact refuses it: a
   * lock released on the shell would tell the room of a thread nobody uses.
   */
  async unlock(id: string, actor: Actor): Promise<Thread> {
    const thread = await this.get(id);
    if (thread.status !== 'active') throw new errors.ERR_THREAD_ARCHIVED(thread.id, thread.mergedInto ? `merged into ${thread.mergedInto}` : thread.status);
    if (!thread.splitLockedUntil) throw new errors.ERR_BAD_THREAD_OP(`thread ${id} is not locked`);
    await this.options.store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [{ id, version: thread.version }],
      updateThreads: [{ id, splitLockedUntil: null }],
      history: [{ threadId: id, actor, action: 'unlock', details: { released: thread.splitLockedUntil } }],
    });
    this.announce(thread, `“${literal(thread.title)}” is no longer split-locked.`);
    return this.get(id);
  }

  /**
   * Consolidates the thread's memory: near-duplicates are made one (both gates of fusion), old
   * long exchanges are summarised, and a `compaction` split lock is released. An archived thread
   * is refused (ERR_THREAD_ARCHIVED), nothing written, as configure refuses it: its memory is its
   * survivor's, and releasing a lock on the shell would tell the room of a thread nobody uses.
   */
  async compact(
    id: string,
    actor: Actor,
    threshold = DEFAULT_FUSION_THRESHOLD,
  ): Promise<{ thread: Thread; fused: number; summarised: number; released: boolean }> {
    const { store, memory, chat } = this.options;
    const thread = await this.get(id);
    if (thread.status !== 'active') throw new errors.ERR_THREAD_ARCHIVED(thread.id, thread.mergedInto ? `merged into ${thread.mergedInto}` : thread.status);
    checkThreshold(threshold);
    const chunks = await this.withVectors(await this.allMemory(id));
    const { replaced, fused } = await consolidate(chunks, { threshold, gate: this.options.gate });
    const gone = new Set(replaced.flatMap((r) => r.ids));
    const exchanges = chunks.filter((c) => c.chunk.kind === 'exchange' && !gone.has(c.chunk.id));
    const old = exchanges.slice(0, Math.max(0, exchanges.length - COMPACT_KEEP_EXCHANGES)).filter((c) => c.chunk.text.length > COMPACT_SUMMARY_CHARS);
    const summaries: { id: number; into: PlannedChunk }[] = [];
    for (const c of old) {
      const summary = (await chat.summarize(c.chunk.text, 'What was asked, and what was the answer?')).trim();
      if (!summary || summary.length >= c.chunk.text.length) continue;
      const chunk = { ...newChunkOf(c.chunk), text: summary };
      const [vector] = await memory.vectorsForNew([chunk]).catch(() => [c.vector]);
      summaries.push({ id: c.chunk.id, into: { chunk, vector } });
    }
    const released = thread.splitLockedUntil === 'compaction';
    // The history is anyone's to read: what it counts is public memory only.
    const shown = {
      fused: replaced.reduce((n, r) => n + (r.into.chunk.privileged ? 0 : r.ids.length - 1), 0),
      summarised: publicCount(summaries.map((s) => s.into.chunk)),
      released,
      chunksBefore: publicCount(chunks.map((c) => c.chunk)),
    };
    // Before the change commits: a change moving or deleting its new chunks before they are indexed is followed.
    const watch = memory.watchIndex();
    const result = await this.committing(watch, {
      at: new Date().toISOString(),
      expect: [{ id, version: thread.version }],
      updateThreads: [{ id, ...(released ? { splitLockedUntil: null } : {}) }],
      deleteMemory: [...gone, ...summaries.map((s) => s.id)],
      addMemory: [...replaced.map((r) => r.into), ...summaries.map((s) => s.into)].map((p) => ({ ...p, model: memory.vectorModel })),
      history: [{ threadId: id, actor, action: 'compact', details: shown }],
    });
    await this.forgetCommitted(id, [...gone, ...summaries.map((s) => s.id)]);
    await this.indexCommitted(id, result.addedMemoryIds, [...replaced.map((r) => r.into), ...summaries.map((s) => s.into)], watch);
    this.bridges.invalidate([id]);
    this.log.info({ threadId: id, fused, summarised: summaries.length, released }, 'thread compacted');
    // A released lock is told as an unlock is: the members' thread lists show the lock until told.
    if (released) this.announce(thread, `“${literal(thread.title)}” is no longer split-locked: its memory was compacted.`);
    return { thread: await this.get(id), fused, summarised: summaries.length, released };
  }

  /**
   * A new thread whose memory is the fusion of two threads' memories (fusion.ts), with no copied
   * messages: one assistant message introduces it. When smart fusion fails, the memories are
   * joined as they are, and the room is warned.
   */
  async fuse(sourceIds: string[], actor: Actor, threshold = DEFAULT_FUSION_THRESHOLD): Promise<FuseOutcome> {
    const { store, memory } = this.options;
    if (!Array.isArray(sourceIds) || sourceIds.length !== 2) throw new errors.ERR_BAD_THREAD_OP('fusion takes exactly two threads');
    if (sourceIds[0] === sourceIds[1]) throw new errors.ERR_BAD_THREAD_OP('a thread cannot be fused with itself');
    checkThreshold(threshold);
    const [a, b] = [await this.get(sourceIds[0]), await this.get(sourceIds[1])];
    for (const t of [a, b]) if (t.status !== 'active') throw new errors.ERR_THREAD_ARCHIVED(t.id, t.mergedInto ? `merged into ${t.mergedInto}` : t.status);
    await this.makeRoom(a.roomId, 1);
    const id = newThreadId();
    const target = { threadId: id, roomId: a.roomId };
    const stored: StoredVectors = (ids, visit) => memory.visitIndexedVectors(ids, visit);
    // A's graphs are begun from its ids and the index's vectors, and built on other threads while
    // A's rows are read (fuseMemories takes them if the rows are still those chunks).
    const early = startNeighbours(await this.memoryAudiences(a.id), stored);
    let ca: VectorChunk[];
    try {
      ca = await this.withIndexedVectors(await this.allMemory(a.id));
    } catch (err) {
      // Nothing will take the graphs begun for A: closed once built, not kept until collected.
      void early.neighbours.then((n) => n?.close());
      throw err;
    }
    // B is read while the plan builds A's graphs on other threads (fuseMemories waits for both).
    const cb = (async () => this.withIndexedVectors(await this.allMemory(b.id)))();
    cb.catch(() => {}); // awaited below; this only keeps a failed read from counting as unhandled before that
    let result: FusionResult;
    let fallback: string | undefined;
    try {
      result = await fuseMemories(ca, cb, {
        target,
        threshold,
        gate: this.options.gate,
        cosines: (q, ids, queryId) => memory.cosines(q, ids, queryId),
        cosinesMany: (queryIds, candidateIds) => memory.cosinesOfChunks(queryIds, candidateIds),
        stored,
        early,
      });
    } catch (err) {
      // A source's memory that changed under the plan is a lost race, not a failure of fusion.
      if (err instanceof errors.ERR_THREAD_CHANGED) throw err;
      // B's memory that could not be read fails the operation, as it would have before the plan began.
      const bChunks = await cb;
      fallback = (err as Error)?.message ?? String(err);
      this.log.warn({ sourceIds, err: fallback }, `Smart fusion failed — fell back to simple union merge. Reason: ${fallback}`);
      result = unionOf(ca, bChunks, target);
    }
    this.log.info({ threadId: id, sourceIds, fused: result.fused, kept: result.kept }, `Fused ${result.fused} pairs, kept ${result.kept} unique`);
    // The plan, the counting below, building the change and the store's first slice are each 10–40 ms
    // for a fusion of 2 × 10,000 chunks on a slow machine; run back to back they held every room for
    // 110–160 ms (docs/benchmarks.md, "Thirty-first session"). A turn of the event loop between them.
    const turns = new Turns();
    await turns.next();
    // What members read (the reply, the room's message, the history) counts public passages only:
    // a pair is of one audience, so the public pairs are the public chunks the plan has fewer than its sources.
    const publicB = publicCount((await cb).map((c) => c.chunk));
    const publicPlanned = publicCount(result.chunks.map((p) => p.chunk));
    const publicFused = publicCount(ca.map((c) => c.chunk)) + publicB - publicPlanned;
    const shown = { fused: publicFused, kept: publicB - publicFused };
    // Past the memory cap the least recently seen go, as retention would drop them (but at once, in this change).
    const cap = memory.chunkCap;
    const dropped = Math.max(0, result.chunks.length - cap);
    if (dropped) {
      const newest = [...result.chunks.keys()].sort((x, y) => (result.chunks[y].updatedAt ?? '').localeCompare(result.chunks[x].updatedAt ?? '')).slice(0, cap);
      result = { ...result, chunks: newest.sort((x, y) => x - y).map((i) => result.chunks[i]) };
      this.log.info({ threadId: id, dropped, cap }, `fused memory over MEMORY_MAX_CHUNKS_PER_THREAD: the ${dropped} least recently seen passages left out`);
    }
    const topics = union(a.tags, b.tags).filter((t) => !isMark(t));
    const joined = `${a.title} + ${b.title}`;
    // Two short titles can join into one that reads as the main thread's (`Ma` + `in`).
    const title = readsAsMain(clip(joined, TITLE_MAX_CHARS))
      ? `${clip(joined, TITLE_MAX_CHARS - FUSED_MARK.length)}${FUSED_MARK}`
      : clip(joined, TITLE_MAX_CHARS);
    const publicChunks = publicCount(result.chunks.map((p) => p.chunk));
    const details = {
      sourceIds,
      ...shown,
      chunks: publicChunks,
      dropped: publicPlanned - publicChunks,
      threshold,
      ...(fallback ? { fallback: FUSION_FALLBACK_NOTICE } : {}),
    };
    // The index maps the new rows' memory on a scan thread while the store writes, then copies into
    // it (no page fault on the event loop). In huge pages that mapping no longer slows the store's
    // writes as 4 KB faults on the other core did (docs/benchmarks.md, "Thirtieth session"); it never
    // rejects, and one left mapping after a lost race only made room for rows that did not come.
    const reserving = memory.reserve(result.chunks.length);
    const change: ThreadChange = {
      at: new Date().toISOString(),
      expect: [a, b].map(({ id: tid, version }) => ({ id: tid, version })),
      createThreads: [
        // Privileged when either source is, memory off when either had it off: a member's fusion must
        // not undo a privacy choice made in either thread.
        {
          id,
          roomId: a.roomId,
          title,
          origin: 'fused',
          isMerged: true,
          tags: topics,
          weight: Math.max(a.weight, b.weight),
          privileged: a.privileged || b.privileged,
          memoryEnabled: a.memoryEnabled && b.memoryEnabled,
        },
      ],
      maxActiveThreads: this.maxActive,
      updateThreads: [{ id: a.id }, { id: b.id }],
      addMemory: result.chunks.map((p) => entryOf(p, memory.vectorModel)),
      setBridges: [a, b].map((t) => ({ threadId: id, otherId: t.id, weight: 1 })),
      history: [
        { threadId: id, actor, action: 'fuse', details },
        { threadId: a.id, actor, action: 'fuse', details: { ...details, fusedInto: id } },
        { threadId: b.id, actor, action: 'fuse', details: { ...details, fusedInto: id } },
      ],
      appendMessages: [
        {
          roomId: a.roomId,
          threadId: id,
          author: { id: 'assistant', name: ASSISTANT_NAME, kind: 'assistant' },
          text: introText(a, b, topics, shown),
        },
      ],
    };
    await turns.next();
    // Before the change commits: a merge or deletion of the fusion while the index reserves is followed.
    const watch = memory.watchIndex();
    const { addedMemoryIds, appended } = await this.committing(watch, change);
    await reserving;
    await this.indexCommitted(id, addedMemoryIds, result.chunks, watch);
    for (const m of appended) this.options.outlet?.broadcast(m.roomId, { type: 'message', message: m });
    if (fallback) {
      const warning: ServerMessage = {
        type: 'warning',
        code: 'FUSION_FALLBACK',
        message: FUSION_FALLBACK_NOTICE,
      };
      // Only where the introduction went: a room never told of the fusion would be warned about nothing it saw.
      for (const roomId of new Set(appended.map((m) => m.roomId))) this.options.outlet?.broadcast(roomId, warning);
    }
    return { thread: await this.get(id), ...shown, ...(fallback ? { fallback } : {}) };
  }

  /**
   * Refuses an operation that would leave `roomId` with more active threads than it may hold: each
   * is compared with every other when the room's bridges are refreshed (on the event loop), and
   * members may start threads, so their number is bounded here rather than by the cost of that.
   */
  private async makeRoom(roomId: string, adding: number): Promise<void> {
    const max = this.maxActive;
    const active = (await this.options.store.listThreads(roomId, 0)).length; // no archived thread asked for
    if (active + adding > max) throw roomFull(max, active);
  }

  /**
   * Runs `work`, the memory index's part of a change that has committed (`ids` of `threadId`). The
   * change is stored: an index that refuses (full, its worker gone, a store read failing) must not
   * fail the operation, whose caller would hear of an error for a change that was made while the
   * rooms were never told of it. `undone` says in the warning what the next start's load makes good.
   */
  private async afterCommit(threadId: string, ids: number[], undone: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.log.warn({ threadId, chunks: ids.length, err: (err as Error)?.message }, undone);
    }
  }

  /** Applies `change`, releasing `watch` (taken before it, for indexCommitted) when it fails. */
  private async committing(watch: IndexWatch, change: ThreadChange): Promise<ThreadChangeResult> {
    try {
      return await this.options.store.applyThreadChange(change);
    } catch (err) {
      watch.release();
      throw err;
    }
  }

  /**
   * Indexes the chunks a committed change added (MemoryService.indexStored, which releases `watch`,
   * taken before the change committed); see afterCommit.
   */
  private indexCommitted(threadId: string, ids: number[], chunks: PlannedChunk[], watch: IndexWatch): Promise<void> {
    return this.afterCommit(threadId, ids, 'memory chunks of a thread operation not indexed; they are indexed at the next start', () =>
      this.options.memory.indexStored(ids, chunks, watch),
    );
  }

  /** Reindexes the chunks a committed change moved (MemoryService.reindex, which already survives an embedder that fails); see afterCommit. */
  private reindexCommitted(threadId: string, ids: number[]): Promise<void> {
    return this.afterCommit(threadId, ids, 'moved memory chunks of a thread operation not reindexed; they are indexed at the next start', () =>
      this.options.memory.reindex(ids),
    );
  }

  /**
   * Drops from the memory index the chunks a committed change deleted (MemoryService.forget); see
   * afterCommit. A row left in the index names a chunk the store no longer has, which searches
   * leave out, and the next start's load does not index it again.
   */
  private forgetCommitted(threadId: string, ids: number[]): Promise<void> {
    return this.afterCommit(threadId, ids, 'deleted memory chunks of a thread operation not dropped from the index', () => this.options.memory.forget(ids));
  }

  /** Active threads a room may hold: checked early by makeRoom, and again inside each change that creates threads (ThreadChange.maxActiveThreads), where racing operations cannot both pass. */
  private get maxActive(): number {
    return this.options.maxActiveThreads ?? ROOM_MAX_ACTIVE_THREADS;
  }

  /**
   * Tells the room a thread was deleted (`DELETE /api/v1/threads/:id`, which deletes it itself), as
   * every other thread operation is told: the members' browsers fetch the thread list again on it,
   * and so learn at once of the new main thread that replaces a deleted main one (the list names it;
   * until now a page kept sending to the old main thread until its next welcome).
   */
  announceDeleted(thread: Thread): void {
    const what = thread.main ? ' with its messages: a new main thread takes what is said next.' : ' with its messages.';
    this.announce(thread, `“${literal(thread.title)}” was deleted${what}`);
  }

  /**
   * Tells everyone in the thread's room what changed, as a system message that is not stored
   * (their browsers refresh the thread list on it). Its text is rendered as markdown: the titles
   * it quotes go through markdownLiteral.
   */
  private announce(thread: Thread, text: string): void {
    const message: Message = {
      id: `sys_${randomUUID()}`,
      seq: 0,
      roomId: thread.roomId,
      threadId: thread.id,
      author: { id: 'system', name: 'Salon', kind: 'system' },
      text,
      ts: new Date().toISOString(),
    };
    this.options.outlet?.broadcast(thread.roomId, { type: 'message', message });
  }

  /** The thread's newest SPLIT_MAX_MESSAGES messages, oldest first: what a split lists and takes from. */
  private async allMessages(threadId: string): Promise<Message[]> {
    return this.options.store.threadMessages(threadId, SPLIT_MAX_MESSAGES);
  }

  /**
   * The messages of `wanted` among the thread's before seq `beforeSeq`, oldest first, looked for a
   * page at a time back from there, through at most SPLIT_MAX_MESSAGES (a window's messages are
   * close together; one that cites a message no longer in the thread must not read it all).
   */
  private async messagesBefore(threadId: string, beforeSeq: number, wanted: Set<string>): Promise<Message[]> {
    const found: Message[][] = [];
    let left = wanted.size;
    const turns = new Turns();
    for (let seq = beforeSeq, read = 0; left > 0 && read < SPLIT_MAX_MESSAGES;) {
      if (turns.due()) await turns.next();
      const page = await this.options.store.threadMessages(threadId, Math.min(OLDER_PAGE, SPLIT_MAX_MESSAGES - read), seq);
      if (!page.length) break;
      const hits = page.filter((m) => wanted.has(m.id));
      left -= hits.length;
      found.push(hits);
      read += page.length;
      seq = page[0].seq;
    }
    return found.reverse().flat();
  }

  /**
   * The chunks a merge must drop to keep the survivor within MEMORY_MAX_CHUNKS_PER_THREAD: the least
   * recently seen of both threads', as retention would drop them, but in the merge's own change.
   * Only a thread that gets a new chunk is pruned, so without this, merging a thread with copies of
   * its own memory (a fusion of it) again and again grew it past any cap.
   */
  private async overCapAfterMerge(survivorId: string, absorbed: StoredMemoryChunk[]): Promise<StoredMemoryChunk[]> {
    const excess = (await this.options.store.countMemoryChunks(survivorId)) + absorbed.length - this.options.memory.chunkCap;
    if (excess <= 0) return [];
    const both = [...(await this.allMemory(survivorId)), ...absorbed];
    both.sort((x, y) => x.updatedAt.localeCompare(y.updatedAt) || x.id - y.id);
    return both.slice(0, excess);
  }

  /** The ids and audiences of the thread's memory chunks, in id order (Store.scanThreadMemoryAudiences). */
  private async memoryAudiences(threadId: string): Promise<MemoryChunkAudience[]> {
    const out: MemoryChunkAudience[] = [];
    const turns = new Turns();
    for (let after = 0; ;) {
      if (turns.due()) await turns.next();
      const page = await this.options.store.scanThreadMemoryAudiences(threadId, after, AUDIENCE_PAGE);
      if (!page.length) break;
      for (const c of page) out.push(c);
      after = page[page.length - 1].id;
    }
    return out;
  }

  private async allMemory(threadId: string): Promise<StoredMemoryChunk[]> {
    const out: StoredMemoryChunk[] = [];
    // A synchronous store resolves every page at once: without turns the whole read would hold the loop.
    const turns = new Turns();
    for (let after = 0; ;) {
      if (turns.due()) await turns.next();
      // Without vectors: withVectors takes them from the memory index.
      const page = await this.options.store.scanThreadMemory(threadId, after, PAGE, false);
      if (!page.length) break;
      out.push(...page);
      after = page[page.length - 1].id;
    }
    return out;
  }

  /** The chunks with their vectors left in the memory index until read (MemoryService.indexedVectors). */
  private async withIndexedVectors(chunks: StoredMemoryChunk[]): Promise<VectorChunk[]> {
    const vectors = await this.options.memory.indexedVectors(chunks);
    return chunks.map((chunk, i) => ({
      chunk,
      get vector() {
        return vectors.get(i);
      },
    }));
  }

  private async withVectors(chunks: StoredMemoryChunk[]): Promise<VectorChunk[]> {
    const vectors = await this.options.memory.indexedVectorsOf(chunks);
    return chunks.map((chunk, i) => ({ chunk, vector: vectors[i] }));
  }

  /** Regenerates the thread's summary from its latest messages, in the background. */
  private resummarise(id: string): void {
    void (async () => {
      const recent = await this.options.store.threadMessages(id, 60);
      if (!recent.length) return;
      // Each message as the recent chat shows it (squashed, cut to 400 characters): 60 messages of 4,000 would be 240,000 characters to summarise.
      const text = recent.map((m) => `${m.author.name}: ${clip(squash(m.text), SUMMARY_LINE_CHARS)}`).join('\n');
      const summary = clip((await this.options.chat.summarize(text, 'What is this discussion about?')).trim(), 1000);
      await this.options.store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id, summary }] });
    })().catch((err: unknown) => this.log.warn({ threadId: id, err: (err as Error)?.message }, 'thread summary not regenerated'));
  }
}

/** A planned chunk as the store takes it; a copy's vector is still read only if the store asks for it. */
function entryOf(p: PlannedChunk, model: string): NewMemoryEntry {
  return {
    chunk: p.chunk,
    get vector() {
      return p.vector;
    },
    model,
    ...(p.updatedAt !== undefined ? { updatedAt: p.updatedAt } : {}),
    ...(p.copyOf !== undefined ? { copyOf: p.copyOf } : {}),
    ...(p.linesOf !== undefined ? { linesOf: p.linesOf } : {}),
  };
}

/** Both memories side by side, nothing fused: the fallback when fusion fails. */
function unionOf(a: VectorChunk[], b: VectorChunk[], target: { threadId: string; roomId: string }): FusionResult {
  const copy = (c: VectorChunk, kept: boolean): PlannedChunk => ({
    chunk: {
      ...newChunkOf(c.chunk),
      ...target,
      lineage: c.chunk.lineage ?? lineageOf(c.chunk),
      ...(kept ? { fusion: 'kept' as const } : {}),
    },
    get vector() {
      return c.vector;
    },
    copyOf: c.chunk.id,
  });
  return { chunks: [...a.map((c) => copy(c, false)), ...b.map((c) => copy(c, true))], fused: 0, kept: b.length };
}

/** The fused thread's first message: where it comes from and what it covers. */
function introText(a: Thread, b: Thread, topics: string[], r: { fused: number; kept: number }): string {
  const covered = topics.length ? ` Topics covered: ${topics.slice(0, 12).map(literal).join(', ')}.` : '';
  return (
    `This thread fuses the discussions "${literal(a.title)}" and "${literal(b.title)}". It holds no copied messages: ` +
    `its memory joins both (${plural(r.fused, 'passage', 'passages')} said in both ${r.fused === 1 ? 'was' : 'were'} made one, ${r.kept} kept from the second), ` +
    `so questions here are answered from what was said in either.${covered}`
  );
}

/**
 * What the room is told of a config change (`PUT …/config`, `/memory on|off`), one sentence per
 * field that changed, in one notice: each changes what the assistant does with everyone's asks
 * (privileged: whose memory an exchange goes to), so each is told as a thread operation is.
 */
function configNotices(before: Thread, after: Thread): string[] {
  const title = `“${literal(after.title)}”`;
  const told: string[] = [];
  if (before.memoryEnabled !== after.memoryEnabled)
    told.push(
      after.memoryEnabled
        ? `Memory is on in ${title}: the assistant searches and cites what this thread discussed before.`
        : `Memory is off in ${title}: the assistant no longer searches or cites what this thread discussed before (the recent chat still counts).`,
    );
  if (before.privileged !== after.privileged)
    told.push(
      after.privileged
        ? `${title} is privileged now: from now on each exchange with the assistant in it is remembered for its asker alone.`
        : `${title} is no longer privileged: from now on its exchanges with the assistant are remembered for the whole room (private asks stay their asker’s).`,
    );
  return told;
}

/** Chunks anyone may be given (not a private ask's): what counts shown to members say. */
function publicCount(chunks: { privileged: boolean }[]): number {
  let n = 0;
  for (const c of chunks) if (!c.privileged) n++;
  return n;
}

function newThreadId(): string {
  return `thr_${randomUUID()}`;
}

/**
 * A title as it is kept: on one line (runs of whitespace made one space), with no control,
 * invisible or bidi-override character left (they let a title pose as other text in the system
 * messages that quote it, as they would let a name pose as another).
 */
function checkTitle(title: unknown, field = 'title'): string {
  const t = typeof title === 'string' ? squash(title) : '';
  if (!t) throw new errors.ERR_BAD_THREAD_OP(`${field} is empty`);
  // Characters as the route's schema counts them (code points): an emoji is one, not two.
  if (codePoints(t) > TITLE_MAX_CHARS) throw new errors.ERR_BAD_THREAD_OP(`${field} is longer than ${TITLE_MAX_CHARS} characters`);
  if (hasHiddenCharacters(t))
    throw new errors.ERR_BAD_THREAD_OP(`${field} holds control, invisible or bidi-override characters, or a character with too many marks`);
  if (readsAsMain(t)) throw new errors.ERR_BAD_THREAD_OP(`${field} reads as “${MAIN_THREAD_TITLE}”, the title of the room’s main thread; choose another`);
  return t;
}

/**
 * Whether a title would pass for the main thread's: compared as display names are (nameKey: case,
 * spacing, punctuation, compatibility forms and lookalike letters folded), so `main`, `MAIN `,
 * `M a i n` and `Маin` in Cyrillic letters all do. The client names the main thread by its title.
 */
export function readsAsMain(title: string): boolean {
  return nameKey(title) === MAIN_KEY;
}

const MAIN_KEY = nameKey(MAIN_THREAD_TITLE);
/** Added to a fused thread's title that would otherwise read as the main thread's. */
const FUSED_MARK = ' (fused)';

function codePoints(text: string): number {
  return Array.from(text).length;
}

/**
 * Refuses, before anything is read, a split of too many parts or naming more messages than a split
 * takes from (SPLIT_MAX_MESSAGES, in all its parts together): such a split could only fail later,
 * after reading the thread's messages and checking every id named.
 */
function checkSplitSize(parts: SplitPart[]): void {
  if (!Array.isArray(parts) || !parts.length) throw new errors.ERR_BAD_THREAD_OP('a split needs at least one part');
  if (parts.length > SPLIT_MAX_PARTS) throw new errors.ERR_BAD_THREAD_OP(`a split makes at most ${SPLIT_MAX_PARTS} parts`);
  let named = 0;
  for (const p of parts) named += Array.isArray(p?.messageIds) ? p.messageIds.length : 0;
  if (named > SPLIT_MAX_MESSAGES) throw new errors.ERR_BAD_THREAD_OP(`a split moves at most ${SPLIT_MAX_MESSAGES} messages; its parts name ${named}`);
}

/**
 * A split would move every message out of `thread` (docs/architecture.md, "A split never empties
 * its thread"): the main thread takes what the room says next, and another thread left empty is
 * what a merge makes of it, archived and pointing at its survivor.
 */
function emptiedBySplit(thread: Thread): SalonError {
  return new errors.ERR_BAD_THREAD_OP(
    thread.main
      ? 'a split cannot move every message out of the main thread; leave it at least one'
      : 'a split cannot move every message out of the thread; leave it at least one, or merge the thread into another instead',
  );
}

function checkThreshold(threshold: number): void {
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1)) throw new errors.ERR_BAD_THREAD_OP('threshold must be a number in (0, 1]');
}

/** Tags the operations set (`merged_into:…`), as opposed to topics. */
function isMark(tag: string): boolean {
  return tag.startsWith('merged_into:');
}

function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])];
}

const round = (x: number) => Math.round(x * 1000) / 1000;
