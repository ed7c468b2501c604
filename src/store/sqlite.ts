/**
 * The default Store: one SQLite file through better-sqlite3, in WAL mode. better-sqlite3 is
 * synchronous; every query here is short and indexed, so the async wrapper costs nothing real.
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ChunkRow, ContentItem, ContentKind, ItemSummary, ItemWithoutComments, NewChunk, StoredItem } from '../content/types.js';
import { errors } from '../errors.js';
import { MAX_MERGE_HOPS, takesNoMessages } from './thread-survivor.js';
import type { Message } from '../protocol/messages.js';
import { decodeCursor, encodeCursor, hashItem, sha256 } from './hashing.js';
import { failUnfinished } from './job-sweep.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { LineMerges } from './sqlite-line-merges.js';
import { SqliteReader } from './sqlite-reader.js';
import { WalPacer, type WalPaceOptions } from './sqlite-wal-pace.js';
import { WriterSync, type WriterSettings } from './sqlite-writer-sync.js';
import { WalIndexReader } from './wal-index.js';
import { SQLITE_MIGRATIONS } from './sqlite-schema.js';
import { wordsKey } from '../memory/repeats.js';
import { threadOfScope } from '../memory/scopes.js';
import type { MemoryChunk, NewMemoryChunk } from '../memory/types.js';
import * as sources from './sqlite-sources.js';
import { SqliteThreadTables, threadOfRow } from './sqlite-threads.js';
import { MAIN_THREAD_TITLE } from './thread-rows.js';
import { UnchangedTables, type KeptRowsByKey, type RowCache } from './sqlite-unchanged.js';
import { SETTLED, UnsettledBatch } from './sqlite-unsettled.js';
import { SliceBudget } from './slice-budget.js';
import { SettlingByKey } from '../settling-by-key.js';
import { sliceTurn } from '../slice-turns.js';
import { TermLineCounts } from './term-line-counts.js';
import {
  DELETION_STARTED_AT,
  STALE_STAGING_MS,
  STAGE_MIN_CHUNKS,
  STAGE_MIN_MESSAGES,
  applyStaged,
  cleanStaleStaging,
  deleteStaged,
  stageable,
  type StagingHost,
} from './sqlite-staging.js';
import { COMMON_TERM_LINES, MEMORY_LINES_PER_CHUNK, bestLinePerChunk, lineSlots, queryTerms, type LineHit } from './memory-lines.js';
import {
  type Row,
  ITEM_SUMMARY_COLUMNS,
  MEMORY_CHUNK_COLUMNS,
  MESSAGE_COLUMNS,
  MESSAGE_COLUMNS_BUT_SOURCES,
  blobToVector,
  fusedVector,
  itemToRow,
  jobJson,
  unfinished,
  memoryChunkValues,
  messageValues,
  newMessage,
  rowToChunk,
  rowToIndexChange,
  rowToItem,
  rowToItemSummary,
  rowToItemWithoutComments,
  ITEM_COLUMNS_BUT_COMMENTS,
  rowToMemoryChunk,
  rowToMessage,
  rowToUnsettledSeqs,
  rowToStoredMemoryChunk,
  vectorToBlob,
  type StoredVector,
} from './rows.js';
import type {
  ChangeTarget,
  IndexChange,
  IngestJob,
  PutItemResult,
  JobFailure,
  JobRunner,
  ListItemsQuery,
  LiveJobs,
  MemoryFiling,
  NewMemoryEntry,
  NewMessage,
  NewSource,
  Page,
  SourcePollState,
  SourceRecord,
  Store,
  MemoryChunkAudience,
  StoredMemoryChunk,
  TextHit,
  Thread,
  ThreadBridge,
  ThreadChange,
  ThreadChangeResult,
  ThreadEvent,
  UpsertStatus,
  UnsettledSeqs,
} from './types.js';
import { ClaimedMessages, ForgottenExchange, MovedMessages, movedCited, refusesForgotten } from './types.js';

/** `?, ?, …` for each of `columns` (comma-separated). */
const marks = (columns: string) =>
  columns
    .split(',')
    .map(() => '?')
    .join(', ');
/** How long storedClientIds looks keys up before the event loop gets a turn. */
const LOOKUP_SLICE_MS = 10;
/** How long one transaction of appendMessages may hold the event loop, its commit included (SliceBudget). */
export const APPEND_SLICE_MS = 12;
const INSERT_MESSAGE = `INSERT INTO messages (${MESSAGE_COLUMNS}) VALUES (${marks(MESSAGE_COLUMNS)})`;
/** A chunk written in full: under the id given (taken in advance, SqliteStore.insertMemoryEntries), or a new one for NULL. */
const INSERT_MEMORY_CHUNK = `INSERT INTO memory_chunks (id, ${MEMORY_CHUNK_COLUMNS}, lines_a, lines_b) VALUES (?, ${marks(MEMORY_CHUNK_COLUMNS)}, ?, ?) RETURNING id`;
/**
 * Copies of stored chunks (migration 9) as rows of other threads, all of a batch in one statement,
 * each under the id taken for it in advance: `?` = created_at, then a JSON array of `[id, copyOf,
 * threadId, roomId, updatedAt, fusion, lineage, kind, privileged, owner, messageIds, firstTs,
 * lastTs]`, lineage and messageIds as JSON values (not strings of JSON, which the list would escape
 * again: SQLite gives a value's text back as it was written, which for the message ids is
 * JSON.stringify's, as stored). A chunk is copied only while it is what the copy was planned from: the same kind,
 * audience, messages and times (a row's words never change in place: it moves, gets a vector, is
 * seen again, or goes). A copy refers to the chunk's own original if the chunk is a copy itself
 * (references never chain), and reads that row's text, messages and authors as it reads its
 * vector (migration 12: COPY_TEXT): it stores them empty, a fifth of its row. It takes that row's
 * line references too (migration 13), so a copy of a fused pair finds its sources' lines. It keeps
 * no forget mark (migration 30): a thread operation's rows are taken by any later forget.
 */
const INSERT_MEMORY_COPIES = `INSERT INTO memory_chunks (id, ${MEMORY_CHUNK_COLUMNS}, copy_of, lines_a, lines_b)
  SELECT j.value ->> '$[0]', j.value ->> '$[2]', j.value ->> '$[3]', o.kind, '', '', '', o.first_ts, o.last_ts,
    o.privileged, o.owner, '', ?, j.value ->> '$[4]', NULL, NULL, j.value ->> '$[5]', nullif(j.value -> '$[6]', 'null'), NULL, r.id, r.lines_a, r.lines_b
  FROM json_each(?) j JOIN memory_chunks o ON o.id = j.value ->> '$[1]' JOIN memory_chunks r ON r.id = coalesce(o.copy_of, o.id)
  WHERE o.kind = j.value ->> '$[7]' AND o.privileged = j.value ->> '$[8]' AND coalesce(o.owner, '') = j.value ->> '$[9]'
    AND r.message_ids = j.value -> '$[10]' AND o.first_ts = j.value ->> '$[11]' AND o.last_ts = j.value ->> '$[12]'
  RETURNING id`;
/**
 * A chunk's text, messages and authors: a copy's are its original's `o` (migration 12; copies
 * written before it hold the same in their own row).
 */
const COPY_TEXT = 'coalesce(o.text, c.text) AS text, coalesce(o.message_ids, c.message_ids) AS message_ids, coalesce(o.authors, c.authors) AS authors';
/** The columns of a MemoryChunk (id and vector aside) of a row `c` joined with its original `o`. */
const MEMORY_TEXT_COLUMNS = `c.thread_id, c.room_id, c.kind, ${COPY_TEXT}, c.first_ts, c.last_ts, c.privileged,
  c.owner, c.created_at, c.updated_at, c.fusion, c.lineage`;
/**
 * A row `r` whose vector is derived: a fused pair whose lines are its sources' (lines_a, lines_b:
 * migration 13) may store no vector but its model, and read normalize(a + b) from those rows'
 * vectors (SqliteStore.insertMemoryEntries: the 8 KB a pair of 2,048 dimensions is a tenth of a
 * fusion's store time). Before a row whose vector others derive from goes or changes its vector,
 * theirs is written out (SqliteStore.ownVectorsBefore). `typeof` reads no overflow page.
 */
const DERIVED_VECTOR = (r: string) => `typeof(${r}.vector) = 'null' AND ${r}.vector_model IS NOT NULL AND ${r}.lines_a IS NOT NULL`;
/**
 * Memory chunks as StoredMemoryChunk reads them: a copy (copy_of, migration 9) reads the vector
 * and model of the row it copies, unless it was given one of its own since; a row without one of
 * its own or its original's reads its sources' when it derives it (DERIVED_VECTOR, rowToStoredMemoryChunk).
 */
const MEMORY_SELECT = `SELECT c.id, ${MEMORY_TEXT_COLUMNS}, coalesce(c.vector, o.vector) AS vector,
  CASE WHEN typeof(c.vector) <> 'null' OR o.id IS NULL THEN c.vector_model ELSE o.vector_model END AS vector_model,
  la.vector AS vector_a, lb.vector AS vector_b
  FROM memory_chunks c LEFT JOIN memory_chunks o ON o.id = c.copy_of
  LEFT JOIN memory_chunks r ON r.id = coalesce(c.copy_of, c.id) AND typeof(c.vector) = 'null' AND ${DERIVED_VECTOR('r')}
  LEFT JOIN memory_chunks la ON la.id = r.lines_a LEFT JOIN memory_chunks lb ON lb.id = r.lines_b`;
/**
 * The chunk of a thread and scope whose words are `?` (the words key), for SqliteStore.repeatOf;
 * `scope` is the scope's condition on `c` (a public chunk's owner is only its asker, kept for a
 * privileged thread). Copies are not in the words index (migration 10): they are found through
 * their original's entry. The privilege is written into the SQL, not bound: a bound value compared
 * with a partial index's condition (memory_private_owner's `privileged = 1`) has SQLite compile the
 * statement again at every call, ~0.4 ms for this one against ~0.05 ms to run it.
 */
const findRepeat = (scope: string) => `SELECT * FROM (
    ${MEMORY_SELECT} WHERE c.words_key = ? AND c.copy_of IS NULL AND c.thread_id = ? AND ${scope}
    UNION ALL
    ${MEMORY_SELECT} WHERE c.copy_of IN (SELECT id FROM memory_chunks WHERE words_key = ? AND copy_of IS NULL) AND c.thread_id = ? AND ${scope}
  ) ORDER BY id LIMIT 1`;
/** findRepeat for a public chunk: `?` = words key, thread, twice. */
const FIND_PUBLIC_REPEAT = findRepeat('c.privileged = 0');
/**
 * findRepeat for a private chunk: `?` = words key, thread, owner, forget mark (-1: none), twice. A
 * row filed under an older mark than the chunk's is no repeat (migration 30): filed before a forget
 * that is still deleting (the forget's scan would delete it, refreshed, and the chunk with it).
 */
const FIND_PRIVATE_REPEAT = findRepeat("c.privileged = 1 AND coalesce(c.owner, '') = ? AND (c.forget_mark IS NULL OR c.forget_mark >= ?)");
/**
 * Up to how many lines (its terms' counts added up) a memory line search sorts its matches in
 * SQLite rather than in FTS5 (searchMemoryLines): at a few dozen matches 0.47 against 0.57 ms, at
 * 800–1,600 matches 6.9 against 6.3 ms (docs/benchmarks.md, "Forty-third session: ask overhead").
 */
export const LINES_SORTED_BY_SQLITE = 200;
/** The memory-chunk scope scopeOf computes (src/memory/scopes.ts), in SQL, of the chunk `c`. */
const CHUNK_SCOPE = "CASE WHEN c.privileged = 1 AND coalesce(c.owner, '') <> '' THEN c.thread_id || char(0) || c.owner ELSE c.thread_id END";
/** MEMORY_SELECT without the vectors: SQLite then never reads a row's overflow pages (where a vector lives). */
const MEMORY_SELECT_BARE = `SELECT c.id, ${MEMORY_TEXT_COLUMNS} FROM memory_chunks c LEFT JOIN memory_chunks o ON o.id = c.copy_of`;
/** The same with the row a copy reads its text from (kept rows are dropped when it is written). */
const MEMORY_SELECT_BARE_KEPT = `SELECT c.id, ${MEMORY_TEXT_COLUMNS}, c.copy_of FROM memory_chunks c LEFT JOIN memory_chunks o ON o.id = c.copy_of`;
/**
 * Rows of threads whose memory is still being written, or whose memory and messages are being
 * deleted (sqlite-staging.ts), are left out of whole-table reads and of a room's messages.
 */
const NOT_STAGED = 'thread_id NOT IN (SELECT thread_id FROM memory_staging)';
/** The ids of an owner's private rows after an id (`?` = owner, id), from their index (migration 25), staged ones left out: Store.scanPrivateMemory. */
const SCAN_PRIVATE = `SELECT id FROM memory_chunks WHERE owner = ? AND privileged = 1 AND id > ? AND ${NOT_STAGED}`;
/** A row not filed in a room (`?`) since its forget mark became a value (`?`): Store.scanPrivateMemory's `filedSince` (migration 30). */
const FILED_BEFORE = '(room_id <> ? OR coalesce(forget_mark, -1) < ?)';
const BUSY_TIMEOUT_MS = 5000;
/** Threads, items and chunks kept between reads while their tables are unchanged (sqlite-unchanged.ts). */
const THREAD_ROWS_KEPT = 1024;
const ITEM_ROWS_KEPT = 256;
const CHUNK_ROWS_KEPT = 4096;
/** Most each of those caches holds, in bytes of its rows' text and blobs (RowCache.maxSize). */
const ROWS_KEPT_BYTES = 8 * 1024 * 1024;
/**
 * The last messages of a thread kept for its recent chat (threadChat, read by every ask before
 * its search when the question leans back), and threads kept so. An append through this store
 * adds its message to its thread's kept tail; any other write to messages drops them all.
 */
const CHAT_TAIL_ROWS = 32;
const CHAT_TAILS_KEPT = 256;
/**
 * Memory chunks kept for the memory search (getMemoryChunkTexts: ~20 a search, most of them found
 * again by the thread's next asks), each dropped when its row or its original is written.
 */
const MEMORY_ROWS_KEPT = 2048;
/** The columns of a kept tail's rows (threadChat's), by name. */
const MESSAGE_COLUMN_NAMES = MESSAGE_COLUMNS_BUT_SOURCES.split(', ');
/** What a string may hold that SQLite would not give back as it was given: a NUL, a lone surrogate. */
const READS_BACK_OTHERWISE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/**
 * Page cache per connection, in KiB (SQLite's default is 2 MiB). Each ask reads ~20 chunks scattered
 * over the file; with the default cache most of them are read() calls into the OS cache.
 */
const PAGE_CACHE_KIB = 64 * 1024;
/** Prepared statements kept; IN-lists of varying length make new SQL, so the cache is bounded. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * A room's last seq: the highest of its messages' and of those deleted (room_seq, kept by the
 * messages_seq_mark trigger), so a seq is never given twice. An append reads it rather than writing
 * a counter row: one page fewer in every commit (docs/benchmarks.md, nineteenth session).
 */
const LAST_SEQ = `SELECT max(coalesce((SELECT max(seq) FROM messages WHERE room_id = ?), 0), coalesce((SELECT seq FROM room_seq WHERE room_id = ?), 0))`;

/** The checkpoint worker's frame counts and poll, and those of a deletion paced by the WAL (defaults: their modules'). */
export interface BackgroundCheckpointTunables extends WalPaceOptions {
  walFrames?: number;
  pollMs?: number;
}

/** Options for SqliteStore. */
export interface SqliteStoreOptions {
  /** File path, or ':memory:'. */
  filename: string;
  /**
   * Checkpoint the WAL from a worker thread instead of inside commits (the server sets this: chat
   * messages commit on the event loop). Files only. An object sets it with the worker's and the
   * pacing's frame counts (tests, troubleshooting; sqlite-checkpointer.ts, sqlite-wal-pace.ts).
   */
  backgroundCheckpoints?: boolean | BackgroundCheckpointTunables;
  /**
   * When a commit reaches the disk (SQLITE_SYNCHRONOUS). `normal` (default, with WAL): a commit
   * survives the process being killed; a power loss may lose the last commits, never corrupt the
   * file. `full`: every commit is fsynced before it is acknowledged, so it survives a power loss.
   */
  synchronous?: 'normal' | 'full';
  /**
   * Run the memory's line search on a reader thread of its own (the server sets this: it runs
   * beside the rest of an ask instead of holding the event loop). Files only.
   */
  readerThread?: boolean;
  /**
   * Up to how many lines (the rare terms' counts added up, as last counted) the memory's line
   * search sorts its matches by bm25() in SQLite rather than by FTS5's `rank` (searchMemoryLines):
   * the same rows either way, the faster way for the size. Default LINES_SORTED_BY_SQLITE; tests
   * set -1 or Infinity to run one way.
   */
  linesSortedBySqlite?: number;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly db: Database.Database;

  private checkpointer: SqliteCheckpointer | null = null;
  private readonly reader: SqliteReader | null;
  private writerSync: WriterSync | null = null;
  /** Paces deletions in slices by the WAL's length while the checkpoint worker runs (sqlite-wal-pace.ts). */
  private walPacer: WalPacer | null = null;
  private walLength: WalIndexReader | null = null;

  constructor(private readonly options: SqliteStoreOptions) {
    if (!options.filename) throw new Error('SqliteStore: options.filename is required');
    if (options.filename !== ':memory:') mkdirSync(dirname(options.filename), { recursive: true });
    let db: Database.Database | undefined;
    try {
      this.db = db = new Database(options.filename);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      this.db.pragma('foreign_keys = ON');
      this.db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
      // Deleted content is overwritten with zeros, on freed pages too (FAST leaves those as they
      // were: an exchange longer than ~800 bytes spills onto overflow pages, freed whole):
      // docs/architecture.md. Set before migrating: migration 24's merge frees old index pages.
      this.db.pragma('secure_delete = ON');
      this.migrate();
    } catch (err) {
      if (db?.open) db.close();
      throw cannotOpen(options.filename, err);
    }
    // The full-text index's merges, in slices of their own (migration 28 took them out of the writes);
    // asked for at once, for what a process that stopped before its slices ran left unmerged.
    this.lineMerges = new LineMerges(this.db);
    this.lineMerges.written();
    // After the migrations: their table rebuilds would drop the triggers.
    this.unchanged = new UnchangedTables(this.db, ['items', 'chunks', 'threads', 'messages', 'unsettled_seqs']);
    this.threadRows = this.unchanged.cache(['threads'], THREAD_ROWS_KEPT, ROWS_KEPT_BYTES);
    this.itemRows = this.unchanged.cache(['items'], ITEM_ROWS_KEPT, ROWS_KEPT_BYTES);
    this.chunkRows = this.unchanged.cache(['chunks', 'items'], CHUNK_ROWS_KEPT, ROWS_KEPT_BYTES);
    this.itemChunkRows = this.unchanged.cache(['chunks', 'items'], ITEM_ROWS_KEPT, ROWS_KEPT_BYTES);
    // A batch settling (unsettled_seqs) makes rows readable that a tail left out.
    this.chatTails = this.unchanged.cache(['messages', 'unsettled_seqs'], CHAT_TAILS_KEPT, ROWS_KEPT_BYTES);
    this.memoryTextRows = this.unchanged.rowCache('memory_chunks', 'id', MEMORY_ROWS_KEPT, ROWS_KEPT_BYTES, (r) => (r.copy_of as number | null) ?? null);
    this.staleCleanup = this.track(cleanStaleStaging(this.staging, new Date(Date.now() - STALE_STAGING_MS).toISOString(), () => this.closing));
    if (options.backgroundCheckpoints && options.filename !== ':memory:') this.startCheckpointer();
    this.reader =
      options.readerThread && options.filename !== ':memory:' ? new SqliteReader({ filename: options.filename, busyTimeoutMs: BUSY_TIMEOUT_MS }) : null;
  }

  private readonly statements = new Map<string, Database.Statement>();
  private readonly lineMerges: LineMerges;

  /** Rows read on every ask, kept while their tables are unchanged (sqlite-unchanged.ts). */
  readonly unchanged: UnchangedTables;
  private readonly threadRows: RowCache<string>;
  private readonly itemRows: RowCache<string>;
  private readonly chunkRows: RowCache<number>;
  private readonly itemChunkRows: RowCache<string>;
  /** Each thread's last CHAT_TAIL_ROWS messages (fewer: all it has), oldest first, without their sources. */
  private readonly chatTails: RowCache<string>;
  /** Memory chunks as getMemoryChunkTexts reads them (and the row a copy reads its text from), by id. */
  private readonly memoryTextRows: KeptRowsByKey;

  private readonly threads = new SqliteThreadTables({
    sql: (text) => this.sql(text),
    insertMemory: (entries, at) => this.insertMemoryEntries(entries, at),
    deleteMemory: (ids) => this.deleteMemoryRows(ids),
    moveMemory: (ids, threadId, roomId) => this.moveMemory(ids, threadId, roomId),
    memoryIdsOf: (threadId) => this.sql('SELECT id FROM memory_chunks WHERE thread_id = ? ORDER BY id').pluck().all(threadId) as number[],
    appendMessage: (m) => this.appendInTransaction(m).message,
  });

  /** A prepared statement for `text`, reused across calls: preparing costs as much as a small query. */
  private sql(text: string): Database.Statement {
    let stmt = this.statements.get(text);
    if (!stmt) {
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.clear();
      stmt = this.db.prepare(text);
      this.statements.set(text, stmt);
    }
    return stmt;
  }

  private migrate(): void {
    // BEGIN IMMEDIATE takes the write lock first, so two processes starting at once migrate once.
    const run = this.db.transaction(() => {
      const version = this.db.pragma('user_version', { simple: true }) as number;
      // A newer Salon's file: this version would write into tables it does not know.
      if (version > SQLITE_MIGRATIONS.length) {
        throw new Error(
          `SqliteStore: ${this.options.filename} was written by a newer Salon (schema version ${version}; this one knows up to ${SQLITE_MIGRATIONS.length}): run that version or a later one`,
        );
      }
      for (let v = version; v < SQLITE_MIGRATIONS.length; v++) {
        this.db.exec(SQLITE_MIGRATIONS[v]);
        this.db.pragma(`user_version = ${v + 1}`);
      }
    });
    run.immediate();
  }

  async ping(): Promise<void> {
    this.sql('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.closing = true;
    // Slices the deletions below run go on; the timer's stop.
    this.lineMerges.stop();
    while (this.applying.size || this.deleting.size) await Promise.all([...this.applying, ...this.deleting]);
    await this.reader?.stop();
    const checkpointer = this.checkpointer;
    this.checkpointer = null;
    await checkpointer?.stop();
    // Synced again before the close's own checkpoint.
    this.writerSync?.close();
    this.walLength?.close();
    if (this.db.open) this.db.close();
  }

  /**
   * While the worker runs, the writer neither checkpoints nor (with synchronous normal) syncs the
   * WAL header: sqlite-writer-sync.ts.
   */
  private startCheckpointer(): void {
    const tunables = typeof this.options.backgroundCheckpoints === 'object' ? this.options.backgroundCheckpoints : {};
    const writerSync = new WriterSync(this.db, { filename: this.options.filename, synchronous: this.options.synchronous ?? 'normal' });
    this.writerSync = writerSync;
    const checkpointer = new SqliteCheckpointer({
      filename: this.options.filename,
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      walFrames: tunables.walFrames,
      pollMs: tunables.pollMs,
      onRunning: (running) => writerSync.setWorkerRunning(running),
    });
    this.checkpointer = checkpointer;
    this.walLength = new WalIndexReader(this.options.filename);
    this.walPacer = new WalPacer(this.walLength, checkpointer, tunables);
  }

  /** What pacing deletions by the WAL did (sqlite-wal-pace.ts); null without the checkpoint worker. */
  get walPacing(): WalPacer['counts'] | null {
    return this.walPacer?.counts ?? null;
  }

  /** The writer's sync and checkpoint settings while the checkpoint worker runs; null without one. */
  get writerSettings(): WriterSettings | null {
    return this.writerSync?.current ?? null;
  }

  // content

  async upsertItem(item: ContentItem): Promise<{ item: StoredItem; status: UpsertStatus }> {
    const status = this.db.transaction(() => this.upsertItemNow(item)).immediate();
    const stored = (await this.getItem(item.id))!;
    return { item: stored, status };
  }

  async putItems(entries: { item: ContentItem; chunks: NewChunk[] }[]): Promise<PutItemResult[]> {
    const changes = this.db
      .transaction(() =>
        entries.map(({ item, chunks }) => {
          const status = this.upsertItemNow(item);
          // An unchanged item still gets chunks if an earlier run stopped between upsert and chunking.
          const keepChunks = status === 'unchanged' && this.sql('SELECT 1 FROM chunks WHERE item_id = ? LIMIT 1').get(item.id) !== undefined;
          return { id: item.id, status, ...(keepChunks ? { addedIds: [], removed: [] } : this.replaceChunksNow(item.id, chunks)) };
        }),
      )
      .immediate();
    // An item given twice can remove rows the call itself added: those appear in neither list
    // (getChunks no longer finds them).
    const addedHere = new Set(changes.flatMap((c) => c.addedIds));
    return Promise.all(
      changes.map(async (c) => ({
        id: c.id,
        status: c.status,
        added: await this.getChunks(c.addedIds),
        removed: c.removed.filter((id) => !addedHere.has(id)),
      })),
    );
  }

  /**
   * Inserts or updates one item; call inside a transaction. Its sort key is its publication time,
   * else its creation's: an update without one keeps the item where it was listed.
   */
  private upsertItemNow(item: ContentItem): UpsertStatus {
    const hash = hashItem(item);
    const now = new Date().toISOString();
    const existing = this.sql('SELECT hash FROM items WHERE id = ?').get(item.id) as Row | undefined;
    if (existing?.hash === hash) return 'unchanged';
    const row = {
      ...itemToRow(item),
      hash,
      sort_key: item.publishedAt ?? now,
      now,
    };
    if (existing) {
      this.sql(
        `UPDATE items SET kind=@kind, title=@title, url=@url, description=@description, body=@body, comments=@comments,
           category=@category, published_at=@published_at, image=@image, author=@author, channel=@channel, thumbnail=@thumbnail,
           site_name=@site_name, source=@source, hash=@hash, sort_key=coalesce(@published_at, created_at), updated_at=@now WHERE id=@id`,
      ).run(row);
      return 'updated';
    }
    this.sql(
      `INSERT INTO items (id, kind, title, url, description, body, comments, category, published_at, image, author, channel,
         thumbnail, site_name, source, hash, sort_key, created_at, updated_at)
         VALUES (@id, @kind, @title, @url, @description, @body, @comments, @category, @published_at, @image, @author, @channel,
         @thumbnail, @site_name, @source, @hash, @sort_key, @now, @now)`,
    ).run(row);
    return 'created';
  }

  async getItem(id: string): Promise<StoredItem | null> {
    const row = this.sql('SELECT * FROM items WHERE id = ?').get(id) as Row | undefined;
    return row ? rowToItem(row) : null;
  }

  async deleteItem(id: string): Promise<number[] | null> {
    const tx = this.db.transaction((itemId: string) => {
      if (!this.sql('SELECT 1 FROM items WHERE id = ?').get(itemId)) return null;
      const rows = (this.sql('SELECT row_id FROM chunks WHERE item_id = ? ORDER BY row_id').all(itemId) as Row[]).map((r) => r.row_id as number);
      // Chunks (and their text index rows) go with the item: ON DELETE CASCADE and the chunks_ad trigger.
      this.sql('DELETE FROM items WHERE id = ?').run(itemId);
      return rows;
    });
    return tx.immediate(id);
  }

  async getItems(ids: string[]): Promise<StoredItem[]> {
    return this.selectIn('SELECT * FROM items WHERE id', ids, (r) => r.id as string).map(rowToItem);
  }

  async getItemsWithoutComments(ids: string[]): Promise<ItemWithoutComments[]> {
    const read = (keys: string[]) => this.selectIn(`SELECT ${ITEM_COLUMNS_BUT_COMMENTS} FROM items WHERE id`, keys, (r) => r.id as string);
    return this.keptRows(this.itemRows, ids, read, (r) => r.id as string).map(rowToItemWithoutComments);
  }

  /**
   * The rows of `keys` (each read by `read` as selectIn reads them: in order, unknown ones left
   * out) through `cache`; a long list (an index's resync) or one naming a key twice is read as it is.
   */
  private keptRows<K extends string | number>(cache: RowCache<K>, keys: K[], read: (keys: K[]) => Row[], keyOf: (row: Row) => K): Row[] {
    if (!keys.length) return [];
    if (keys.length > cache.max / 4 || new Set(keys).size !== keys.length) return read(keys);
    return this.unchanged.rows(cache, keys, (missing) => new Map(read(missing).map((r) => [keyOf(r), r] as const))).filter((r): r is Row => r !== undefined);
  }

  /**
   * `${select} IN (…ids)`, rows in the order of `ids`; unknown ids are left out. The ids go in as
   * one JSON array (`json_each`), so each select is one prepared statement whatever the number of
   * ids: a statement per list length filled the statement cache, whose clearing then had every
   * query of the next asks prepared again (~0.05–0.1 ms each).
   */
  private selectIn<K extends string | number>(select: string, ids: K[], keyOf: (row: Row) => K): Row[] {
    if (!ids.length) return [];
    const out = this.sql(`${select} IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as Row[];
    // Rows usually come back in the order asked (an ascending IN list is walked in order): no sort then.
    if (out.length === ids.length && out.every((row, i) => keyOf(row) === ids[i])) return out;
    const order = new Map(ids.map((id, i) => [id, i]));
    return out.sort((a, b) => order.get(keyOf(a))! - order.get(keyOf(b))!);
  }

  async listItems(query: ListItemsQuery): Promise<Page<StoredItem>> {
    return this.pageOfItems('*', query, rowToItem);
  }

  async listItemSummaries(query: ListItemsQuery): Promise<Page<ItemSummary>> {
    // json_array_length reads the comments, not the body: a page of 100 whole items read up to 20 MB of bodies to drop them.
    return this.pageOfItems(`${ITEM_SUMMARY_COLUMNS}, json_array_length(comments) AS comment_count`, query, rowToItemSummary);
  }

  private pageOfItems<T>(columns: string, query: ListItemsQuery, map: (row: Row) => T): Page<T> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.kind) {
      where.push('kind = ?');
      params.push(query.kind);
    }
    if (query.category) {
      where.push('category = ? COLLATE NOCASE');
      params.push(query.category);
    }
    if (query.cursor) {
      const parts = decodeCursor(query.cursor);
      if (!parts || parts.length !== 2 || typeof parts[0] !== 'string' || typeof parts[1] !== 'string') {
        throw new errors.ERR_INVALID_CURSOR();
      }
      // A row value, which SQLite seeks in the sort indexes: `sort_key < ? OR (sort_key = ? AND id < ?)`
      // was checked on every index entry before the cursor, so a page far down cost a walk from the top.
      where.push('(sort_key, id) < (?, ?)');
      params.push(parts[0], parts[1]);
    }
    const sql = `SELECT ${columns} FROM items ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY sort_key DESC, id DESC LIMIT ?`;
    const rows = this.sql(sql).all(...params, query.limit + 1) as Row[];
    const more = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return { items: page.map(map), nextCursor: more && last ? encodeCursor([last.sort_key, last.id]) : null };
  }

  async countItems(kind?: ContentKind): Promise<number> {
    const row = kind
      ? (this.sql('SELECT count(*) AS n FROM items WHERE kind = ?').get(kind) as Row)
      : (this.sql('SELECT count(*) AS n FROM items').get() as Row);
    return row.n;
  }

  async listCategories(): Promise<{ category: string; count: number }[]> {
    return this.sql('SELECT category, count(*) AS count FROM items WHERE category IS NOT NULL GROUP BY category ORDER BY count DESC, category').all() as {
      category: string;
      count: number;
    }[];
  }

  // chunks

  async replaceChunks(itemId: string, chunks: NewChunk[]): Promise<{ added: ChunkRow[]; removed: number[] }> {
    const { addedIds, removed } = this.db.transaction(() => this.replaceChunksNow(itemId, chunks)).immediate();
    return { added: await this.getChunks(addedIds), removed };
  }

  /** Makes `chunks` the item's chunks; call inside a transaction. */
  private replaceChunksNow(itemId: string, chunks: NewChunk[]): { addedIds: number[]; removed: number[] } {
    const item = this.sql('SELECT kind, category FROM items WHERE id = ?').get(itemId) as Row | undefined;
    if (!item) throw new errors.ERR_CONTENT_NOT_FOUND(itemId);
    const existing = this.sql('SELECT row_id, ord, text_hash FROM chunks WHERE item_id = ?').all(itemId) as Row[];
    const keep = new Map(existing.map((r) => [`${r.ord}:${r.text_hash}`, r.row_id as number]));
    const wanted = new Set<string>();
    const insert = this.sql(`INSERT INTO chunks (item_id, ord, part, comment_by, text, text_hash) VALUES (?, ?, ?, ?, ?, ?) RETURNING row_id`);
    const addedIds: number[] = [];
    for (const c of chunks) {
      const textHash = sha256(c.text);
      const key = `${c.ord}:${textHash}`;
      wanted.add(key);
      if (keep.has(key)) continue;
      const r = insert.get(itemId, c.ord, c.part, c.commentBy ?? null, c.text, textHash) as Row;
      addedIds.push(r.row_id);
    }
    const removed = existing.filter((r) => !wanted.has(`${r.ord}:${r.text_hash}`)).map((r) => r.row_id as number);
    const del = this.sql('DELETE FROM chunks WHERE row_id = ?');
    for (const id of removed) del.run(id);
    return { addedIds, removed };
  }

  async getChunks(rowIds: number[]): Promise<ChunkRow[]> {
    const read = (keys: number[]) => this.selectIn(`${CHUNK_SELECT} WHERE c.row_id`, keys, (r) => r.row_id as number);
    return this.keptRows(this.chunkRows, rowIds, read, (r) => r.row_id as number).map(rowToChunk);
  }

  async chunksOfItem(itemId: string): Promise<ChunkRow[]> {
    const [rows] = this.unchanged.rows(
      this.itemChunkRows,
      [itemId],
      ([id]) => new Map<string, Row[]>([[id, this.sql(`${CHUNK_SELECT} WHERE c.item_id = ? ORDER BY c.ord`).all(id) as Row[]]]),
    );
    return rows!.map(rowToChunk);
  }

  async scanChunks(afterRowId: number, limit: number): Promise<ChunkRow[]> {
    return (this.sql(`${CHUNK_SELECT} WHERE c.row_id > ? ORDER BY c.row_id LIMIT ?`).all(afterRowId, limit) as Row[]).map(rowToChunk);
  }

  async countChunks(): Promise<number> {
    return (this.sql('SELECT count(*) AS n FROM chunks').get() as Row).n;
  }

  async searchText(query: string, limit: number, kinds?: ContentKind[]): Promise<TextHit[]> {
    const terms = this.textTerms(queryTerms(query));
    if (terms.length === 0) return [];
    const match = terms.map((t) => `"${t}"`).join(' OR ');
    const kindClause = kinds?.length ? `AND i.kind IN (${kinds.map(() => '?').join(',')})` : '';
    const rows = this.sql(
      `SELECT f.rowid AS row_id, bm25(chunks_fts) AS rank FROM chunks_fts f
         JOIN chunks c ON c.row_id = f.rowid JOIN items i ON i.id = c.item_id
         WHERE chunks_fts MATCH ? ${kindClause} ORDER BY rank LIMIT ?`,
    ).all(match, ...(kinds ?? []), limit) as Row[];
    // bm25() is lower-is-better and negative; flip it so higher is better.
    return rows.map((r) => ({ rowId: r.row_id, score: -r.rank }));
  }

  /**
   * The terms a text search ranks by: the rarest first, while the chunks they are on together stay
   * within TEXT_SEARCH_MAX_POSTINGS (each counted no further). FTS5 scores every chunk a term is on
   * before it can sort, and the 250 terms of a 500-character query, or two words on every chunk,
   * held the event loop 25-110 ms a search at 20,000 chunks (search answers by text whenever the
   * embedder is down).
   */
  private textTerms(terms: string[]): string[] {
    const count = this.sql(`SELECT count(*) AS n FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ${TEXT_SEARCH_MAX_POSTINGS + 1})`);
    const counted = terms.map((t) => ({ t, n: (count.get(`"${t}"`) as Row).n as number })).filter((c) => c.n > 0);
    const kept: string[] = [];
    let postings = 0;
    for (const c of counted.sort((a, b) => a.n - b.n)) {
      if (postings + c.n > TEXT_SEARCH_MAX_POSTINGS) break;
      kept.push(c.t);
      postings += c.n;
    }
    return kept;
  }

  // embeddings

  async getEmbeddings(model: string, textHashes: string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (let i = 0; i < textHashes.length; i += 500) {
      const batch = textHashes.slice(i, i + 500);
      const rows = this.sql(`SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN (${batch.map(() => '?').join(',')})`).all(
        model,
        ...batch,
      ) as Row[];
      for (const r of rows) out.set(r.text_hash, blobToVector(r.vector));
    }
    return out;
  }

  async putEmbeddings(model: string, entries: { textHash: string; vector: Float32Array }[], maxEntries?: number): Promise<void> {
    const insert = this.sql('INSERT OR REPLACE INTO embeddings (model, text_hash, dimensions, vector, stored_at) VALUES (?, ?, ?, ?, ?)');
    const now = Date.now();
    this.db.transaction(() => {
      for (const e of entries) insert.run(model, e.textHash, e.vector.length, Buffer.from(e.vector.buffer, e.vector.byteOffset, e.vector.byteLength), now);
      if (maxEntries === undefined) return;
      const { n } = this.sql('SELECT count(*) AS n FROM embeddings').get() as { n: number };
      if (n > maxEntries) {
        this.sql('DELETE FROM embeddings WHERE (model, text_hash) IN (SELECT model, text_hash FROM embeddings ORDER BY stored_at LIMIT ?)').run(n - maxEntries);
      }
    })();
  }

  async embeddingModels(): Promise<{ model: string; dimensions: number; count: number }[]> {
    return this.sql('SELECT model, dimensions, count(*) AS count FROM embeddings GROUP BY model, dimensions ORDER BY count DESC').all() as {
      model: string;
      dimensions: number;
      count: number;
    }[];
  }

  // messages

  async appendMessage(m: NewMessage): Promise<{ message: Message; duplicate: boolean }> {
    // Built once: wrapping a new function per call costs as much as the insert on the chat hot path.
    this.appendTx ??= this.db.transaction((msg: NewMessage) => this.appendInTransaction(msg));
    const before = this.unchanged.generation('messages');
    const appended = this.appendTx.immediate(m);
    if (!appended.duplicate) this.unchanged.follow(this.chatTails, 'messages', before, 1, () => this.followChatTail(appended.message));
    return appended;
  }

  /**
   * The message just appended (its row the only one written to messages since the tails were good)
   * goes at the end of its thread's kept tail. Unless it would not end it (a seq below the tail's
   * last) or its row would not read back as it is (a string SQLite stores as something else): then
   * the thread's tail goes, to be read again.
   */
  private followChatTail(message: Message): void {
    const entry = this.chatTails.entries.get(message.threadId);
    if (!entry) return;
    const rows = entry.value as Row[];
    const values = messageValues(message);
    const row = Object.fromEntries(MESSAGE_COLUMN_NAMES.map((column, i) => [column, values[i]])) as Row;
    const last = rows[rows.length - 1];
    const readsBack = Object.values(row).every((v) => typeof v !== 'string' || !READS_BACK_OTHERWISE.test(v));
    if ((last && last.seq >= message.seq) || !readsBack) this.chatTails.forget(message.threadId);
    else this.chatTails.keep(message.threadId, [...rows, row].slice(-CHAT_TAIL_ROWS));
  }

  private appendTx?: Database.Transaction<(m: NewMessage) => { message: Message; duplicate: boolean }>;

  /** appendMessages calls under way, by room (appendMessages). */
  private readonly batchesByRoom = new SettlingByKey();

  /**
   * In transactions of APPEND_SLICE_MS each, a turn of the event loop between them: 5,000 imported
   * messages of 4,000 characters held it ~0.3 s in one. No reader sees the batch before its last
   * transaction commits, and live messages stored meanwhile take seqs after all of it
   * (sqlite-unsettled.ts). A failure keeps what the call stored, unread: the same batch again finds
   * it by its clientIds, stores the rest, and makes all of it readable. Batches of a room run one
   * after another, so each gets back ids of rows as they are once it is done.
   */
  async appendMessages(messages: NewMessage[]): Promise<{ message: Message; duplicate: boolean }[]> {
    const rooms = [...new Set(messages.map((m) => m.roomId))];
    const before = rooms.map((roomId) => this.batchesByRoom.settled([roomId]));
    const task = Promise.all(before).then(() => this.appendBatch(messages));
    for (const roomId of rooms) this.batchesByRoom.track([roomId], task);
    return task;
  }

  private async appendBatch(messages: NewMessage[]): Promise<{ message: Message; duplicate: boolean }[]> {
    const budget = new SliceBudget(APPEND_SLICE_MS);
    const batch = new UnsettledBatch((text) => this.sql(text), messages);
    const write = this.db.transaction(
      budget.timed((from: number) => {
        const slice: { message: Message; duplicate: boolean }[] = [];
        do slice.push(this.appendInTransaction(messages[from + slice.length], batch));
        while (from + slice.length < messages.length && budget.more(slice.length));
        if (from + slice.length < messages.length) batch.hide((roomId) => this.lastSeqNow(roomId));
        else batch.settle();
        return slice;
      }),
    );
    const appended: { message: Message; duplicate: boolean }[] = [];
    try {
      while (appended.length < messages.length) {
        if (appended.length) await sliceTurn();
        const slice = write.immediate(appended.length);
        batch.committed();
        budget.committed(slice.length);
        appended.push(...slice);
      }
    } catch (err) {
      this.db.transaction(() => batch.abandon()).immediate();
      throw err;
    }
    return appended;
  }

  async storedClientIds(roomId: string, keys: { authorId: string; clientId: string }[]): Promise<boolean[]> {
    const find = this.sql('SELECT 1 FROM messages WHERE room_id = ? AND author_id = ? AND client_id = ?');
    const found: boolean[] = [];
    // One indexed lookup a key: an import of 5,000 messages into a thread that absorbed many asks
    // for 5,000 keys a thread, so the event loop gets a turn every LOOKUP_SLICE_MS.
    for (let start = performance.now(); found.length < keys.length; start = performance.now()) {
      if (found.length) await new Promise((resolve) => setImmediate(resolve));
      do {
        const k = keys[found.length];
        found.push(find.get(roomId, k.authorId, k.clientId) !== undefined);
      } while (found.length < keys.length && performance.now() - start < LOOKUP_SLICE_MS);
    }
    return found;
  }

  /** Stores `m` with the room's next seq (`batch`'s, for a message of appendMessages), or finds it stored already. */
  private appendInTransaction(m: NewMessage, batch?: UnsettledBatch): { message: Message; duplicate: boolean } {
    if (m.clientId) {
      const dup = this.sql('SELECT * FROM messages WHERE room_id = ? AND author_id = ? AND client_id = ?').get(m.roomId, m.author.id, m.clientId) as
        Row | undefined;
      if (dup) {
        const message = rowToMessage(dup);
        batch?.written(message, true);
        return { message, duplicate: true };
      }
    }
    const threadId = this.threadTakingMessages(m.threadId);
    const seq = batch ? batch.seq(m.roomId, () => this.lastSeqNow(m.roomId)) : this.lastSeqNow(m.roomId) + 1;
    const message = newMessage(threadId === m.threadId ? m : { ...m, threadId }, seq);
    this.sql(INSERT_MESSAGE).run(...messageValues(message));
    batch?.written(message, false);
    return { message, duplicate: false };
  }

  /**
   * The thread a message (or a memory chunk) for `threadId` is stored in (inside the write's
   * transaction): that one, or the thread that absorbed it when it was merged meanwhile (merges of
   * merges followed), where the merge moved its messages and memory; in the archived shell nobody
   * would read or search it. A thread deleted while the row was on its way (an answer being
   * written, a say in flight, a window being embedded) takes nothing: the row would outlive its
   * thread, served to anyone and deletable by no one. Nor does an archived thread the walk ends on
   * (`takesNoMessages`). Synchronous, as better-sqlite3's transactions are: no merge commits
   * between the walk's reads and the insert.
   */
  private threadTakingMessages(threadId: string): string {
    let id = threadId;
    for (let hops = 0; ; hops++) {
      const row = this.sql('SELECT merged_into, status FROM threads WHERE id = ?').get(id) as { merged_into: string | null; status: string } | undefined;
      if (!row) throw new errors.ERR_THREAD_NOT_FOUND(threadId);
      if (row.status === 'active') return id;
      if (!row.merged_into || hops >= MAX_MERGE_HOPS) throw takesNoMessages(threadId, row.merged_into);
      id = row.merged_into;
    }
  }

  async messagesAfter(roomId: string, afterSeq: number, limit: number): Promise<Message[]> {
    return (
      this.sql(`SELECT * FROM messages WHERE room_id = ? AND seq > ? AND ${NOT_STAGED} AND ${SETTLED} ORDER BY seq LIMIT ?`).all(
        roomId,
        afterSeq,
        limit,
      ) as Row[]
    ).map(rowToMessage);
  }

  async recentMessages(roomId: string, limit: number): Promise<Message[]> {
    const rows = this.sql(`SELECT * FROM messages WHERE room_id = ? AND ${NOT_STAGED} AND ${SETTLED} ORDER BY seq DESC LIMIT ?`).all(roomId, limit) as Row[];
    return rows.reverse().map(rowToMessage);
  }

  async messagesBefore(roomId: string, beforeSeq: number, limit: number): Promise<Message[]> {
    const rows = this.sql(`SELECT * FROM messages WHERE room_id = ? AND seq < ? AND ${NOT_STAGED} AND ${SETTLED} ORDER BY seq DESC LIMIT ?`).all(
      roomId,
      beforeSeq,
      limit,
    ) as Row[];
    return rows.reverse().map(rowToMessage);
  }

  async threadMessages(threadId: string, limit: number, beforeSeq = Number.MAX_SAFE_INTEGER): Promise<Message[]> {
    return this.lastOfThread('*', threadId, limit, beforeSeq);
  }

  async threadChat(threadId: string, limit: number, beforeSeq = Number.MAX_SAFE_INTEGER): Promise<Message[]> {
    if (!Number.isInteger(limit) || limit < 0 || limit > CHAT_TAIL_ROWS || typeof beforeSeq !== 'number' || Number.isNaN(beforeSeq)) {
      return this.lastOfThread(MESSAGE_COLUMNS_BUT_SOURCES, threadId, limit, beforeSeq);
    }
    // From the thread's kept tail (its last CHAT_TAIL_ROWS messages, or all of them when it has fewer).
    const [tail] = this.unchanged.rows(this.chatTails, [threadId], ([key]) => {
      const rows = this.sql(`SELECT ${MESSAGE_COLUMNS_BUT_SOURCES} FROM messages WHERE thread_id = ? AND ${SETTLED} ORDER BY seq DESC LIMIT ?`).all(
        key,
        CHAT_TAIL_ROWS,
      ) as Row[];
      return new Map([[key, rows.reverse()]]);
    });
    const rows = tail as Row[];
    let end = rows.length;
    while (end > 0 && rows[end - 1].seq >= beforeSeq) end--;
    // Fewer before beforeSeq than asked for, in a tail that may not be the whole thread: read it all.
    if (end < limit && rows.length >= CHAT_TAIL_ROWS) return this.lastOfThread(MESSAGE_COLUMNS_BUT_SOURCES, threadId, limit, beforeSeq);
    return rows.slice(Math.max(0, end - limit), end).map(rowToMessage);
  }

  /** The last `limit` messages of a thread before `beforeSeq`, oldest first, with `columns` of their rows. */
  private lastOfThread(columns: string, threadId: string, limit: number, beforeSeq: number): Message[] {
    const rows = this.sql(`SELECT ${columns} FROM messages WHERE thread_id = ? AND seq < ? AND ${SETTLED} ORDER BY seq DESC LIMIT ?`).all(
      threadId,
      beforeSeq,
      limit,
    ) as Row[];
    return rows.reverse().map(rowToMessage);
  }

  async lastSeq(roomId: string): Promise<number> {
    return this.lastSeqNow(roomId);
  }

  async unsettledSeqs(roomId: string): Promise<UnsettledSeqs[]> {
    return (this.sql('SELECT from_seq, to_seq, started_at FROM unsettled_seqs WHERE room_id = ? ORDER BY from_seq').all(roomId) as Row[]).map(
      rowToUnsettledSeqs,
    );
  }

  /** The room's last seq given (LAST_SEQ); inside a transaction, what the next append follows. */
  private lastSeqNow(roomId: string): number {
    return this.sql(LAST_SEQ).pluck().get(roomId, roomId) as number;
  }

  // threads

  async ensureMainThread(roomId: string): Promise<Thread> {
    const tx = this.db.transaction((): string => {
      const existing = this.sql('SELECT id FROM threads WHERE room_id = ? AND main = 1').get(roomId) as Row | undefined;
      if (existing) return existing.id;
      const id = `thr_${randomUUID()}`;
      this.threads.insert({ id, roomId, title: MAIN_THREAD_TITLE, main: true }, new Date().toISOString());
      return id;
    });
    return this.threads.get(tx.immediate())!;
  }

  async getThread(id: string): Promise<Thread | null> {
    const [row] = this.unchanged.rows(this.threadRows, [id], ([key]) => {
      const found = this.threads.row(key);
      return new Map<string, Row>(found ? [[key, found]] : []);
    });
    return row ? threadOfRow(row) : null;
  }

  async listThreads(roomId: string, archived?: number): Promise<Thread[]> {
    return this.threads.list(roomId, archived);
  }

  async countArchivedThreads(roomId: string): Promise<number> {
    return this.threads.countArchived(roomId);
  }

  /** One transaction; a large memory for a thread the change creates is written in slices first (sqlite-staging.ts). */
  async applyThreadChange(change: ThreadChange): Promise<ThreadChangeResult> {
    const staged = stageable(change);
    if (staged.length >= STAGE_MIN_CHUNKS) {
      const applying = applyStaged(this.staging, change, staged);
      const settled = applying.then(
        () => undefined,
        () => undefined,
      );
      this.applying.add(settled);
      void settled.finally(() => this.applying.delete(settled));
      return applying;
    }
    this.threadChangeTx ??= this.db.transaction((c: ThreadChange) => this.threads.apply(c));
    return this.threadChangeTx.immediate(change);
  }

  private get staging(): StagingHost {
    return {
      db: this.db,
      sql: (text) => this.sql(text),
      insertMemory: (entries, at) => this.insertMemoryEntries(entries, at),
      deleteMemory: (ids) => this.deleteMemoryRows(ids),
      deletingMemory: () => {
        const deletion = this.memoryDeletion();
        return { row: (id) => deletion.rows([id]), done: () => deletion.done() };
      },
      apply: (c) => this.threads.apply(c),
      merges: this.lineMerges,
      pace: () => this.walPacer?.pace() ?? null,
    };
  }

  private threadChangeTx?: Database.Transaction<(c: ThreadChange) => ThreadChangeResult>;

  async threadMessagesAfter(threadId: string, afterSeq: number, limit: number): Promise<Message[]> {
    const rows = this.sql(`SELECT * FROM messages WHERE thread_id = ? AND seq > ? AND ${SETTLED} ORDER BY seq LIMIT ?`).all(threadId, afterSeq, limit) as Row[];
    return rows.map(rowToMessage);
  }

  async threadBridges(threadId: string): Promise<ThreadBridge[]> {
    return this.threads.bridges(threadId);
  }

  async threadHistory(threadId: string, limit: number): Promise<ThreadEvent[]> {
    return this.threads.history(threadId, limit);
  }

  async countThreadMessages(threadId: string): Promise<number> {
    return (this.sql(`SELECT count(*) AS n FROM messages WHERE thread_id = ? AND ${SETTLED}`).get(threadId) as Row).n;
  }

  /**
   * One transaction; a large memory (STAGE_MIN_CHUNKS chunks or more) or many messages
   * (STAGE_MIN_MESSAGES) are only hidden in it, as staged rows are, and deleted after it in slices
   * (sqlite-staging.ts) while the caller goes on: rows whose copies live in other threads hand them
   * their lines one by one, which for a thread that fed a fusion held the event loop for about a
   * second, and the 80,000 messages of a thread that remembers 10,000 windows took 0.1–0.4 s to
   * delete. close() waits for those slices; a process that stops first leaves them to the next open.
   */
  async deleteThread(threadId: string): Promise<{ messages: number; memoryIds: number[] } | null> {
    const tx = this.db.transaction(() => {
      if (!this.sql('SELECT 1 FROM threads WHERE id = ?').get(threadId)) return null;
      const memoryIds = (this.sql('SELECT id FROM memory_chunks WHERE thread_id = ?').all(threadId) as Row[]).map((r) => r.id as number);
      const messages = (this.sql('SELECT count(*) AS n FROM messages WHERE thread_id = ?').get(threadId) as Row).n as number;
      const sliced = memoryIds.length >= STAGE_MIN_CHUNKS || messages >= STAGE_MIN_MESSAGES;
      if (sliced) this.sql('INSERT INTO memory_staging (thread_id, started_at) VALUES (?, ?)').run(threadId, DELETION_STARTED_AT);
      else {
        // Rows first: a row that others copy hands its lines to one of them as it goes (migration 9).
        const privileged = this.privilegedAmong(memoryIds);
        this.ownVectorsBefore(memoryIds);
        this.sql('DELETE FROM memory_chunks WHERE thread_id = ?').run(threadId);
        this.linesAfterDeleting(memoryIds, privileged);
        this.sql('DELETE FROM messages WHERE thread_id = ?').run(threadId);
      }
      this.sql('DELETE FROM thread_bridges WHERE thread_id = ? OR other_id = ?').run(threadId, threadId);
      this.sql('DELETE FROM thread_history WHERE thread_id = ?').run(threadId);
      this.sql('UPDATE threads SET parent_id = NULL WHERE parent_id = ?').run(threadId);
      this.sql('DELETE FROM threads WHERE id = ?').run(threadId);
      return { messages, memoryIds, sliced };
    });
    const deleted = tx.immediate();
    if (!deleted) return null;
    if (deleted.sliced) {
      // A failed slice leaves the entry: the rows stay hidden, and the next open deletes them.
      this.track(deleteStaged(this.staging, [threadId], deleted.memoryIds));
    }
    return { messages: deleted.messages, memoryIds: deleted.memoryIds };
  }

  async purgeDeleted(): Promise<boolean> {
    if (this.options.filename === ':memory:' || !this.db.open) return true;
    const emptied = (await this.checkpointer?.truncateWal()) ?? null;
    if (emptied !== null) return emptied;
    // No worker (or it is gone): the writer checkpoints itself, as it then does anyway.
    const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    return result.busy === 0;
  }

  /** Hidden memory rows of deleted threads being deleted in slices (deleteThread, and at open); close() waits for them. */
  private readonly deleting = new Set<Promise<void>>();
  /** Set by close(): the clean-up begun at open stops at its next slice (the next open goes on with it). */
  private closing = false;
  /**
   * What a process that died while staging or deleting left, deleted in slices from the open on
   * (sqlite-staging.ts): resolves when that is done or stopped by close().
   */
  readonly staleCleanup: Promise<void>;

  /** Adds a deletion in slices to those close() waits for; a failed slice leaves its entry, and the next open deletes the rows. */
  private track(rows: Promise<void>): Promise<void> {
    const tracked = rows.catch(() => {});
    this.deleting.add(tracked);
    void tracked.finally(() => this.deleting.delete(tracked));
    return tracked;
  }
  /**
   * Thread changes whose new memory is being written in slices (applyStaged); close() waits for them
   * too: closed between two slices, the next slice and the cleanup failed, leaving the rows hidden
   * until a process opened the store an hour later.
   */
  private readonly applying = new Set<Promise<void>>();

  // conversation memory

  async privateForgetMark(owner: string, roomId: string): Promise<number> {
    return this.forgetMarkOf(owner, roomId);
  }

  async markPrivateForget(owner: string, roomId: string): Promise<number> {
    return this.sql(
      'INSERT INTO private_forgets (owner, room_id, mark) VALUES (?, ?, 1) ON CONFLICT (owner, room_id) DO UPDATE SET mark = mark + 1 RETURNING mark',
    )
      .pluck()
      .get(owner, roomId) as number;
  }

  private forgetMarkOf(owner: string, roomId: string): number {
    return (this.sql('SELECT mark FROM private_forgets WHERE owner = ? AND room_id = ?').pluck().get(owner, roomId) as number | undefined) ?? 0;
  }

  /**
   * Throws ForgottenExchange for a private exchange asked before its asker's last forget in its
   * room (refusesForgotten); called inside the write's transaction, which no markPrivateForget
   * commits into (one writer). Returns the mark its row keeps: the one checked, or null.
   */
  private refuseForgotten(c: NewMemoryChunk): number | null {
    if (!refusesForgotten(c)) return null;
    if (c.forgetMark === null || this.forgetMarkOf(c.owner!, c.roomId) !== c.forgetMark) throw new ForgottenExchange(c.roomId);
    return c.forgetMark as number;
  }

  async addMemoryChunk(c: NewMemoryChunk, now: string, vector?: { vector: Float32Array; model: string }): Promise<MemoryChunk> {
    this.addMemoryTx ??= this.db.transaction((chunk: NewMemoryChunk, at: string, v?: { vector: Float32Array; model: string }) => {
      const forgetMark = this.refuseForgotten(chunk);
      this.claimMessages(chunk, at);
      return this.insertNewMemory(this.filedChunk(chunk), at, v, forgetMark);
    });
    return this.addMemoryTx.immediate(c, now, vector);
  }

  async fileMemoryChunk(
    c: NewMemoryChunk,
    now: string,
    vector: { vector: Float32Array; model: string } | undefined,
    notRepeats: number[],
  ): Promise<MemoryFiling> {
    this.fileMemoryTx ??= this.db.transaction((chunk: NewMemoryChunk, at: string, v: { vector: Float32Array; model: string } | undefined, known: number[]) =>
      this.fileMemoryInTransaction(chunk, at, v, known),
    );
    return this.fileMemoryTx.immediate(c, now, vector, notRepeats);
  }

  private setVectorTx?: Database.Transaction<(id: number, vector: Float32Array, model: string) => void>;
  private addMemoryTx?: Database.Transaction<(c: NewMemoryChunk, now: string, vector?: { vector: Float32Array; model: string }) => MemoryChunk>;
  private fileMemoryTx?: Database.Transaction<
    (c: NewMemoryChunk, now: string, vector: { vector: Float32Array; model: string } | undefined, notRepeats: number[]) => MemoryFiling
  >;

  /**
   * The repeat lookup and the insert in one transaction (Store.fileMemoryChunk): synchronous, as
   * better-sqlite3's transactions are, so no merge commits between the thread's walk, the lookup
   * in the thread it ends on and the insert. Nor does another filing of the same words: SQLite has
   * one writer (`BEGIN IMMEDIATE`), so it needs no lock of the words as PostgreSQL does (lockFiling).
   */
  private fileMemoryInTransaction(
    c: NewMemoryChunk,
    now: string,
    vector: { vector: Float32Array; model: string } | undefined,
    notRepeats: number[],
  ): MemoryFiling {
    const forgetMark = this.refuseForgotten(c);
    const filed = this.filedChunk(c);
    const repeat = this.repeatOf(filed, forgetMark);
    if (repeat && !notRepeats.includes(repeat.id)) return { repeat };
    this.claimMessages(c, now);
    return { stored: this.insertNewMemory(filed, now, vector, forgetMark) };
  }

  /**
   * Claims a live window's messages (NewMemoryChunk.live) inside its filing's transaction;
   * ClaimedMessages, rolling the filing back, when a live window filed before holds any of them.
   */
  private claimMessages(c: NewMemoryChunk, now: string): void {
    if (!c.live || !c.messageIds.length) return;
    const ids = JSON.stringify(c.messageIds);
    const claimed = (this.sql('SELECT message_id FROM memory_claims WHERE message_id IN (SELECT value FROM json_each(?))').all(ids) as Row[]).map(
      (r) => r.message_id as string,
    );
    if (claimed.length) throw new ClaimedMessages(claimed);
    this.sql('INSERT INTO memory_claims (message_id, claimed_at) SELECT value, ? FROM json_each(?)').run(now, ids);
  }

  async pruneMemoryClaims(before: string): Promise<number> {
    return this.sql('DELETE FROM memory_claims WHERE claimed_at < ?').run(before).changes;
  }

  /**
   * The chunk in the thread it goes to: where a message for its thread would (`threadTakingMessages`),
   * or nowhere; MovedMessages when some of the messages it must follow (movedCited) are in another thread.
   */
  private filedChunk(c: NewMemoryChunk): NewMemoryChunk {
    const threadId = this.threadTakingMessages(c.threadId);
    const cited = movedCited(c);
    if (cited.length) {
      const elsewhere = this.sql('SELECT id, thread_id FROM messages WHERE id IN (SELECT value FROM json_each(?)) AND thread_id <> ?').all(
        JSON.stringify(cited),
        threadId,
      ) as Row[];
      if (elsewhere.length) throw new MovedMessages(elsewhere.map((r) => ({ id: r.id as string, threadId: r.thread_id as string })));
    }
    return threadId === c.threadId ? c : { ...c, threadId };
  }

  /** A filing's row (`forgetMark`: the one it keeps, refuseForgotten). */
  private insertNewMemory(c: NewMemoryChunk, now: string, vector: { vector: Float32Array; model: string } | undefined, forgetMark: number | null): MemoryChunk {
    const id = this.writeMemoryRow(null, c, now, now, vector, forgetMark);
    // `live` only asked the filing to claim (claimMessages): no row keeps it, nor the chunk returned.
    const { live, ...stored } = c;
    return { ...stored, id, createdAt: now, updatedAt: now };
  }

  /** A chunk's row in full, with its vector and lines, under `id` (null: a new one); returns its id. */
  private writeMemoryRow(
    id: number | null,
    c: NewMemoryChunk,
    now: string,
    updatedAt: string,
    vector?: { vector: Float32Array; model: string },
    forgetMark: number | null = null,
  ): number {
    const written = this.writeMemoryRowOnly(id, c, now, updatedAt, vector, null, forgetMark);
    this.writeMemoryLines(written, c.text);
    return written;
  }

  /**
   * `lines`: the rows whose lines stand for the chunk's own (migration 13), written then by nobody;
   * a null `vector.vector`: the chunk derives its vector from theirs (DERIVED_VECTOR); `forgetMark`:
   * the one the row keeps (memoryChunkValues).
   */
  private writeMemoryRowOnly(
    id: number | null,
    c: NewMemoryChunk,
    now: string,
    updatedAt: string,
    vector?: StoredVector,
    lines: [number, number] | null = null,
    forgetMark: number | null = null,
  ): number {
    const values = memoryChunkValues(c, now, updatedAt, vector, forgetMark);
    return (this.sql(INSERT_MEMORY_CHUNK).get(id, ...values, lines?.[0] ?? null, lines?.[1] ?? null) as Row).id as number;
  }

  /**
   * A chunk's lines, under its rowids (chunk id × 16 + line). They carry no scope (migration 26: the
   * column stays, empty): the line search reads each matching line's chunk for it, so a chunk that
   * moves to another thread keeps its lines as they are.
   */
  private writeMemoryLines(id: number, text: string): void {
    const insert = this.sql("INSERT INTO memory_lines (rowid, text, scope) VALUES (?, ?, '')");
    let written = 0;
    lineSlots(text).forEach((line, i) => line.trim() && (written += insert.run(id * MEMORY_LINES_PER_CHUNK + i, line).changes));
    this.termLines.linesWritten(written);
    this.lineMerges.written();
  }

  /**
   * A thread change's new chunks (inside its transaction); their ids, in order. The ids are taken
   * in advance, one after another, so that every copy (`copyOf`) of the batch is written by one
   * INSERT … SELECT (row by row they cost about five times as much: a fusion writes ~14,000), and
   * the rest in full before it, between the copies' ids, which are still in the entries' order. A
   * copy stores neither vector nor lines: its original's serve (searchMemoryLines finds them for
   * it). One whose original is gone, or is not what it was planned from (INSERT_MEMORY_COPIES), is
   * written in full after the others.
   */
  private insertMemoryEntries(entries: NewMemoryEntry[], at: string): number[] {
    if (!entries.length) return [];
    const { next } = this.sql(
      `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'memory_chunks'), 0), coalesce((SELECT max(id) FROM memory_chunks), 0)) + 1 AS next`,
    ).get() as Row;
    const ids = entries.map((_, i) => (next as number) + i);
    const copies = entries.flatMap(({ chunk: c, copyOf, updatedAt }, i) =>
      copyOf === undefined
        ? []
        : [
            [
              ids[i],
              copyOf,
              c.threadId,
              c.roomId,
              updatedAt ?? at,
              c.fusion ?? null,
              c.lineage ?? null,
              c.kind,
              c.privileged ? 1 : 0,
              c.owner ?? '',
              c.messageIds,
              c.firstTs,
              c.lastTs,
            ],
          ],
    );
    // The rows written in full before the copies: written after them, between their ids, a fused
    // pair's 2-3 KB row cost SQLite three times as much (docs/benchmarks.md, "Forty-first session").
    const shared = new Map<number, { rows: [number, number]; vectors: boolean } | null>();
    const writeFull = (i: number) => {
      const e = entries[i];
      const share = this.sourcesToShare(e);
      shared.set(i, share);
      const vector = share?.vectors ? { vector: null, model: e.model } : e;
      this.writeMemoryRowOnly(ids[i], e.chunk, at, e.updatedAt ?? at, vector, share?.rows);
    };
    entries.forEach((e, i) => e.copyOf === undefined && writeFull(i));
    const copied = new Set(copies.length ? (this.sql(INSERT_MEMORY_COPIES).pluck().all(at, JSON.stringify(copies)) as number[]) : []);
    entries.forEach((e, i) => e.copyOf !== undefined && !copied.has(ids[i]) && writeFull(i));
    // All rows first, then all their lines, in id order: an FTS5 insert between two rows evicts the
    // b-tree pages the next row is written to.
    entries.forEach((e, i) => shared.has(i) && !shared.get(i) && this.writeMemoryLines(ids[i], e.chunk.text));
    return ids;
  }

  /**
   * The rows whose lines a fused pair's lines may be (NewMemoryEntry.linesOf), as stored now: each
   * source's own original if it is a copy. Null, and the chunk writes its lines in full, when a
   * source is gone or has none of its lines itself (a fused pair fused again: its lines are those
   * of three chunks or more). `vectors`: its vector may be derived from theirs too (DERIVED_VECTOR),
   * as both sources' vectors are those rows' own, of the entry's model.
   */
  private sourcesToShare(e: NewMemoryEntry): { rows: [number, number]; vectors: boolean } | null {
    if (!e.linesOf) return null;
    // A row's model is set only with its vector, unless it derives it (and then it has lines_a).
    const origin = this.sql(
      `SELECT r.id, r.vector_model = ? AND (c.copy_of IS NULL OR c.vector_model IS NULL) AS same
       FROM memory_chunks c JOIN memory_chunks r ON r.id = coalesce(c.copy_of, c.id) WHERE c.id = ? AND r.lines_a IS NULL`,
    );
    const a = origin.get(e.model, e.linesOf[0]) as Row | undefined;
    const b = a === undefined ? undefined : (origin.get(e.model, e.linesOf[1]) as Row | undefined);
    return a === undefined || b === undefined ? null : { rows: [a.id, b.id], vectors: a.same === 1 && b.same === 1 };
  }

  /**
   * Before rows `ids` are deleted or given another vector: the chunks that derive their vectors from
   * those rows' (DERIVED_VECTOR) store them as their own, as derived now. Their copies read them there.
   */
  private ownVectorsBefore(ids: number[]): void {
    const deriving = this.sql(
      `SELECT c.id, a.vector AS vector_a, b.vector AS vector_b FROM memory_chunks c
         JOIN memory_chunks a ON a.id = c.lines_a JOIN memory_chunks b ON b.id = c.lines_b
       WHERE c.id IN (SELECT id FROM memory_chunks WHERE lines_a = ? UNION SELECT id FROM memory_chunks WHERE lines_b = ?)
         AND c.copy_of IS NULL AND ${DERIVED_VECTOR('c')}`,
    );
    const own = this.sql('UPDATE memory_chunks SET vector = ? WHERE id = ?');
    for (const id of ids) for (const r of deriving.all(id, id) as Row[]) own.run(vectorToBlob(fusedVector(r.vector_a, r.vector_b)), r.id);
  }

  /**
   * After rows `gone` were deleted: every chunk whose lines were theirs (migration 13) and still
   * refers to them is given lines of its own, from its text (a row that had copies left its lines
   * to its heir, and the chunks referring to it now refer to the heir: migration 14). Copies of
   * such a chunk drop the references with it, and find its new lines through it (as a deleted
   * original's copies find their heir's).
   */
  private ownLinesAfter(gone: number[]): void {
    const referring = this.sql(
      'SELECT id, copy_of, text FROM memory_chunks WHERE lines_a = ? UNION SELECT id, copy_of, text FROM memory_chunks WHERE lines_b = ?',
    );
    const drop = this.sql('UPDATE memory_chunks SET lines_a = NULL, lines_b = NULL WHERE id = ?');
    const byId = new Map<number, Row>();
    for (const id of gone) for (const r of referring.all(id, id) as Row[]) byId.set(r.id as number, r);
    // In id order, so the lines go into FTS5 in rowid order (linesAfterDeleting).
    for (const r of [...byId.values()].sort((a, b) => (a.id as number) - (b.id as number))) {
      if (r.copy_of === null) this.writeMemoryLines(r.id, r.text);
      drop.run(r.id);
    }
  }

  /** A copy given a vector keeps it as its own (and still shares its original's lines). */
  async setMemoryVector(id: number, vector: Float32Array, model: string): Promise<void> {
    this.setVectorTx ??= this.db.transaction((row: number, v: Float32Array, m: string) => {
      this.ownVectorsBefore([row]);
      this.sql('UPDATE memory_chunks SET vector = ?, vector_model = ? WHERE id = ?').run(vectorToBlob(v), m, row);
    });
    this.setVectorTx.immediate(id, vector, model);
  }

  async scanThreadMemory(threadId: string, afterId: number, limit: number, vectors = true): Promise<StoredMemoryChunk[]> {
    const select = vectors ? MEMORY_SELECT : MEMORY_SELECT_BARE;
    // The page's ids first (the thread index holds them), then those rows: ordering whole rows by
    // id had SQLite sort every remaining row of the thread, text and all, for each page.
    const ids = this.sql('SELECT id FROM memory_chunks WHERE thread_id = ? AND id > ? ORDER BY id LIMIT ?').pluck().all(threadId, afterId, limit) as number[];
    return this.selectIn(`${select} WHERE c.id`, ids, (r) => r.id as number).map(rowToStoredMemoryChunk);
  }

  async scanThreadMemoryAudiences(threadId: string, afterId: number, limit: number): Promise<MemoryChunkAudience[]> {
    const rows = this.sql('SELECT id, privileged, owner FROM memory_chunks WHERE thread_id = ? AND id > ? ORDER BY id LIMIT ?').all(
      threadId,
      afterId,
      limit,
    ) as Row[];
    return rows.map((r) => ({ id: r.id as number, privileged: r.privileged === 1, owner: (r.owner as string | null) ?? null }));
  }

  async scanPrivateMemory(owner: string, afterId: number, limit: number, filedSince?: { roomId: string; mark: number }): Promise<MemoryChunk[]> {
    // The ids from the owners' index of private rows (migration 25), then those rows.
    const ids = (
      filedSince
        ? this.sql(`${SCAN_PRIVATE} AND ${FILED_BEFORE} ORDER BY id LIMIT ?`).pluck().all(owner, afterId, filedSince.roomId, filedSince.mark, limit)
        : this.sql(`${SCAN_PRIVATE} ORDER BY id LIMIT ?`).pluck().all(owner, afterId, limit)
    ) as number[];
    return this.selectIn(`${MEMORY_SELECT_BARE} WHERE c.id`, ids, (r) => r.id as number).map(rowToMemoryChunk);
  }

  async countFusedMemory(threadId: string): Promise<{ fused: number; kept: number }> {
    const rows = this.sql('SELECT fusion, count(*) AS n FROM memory_chunks WHERE thread_id = ? AND fusion IS NOT NULL AND privileged = 0 GROUP BY fusion').all(
      threadId,
    ) as Row[];
    const of = (kind: string) => (rows.find((r) => r.fusion === kind)?.n as number) ?? 0;
    return { fused: of('fused'), kept: of('kept') };
  }

  /**
   * Moves chunks to another thread: their rows only. Their lines name no thread (writeMemoryLines),
   * so none is written: a private chunk's lines had to be deleted with FTS5's secure-delete and
   * written again (~4 ms each), and a merge of a thread holding hundreds of private exchanges held
   * the event loop that long in its one transaction.
   */
  private moveMemory(ids: number[], threadId: string, roomId: string): number | undefined {
    const move = this.sql('UPDATE memory_chunks SET thread_id = ?, room_id = ? WHERE id = ?');
    for (const id of ids) if (!move.run(threadId, roomId, id).changes) return id;
    return undefined;
  }

  /**
   * Deletes memory rows, in as many calls to rows() as the caller likes (the staging slices look at
   * the clock between single rows): each deletes its rows, their vectors handed to the chunks
   * deriving theirs first and their lines to an heir (the trigger); done() then deletes the lines
   * of all of them and gives their referrers lines of their own, in the same transaction. Done row
   * by row, the lines' rowids went down and up again with every row, and FTS5 writes its pending
   * lines out as a new segment whenever a rowid is not above the last one, merging older segments
   * as it goes: single-line deletions held the event loop up to 36 ms of CPU (docs/benchmarks.md,
   * "Thirty-fifth session").
   */
  private memoryDeletion(): { rows(ids: number[]): void; done(): void } {
    const gone: number[] = [];
    const privileged = new Set<number>();
    const remove = this.sql('DELETE FROM memory_chunks WHERE id = ?');
    return {
      rows: (ids) => {
        for (const p of this.privilegedAmong(ids)) privileged.add(p);
        this.ownVectorsBefore(ids);
        for (const id of ids) {
          remove.run(id);
          gone.push(id);
        }
      },
      done: () => this.linesAfterDeleting(gone, privileged),
    };
  }

  private deleteMemoryRows(ids: number[]): void {
    const deletion = this.memoryDeletion();
    deletion.rows(ids);
    deletion.done();
  }

  /** The private (privileged) chunks among `ids`. */
  private privilegedAmong(ids: number[]): Set<number> {
    if (!ids.length) return new Set();
    return new Set(
      this.sql('SELECT c.id FROM json_each(?) j JOIN memory_chunks c ON c.id = j.value WHERE c.privileged = 1').pluck().all(JSON.stringify(ids)) as number[],
    );
  }

  /**
   * Runs `change` (inside the caller's transaction) with FTS5's secure-delete on: the lines it
   * deletes or updates leave the index's segments at once. Otherwise FTS5 only records a deletion,
   * and the line's terms stay in the file until a merge rewrites their segment. It costs ~25 times a
   * plain deletion (11 against 0.4 ms a chunk at 3,000 chunks), so only private lines get it
   * (docs/architecture.md); the setting is written back off in the same transaction. `change`
   * only deletes lines: a line written again, or updated, with secure-delete on and later deleted
   * with it corrupted the index in SQLite 3.53.2 (lines of more than ~4 KB: docs/architecture.md),
   * so lines are only ever written with it off, and never updated.
   */
  private erasingLines(change: () => void): void {
    // Literals: FTS5 takes an integer only, and better-sqlite3 binds a number as a real.
    this.sql("INSERT INTO memory_lines (memory_lines, rank) VALUES ('secure-delete', 1)").run();
    try {
      change();
    } finally {
      this.sql("INSERT INTO memory_lines (memory_lines, rank) VALUES ('secure-delete', 0)").run();
    }
  }

  /**
   * The first chunk (by id) of `c`'s thread and scope (privilege and owner) whose words are its
   * (src/memory/repeats.ts), if any: fileMemoryInTransaction's lookup, in the thread it files in.
   * `forgetMark`: the one the chunk's row will keep (refuseForgotten).
   */
  private repeatOf(c: NewMemoryChunk, forgetMark: number | null): StoredMemoryChunk | null {
    const key = wordsKey(c.text);
    const params = c.privileged ? [key, c.threadId, c.owner ?? '', forgetMark ?? -1] : [key, c.threadId];
    const row = this.sql(c.privileged ? FIND_PRIVATE_REPEAT : FIND_PUBLIC_REPEAT).get(...params, ...params) as Row | undefined;
    return row ? rowToStoredMemoryChunk(row) : null;
  }

  async touchMemoryChunk(id: number, now: string): Promise<boolean> {
    return this.sql('UPDATE memory_chunks SET updated_at = ? WHERE id = ?').run(now, id).changes > 0;
  }

  async getMemoryChunks(ids: number[]): Promise<StoredMemoryChunk[]> {
    return this.selectIn(`${MEMORY_SELECT} WHERE c.id`, ids, (r) => r.id as number).map(rowToStoredMemoryChunk);
  }

  async getMemoryChunkTexts(ids: number[]): Promise<MemoryChunk[]> {
    const read = (keys: number[]) => this.selectIn(`${MEMORY_SELECT_BARE_KEPT} WHERE c.id`, keys, (r) => r.id as number);
    return this.keptRows(this.memoryTextRows, ids, read, (r) => r.id as number).map(rowToMemoryChunk);
  }

  async scanMemoryChunks(afterId: number, limit: number): Promise<StoredMemoryChunk[]> {
    return (this.sql(`${MEMORY_SELECT} WHERE c.id > ? AND c.${NOT_STAGED} ORDER BY c.id LIMIT ?`).all(afterId, limit) as Row[]).map(rowToStoredMemoryChunk);
  }

  async searchMemoryLines(query: string, scopes: string[], limit: number): Promise<{ chunkId: number; line: string; score: number }[]> {
    const terms = queryTerms(query);
    if (!terms.length || !scopes.length) return [];
    const rare = this.rareTerms(terms);
    if (!rare.length) return [];
    const match = rare.map((t) => `"${t}"`).join(' OR ');
    // Lines, best first; a chunk's first line in that order is its best. Several lines of one chunk
    // may match, so more lines than chunks are read.
    const marks = scopes.map(() => '?').join(',');
    // A line names no thread (writeMemoryLines): the chunk it is a line of, read by rowid, says
    // whose it is, as it says for a copy's and a fused pair's below.
    if (!this.sharesLines(scopes)) {
      const lines = rare.reduce((sum, t) => sum + (this.termLines.linesWhenCounted(t) ?? 0), 0);
      const rows = await this.readLines(
        lines <= (this.options.linesSortedBySqlite ?? LINES_SORTED_BY_SQLITE)
          ? // bm25() sorted by SQLite in a subquery: sorting by FTS5's `rank` has FTS5 prepare a
            // statement of its own at every query (~0.1 ms, most of a search that matches a few
            // dozen lines). The subquery sorts the matches' rowids and scores only, so a line's text
            // and its chunk's row are read for the lines taken, in order; the outer ORDER BY is met
            // by the subquery's order, ties in the order SQLite's sorter gives them either way.
            `SELECT hit.line / ${MEMORY_LINES_PER_CHUNK} AS chunk_id, (SELECT l.text FROM memory_lines l WHERE l.rowid = hit.line) AS text, hit.score AS rank
               FROM (SELECT rowid AS line, bm25(memory_lines) AS score FROM memory_lines WHERE memory_lines MATCH ? ORDER BY score LIMIT -1) hit
               JOIN memory_chunks c ON c.id = hit.line / ${MEMORY_LINES_PER_CHUNK}
              WHERE ${CHUNK_SCOPE} IN (${marks}) ORDER BY hit.score LIMIT ?`
          : // FTS5's own `rank` column (bm25, as configured) sorts inside FTS5 and reads a line's
            // text only when SQLite reaches it; `bm25(memory_lines) AS rank` read it for every
            // matching line first (twice the time at 16,000 matches, ~15 % at 300), and the
            // subquery above costs ~10 % more a match past a few hundred.
            `SELECT memory_lines.rowid / ${MEMORY_LINES_PER_CHUNK} AS chunk_id, memory_lines.text AS text, memory_lines.rank AS rank
               FROM memory_lines JOIN memory_chunks c ON c.id = memory_lines.rowid / ${MEMORY_LINES_PER_CHUNK}
              WHERE memory_lines MATCH ? AND ${CHUNK_SCOPE} IN (${marks}) ORDER BY memory_lines.rank LIMIT ?`,
        [match, ...scopes, limit * 4],
      );
      return bestLinePerChunk(lineHits(rows), limit);
    }
    // The lines of the chunks in `scopes`, the lines of originals whose copies are in them (a copy
    // has none of its own, migration 9) and those of the rows whose lines a fused pair's are
    // (migration 13): one full-text match serves all four.
    const of = (column: string) =>
      `SELECT c.id AS chunk_id, h.text, h.rank FROM hits h JOIN memory_chunks c ON c.${column} = h.rowid / ${MEMORY_LINES_PER_CHUNK} WHERE ${CHUNK_SCOPE} IN (${marks})`;
    const rows = await this.readLines(
      `WITH hits AS MATERIALIZED (SELECT rowid, text, rank FROM memory_lines WHERE memory_lines MATCH ?)
       ${of('id')} UNION ALL ${of('copy_of')} UNION ALL ${of('lines_a')} UNION ALL ${of('lines_b')}
       ORDER BY rank LIMIT ?`,
      [match, ...scopes, ...scopes, ...scopes, ...scopes, limit * 4],
    );
    return bestLinePerChunk(lineHits(rows), limit);
  }

  /**
   * Whether the threads of `scopes` hold chunks whose lines are other rows' (a fused thread's
   * memory): a probe of each partial index, both in one statement (each statement outside a
   * transaction takes and releases the WAL's read lock, and every memory search asks this).
   */
  /** The line search's rows, read on the reader thread when the store has one (sqlite-reader.ts), else here. */
  private async readLines(text: string, params: unknown[]): Promise<Row[]> {
    return (await this.reader?.all(text, params)) ?? (this.sql(text).all(...params) as Row[]);
  }

  private sharesLines(scopes: string[]): boolean {
    const threads = [...new Set(scopes.map(threadOfScope))];
    const probe = (column: string) => `EXISTS (SELECT 1 FROM memory_chunks WHERE ${column} IS NOT NULL AND thread_id IN (${threads.map(() => '?').join(',')}))`;
    return (this.sql(`SELECT ${probe('copy_of')} OR ${probe('lines_a')} AS shared`).get(...threads, ...threads) as Row).shared === 1;
  }

  /**
   * The terms worth a line search: FTS5 scores every line a term matches before it can sort, so a
   * term on more than COMMON_TERM_LINES lines (counted no further than that) would cost more than
   * it tells apart; the vector search covers such questions.
   */
  private rareTerms(terms: string[]): string[] {
    const count = this.sql(`SELECT count(*) AS n FROM (SELECT 1 FROM memory_lines WHERE memory_lines MATCH ? LIMIT ${COMMON_TERM_LINES + 1})`);
    const version = this.sql('PRAGMA data_version').pluck().get();
    return this.termLines.rare(terms, (t) => (count.get(`"${t}"`) as Row).n as number, version);
  }

  /** Query terms' line counts, kept while they cannot have changed sides (term-line-counts.ts). */
  private readonly termLines = new TermLineCounts();

  async countMemoryChunks(threadId: string, audience: 'all' | 'public' = 'all'): Promise<number> {
    const where = audience === 'public' ? 'thread_id = ? AND privileged = 0' : 'thread_id = ?';
    return (this.sql(`SELECT count(*) AS n FROM memory_chunks WHERE ${where}`).get(threadId) as Row).n;
  }

  async pruneMemory(threadId: string | null, maxPerThread: number, olderThan: string, limit = -1): Promise<number[]> {
    const tx = this.db.transaction(() => {
      const ids = (
        this.sql(`SELECT id FROM memory_chunks WHERE updated_at < ? AND ${NOT_STAGED} ORDER BY updated_at, id LIMIT ?`).all(olderThan, limit) as Row[]
      ).map((r) => r.id as number);
      // The threads that held what expired change, as when a thread change deletes memory: a fusion
      // or compaction that read them before must not commit a copy or summary of it (Store.pruneMemory).
      if (ids.length)
        this.sql('UPDATE threads SET version = version + 1 WHERE id IN (SELECT thread_id FROM memory_chunks WHERE id IN (SELECT value FROM json_each(?)))').run(
          JSON.stringify(ids),
        );
      if (threadId !== null && (limit < 0 || ids.length < limit)) {
        const over = this.sql('SELECT id FROM memory_chunks WHERE thread_id = ? AND updated_at >= ? ORDER BY updated_at DESC, id DESC LIMIT -1 OFFSET ?').all(
          threadId,
          olderThan,
          maxPerThread,
        ) as Row[];
        const oldestFirst = over.map((r) => r.id as number).reverse();
        ids.push(...(limit < 0 ? oldestFirst : oldestFirst.slice(0, limit - ids.length)));
      }
      this.deleteMemoryRows(ids);
      return ids;
    });
    return tx.immediate();
  }

  /**
   * After rows `chunkIds` were deleted: their lines go, and the chunks that referred to those lines
   * get lines of their own (ownLinesAfter), in the caller's transaction. One statement per line
   * slot: FTS5 answers `rowid BETWEEN` by scanning the whole table (16 ms a chunk at 160,000 lines,
   * against 0.04 ms for its 16 slots one by one).
   */
  private linesAfterDeleting(chunkIds: number[], privileged: Set<number>): void {
    const remove = this.sql('DELETE FROM memory_lines WHERE rowid = ?');
    let deleted = 0;
    const removeLines = (ids: number[]) => {
      for (const id of ids) for (let i = 0; i < MEMORY_LINES_PER_CHUNK; i++) deleted += remove.run(id * MEMORY_LINES_PER_CHUNK + i).changes;
    };
    // In rowid order: FTS5 writes its pending changes out as a segment (and merges) each time a rowid is not above the last.
    const ascending = [...chunkIds].sort((a, b) => a - b);
    const secret = ascending.filter((id) => privileged.has(id));
    if (secret.length) this.erasingLines(() => removeLines(secret));
    removeLines(ascending.filter((id) => !privileged.has(id)));
    this.termLines.linesDeleted(deleted);
    this.lineMerges.written();
    this.ownLinesAfter(chunkIds);
  }

  // jobs

  async saveJob(job: IngestJob): Promise<boolean> {
    return this.saveJobNow(job, true);
  }

  /** Saves a job; the save is a sign of life of its node (alive_at). `owned`: not over a job stored under another node. */
  private saveJobNow(job: IngestJob, owned = false): boolean {
    const saved = this.sql(
      `INSERT INTO jobs (id, data, updated_at, status, runner, node, alive_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at, status = excluded.status, runner = excluded.runner,
         node = excluded.node, alive_at = excluded.alive_at
       ${owned ? 'WHERE jobs.node IS excluded.node' : ''}`,
    ).run(job.id, jobJson(job), job.updatedAt, job.status, job.runner ?? 'server', job.node ?? null, Date.now());
    return saved.changes === 1;
  }

  async pruneJobs(endedBefore: string): Promise<number> {
    return this.sql("DELETE FROM jobs WHERE status IN ('done', 'failed', 'cancelled') AND updated_at < ?").run(endedBefore).changes;
  }

  async touchJobs(node: string): Promise<void> {
    this.sql("UPDATE jobs SET alive_at = ? WHERE node = ? AND status IN ('queued', 'running')").run(Date.now(), node);
  }

  async getJob(id: string): Promise<IngestJob | null> {
    const row = this.sql('SELECT data FROM jobs WHERE id = ?').get(id) as Row | undefined;
    return row ? (JSON.parse(row.data) as IngestJob) : null;
  }

  async failUnfinishedJobs(runner: JobRunner, failure: JobFailure, now: string, except: LiveJobs = {}): Promise<string[]> {
    return failUnfinished(this, runner, failure, now, except);
  }

  async settleUnfinishedJobs(runner: JobRunner, except: LiveJobs, settle: (job: IngestJob) => IngestJob): Promise<IngestJob[]> {
    const mark = this.db.transaction(() => {
      const rows = this.sql(
        `SELECT data FROM jobs WHERE status IN ('queued', 'running') AND runner = @runner AND (@node IS NULL OR node IS NOT @node)
           AND (coalesce(alive_at, 0) <= @silentSince OR node = @gone) ORDER BY id`,
      ).all({ runner, node: except.node ?? null, silentSince: Date.now() - (except.silentForMs ?? 0), gone: except.gone ?? null }) as Row[];
      const settled: IngestJob[] = [];
      const release = this.sql('UPDATE sources SET lease_owner = NULL, lease_until = NULL, lease_job = NULL WHERE lease_job = ?');
      for (const row of rows) {
        const job = settle(JSON.parse(row.data) as IngestJob);
        this.saveJobNow(job);
        if (!unfinished(job)) release.run(job.id);
        settled.push(job);
      }
      return settled;
    });
    return mark.immediate();
  }

  // change log

  async logIndexChange(target: ChangeTarget, ids: number[]): Promise<number> {
    return Number(this.sql('INSERT INTO index_changes (target, ids, logged_at) VALUES (?, ?, ?)').run(target, JSON.stringify(ids), Date.now()).lastInsertRowid);
  }

  async pruneIndexChanges(keepMs: number): Promise<number> {
    // The newest entry stays (Store.pruneIndexChanges): lastIndexChange never goes back.
    return this.sql('DELETE FROM index_changes WHERE (logged_at IS NULL OR logged_at < ?) AND seq < (SELECT max(seq) FROM index_changes)').run(
      Date.now() - keepMs,
    ).changes;
  }

  async indexChangesAfter(afterSeq: number, limit: number): Promise<IndexChange[]> {
    return (this.sql('SELECT * FROM index_changes WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit) as Row[]).map(rowToIndexChange);
  }

  async indexChangesAt(seqs: number[]): Promise<IndexChange[]> {
    if (seqs.length === 0) return [];
    const rows = this.sql('SELECT * FROM index_changes WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq').all(JSON.stringify(seqs)) as Row[];
    return rows.map(rowToIndexChange);
  }

  async lastIndexChange(): Promise<number> {
    return (this.sql('SELECT coalesce(max(seq), 0) AS seq FROM index_changes').get() as Row).seq;
  }

  // sources

  async addSource(source: NewSource): Promise<SourceRecord> {
    return sources.addSource((t) => this.sql(t), source);
  }

  async getSource(id: string): Promise<SourceRecord | null> {
    return sources.getSource((t) => this.sql(t), id);
  }

  async listSources(): Promise<SourceRecord[]> {
    return sources.listSources((t) => this.sql(t));
  }

  async updateSource(id: string, patch: { everyMinutes?: number; nextDueAt?: string; limit?: number }): Promise<SourceRecord | null> {
    return sources.updateSource((t) => this.sql(t), id, patch);
  }

  async deleteSource(id: string): Promise<boolean> {
    return sources.deleteSource((t) => this.sql(t), id);
  }

  async leaseSource(id: string, owner: string, jobId: string, now: string, until: string): Promise<boolean> {
    return sources.leaseSource((t) => this.sql(t), id, owner, jobId, now, until);
  }

  async renewSourceLease(id: string, owner: string, jobId: string, _now: string, until: string): Promise<boolean> {
    return sources.renewSourceLease((t) => this.sql(t), id, owner, jobId, until);
  }

  async endSourcePoll(id: string, owner: string, jobId: string, state: SourcePollState, nextDueAt: string): Promise<boolean> {
    return sources.endSourcePoll((t) => this.sql(t), id, owner, jobId, state, nextDueAt);
  }

  async sourceEntryHashes(sourceId: string, keys: string[]): Promise<Map<string, string>> {
    return sources.sourceEntryHashes((t) => this.sql(t), sourceId, keys);
  }

  async putSourceEntry(sourceId: string, key: string, hash: string, itemId: string, now: string): Promise<boolean> {
    return sources.putSourceEntry((t) => this.sql(t), sourceId, key, hash, itemId, now);
  }

  async sweepSourceEntries(sourceId: string, listed: string[], now: string, forgetBefore: string): Promise<number> {
    return this.db.transaction(() => sources.sweepSourceEntries((t) => this.sql(t), sourceId, listed, now, forgetBefore)).immediate();
  }

  // meta

  async getMeta(key: string): Promise<string | null> {
    const row = this.sql('SELECT value FROM meta WHERE key = ?').get(key) as Row | undefined;
    return row ? row.value : null;
  }

  async setMeta(key: string, value: string): Promise<void> {
    this.sql('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  async claimMeta(key: string, value: string): Promise<boolean> {
    return this.sql('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING').run(key, value).changes === 1;
  }
}

/**
 * A failure to open or migrate `filename`, naming it: SQLite's own messages ("file is not a
 * database", "unable to open database file") do not say which file, and reached the operator as
 * `salon: file is not a database`. The store's own refusals name it already.
 */
function cannotOpen(filename: string, err: unknown): unknown {
  if (!(err instanceof Database.SqliteError)) return err;
  return Object.assign(new Error(`SqliteStore: cannot open ${filename}: ${err.message}`, { cause: err }), { code: err.code });
}

/** Chunks the terms of one text search may be on together (see SqliteStore.textTerms). */
export const TEXT_SEARCH_MAX_POSTINGS = 5_000;

const CHUNK_SELECT = `SELECT c.*, i.kind AS item_kind, i.title AS item_title, i.url AS item_url, i.published_at AS item_published_at, i.source AS item_source, i.category AS category FROM chunks c JOIN items i ON i.id = c.item_id`;

/** Line rows as LineHits: `chunk_id` is the chunk a line is found for (its own, a copy's or a fused pair's). */
function lineHits(rows: Row[]): LineHit[] {
  // bm25() is lower-is-better and negative; flip it so higher is better.
  return rows.map((r) => ({
    chunkId: r.chunk_id as number,
    line: r.text as string,
    score: -r.rank,
  }));
}
