/**
 * The Store seam: everything Salon persists. SQLite (better-sqlite3) is the default; a PostgreSQL
 * implementation for many nodes runs the same contract suite (test/store/contract.ts).
 * Every method is async so both implementations fit one interface.
 */
import type { ChunkRow, ContentItem, ContentKind, ItemSummary, ItemWithoutComments, NewChunk, StoredItem } from '../content/types.js';
import type { MemoryChunk, NewMemoryChunk } from '../memory/types.js';
import type { Author, Message, Source } from '../protocol/messages.js';

export interface ListItemsQuery {
  kind?: ContentKind;
  category?: string;
  /** 1..100 */
  limit: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type UpsertStatus = 'created' | 'updated' | 'unchanged';

export interface NewMessage {
  roomId: string;
  threadId: string;
  author: Author;
  text: string;
  clientId?: string;
  replyTo?: string;
  sources?: Source[];
  /** Defaults to now. */
  ts?: string;
}

export type ThreadStatus = 'active' | 'archived';
/** How a thread came to be: started, split off a parent, the survivor of a merge, or a fusion of two. */
export type ThreadOrigin = 'original' | 'split' | 'merged' | 'fused';
export type { SplitLock } from '../protocol/threads.js';
import type { SplitLock } from '../protocol/threads.js';

export interface Thread {
  id: string;
  roomId: string;
  title: string;
  /** The room's first thread. */
  main: boolean;
  createdAt: string;
  /** Whether the assistant searches and cites the thread's memory (`enable_chat_history_rag`). */
  memoryEnabled: boolean;
  /** Exchanges with the assistant are remembered for their askers alone, as private asks' are (`privileged`). */
  privileged: boolean;
  status: ThreadStatus;
  /** Topics, and marks such as `merged_into:<id>`. */
  tags: string[];
  summary: string;
  weight: number;
  parentId: string | null;
  /** The newest CHILD_IDS_LISTED threads split off it, oldest first (a thread may gather thousands). */
  childIds: string[];
  /** How many threads were split off it in all (childIds lists the newest of them). */
  childCount: number;
  origin: ThreadOrigin;
  /** Set while the thread is split-locked (merges refuse it); null when it is not. */
  splitLockedUntil: SplitLock | null;
  mergedInto: string | null;
  /** A fusion of two threads' memories (it holds no copied messages). */
  isMerged: boolean;
  /** Bumped by every thread operation, so one that read an older state fails instead of overwriting. */
  version: number;
}

/** A thread's own fields a thread operation may set (childIds and childCount follow from parentId). */
export type ThreadFields = Omit<Thread, 'id' | 'roomId' | 'createdAt' | 'childIds' | 'childCount' | 'version'>;

/** A new thread as a thread operation creates it. */
export interface NewThread extends Partial<ThreadFields> {
  id: string;
  roomId: string;
  title: string;
}

/** A weighted link between two threads on the same subject (stored both ways). */
export interface ThreadBridge {
  threadId: string;
  otherId: string;
  weight: number;
}

/** One recorded thread operation. */
export interface ThreadEvent {
  threadId: string;
  at: string;
  /** Who did it: a user id, `admin`, or `system`. */
  actor: string;
  action: 'created' | 'merge' | 'merged_into' | 'split' | 'split_off' | 'fuse' | 'unlock' | 'compact' | 'bridges';
  details: Record<string, unknown>;
}

/** A memory chunk with its stored vector (null until it is embedded; a chunk of another embedder is re-embedded). */
export interface StoredMemoryChunk extends MemoryChunk {
  vector: Float32Array | null;
  vectorModel: string | null;
}

/** A memory chunk's id and who may read it (Store.scanThreadMemoryAudiences). */
export interface MemoryChunkAudience {
  id: number;
  privileged: boolean;
  owner: string | null;
}

/**
 * What Store.fileMemoryChunk did: stored the chunk (`stored`, naming the thread it went to), or
 * stored nothing because the thread it would go to holds a chunk of its scope with its words
 * (`repeat`) that the caller has not compared with it yet.
 */
export type MemoryFiling = { stored: MemoryChunk } | { repeat: StoredMemoryChunk };

/**
 * What Store.addMemoryChunk and Store.fileMemoryChunk throw, storing nothing, for a private
 * exchange whose asker has forgotten their private asks in its room since it was asked: its
 * `forgetMark` is not the store's (Store.markPrivateForget), whichever node forgot, or is null
 * (it could not be read as it was asked, so the exchange cannot be shown to come after a forget).
 */
export class ForgottenExchange extends Error {
  constructor(roomId: string) {
    super(`its asker forgot their private asks in room ${roomId} after asking it`);
    this.name = 'ForgottenExchange';
  }
}

/**
 * What Store.addMemoryChunk and Store.fileMemoryChunk throw, storing nothing, for a live window
 * (NewMemoryChunk.live) some of whose messages are in a live window filed already, on any node:
 * `claimed` names them. The caller files what no window holds yet (MemoryService.realign).
 */
export class ClaimedMessages extends Error {
  constructor(readonly claimed: readonly string[]) {
    super(`${claimed.length} of its messages are in a window filed already`);
    this.name = 'ClaimedMessages';
  }
}

/**
 * What Store.addMemoryChunk and Store.fileMemoryChunk throw, storing nothing and claiming nothing,
 * for a live window (NewMemoryChunk.live) some of whose messages are in another thread than the
 * one it would be filed in, or an exchange whose question is (movedCited): a split moved them after
 * the chunk was made, on any node. `moved` says where each of those is now; the caller files a
 * window per thread (MemoryService.followMoves), an exchange whole where its question is.
 */
export class MovedMessages extends Error {
  constructor(readonly moved: readonly { id: string; threadId: string }[]) {
    super(`${moved.length} of its messages are in another thread now`);
    this.name = 'MovedMessages';
  }
}

/**
 * The messages of `c` the store checks are in the thread it files `c` in (MovedMessages): all of a
 * live window's, an exchange's question (it goes whole with it), none of another chunk's (an
 * import's or a thread operation's windows are made where their messages are).
 */
export function movedCited(c: NewMemoryChunk): string[] {
  if (c.live) return c.messageIds;
  return c.kind === 'exchange' ? c.messageIds.slice(0, 1) : [];
}

/**
 * Whether the store checks `c`'s forget mark as it is written: it carries one and is filed as its
 * owner's private memory (privileged: a private ask's exchange, or one asked in a privileged
 * thread). A public exchange is the room's, which no member's forget takes: stored whatever its mark.
 */
export function refusesForgotten(c: NewMemoryChunk): boolean {
  return c.forgetMark !== undefined && c.privileged && !!c.owner;
}

/**
 * Everything one thread operation changes, applied in one transaction: all of it, or on any error
 * (a thread changed since it was read, a message that moved meanwhile) none.
 */
export interface ThreadChange {
  at: string;
  /** Threads whose version must still be the one read. */
  expect: { id: string; version: number }[];
  createThreads?: NewThread[];
  /**
   * Active threads each room the change creates threads in may hold once it is applied: counted
   * inside the change's transaction (and serialised per room on a shared database), so operations
   * racing for a room's last places cannot both have them; ERR_BAD_THREAD_OP, and nothing changed,
   * when there is no room.
   */
  maxActiveThreads?: number;
  updateThreads?: ({ id: string } & Partial<ThreadFields>)[];
  /** Messages moving to another thread of the same room. */
  moveMessages?: { ids: string[]; threadId: string }[];
  /** Every message of a thread moving to another thread of the same room (a merge). */
  moveThreadMessages?: { fromThreadId: string; threadId: string }[];
  /** Memory chunks moving to another thread, keeping their vectors. */
  moveMemory?: { ids: number[]; threadId: string; roomId: string }[];
  /**
   * Memory chunks deleted with their lines. The threads that held them get a new version, as if
   * updated: an operation that read them before (a fusion's copies, a compaction's summaries) then
   * fails with ERR_THREAD_CHANGED rather than storing again what was deleted (`/forget private`).
   */
  deleteMemory?: number[];
  /**
   * Every memory chunk still in a thread, after `moveMemory` and `deleteMemory`, moving to another
   * thread of the same room (a merge): the chunks stored in the absorbed thread after the merge read
   * its memory, which would otherwise stay in an archived thread nobody searches. Their ids come
   * back in `movedMemoryIds`.
   */
  moveThreadMemory?: { fromThreadId: string; threadId: string; roomId: string }[];
  /**
   * The chunks of `threadId` the caller read to plan `moveMessages` (a split): `ids`. A chunk of
   * that thread filed since (not among them) that cites a message `moveMessages` moves would stay
   * behind citing what is said in another thread now, so the change places it as the plan would
   * have (split-memory.ts): it moves to the thread its messages went to when they all went to one
   * (an exchange: its question), its id in `movedMemoryIds`; otherwise it is deleted and comes back
   * in `partedMemory`, for the caller to window its messages again where each one is.
   */
  memoryRead?: { threadId: string; ids: number[] };
  /**
   * New memory chunks with their vectors (fusion), and when they were last seen (default: `at`),
   * which retention orders by. `copyOf` names a stored chunk whose stored vector `vector` is (a
   * copy): a store may refer to that row's vector instead of writing it again.
   */
  addMemory?: NewMemoryEntry[];
  /**
   * Bridges replaced: every bridge of these threads is dropped first, then `set` is written (both
   * ways). A bridge naming a thread that is gone or no longer active when the change is applied
   * (deleted or merged away after the caller read it) is left out.
   */
  dropBridgesOf?: string[];
  setBridges?: ThreadBridge[];
  /**
   * The threads a bridge refresh read, with their versions: the change is refused (ERR_THREAD_CHANGED,
   * or ERR_THREAD_NOT_FOUND) when one has moved or is gone, checked once the rooms' bridges are
   * locked. Unlike `expect`, the threads themselves are not locked: a refresh is only recomputed
   * later, and must not hold up appends to every thread of its room.
   */
  bridgesRead?: { id: string; version: number }[];
  history?: Omit<ThreadEvent, 'at'>[];
  /** Messages appended (after every other change), e.g. a fused thread's introduction. */
  appendMessages?: NewMessage[];
}

/** A memory chunk a thread change adds; see ThreadChange.addMemory. */
export interface NewMemoryEntry {
  chunk: NewMemoryChunk;
  vector: Float32Array;
  model: string;
  updatedAt?: string;
  copyOf?: number;
  /**
   * The stored chunks whose texts this chunk's text joins (a fused pair: `[A]: a` and `[B]: b`):
   * a store may let their full-text lines stand for this chunk's own instead of writing them again.
   */
  linesOf?: [number, number];
}

/** What a thread change did that the caller must tell the vector index and the rooms. */
export interface ThreadChangeResult {
  addedMemoryIds: number[];
  /** The chunks `moveThreadMemory` and `memoryRead` moved, for the vector index. */
  movedMemoryIds: number[];
  /** The chunks `memoryRead` deleted, their messages parted between threads by the change. */
  partedMemory?: { id: number; messageIds: string[] }[];
  appended: Message[];
}

export interface JobFailure {
  /** What failed: a URL, feed entry or file. */
  ref: string;
  code: string;
  message: string;
}

/** Who runs a job: a server in the background (`POST /api/v1/ingest`) or `salon ingest` in the foreground. */
export type JobRunner = 'server' | 'cli';

/** The unfinished jobs a sweep (Store.failUnfinishedJobs) leaves alone. */
export interface LiveJobs {
  /** This node's own jobs. */
  node?: string;
  /** Jobs saved or touched this recently (ms, by the store's clock); default 0. */
  silentForMs?: number;
  /** A node known to be gone (the process this one succeeds): its jobs are failed however recently touched. */
  gone?: string;
}

export interface IngestJob {
  id: string;
  /** Who runs it; records saved before this field existed count as `server`. */
  runner?: JobRunner;
  /**
   * The node that runs a `server` job (its bus's nodeId). It touches its unfinished jobs while it
   * lives (Store.touchJobs), so other nodes can tell its jobs from those of a node that is gone.
   */
  node?: string;
  /**
   * How many times a server started the job: one that the node running it left unfinished is run
   * again by another (IngestService), up to MAX_JOB_ATTEMPTS. Absent on records from before.
   */
  attempts?: number;
  /** What was asked for, e.g. `{url}` or `{feed}`. */
  request: Record<string, unknown>;
  status: 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
  total: number;
  done: number;
  failed: number;
  itemIds: string[];
  failures: JobFailure[];
  createdAt: string;
  updatedAt: string;
}

/** What a refreshing source polls: a feed, a YouTube channel feed, or Hacker News (a list or one story). */
export type SourceKind = 'feed' | 'youtube' | 'hn';
/** The Hacker News story lists a source may poll. */
export type SourceList = 'top' | 'best' | 'new';

/** A source as it is created (src/content/refresh/source-spec.ts validates and names it). */
export interface NewSource {
  /** `src_` + a hash of kind and target: the same source always gets the same id. */
  id: string;
  kind: SourceKind;
  /** The feed's URL, or an HN story's `item?id=N` URL; null for an HN list. */
  url: string | null;
  list: SourceList | null;
  /** Entries (or stories) read per poll. */
  limit: number;
  everyMinutes: number;
  /** `api` (POST /api/v1/sources, `salon sources add`) or `config` (SOURCES, DATA_DIR/sources). */
  origin: 'api' | 'config';
  createdAt: string;
  /** When it is first polled. */
  nextDueAt: string;
}

/** What the last poll left: conditional-request validators, its time and error, the failures in a row. */
export interface SourcePollState {
  etag: string | null;
  lastModified: string | null;
  lastPolledAt: string | null;
  lastError: { code: string; message: string } | null;
  /** Failed polls in a row (the backoff grows with it); 0 after a success. */
  failures: number;
}

/** A stored source with its poll state and lease. */
export interface SourceRecord extends NewSource, SourcePollState {
  /** Entries stored from it (one per guid, url or story). */
  itemCount: number;
  /** Who polls it now (a node id) and until when the lease holds, or null. */
  leaseOwner: string | null;
  leaseUntil: string | null;
  /** The ingest job of the poll running under the lease. */
  leaseJob: string | null;
  /**
   * Whether the lease holds now on the store's clock (PostgreSQL's, which its leases are on); absent
   * where leases are on the callers' clock (SQLite, one machine): `leaseUntil` against the caller's.
   */
  leaseHeld?: boolean;
}

/** What `putItems` did to one item. */
export interface PutItemResult {
  id: string;
  status: UpsertStatus;
  /** Chunks added and the row ids removed (both empty when the item and its chunks were unchanged). */
  added: ChunkRow[];
  removed: number[];
}

/**
 * Which vector index a logged change concerns: document chunks (row ids) or memory chunks (ids);
 * or `rooms`: messages stored unpublished outside a server, as pairs [room key, seq] (src/sync/room-changes.ts).
 */
export type ChangeTarget = 'documents' | 'memory' | 'rooms';

/**
 * A range of a room's seqs a batch of messages (an import) took and has not made readable yet: it
 * is being written, or it failed or was stopped, and the same batch run again makes it readable
 * (store/sqlite-unsettled.ts, store/postgres-unsettled.ts).
 */
export interface UnsettledSeqs {
  fromSeq: number;
  toSeq: number;
  /** When the batch took it (ISO-8601). */
  startedAt: string;
}

/** One entry of the vector indexes' change log, which nodes catch up from (src/sync). */
export interface IndexChange {
  /** Increasing in the order entries were logged (with gaps; commits may land slightly out of order). */
  seq: number;
  target: ChangeTarget;
  /** Rows added, changed or removed: a reader looks them up to know which. */
  ids: number[];
}

export interface TextHit {
  rowId: number;
  /** Higher is better; comparable only within one call. */
  score: number;
}

/** Everything Salon persists. */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Resolves when the store answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;

  // content
  /** Inserts or updates by id; an item whose hash is unchanged is left alone. */
  upsertItem(item: ContentItem): Promise<{ item: StoredItem; status: UpsertStatus }>;
  /**
   * Upserts several items and makes `chunks` each one's chunks (as replaceChunks), all in one
   * transaction: either every item is written or, on any failure, none is. An unchanged item that
   * has chunks keeps them. A row added and removed within the same call appears in neither list.
   */
  putItems(entries: { item: ContentItem; chunks: NewChunk[] }[]): Promise<PutItemResult[]>;
  getItem(id: string): Promise<StoredItem | null>;
  /** Deletes an item with its chunks in one transaction; returns the chunks' row ids (for the vector index), or null when there is no such item. */
  deleteItem(id: string): Promise<number[] | null>;
  /** Several items in one read, in the order asked; unknown ids are left out. */
  getItems(ids: string[]): Promise<StoredItem[]>;
  /**
   * getItems without the items' comments: an ask's passages need only the bodies of the items it
   * cites for their own text, and parsing a discussed article's comments was half the time of
   * reading it (bench:store-reads, 8 items of 40 comments: 0.38–0.41 against 0.20–0.23 ms).
   */
  getItemsWithoutComments(ids: string[]): Promise<ItemWithoutComments[]>;
  /** Newest first (publishedAt, then creation), paged by cursor. */
  listItems(query: ListItemsQuery): Promise<Page<StoredItem>>;
  /** listItems' page as summaries, read without the items' bodies and comments (GET /api/v1/content). */
  listItemSummaries(query: ListItemsQuery): Promise<Page<ItemSummary>>;
  countItems(kind?: ContentKind): Promise<number>;
  listCategories(): Promise<{ category: string; count: number }[]>;

  // chunks
  /**
   * Makes `chunks` the item's chunks. Chunks whose (ord, text) did not change keep their row id;
   * the rest are removed and added. Returns what changed so the vector index can follow.
   */
  replaceChunks(itemId: string, chunks: NewChunk[]): Promise<{ added: ChunkRow[]; removed: number[] }>;
  getChunks(rowIds: number[]): Promise<ChunkRow[]>;
  chunksOfItem(itemId: string): Promise<ChunkRow[]>;
  /** Chunks with rowId > afterRowId in rowId order, for rebuilding the index. */
  scanChunks(afterRowId: number, limit: number): Promise<ChunkRow[]>;
  countChunks(): Promise<number>;
  /** Full-text search over chunk text: the fallback when embedding fails. */
  searchText(query: string, limit: number, kinds?: ContentKind[]): Promise<TextHit[]>;

  // embedding cache of document vectors, keyed by (model, sha256 of text)
  getEmbeddings(model: string, textHashes: string[]): Promise<Map<string, Float32Array>>;
  /** Stores vectors; with `maxEntries`, the oldest entries beyond it (all models) are dropped. */
  putEmbeddings(model: string, entries: { textHash: string; vector: Float32Array }[], maxEntries?: number): Promise<void>;
  /** Models that have cached vectors, with their dimension and count. */
  embeddingModels(): Promise<{ model: string; dimensions: number; count: number }[]>;

  // messages
  /**
   * Persists a message with the room's next seq. A message whose (roomId, author.id, clientId)
   * was already stored is not stored again: the original is returned with duplicate=true. A merged
   * thread's message goes to the thread that absorbed it (thread-survivor.ts); one whose thread is
   * gone is ERR_THREAD_NOT_FOUND, one whose thread leads to no active thread ERR_THREAD_ARCHIVED.
   */
  appendMessage(message: NewMessage): Promise<{ message: Message; duplicate: boolean }>;
  /**
   * Appends several messages in the order given, with seqs that follow one another (but for
   * messages found stored already): readers see all of them, or none until the same batch again
   * succeeds. Each is kept or found again by its clientId as appendMessage does. A large batch is
   * written in several transactions (SQLite's hold the event loop, PostgreSQL's the room's seqs),
   * unread until the last one commits (sqlite-unsettled.ts, postgres-unsettled.ts), live messages
   * stored meanwhile taking seqs after it; a failure keeps what was stored, unread.
   */
  appendMessages(messages: NewMessage[]): Promise<{ message: Message; duplicate: boolean }[]>;
  /**
   * Which of `keys` the room's messages hold already (an author's clientId, as appendMessage finds a
   * message again), in the order given: an import looks for its messages under earlier keys too.
   */
  storedClientIds(roomId: string, keys: { authorId: string; clientId: string }[]): Promise<boolean[]>;
  /** Messages with seq > afterSeq, oldest first, at most `limit`. */
  messagesAfter(roomId: string, afterSeq: number, limit: number): Promise<Message[]>;
  /** The last `limit` messages, oldest first. */
  recentMessages(roomId: string, limit: number): Promise<Message[]>;
  /** The last `limit` messages with seq < beforeSeq, oldest first (paging back through history). */
  messagesBefore(roomId: string, beforeSeq: number, limit: number): Promise<Message[]>;
  lastSeq(roomId: string): Promise<number>;
  /** The room's unsettled ranges (UnsettledSeqs), oldest first: what an import left unreadable, or is writing. */
  unsettledSeqs(roomId: string): Promise<UnsettledSeqs[]>;
  /**
   * The last `limit` messages of a thread with seq < beforeSeq (all of them when beforeSeq is
   * omitted), oldest first.
   */
  threadMessages(threadId: string, limit: number, beforeSeq?: number): Promise<Message[]>;
  /**
   * The same messages as threadMessages without their `sources`: what the assistant reads as the
   * recent chat, which never shows them (an answer's sources are kilobytes of JSON to read and parse).
   */
  threadChat(threadId: string, limit: number, beforeSeq?: number): Promise<Message[]>;

  // threads
  /** The room's main thread, created on first call. */
  ensureMainThread(roomId: string): Promise<Thread>;
  getThread(id: string): Promise<Thread | null>;
  /**
   * The room's threads, main first, then by age: every active one and the newest `archived`
   * archived ones (all when omitted), each with its children's ids.
   */
  listThreads(roomId: string, archived?: number): Promise<Thread[]>;
  /** How many threads of the room are archived (merged or otherwise closed). */
  countArchivedThreads(roomId: string): Promise<number>;
  countThreadMessages(threadId: string): Promise<number>;
  /**
   * Deletes a thread with its messages and memory, all at once for readers (SQLite deletes a large
   * memory in slices after the transaction that deletes the thread, hidden meanwhile, and may
   * resolve before the last slice; close() waits for it); null when
   * there is no such thread. Returns the memory chunk ids removed (for the vector index) and the
   * messages count.
   */
  deleteThread(threadId: string): Promise<{ messages: number; memoryIds: number[] } | null>;
  /**
   * Makes the memory rows deleted so far as unreadable in the store's files as the store can
   * (`/forget private`): SQLite overwrites deleted content as it deletes and here truncates the
   * WAL, which still holds the pages as they were; PostgreSQL cannot without locking the tables
   * (docs/architecture.md says what remains). Resolves to false when it could not finish (SQLite:
   * the WAL stayed busy), to be tried again by the next call.
   */
  purgeDeleted(): Promise<boolean>;
  /** Applies a thread operation in one transaction (ERR_THREAD_CHANGED when an expected version moved). */
  applyThreadChange(change: ThreadChange): Promise<ThreadChangeResult>;
  /** A thread's messages in seq order after `afterSeq`, at most `limit` (for splitting and rebuilding memory). */
  threadMessagesAfter(threadId: string, afterSeq: number, limit: number): Promise<Message[]>;
  threadBridges(threadId: string): Promise<ThreadBridge[]>;
  /** The thread's recorded operations, oldest first. */
  threadHistory(threadId: string, limit: number): Promise<ThreadEvent[]>;
  /**
   * The thread's memory chunks with id > afterId in id order, with their vectors; without them
   * (vector and vectorModel null) when `vectors` is false, which reads a fraction of the bytes.
   */
  scanThreadMemory(threadId: string, afterId: number, limit: number, vectors?: boolean): Promise<StoredMemoryChunk[]>;
  /**
   * The ids of the thread's memory chunks with id > afterId in id order, each with its audience
   * (privileged, owner), at most `limit`: a few bytes a chunk, what a fusion starts its scratch
   * graphs from before it reads the rows (ThreadService.fuse).
   */
  scanThreadMemoryAudiences(threadId: string, afterId: number, limit: number): Promise<MemoryChunkAudience[]>;
  /**
   * `owner`'s private (privileged) chunks in every thread, with id > afterId in id order, without
   * their vectors: what `/forget private` looks through, wherever thread operations took them
   * (rows of a thread still being written or deleted in slices left out). With `filedSince`, those
   * filed in its room under its mark or a later one are left out too: exchanges addMemoryChunk or
   * fileMemoryChunk stored with that mark (NewMemoryChunk.forgetMark), asked after the forget that
   * moved it there, on any node. Every other row is read: one filed under an older mark, one of
   * another room, and one that keeps no mark (written by a thread operation, or before marks were
   * kept).
   */
  scanPrivateMemory(owner: string, afterId: number, limit: number, filedSince?: { roomId: string; mark: number }): Promise<MemoryChunk[]>;
  /** Counts of a thread's public (not privileged) fused and kept (fusion) chunks, as anyone may see them. */
  countFusedMemory(threadId: string): Promise<{ fused: number; kept: number }>;

  // conversation memory (src/memory/)
  /**
   * `owner`'s forget mark in `roomId`: how many times they have forgotten their private asks there
   * (`/forget private`), 0 if never. Every ask reads it as it is asked (its exchange may be filed
   * as its asker's own, in a privileged thread), and its exchange carries it (NewMemoryChunk.forgetMark).
   * A read called after a markPrivateForget of the same owner and room was called on this store
   * (before it resolved, even) finds the mark that move made or a later one: a forget and the ask
   * its member sends next act in that order on this node (SQLite moves the mark as it is called;
   * PostgreSQL, whose read and move take different connections, has the read wait for the move).
   */
  privateForgetMark(owner: string, roomId: string): Promise<number>;
  /**
   * Moves `owner`'s forget mark in `roomId` on and returns the new one. Once it has committed, no
   * exchange carrying an older mark is stored, from any node: addMemoryChunk and fileMemoryChunk
   * compare the marks inside their write's transaction (ForgottenExchange), and one that committed
   * before is there for the caller's read of the store that follows.
   */
  markPrivateForget(owner: string, roomId: string): Promise<number>;
  /**
   * Stores a memory chunk (with its vector, when it has one); `now` is its createdAt and updatedAt.
   * Filed as appendMessage files a message, in the write's transaction: a merged thread's chunk goes
   * to the thread that absorbed it (the returned chunk names that thread); ERR_THREAD_NOT_FOUND
   * when its thread is gone, ERR_THREAD_ARCHIVED when it leads to no active thread, nothing stored;
   * ForgottenExchange when it is privileged and carries a forget mark that is not its asker's any
   * more (refusesForgotten); for a live window, ClaimedMessages or MovedMessages (see those), and
   * MovedMessages for an exchange whose question is in another thread.
   */
  addMemoryChunk(chunk: NewMemoryChunk, now: string, vector?: { vector: Float32Array; model: string }): Promise<MemoryChunk>;
  /**
   * addMemoryChunk, unless the thread the chunk goes to holds a chunk of the same scope (privilege
   * and owner) whose words are the chunk's (src/memory/repeats.ts; the first such chunk by id) and
   * its id is not in `notRepeats` (chunks the caller compared and found no repeat: their vectors
   * are far): then that chunk is returned and nothing is stored. The lookup runs in the write's transaction, after the thread is resolved, so no merge
   * can bring a repeat in between the two; whether the found chunk is a repeat (its vector) is the
   * caller's to decide, and to refresh it (touchMemoryChunk) or to file again with it in `notRepeats`.
   */
  fileMemoryChunk(chunk: NewMemoryChunk, now: string, vector: { vector: Float32Array; model: string } | undefined, notRepeats: number[]): Promise<MemoryFiling>;
  /** Keeps a chunk's vector (one embedded after it was stored, or again by another embedder). */
  setMemoryVector(id: number, vector: Float32Array, model: string): Promise<void>;
  /** Marks a chunk as seen again at `now` (a repeat of it came in); false when it is gone. */
  touchMemoryChunk(id: number, now: string): Promise<boolean>;
  /** Several chunks (with their vectors) in one read, in the order asked; unknown ids are left out. */
  getMemoryChunks(ids: number[]): Promise<StoredMemoryChunk[]>;
  /** The same without their vectors (8 KB each at 2048 dimensions), for what cites them: an ask's memory search. */
  getMemoryChunkTexts(ids: number[]): Promise<MemoryChunk[]>;
  /** Chunks with id > afterId in id order, with their vectors, for rebuilding the memory index. */
  scanMemoryChunks(afterId: number, limit: number): Promise<StoredMemoryChunk[]>;
  /** A thread's chunks: all of them, or only the public ones (not privileged) that any reader may see counted. */
  countMemoryChunks(threadId: string, audience?: 'all' | 'public'): Promise<number>;
  /**
   * Full-text search over the lines of the memory chunks in `scopes` (src/memory/scopes.ts): the
   * best-matching line of each chunk, best first (higher scores are better; comparable within
   * one call).
   */
  searchMemoryLines(query: string, scopes: string[], limit: number): Promise<{ chunkId: number; line: string; score: number }[]>;
  /**
   * Retention: removes the thread's chunks beyond its newest `maxPerThread`, and every chunk (of
   * any thread) last updated before `olderThan`, oldest first; at most `limit` of them in one call
   * (the expired first), so a caller prunes a backlog in short transactions. Returns the ids removed.
   * The threads that held an expired chunk get a new version, as a thread change's `deleteMemory`
   * gives them: an operation that read it before (a fusion's copies, a compaction's summaries)
   * fails with ERR_THREAD_CHANGED rather than storing again what expired. The chunks beyond the
   * cap change no version: a thread at its cap loses one at every chunk it gains, and a busy
   * thread's fusion or compaction would never commit.
   */
  pruneMemory(threadId: string | null, maxPerThread: number, olderThan: string, limit?: number): Promise<number[]>;
  /**
   * Forgets the claims of live windows' messages (ClaimedMessages) made before `before` (a day ago,
   * CLAIM_KEEP_MS) and returns how many. A claim was made as its window was filed, after its
   * messages were said, so only a window held back past half that (CLAIMS_TRUSTED_MS: a stalled
   * node) can hold a message whose claim is gone; such a window reads its thread's stored windows
   * for its messages instead of trusting the claims (MemoryService.filedAlready).
   */
  pruneMemoryClaims(before: string): Promise<number>;

  // the change log of the vector indexes (src/sync): what a node that missed notices catches up from
  /** Logs that `target`'s rows `ids` changed, after the change committed; returns the entry's seq. */
  logIndexChange(target: ChangeTarget, ids: number[]): Promise<number>;
  /** Entries with seq > afterSeq, oldest first, at most `limit`. */
  indexChangesAfter(afterSeq: number, limit: number): Promise<IndexChange[]>;
  /**
   * The entries under `seqs` that the log holds, oldest first (a seq it does not hold is left out):
   * how a node looks again for seqs it found missing below its position. Callers pass at most a
   * few thousand seqs.
   */
  indexChangesAt(seqs: number[]): Promise<IndexChange[]>;
  /** The newest entry's seq; 0 when the log is empty. */
  lastIndexChange(): Promise<number>;
  /**
   * Deletes the entries logged more than `keepMs` ago (by the store's clock); returns how many.
   * Nodes read the log within seconds; a node that could not read it for longer restarts. The
   * newest entry stays however old, so `lastIndexChange` never goes back: a node starting after a
   * quiet day read 0 and took every seq before the next entry for missing.
   */
  pruneIndexChanges(keepMs: number): Promise<number>;

  // ingest jobs
  /**
   * Saves a job, which also counts as a sign of life of its node (touchJobs). False, and nothing
   * written, when the job is stored under another node: that node took it over (settleUnfinishedJobs).
   */
  saveJob(job: IngestJob): Promise<boolean>;
  getJob(id: string): Promise<IngestJob | null>;
  /** A sign of life of `node`: its unfinished jobs are touched now, by the store's clock. */
  touchJobs(node: string): Promise<void>;
  /**
   * Marks every `queued` or `running` job of `runner` as `failed`, appending `failure` and setting
   * updatedAt to `now`, but those of `except.node` and those saved or touched within the last
   * `except.silentForMs` by the store's clock (their node may be running them). A starting server
   * calls it for `server` jobs whose process is gone. A source poll lease held by a job it marks is
   * released, so the source is polled again at the next look. Returns the ids it marked.
   */
  failUnfinishedJobs(runner: JobRunner, failure: JobFailure, now: string, except?: LiveJobs): Promise<string[]>;
  /**
   * The jobs failUnfinishedJobs would mark, each saved as `settle` returns it (failed, or queued
   * again under another node), in one transaction that holds them from other sweeps. The source
   * poll lease of a job it ends is released. Returns the jobs as saved, by id.
   */
  settleUnfinishedJobs(runner: JobRunner, except: LiveJobs, settle: (job: IngestJob) => IngestJob): Promise<IngestJob[]>;
  /** Deletes the jobs that ended (done, failed, cancelled) and were last updated before `endedBefore`; returns how many. */
  pruneJobs(endedBefore: string): Promise<number>;

  // sources that refresh (src/content/refresh)
  /**
   * Now on the store's clock (ms since the epoch), where nodes that keep clocks of their own share
   * the store (PostgreSQL's now()): times several nodes compare, such as when a source is next due,
   * are read and set on it. Absent where callers share one machine's clock (SQLite): theirs counts.
   */
  clockNow?(): Promise<number>;
  /** Adds a source; ERR_SOURCE_EXISTS when its id is taken. */
  addSource(source: NewSource): Promise<SourceRecord>;
  getSource(id: string): Promise<SourceRecord | null>;
  /** Every source, oldest first. */
  listSources(): Promise<SourceRecord[]>;
  /** Changes how often a source is polled and when next; null when there is no such source. */
  updateSource(id: string, patch: { everyMinutes?: number; nextDueAt?: string; limit?: number }): Promise<SourceRecord | null>;
  /** Deletes a source with its entries (the items stay); false when there is none. */
  deleteSource(id: string): Promise<boolean>;
  /**
   * Takes the poll lease of a source for `owner` until `until`, recording `jobId`, when nobody
   * holds it (no lease, or one that expired before `now`): one conditional update, so of several
   * nodes asking at once exactly one gets it. True when this call took it. A store shared by
   * several machines (PostgreSQL) keeps the lease on its own clock: it holds `until` less `now`
   * from the store's now, and has expired when the store's clock is past it.
   */
  leaseSource(id: string, owner: string, jobId: string, now: string, until: string): Promise<boolean>;
  /**
   * Extends the lease `owner` holds for the poll `jobId` to `until` (a poll waiting for a job slot
   * or still running); `now` is the caller's clock, as for leaseSource. False, changing nothing,
   * when that lease is no longer theirs.
   */
  renewSourceLease(id: string, owner: string, jobId: string, now: string, until: string): Promise<boolean>;
  /** Records a poll's outcome and releases the lease, if `owner` still holds it for the poll `jobId`; false otherwise. */
  endSourcePoll(id: string, owner: string, jobId: string, state: SourcePollState, nextDueAt: string): Promise<boolean>;
  /** The stored hashes of a source's entries by key (guid, url or `hn:<id>`), for the keys asked. */
  sourceEntryHashes(sourceId: string, keys: string[]): Promise<Map<string, string>>;
  /**
   * Records an entry as stored (new, or changed to `hash`) under `itemId`. False, recording
   * nothing, when the source is gone (deleted while it was polled).
   */
  putSourceEntry(sourceId: string, key: string, hash: string, itemId: string, now: string): Promise<boolean>;
  /**
   * After a poll that read the source's list: marks its stored entries among `listed` (keys) as
   * seen `now`, then deletes its entries last seen before `forgetBefore` (no longer listed for
   * that long). Returns how many it deleted.
   */
  sweepSourceEntries(sourceId: string, listed: string[], now: string, forgetBefore: string): Promise<number>;

  // small key/value facts (seeding marker, index model, topic summaries)
  getMeta(key: string): Promise<string | null>;
  setMeta(key: string, value: string): Promise<void>;
  /** Sets key only if it is absent. True when this call set it. */
  claimMeta(key: string, value: string): Promise<boolean>;
}
