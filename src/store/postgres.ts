/**
 * The Store for many nodes: PostgreSQL through `pg`, shared by every node (DATABASE_URL). It keeps
 * SQLite's tables and behaviour (the same contract suite runs against both); what differs is
 * concurrency. SQLite has one writer at a time; here every multi-row change is one transaction
 * (postgres-db.ts) and rows that several nodes may change at once are locked or upserted: the
 * room's seq row (postgres-messages.ts), an item before its chunks (postgres-content.ts), the
 * threads a thread operation read (postgres-threads.ts).
 */
import { randomUUID } from 'node:crypto';
import type { ChunkRow, ContentItem, ContentKind, ItemSummary, ItemWithoutComments, NewChunk, StoredItem } from '../content/types.js';
import type { MemoryChunk, NewMemoryChunk } from '../memory/types.js';
import type { Message } from '../protocol/messages.js';
import { failUnfinished } from './job-sweep.js';
import { CHUNK_SELECT, hasChunks, listItemSummariesIn, listItemsIn, lockItem, replaceChunksIn, upsertItemIn } from './postgres-content.js';
import * as embeddings from './postgres-embeddings.js';
import * as jobs from './postgres-jobs.js';
import { PgDatabase, type PgDatabaseOptions } from './postgres-db.js';
import { fileMemoryInThread, forgetMarkOf, insertMemoryInThread, markForgetIn, pruneClaimsBefore, pruneIn } from './postgres-memory.js';
import { appendIn } from './postgres-messages.js';
import { appendBatch, SETTLED } from './postgres-unsettled.js';
import { searchChunkText, searchLines } from './postgres-text.js';
import * as sources from './postgres-sources.js';
import * as threads from './postgres-threads.js';
import { SettlingByKey } from '../settling-by-key.js';
import {
  MEMORY_CHUNK_TEXT_COLUMNS,
  MESSAGE_COLUMNS_BUT_SOURCES,
  type Row,
  rowToChunk,
  rowToIndexChange,
  rowToItem,
  rowToItemWithoutComments,
  ITEM_COLUMNS_BUT_COMMENTS,
  rowToMemoryChunk,
  rowToMessage,
  rowToUnsettledSeqs,
  rowToStoredMemoryChunk,
  vectorToBlob,
} from './rows.js';
import type {
  ChangeTarget,
  IndexChange,
  IngestJob,
  JobFailure,
  JobRunner,
  ListItemsQuery,
  LiveJobs,
  MemoryFiling,
  NewMessage,
  NewSource,
  Page,
  PutItemResult,
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

/** A memory chunk's columns but its vector (Store.scanThreadMemory without vectors). */
const MEMORY_COLUMNS_BARE =
  'id, thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, privileged, owner, created_at, updated_at, fusion, lineage';

/** Options for PostgresStore: the connection, and the schema for a store of its own (tests). */
export type PostgresStoreOptions = PgDatabaseOptions;

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private readonly db: PgDatabase;
  /**
   * The forget marks being moved by this store (markPrivateForget), by owner and room: a read of the
   * mark (privateForgetMark) waits for the moves started before it, so it finds the mark they made
   * (its caller acts in that order).
   */
  private readonly forgetMarksMoving = new SettlingByKey();

  /** Connects and migrates in the background; every method waits for it (see `open` to wait now). */
  constructor(options: PostgresStoreOptions) {
    this.db = new PgDatabase(options);
  }

  /** A store that is connected and migrated, or the reason it cannot be (naming DATABASE_URL). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    try {
      await store.db.ready;
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /**
   * Nothing PostgreSQL can do online: a deleted row's bytes stay on its page after a VACUUM (which
   * only marks the space reusable) and its terms in the GIN index; only VACUUM FULL, which locks
   * the tables against every read while it rewrites them, removes them (docs/architecture.md).
   */
  async purgeDeleted(): Promise<boolean> {
    return true;
  }

  // content

  async upsertItem(item: ContentItem): Promise<{ item: StoredItem; status: UpsertStatus }> {
    const status = await this.db.tx((sql) => upsertItemIn(sql, item));
    return { item: (await this.getItem(item.id))!, status };
  }

  async putItems(entries: { item: ContentItem; chunks: NewChunk[] }[]): Promise<PutItemResult[]> {
    // Written in id order, whatever the caller's: each write locks its item's row until the commit,
    // and two nodes writing overlapping batches in different orders deadlocked again on every
    // retry. The sort is stable, so an item given twice is written in the order given.
    const order = entries.map((_, i) => i).sort((a, b) => compareIds(entries[a].item.id, entries[b].item.id) || a - b);
    const changes = await this.db.tx(async (sql) => {
      const out = new Array<{ id: string; status: UpsertStatus; addedIds: number[]; removed: number[] }>(entries.length);
      for (const i of order) {
        const { item, chunks } = entries[i];
        const status = await upsertItemIn(sql, item);
        // An unchanged item still gets chunks if an earlier run stopped between upsert and chunking.
        const keepChunks = status === 'unchanged' && (await lockItem(sql, item.id)) && (await hasChunks(sql, item.id));
        out[i] = { id: item.id, status, ...(keepChunks ? { addedIds: [], removed: [] } : await replaceChunksIn(sql, item.id, chunks)) };
      }
      return out;
    });
    // An item given twice can remove rows the call itself added: those appear in neither list.
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

  async getItem(id: string): Promise<StoredItem | null> {
    const { rows } = await this.db.query('SELECT * FROM items WHERE id = $1', [id]);
    return rows.length ? rowToItem(rows[0]) : null;
  }

  async deleteItem(id: string): Promise<number[] | null> {
    return this.db.tx(async (sql) => {
      if (!(await lockItem(sql, id))) return null;
      const { rows } = await sql.query('SELECT row_id FROM chunks WHERE item_id = $1 ORDER BY row_id', [id]);
      // Chunks go with the item: ON DELETE CASCADE.
      await sql.query('DELETE FROM items WHERE id = $1', [id]);
      return rows.map((r) => r.row_id as number);
    });
  }

  async getItems(ids: string[]): Promise<StoredItem[]> {
    return (await this.itemRows('*', ids)).map(rowToItem);
  }

  async getItemsWithoutComments(ids: string[]): Promise<ItemWithoutComments[]> {
    return (await this.itemRows(ITEM_COLUMNS_BUT_COMMENTS, ids)).map(rowToItemWithoutComments);
  }

  /** `columns` of the items `ids`, in the order asked; unknown ids are left out. */
  private async itemRows(columns: string, ids: string[]): Promise<Row[]> {
    if (!ids.length) return [];
    const { rows } = await this.db.query(`SELECT ${columns} FROM items WHERE id = ANY($1::text[])`, [ids]);
    return inOrder(ids, rows, (r) => r.id);
  }

  async listItems(query: ListItemsQuery): Promise<Page<StoredItem>> {
    return listItemsIn(this.db, query);
  }

  async listItemSummaries(query: ListItemsQuery): Promise<Page<ItemSummary>> {
    return listItemSummariesIn(this.db, query);
  }

  async countItems(kind?: ContentKind): Promise<number> {
    const { rows } = kind
      ? await this.db.query('SELECT count(*) AS n FROM items WHERE kind = $1', [kind])
      : await this.db.query('SELECT count(*) AS n FROM items');
    return rows[0].n;
  }

  async listCategories(): Promise<{ category: string; count: number }[]> {
    const { rows } = await this.db.query(
      'SELECT category, count(*) AS count FROM items WHERE category IS NOT NULL GROUP BY category ORDER BY count DESC, category',
    );
    return rows.map((r) => ({ category: r.category, count: r.count }));
  }

  // chunks

  async replaceChunks(itemId: string, chunks: NewChunk[]): Promise<{ added: ChunkRow[]; removed: number[] }> {
    const { addedIds, removed } = await this.db.tx((sql) => replaceChunksIn(sql, itemId, chunks));
    return { added: await this.getChunks(addedIds), removed };
  }

  async getChunks(rowIds: number[]): Promise<ChunkRow[]> {
    if (!rowIds.length) return [];
    const { rows } = await this.db.query(`${CHUNK_SELECT} WHERE c.row_id = ANY($1::bigint[])`, [rowIds]);
    return inOrder(rowIds, rows, (r) => r.row_id).map(rowToChunk);
  }

  async chunksOfItem(itemId: string): Promise<ChunkRow[]> {
    return (await this.db.query(`${CHUNK_SELECT} WHERE c.item_id = $1 ORDER BY c.ord, c.row_id`, [itemId])).rows.map(rowToChunk);
  }

  async scanChunks(afterRowId: number, limit: number): Promise<ChunkRow[]> {
    return (await this.db.query(`${CHUNK_SELECT} WHERE c.row_id > $1 ORDER BY c.row_id LIMIT $2`, [afterRowId, limit])).rows.map(rowToChunk);
  }

  async countChunks(): Promise<number> {
    return (await this.db.query('SELECT count(*) AS n FROM chunks')).rows[0].n;
  }

  async searchText(query: string, limit: number, kinds?: ContentKind[]): Promise<TextHit[]> {
    return searchChunkText(this.db, query, limit, kinds);
  }

  // embeddings

  getEmbeddings(model: string, textHashes: string[]): Promise<Map<string, Float32Array>> {
    return embeddings.get(this.db, model, textHashes);
  }

  putEmbeddings(model: string, entries: { textHash: string; vector: Float32Array }[], maxEntries?: number): Promise<void> {
    return this.db.tx((sql) => embeddings.put(sql, model, entries, maxEntries));
  }

  embeddingModels(): Promise<{ model: string; dimensions: number; count: number }[]> {
    return embeddings.models(this.db);
  }

  // messages

  appendMessage(m: NewMessage): Promise<{ message: Message; duplicate: boolean }> {
    return this.db.tx((sql) => appendIn(sql, m));
  }

  appendMessages(messages: NewMessage[]): Promise<{ message: Message; duplicate: boolean }[]> {
    return appendBatch(this.db, messages);
  }

  async storedClientIds(roomId: string, keys: { authorId: string; clientId: string }[]): Promise<boolean[]> {
    if (!keys.length) return [];
    const { rows } = await this.db.query(
      'SELECT author_id, client_id FROM messages WHERE room_id = $1 AND client_id IS NOT NULL AND (author_id, client_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))',
      [roomId, keys.map((k) => k.authorId), keys.map((k) => k.clientId)],
    );
    const stored = new Set(rows.map((r) => JSON.stringify([r.author_id, r.client_id])));
    return keys.map((k) => stored.has(JSON.stringify([k.authorId, k.clientId])));
  }

  async messagesAfter(roomId: string, afterSeq: number, limit: number): Promise<Message[]> {
    return this.messages(`SELECT * FROM messages WHERE room_id = $1 AND seq > $2 AND ${SETTLED} ORDER BY seq LIMIT $3`, [roomId, afterSeq, limit]);
  }

  async recentMessages(roomId: string, limit: number): Promise<Message[]> {
    return (await this.messages(`SELECT * FROM messages WHERE room_id = $1 AND ${SETTLED} ORDER BY seq DESC LIMIT $2`, [roomId, limit])).reverse();
  }

  async messagesBefore(roomId: string, beforeSeq: number, limit: number): Promise<Message[]> {
    return (
      await this.messages(`SELECT * FROM messages WHERE room_id = $1 AND seq < $2 AND ${SETTLED} ORDER BY seq DESC LIMIT $3`, [roomId, beforeSeq, limit])
    ).reverse();
  }

  async threadMessages(threadId: string, limit: number, beforeSeq = Number.MAX_SAFE_INTEGER): Promise<Message[]> {
    return this.lastOfThread('*', threadId, limit, beforeSeq);
  }

  async threadChat(threadId: string, limit: number, beforeSeq = Number.MAX_SAFE_INTEGER): Promise<Message[]> {
    return this.lastOfThread(MESSAGE_COLUMNS_BUT_SOURCES, threadId, limit, beforeSeq);
  }

  /** The last `limit` messages of a thread before `beforeSeq`, oldest first, with `columns` of their rows. */
  private async lastOfThread(columns: string, threadId: string, limit: number, beforeSeq: number): Promise<Message[]> {
    const text = `SELECT ${columns} FROM messages WHERE thread_id = $1 AND seq < $2 AND ${SETTLED} ORDER BY seq DESC LIMIT $3`;
    return (await this.messages(text, [threadId, beforeSeq, limit])).reverse();
  }

  async lastSeq(roomId: string): Promise<number> {
    const { rows } = await this.db.query('SELECT seq FROM room_seq WHERE room_id = $1', [roomId]);
    return rows[0]?.seq ?? 0;
  }

  async unsettledSeqs(roomId: string): Promise<UnsettledSeqs[]> {
    const { rows } = await this.db.query('SELECT from_seq, to_seq, started_at FROM unsettled_seqs WHERE room_id = $1 ORDER BY from_seq', [roomId]);
    return rows.map(rowToUnsettledSeqs);
  }

  async threadMessagesAfter(threadId: string, afterSeq: number, limit: number): Promise<Message[]> {
    return this.messages(`SELECT * FROM messages WHERE thread_id = $1 AND seq > $2 AND ${SETTLED} ORDER BY seq LIMIT $3`, [threadId, afterSeq, limit]);
  }

  private async messages(text: string, values: unknown[]): Promise<Message[]> {
    return (await this.db.query(text, values)).rows.map(rowToMessage);
  }

  // threads

  async ensureMainThread(roomId: string): Promise<Thread> {
    return threads.ensureMainThreadIn(this.db, roomId, `thr_${randomUUID()}`);
  }

  async getThread(id: string): Promise<Thread | null> {
    return threads.getThread(this.db, id);
  }

  async listThreads(roomId: string, archived?: number): Promise<Thread[]> {
    return threads.listThreads(this.db, roomId, archived);
  }

  async countArchivedThreads(roomId: string): Promise<number> {
    return threads.countArchivedThreads(this.db, roomId);
  }

  applyThreadChange(change: ThreadChange): Promise<ThreadChangeResult> {
    return this.db.tx((sql) => threads.applyChangeIn(sql, change));
  }

  async threadBridges(threadId: string): Promise<ThreadBridge[]> {
    return threads.threadBridges(this.db, threadId);
  }

  async threadHistory(threadId: string, limit: number): Promise<ThreadEvent[]> {
    return threads.threadHistory(this.db, threadId, limit);
  }

  async countThreadMessages(threadId: string): Promise<number> {
    return (await this.db.query(`SELECT count(*) AS n FROM messages WHERE thread_id = $1 AND ${SETTLED}`, [threadId])).rows[0].n;
  }

  async deleteThread(threadId: string): Promise<{ messages: number; memoryIds: number[] } | null> {
    return this.db.tx((sql) => threads.deleteThreadIn(sql, threadId));
  }

  // conversation memory

  /** Waits for the moves of the mark this store started before (`forgetMarksMoving`): they run on other connections. */
  async privateForgetMark(owner: string, roomId: string): Promise<number> {
    const moving = this.forgetMarksMoving.settled([owner, roomId]);
    if (moving) await moving;
    return forgetMarkOf(this.db, owner, roomId);
  }

  markPrivateForget(owner: string, roomId: string): Promise<number> {
    const move = this.db.tx((sql) => markForgetIn(sql, owner, roomId));
    this.forgetMarksMoving.track([owner, roomId], move);
    return move;
  }

  addMemoryChunk(c: NewMemoryChunk, now: string, vector?: { vector: Float32Array; model: string }): Promise<MemoryChunk> {
    return this.db.tx((sql) => insertMemoryInThread(sql, c, now, vector));
  }

  fileMemoryChunk(c: NewMemoryChunk, now: string, vector: { vector: Float32Array; model: string } | undefined, notRepeats: number[]): Promise<MemoryFiling> {
    return this.db.tx((sql) => fileMemoryInThread(sql, c, now, vector, notRepeats));
  }

  async setMemoryVector(id: number, vector: Float32Array, model: string): Promise<void> {
    await this.db.query('UPDATE memory_chunks SET vector = $1, vector_model = $2 WHERE id = $3', [vectorToBlob(vector), model, id]);
  }

  async touchMemoryChunk(id: number, now: string): Promise<boolean> {
    return Boolean((await this.db.query('UPDATE memory_chunks SET updated_at = $1 WHERE id = $2', [now, id])).rowCount);
  }

  async getMemoryChunks(ids: number[]): Promise<StoredMemoryChunk[]> {
    if (!ids.length) return [];
    const { rows } = await this.db.query('SELECT * FROM memory_chunks WHERE id = ANY($1::bigint[])', [ids]);
    return inOrder(ids, rows, (r) => r.id).map(rowToStoredMemoryChunk);
  }

  async getMemoryChunkTexts(ids: number[]): Promise<MemoryChunk[]> {
    if (!ids.length) return [];
    const { rows } = await this.db.query(`SELECT id, ${MEMORY_CHUNK_TEXT_COLUMNS} FROM memory_chunks WHERE id = ANY($1::bigint[])`, [ids]);
    return inOrder(ids, rows, (r) => r.id).map(rowToMemoryChunk);
  }

  async scanMemoryChunks(afterId: number, limit: number): Promise<StoredMemoryChunk[]> {
    return (await this.db.query('SELECT * FROM memory_chunks WHERE id > $1 ORDER BY id LIMIT $2', [afterId, limit])).rows.map(rowToStoredMemoryChunk);
  }

  async scanThreadMemory(threadId: string, afterId: number, limit: number, vectors = true): Promise<StoredMemoryChunk[]> {
    const columns = vectors ? '*' : MEMORY_COLUMNS_BARE;
    const { rows } = await this.db.query(`SELECT ${columns} FROM memory_chunks WHERE thread_id = $1 AND id > $2 ORDER BY id LIMIT $3`, [
      threadId,
      afterId,
      limit,
    ]);
    return rows.map(rowToStoredMemoryChunk);
  }

  async scanThreadMemoryAudiences(threadId: string, afterId: number, limit: number): Promise<MemoryChunkAudience[]> {
    const { rows } = await this.db.query('SELECT id, privileged, owner FROM memory_chunks WHERE thread_id = $1 AND id > $2 ORDER BY id LIMIT $3', [
      threadId,
      afterId,
      limit,
    ]);
    return rows.map((r) => ({ id: r.id, privileged: r.privileged === 1, owner: r.owner ?? null }));
  }

  async scanPrivateMemory(owner: string, afterId: number, limit: number, filedSince?: { roomId: string; mark: number }): Promise<MemoryChunk[]> {
    // A row not filed in the room since its mark became `mark` (migration 14); $4 null: any row.
    const { rows } = await this.db.query(
      `SELECT ${MEMORY_COLUMNS_BARE} FROM memory_chunks WHERE owner = $1 AND privileged = 1 AND id > $2
         AND ($4::text IS NULL OR room_id <> $4 OR coalesce(forget_mark, -1) < $5) ORDER BY id LIMIT $3`,
      [owner, afterId, limit, filedSince?.roomId ?? null, filedSince?.mark ?? null],
    );
    return rows.map(rowToMemoryChunk);
  }

  async countFusedMemory(threadId: string): Promise<{ fused: number; kept: number }> {
    const { rows } = await this.db.query(
      'SELECT fusion, count(*) AS n FROM memory_chunks WHERE thread_id = $1 AND fusion IS NOT NULL AND privileged = 0 GROUP BY fusion',
      [threadId],
    );
    const of = (kind: string) => (rows.find((r) => r.fusion === kind)?.n as number) ?? 0;
    return { fused: of('fused'), kept: of('kept') };
  }

  async countMemoryChunks(threadId: string, audience: 'all' | 'public' = 'all'): Promise<number> {
    const where = audience === 'public' ? 'thread_id = $1 AND privileged = 0' : 'thread_id = $1';
    return (await this.db.query(`SELECT count(*) AS n FROM memory_chunks WHERE ${where}`, [threadId])).rows[0].n;
  }

  async searchMemoryLines(query: string, scopes: string[], limit: number): Promise<{ chunkId: number; line: string; score: number }[]> {
    return searchLines(this.db, query, scopes, limit);
  }

  pruneMemory(threadId: string | null, maxPerThread: number, olderThan: string, limit?: number): Promise<number[]> {
    return this.db.tx((sql) => pruneIn(sql, threadId, maxPerThread, olderThan, limit));
  }

  pruneMemoryClaims(before: string): Promise<number> {
    return pruneClaimsBefore(this.db, before);
  }

  // jobs

  async saveJob(job: IngestJob): Promise<boolean> {
    return jobs.save(this.db, job, true);
  }

  getJob(id: string): Promise<IngestJob | null> {
    return jobs.get(this.db, id);
  }

  async pruneJobs(endedBefore: string): Promise<number> {
    const { rowCount } = await this.db.query("DELETE FROM jobs WHERE status IN ('done', 'failed', 'cancelled') AND updated_at < $1", [endedBefore]);
    return rowCount ?? 0;
  }

  async touchJobs(node: string): Promise<void> {
    await jobs.touch(this.db, node);
  }

  async failUnfinishedJobs(runner: JobRunner, failure: JobFailure, now: string, except: LiveJobs = {}): Promise<string[]> {
    return failUnfinished(this, runner, failure, now, except);
  }

  settleUnfinishedJobs(runner: JobRunner, except: LiveJobs, settle: (job: IngestJob) => IngestJob): Promise<IngestJob[]> {
    return this.db.tx((sql) => jobs.settleUnfinished(sql, runner, except, settle));
  }

  // change log

  async logIndexChange(target: ChangeTarget, ids: number[]): Promise<number> {
    const { rows } = await this.db.query('INSERT INTO index_changes (target, ids) VALUES ($1, $2) RETURNING seq', [target, JSON.stringify(ids)]);
    return rows[0].seq as number;
  }

  async indexChangesAfter(afterSeq: number, limit: number): Promise<IndexChange[]> {
    const { rows } = await this.db.query('SELECT * FROM index_changes WHERE seq > $1 ORDER BY seq LIMIT $2', [afterSeq, limit]);
    return rows.map(rowToIndexChange);
  }

  async indexChangesAt(seqs: number[]): Promise<IndexChange[]> {
    if (seqs.length === 0) return [];
    const { rows } = await this.db.query('SELECT * FROM index_changes WHERE seq = ANY($1::bigint[]) ORDER BY seq', [seqs]);
    return rows.map(rowToIndexChange);
  }

  async lastIndexChange(): Promise<number> {
    const { rows } = await this.db.query('SELECT coalesce(max(seq), 0) AS seq FROM index_changes');
    return Number(rows[0].seq);
  }

  async pruneIndexChanges(keepMs: number): Promise<number> {
    // The database's clock on both sides: nodes' clocks may differ from it and from each other.
    // The newest entry stays (Store.pruneIndexChanges): lastIndexChange never goes back.
    const { rowCount } = await this.db.query(
      "DELETE FROM index_changes WHERE logged_at < now() - $1 * interval '1 millisecond' AND seq < (SELECT max(seq) FROM index_changes)",
      [keepMs],
    );
    return rowCount ?? 0;
  }

  // sources

  async clockNow(): Promise<number> {
    return sources.databaseNow(this.db);
  }

  async addSource(source: NewSource): Promise<SourceRecord> {
    return sources.addSource(this.db, source);
  }

  async getSource(id: string): Promise<SourceRecord | null> {
    return sources.getSource(this.db, id);
  }

  async listSources(): Promise<SourceRecord[]> {
    return sources.listSources(this.db);
  }

  async updateSource(id: string, patch: { everyMinutes?: number; nextDueAt?: string; limit?: number }): Promise<SourceRecord | null> {
    return sources.updateSource(this.db, id, patch);
  }

  async deleteSource(id: string): Promise<boolean> {
    return sources.deleteSource(this.db, id);
  }

  async leaseSource(id: string, owner: string, jobId: string, now: string, until: string): Promise<boolean> {
    return sources.leaseSource(this.db, id, owner, jobId, now, until);
  }

  async renewSourceLease(id: string, owner: string, jobId: string, now: string, until: string): Promise<boolean> {
    return sources.renewSourceLease(this.db, id, owner, jobId, now, until);
  }

  async endSourcePoll(id: string, owner: string, jobId: string, state: SourcePollState, nextDueAt: string): Promise<boolean> {
    return sources.endSourcePoll(this.db, id, owner, jobId, state, nextDueAt);
  }

  async sourceEntryHashes(sourceId: string, keys: string[]): Promise<Map<string, string>> {
    return sources.sourceEntryHashes(this.db, sourceId, keys);
  }

  async putSourceEntry(sourceId: string, key: string, hash: string, itemId: string, now: string): Promise<boolean> {
    return sources.putSourceEntry(this.db, sourceId, key, hash, itemId, now);
  }

  async sweepSourceEntries(sourceId: string, listed: string[], now: string, forgetBefore: string): Promise<number> {
    return sources.sweepSourceEntries(this.db, sourceId, listed, now, forgetBefore);
  }

  // meta

  async getMeta(key: string): Promise<string | null> {
    const { rows } = await this.db.query('SELECT value FROM meta WHERE key = $1', [key]);
    return rows.length ? rows[0].value : null;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.db.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }

  async claimMeta(key: string, value: string): Promise<boolean> {
    return (await this.db.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value])).rowCount === 1;
  }
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `rows` (one per id found) in the order of `ids`, as SQLite's `IN` lists return them. */
function inOrder<K>(ids: K[], rows: Row[], keyOf: (row: Row) => K): Row[] {
  const order = new Map(ids.map((id, i) => [id, i]));
  return rows.sort((a, b) => order.get(keyOf(a))! - order.get(keyOf(b))!);
}
