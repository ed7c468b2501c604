/**
 * Row shapes both stores share: SQLite and PostgreSQL keep the same columns (flags as 0/1 integers,
 * JSON as text, vectors as float32 bytes), so one set of mappers turns rows into Salon's types.
 */
import { randomUUID } from 'node:crypto';
import type { ChunkRow, ContentItem, ItemSummary, ItemWithoutComments, StoredItem } from '../content/types.js';
import { scaleToUnit, sumInto } from '../ai/vectors.js';
import { repeatKey } from '../memory/repeats.js';
import type { MemoryChunk, NewMemoryChunk } from '../memory/types.js';
import type { Message } from '../protocol/messages.js';
import { wellFormed, withoutNul } from '../text.js';
import type { IndexChange, IngestJob, NewMessage, NewSource, SourcePollState, SourceRecord, StoredMemoryChunk, UnsettledSeqs } from './types.js';

export type Row = Record<string, any>;

/**
 * A message as an append stores it, with its new id and its room's next seq. A NUL in its text or
 * its author's name is U+FFFD here, as PostgreSQL keeps it: what the append returns (and the room
 * echoes) is what either store gives back later.
 */
export function newMessage(m: NewMessage, seq: number): Message {
  return {
    id: randomUUID(),
    seq,
    roomId: m.roomId,
    threadId: m.threadId,
    author: m.author.name.includes('\0') ? { ...m.author, name: withoutNul(m.author.name) } : m.author,
    text: withoutNul(m.text),
    ts: m.ts ?? new Date().toISOString(),
    ...(m.clientId ? { clientId: m.clientId } : {}),
    ...(m.replyTo ? { replyTo: m.replyTo } : {}),
    ...(m.sources ? { sources: m.sources } : {}),
  };
}

/** The columns of a messages row but its sources, in the order messageValues gives them. */
export const MESSAGE_COLUMNS_BUT_SOURCES = 'room_id, seq, id, thread_id, author_id, author_name, author_kind, text, ts, client_id, reply_to';
/** The columns of a messages row, in the order messageValues gives them. */
export const MESSAGE_COLUMNS = `${MESSAGE_COLUMNS_BUT_SOURCES}, sources`;

export function messageValues(message: Message): unknown[] {
  return [
    message.roomId,
    message.seq,
    message.id,
    message.threadId,
    message.author.id,
    message.author.name,
    message.author.kind,
    message.text,
    message.ts,
    message.clientId ?? null,
    message.replyTo ?? null,
    message.sources ? JSON.stringify(message.sources) : null,
  ];
}

/** The columns of a memory_chunks row, in the order memoryChunkValues gives them. */
export const MEMORY_CHUNK_COLUMNS =
  'thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, privileged, owner, words_key, created_at, updated_at, vector, vector_model, fusion, lineage, forget_mark';
/** The columns a MemoryChunk is read from (all but the vector and its model), id aside. */
export const MEMORY_CHUNK_TEXT_COLUMNS =
  'thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, privileged, owner, words_key, created_at, updated_at, fusion, lineage';

/** A memory chunk's vector as a row stores it: no vector but its model when the store derives it (SQLite). */
export interface StoredVector {
  vector: Float32Array | null;
  model: string;
}

/**
 * `forgetMark`: the one the row keeps (its `forget_mark`): a private exchange's as the store checked
 * it in the filing's transaction (refusesForgotten), so `/forget private` can tell the row from
 * those filed before it moved the mark (Store.scanPrivateMemory's `filedSince`); null for every
 * other row (a thread operation's too), which any later forget takes. A privileged chunk without
 * an owner is refused: its lines would be stored under the thread's public scope
 * (memory/scopes.ts), which the line search, filtering by scope alone, would then show to anyone.
 */
export function memoryChunkValues(c: NewMemoryChunk, now: string, updatedAt: string, vector?: StoredVector, forgetMark: number | null = null): unknown[] {
  if (c.privileged && !c.owner) throw new Error(`a privileged memory chunk of thread ${c.threadId} has no owner`);
  return [
    c.threadId,
    c.roomId,
    c.kind,
    c.text,
    JSON.stringify(c.messageIds),
    JSON.stringify(c.authors),
    c.firstTs,
    c.lastTs,
    c.privileged ? 1 : 0,
    c.owner,
    repeatKey(c),
    now,
    updatedAt,
    vector?.vector ? vectorToBlob(vector.vector) : null,
    vector?.model ?? null,
    c.fusion ?? null,
    c.lineage ? JSON.stringify(c.lineage) : null,
    forgetMark,
  ];
}

export function itemToRow(item: ContentItem): Row {
  return {
    id: item.id,
    kind: item.kind,
    title: item.title,
    url: item.url,
    description: item.description,
    body: item.body,
    comments: JSON.stringify(item.comments),
    category: item.category,
    published_at: item.publishedAt,
    image: item.image,
    author: item.author,
    channel: item.channel,
    thumbnail: item.thumbnail,
    site_name: item.siteName,
    source: item.source,
  };
}

/** The items columns itemCard reads: what an item and its summary share. */
const ITEM_CARD_COLUMNS = 'id, kind, title, url, description, category, published_at, image, author, channel, thumbnail, site_name';

/** What an item and its summary share: the ITEM_CARD_COLUMNS. */
function itemCard(r: Row): Omit<ItemSummary, 'commentCount'> {
  return {
    id: r.id,
    kind: r.kind,
    title: r.title,
    url: r.url,
    description: r.description,
    category: r.category,
    publishedAt: r.published_at,
    image: r.image,
    author: r.author,
    channel: r.channel,
    thumbnail: r.thumbnail,
    siteName: r.site_name,
  };
}

export function rowToItem(r: Row): StoredItem {
  return {
    ...itemCard(r),
    body: r.body,
    comments: JSON.parse(r.comments),
    source: r.source,
    hash: r.hash,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The items columns of an ItemWithoutComments. */
export const ITEM_COLUMNS_BUT_COMMENTS = `${ITEM_CARD_COLUMNS}, body, source, hash, created_at, updated_at`;

export function rowToItemWithoutComments(r: Row): ItemWithoutComments {
  return { ...itemCard(r), body: r.body, source: r.source, hash: r.hash, createdAt: r.created_at, updatedAt: r.updated_at };
}

/** The items columns an ItemSummary is read from, besides `comment_count`, which each store counts its own way. */
export const ITEM_SUMMARY_COLUMNS = `${ITEM_CARD_COLUMNS}, sort_key`;

export function rowToItemSummary(r: Row): ItemSummary {
  return { ...itemCard(r), commentCount: Number(r.comment_count) };
}

export function rowToChunk(r: Row): ChunkRow {
  return {
    rowId: r.row_id,
    itemId: r.item_id,
    itemKind: r.item_kind,
    itemTitle: r.item_title,
    itemUrl: r.item_url,
    itemPublishedAt: r.item_published_at ?? null,
    itemSource: r.item_source,
    category: r.category,
    ord: r.ord,
    part: r.part,
    commentBy: r.comment_by,
    text: r.text,
    textHash: r.text_hash,
    sourceType: r.source_type,
  };
}

export function rowToUnsettledSeqs(r: Row): UnsettledSeqs {
  return { fromSeq: Number(r.from_seq), toSeq: Number(r.to_seq), startedAt: r.started_at };
}

export function rowToMessage(r: Row): Message {
  return {
    id: r.id,
    seq: r.seq,
    roomId: r.room_id,
    threadId: r.thread_id,
    author: { id: r.author_id, name: r.author_name, kind: r.author_kind },
    text: r.text,
    ts: r.ts,
    ...(r.client_id ? { clientId: r.client_id } : {}),
    ...(r.reply_to ? { replyTo: r.reply_to } : {}),
    ...(r.sources ? { sources: JSON.parse(r.sources) } : {}),
  };
}

export function rowToMemoryChunk(r: Row): MemoryChunk {
  const c: MemoryChunk = {
    id: r.id,
    threadId: r.thread_id,
    roomId: r.room_id,
    kind: r.kind,
    text: r.text,
    messageIds: JSON.parse(r.message_ids),
    authors: JSON.parse(r.authors),
    firstTs: r.first_ts,
    lastTs: r.last_ts,
    privileged: r.privileged === 1,
    owner: r.owner,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
  // Set rather than spread in: a fusion reads 20,000 rows.
  if (r.fusion) c.fusion = r.fusion;
  if (r.lineage) c.lineage = JSON.parse(r.lineage);
  return c;
}

/**
 * A stored chunk with its vector: the row's own, or (SQLite, a fused pair stored without one:
 * SqliteStore's DERIVED_VECTOR) derived from its two sources' vectors, `vector_a` and `vector_b`.
 */
export function rowToStoredMemoryChunk(r: Row): StoredMemoryChunk {
  // Completed in place rather than spread into a second object: a fusion reads 20,000 of them.
  const c = rowToMemoryChunk(r) as StoredMemoryChunk;
  c.vector = r.vector ? blobToVector(r.vector) : r.vector_a && r.vector_b ? fusedVector(r.vector_a, r.vector_b) : null;
  c.vectorModel = r.vector_model ?? null;
  return c;
}

/**
 * A fused pair's vector from its two sources' stored vectors: normalize(a + b), summed as a fusion
 * sums them (fusion.ts, fusedPair), so the same inputs give the same float32 numbers.
 */
export function fusedVector(a: Buffer, b: Buffer): Float32Array {
  const sum = blobToVector(a);
  return scaleToUnit(sum, sumInto(sum, blobToVector(b)));
}

export function vectorToBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function blobToVector(blob: Buffer): Float32Array {
  // Copy: the Buffer may be a view into a pooled allocation with unaligned offset.
  const copy = new Uint8Array(blob.byteLength);
  copy.set(blob);
  return new Float32Array(copy.buffer);
}

export function rowToIndexChange(row: Row): IndexChange {
  return { seq: Number(row.seq), target: row.target, ids: JSON.parse(row.ids) };
}

/** A source's poll state before its first poll. */
export const FRESH_SOURCE_STATE: SourcePollState = { etag: null, lastModified: null, lastPolledAt: null, lastError: null, failures: 0 };

/** The values of a new source's row, in SOURCE_COLUMNS order. */
export const SOURCE_COLUMNS = 'id, kind, url, list, max_entries, every_minutes, origin, created_at, next_due_at, state';
export function sourceValues(s: NewSource): unknown[] {
  return [s.id, s.kind, s.url, s.list, s.limit, s.everyMinutes, s.origin, s.createdAt, s.nextDueAt, JSON.stringify(FRESH_SOURCE_STATE)];
}

/** A source row (with `item_count`, counted from its entries) as a SourceRecord. */
export function rowToSource(row: Row): SourceRecord {
  const state = JSON.parse(row.state) as SourcePollState;
  return {
    id: row.id,
    kind: row.kind,
    url: row.url ?? null,
    list: row.list ?? null,
    limit: Number(row.max_entries),
    everyMinutes: Number(row.every_minutes),
    origin: row.origin,
    createdAt: row.created_at,
    nextDueAt: row.next_due_at,
    ...FRESH_SOURCE_STATE,
    ...state,
    itemCount: Number(row.item_count ?? 0),
    leaseOwner: row.lease_owner ?? null,
    leaseUntil: row.lease_until ?? null,
    leaseJob: row.lease_job ?? null,
  };
}

/** The SELECT every source read uses: the row and how many entries it stored. */
export const SOURCE_SELECT = 'SELECT s.*, (SELECT count(*) FROM source_entries e WHERE e.source_id = s.id) AS item_count FROM sources s';

/**
 * A job as its row's JSON, every string in it without NUL or half of a surrogate pair (U+FFFD
 * instead): a failure's ref or message may quote what a file or feed held, and JSON.stringify
 * escapes those as `\u0000` and `\ud800`, which PostgreSQL's json refuses to read.
 */
export function jobJson(job: IngestJob): string {
  return JSON.stringify(job, (_key, value: unknown) => (typeof value === 'string' ? wellFormed(withoutNul(value)) : value));
}

/** Whether a job is still to run or running (a sweep's jobs that are not have ended). */
export function unfinished(job: IngestJob): boolean {
  return job.status === 'queued' || job.status === 'running';
}
