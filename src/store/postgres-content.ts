/**
 * Items and their chunks in the PostgreSQL store, written inside the caller's transaction. Two
 * nodes may write one item at once (two seeders, one feed ingested twice): an insert that meets
 * another's waits for it and then updates, and chunk changes lock the item's row first, so each
 * item ends with one set of chunks.
 */
import type { ContentItem, ItemSummary, NewChunk, StoredItem } from '../content/types.js';
import { errors } from '../errors.js';
import { decodeCursor, encodeCursor, hashItem, sha256 } from './hashing.js';
import type { Sql } from './postgres-db.js';
import { searchFolded } from './search-folding.js';
import { ITEM_SUMMARY_COLUMNS, itemToRow, rowToItem, rowToItemSummary } from './rows.js';
import type { ListItemsQuery, Page, UpsertStatus } from './types.js';

/** A chunk row with its item's fields, as ChunkRow reads it (the tsvector left out). */
export const CHUNK_SELECT = `SELECT c.row_id, c.item_id, c.ord, c.part, c.comment_by, c.text, c.text_hash, c.source_type,
  i.kind AS item_kind, i.title AS item_title, i.url AS item_url, i.published_at AS item_published_at, i.source AS item_source, i.category AS category FROM chunks c JOIN items i ON i.id = c.item_id`;

const ITEM_COLUMNS = [
  'id',
  'kind',
  'title',
  'url',
  'description',
  'body',
  'comments',
  'category',
  'published_at',
  'image',
  'author',
  'channel',
  'thumbnail',
  'site_name',
  'source',
  'hash',
  'sort_key',
] as const;

/** Inserts or updates one item (unchanged when its hash is the stored one); call inside a transaction. */
export async function upsertItemIn(sql: Sql, item: ContentItem): Promise<UpsertStatus> {
  const hash = hashItem(item);
  const now = new Date().toISOString();
  const row: Record<string, unknown> = { ...itemToRow(item), hash, sort_key: item.publishedAt ?? now };
  const values = [...ITEM_COLUMNS.map((c) => row[c]), now];
  const placeholders = ITEM_COLUMNS.map((_, i) => `$${i + 1}`).join(', ');
  const at = `$${ITEM_COLUMNS.length + 1}`;
  const created = await sql.query(
    `INSERT INTO items (${ITEM_COLUMNS.join(', ')}, created_at, updated_at) VALUES (${placeholders}, ${at}, ${at}) ON CONFLICT (id) DO NOTHING`,
    values,
  );
  if (created.rowCount) return 'created';
  // An update without a publication time keeps the creation's as its sort key, as an insert sets
  // it: taking the update's time moved the item to the top of every list (and past a reader's cursor).
  const param = (c: (typeof ITEM_COLUMNS)[number]) => `$${ITEM_COLUMNS.indexOf(c) + 1}`;
  const sets = ITEM_COLUMNS.slice(1)
    .map((c) => `${c} = ${c === 'sort_key' ? `CASE WHEN ${param('published_at')}::text IS NULL THEN created_at ELSE ${param(c)} END` : param(c)}`)
    .join(', ');
  const updated = await sql.query(`UPDATE items SET ${sets}, updated_at = ${at} WHERE id = $1 AND hash <> ${param('hash')}`, values);
  return updated.rowCount ? 'updated' : 'unchanged';
}

/** Locks the item's row for this transaction; false when there is no such item. */
export async function lockItem(sql: Sql, itemId: string): Promise<boolean> {
  return Boolean((await sql.query('SELECT 1 FROM items WHERE id = $1 FOR UPDATE', [itemId])).rowCount);
}

/** Whether the item has any chunk. */
export async function hasChunks(sql: Sql, itemId: string): Promise<boolean> {
  return Boolean((await sql.query('SELECT 1 FROM chunks WHERE item_id = $1 LIMIT 1', [itemId])).rowCount);
}

/**
 * Makes `chunks` the item's chunks, keeping the rows whose (ord, text) did not change; call inside
 * a transaction. ERR_CONTENT_NOT_FOUND when there is no such item.
 */
export async function replaceChunksIn(sql: Sql, itemId: string, chunks: NewChunk[]): Promise<{ addedIds: number[]; removed: number[] }> {
  if (!(await lockItem(sql, itemId))) throw new errors.ERR_CONTENT_NOT_FOUND(itemId);
  const existing = (await sql.query('SELECT row_id, ord, text_hash FROM chunks WHERE item_id = $1', [itemId])).rows;
  const keep = new Set(existing.map((r) => `${r.ord}:${r.text_hash}`));
  const wanted = new Set<string>();
  const fresh: (NewChunk & { textHash: string })[] = [];
  for (const c of chunks) {
    const textHash = sha256(c.text);
    const key = `${c.ord}:${textHash}`;
    wanted.add(key);
    if (!keep.has(key)) fresh.push({ ...c, textHash });
  }
  const removed = existing.filter((r) => !wanted.has(`${r.ord}:${r.text_hash}`)).map((r) => r.row_id as number);
  const addedIds = await insertChunks(sql, itemId, fresh);
  if (removed.length) await sql.query('DELETE FROM chunks WHERE row_id = ANY($1::bigint[])', [removed]);
  return { addedIds, removed };
}

/** Inserts chunks in the order given; returns their new row ids in that order. */
async function insertChunks(sql: Sql, itemId: string, chunks: (NewChunk & { textHash: string })[]): Promise<number[]> {
  if (!chunks.length) return [];
  // WITH ORDINALITY and ORDER BY: identity values follow the order of the chunks.
  const { rows } = await sql.query(
    `INSERT INTO chunks (item_id, ord, part, comment_by, text, text_hash, tsv)
     SELECT $1, c.ord, c.part, c.comment_by, c.text, c.text_hash, to_tsvector('english', c.folded)
       FROM unnest($2::integer[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
            WITH ORDINALITY AS c (ord, part, comment_by, text, text_hash, folded, n)
      ORDER BY c.n
     RETURNING row_id`,
    [
      itemId,
      chunks.map((c) => c.ord),
      chunks.map((c) => c.part),
      chunks.map((c) => c.commentBy ?? null),
      chunks.map((c) => c.text),
      chunks.map((c) => c.textHash),
      chunks.map((c) => searchFolded(c.text)),
    ],
  );
  return rows.map((r) => r.row_id as number).sort((a, b) => a - b);
}

/** Store.listItems: newest first (sort key, then id), filtered, paged by an opaque cursor. */
export function listItemsIn(sql: Sql, query: ListItemsQuery): Promise<Page<StoredItem>> {
  return pageOfItems(sql, '*', query, rowToItem);
}

/** Store.listItemSummaries: listItemsIn's page without the bodies and comments, only the comments' count. */
export function listItemSummariesIn(sql: Sql, query: ListItemsQuery): Promise<Page<ItemSummary>> {
  return pageOfItems(sql, `${ITEM_SUMMARY_COLUMNS}, json_array_length(comments::json) AS comment_count`, query, rowToItemSummary);
}

async function pageOfItems<T>(sql: Sql, columns: string, query: ListItemsQuery, map: (row: Record<string, any>) => T): Promise<Page<T>> {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (v: unknown) => `$${params.push(v)}`;
  if (query.kind) where.push(`kind = ${param(query.kind)}`);
  // Both sides folded under the column's collation ("C": ASCII letters only, as SQLite's NOCASE),
  // which is the items_category_sort index's leading expression; lower() of the parameter alone folded under the
  // database's locale, so a name with a capital outside ASCII (ÉCONOMIE) never matched itself.
  if (query.category) where.push(`lower(category) = lower(${param(query.category)} COLLATE "C")`);
  if (query.cursor) {
    const parts = decodeCursor(query.cursor);
    if (!parts || parts.length !== 2 || typeof parts[0] !== 'string' || typeof parts[1] !== 'string') throw new errors.ERR_INVALID_CURSOR();
    where.push(`(sort_key, id) < (${param(parts[0])}, ${param(parts[1])})`);
  }
  const { rows } = await sql.query(
    `SELECT ${columns} FROM items ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY sort_key DESC, id DESC LIMIT ${param(query.limit + 1)}`,
    params,
  );
  const more = rows.length > query.limit;
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return { items: page.map(map), nextCursor: more && last ? encodeCursor([last.sort_key, last.id]) : null };
}
