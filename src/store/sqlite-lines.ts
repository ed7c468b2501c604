/**
 * The memory line search on a SQLite connection (memory-lines.ts has what both stores share): what
 * SqliteStore.searchMemoryLines runs on its own connection, or on the line reader's
 * (sqlite-line-reader.ts), which takes it off the event loop.
 */
import type Database from 'better-sqlite3';
import { threadOfScope } from '../memory/scopes.js';
import { COMMON_TERM_LINES, MEMORY_LINES_PER_CHUNK, bestLinePerChunk, queryTerms, type LineHit } from './memory-lines.js';
import type { Row } from './rows.js';

/** A prepared statement for `text` (the caller's cache). */
export type PrepareSql = (text: string) => Database.Statement;

/** The memory-chunk scope scopeOf computes (src/memory/scopes.ts), in SQL, of the chunk `c`. */
const CHUNK_SCOPE = "CASE WHEN c.privileged = 1 AND coalesce(c.owner, '') <> '' THEN c.thread_id || char(0) || c.owner ELSE c.thread_id END";

/** Store.searchMemoryLines on the connection `sql` prepares statements on. */
export function searchLinesIn(sql: PrepareSql, query: string, scopes: string[], limit: number): LineHit[] {
  const terms = queryTerms(query);
  if (!terms.length || !scopes.length) return [];
  const rare = rareTerms(sql, terms);
  if (!rare.length) return [];
  const match = rare.map((t) => `"${t}"`).join(' OR ');
  // Lines, best first; a chunk's first line in that order is its best. Several lines of one chunk
  // may match, so more lines than chunks are read.
  const marks = scopes.map(() => '?').join(',');
  if (!holdsCopies(sql, scopes)) {
    const rows = sql(
      `SELECT rowid, text, bm25(memory_lines) AS rank FROM memory_lines WHERE memory_lines MATCH ? AND scope IN (${marks}) ORDER BY rank LIMIT ?`,
    ).all(match, ...scopes, limit * 4) as Row[];
    return bestLinePerChunk(lineHits(rows, 'rowid'), limit);
  }
  // The lines of the chunks in `scopes`, and the lines of originals whose copies are in them
  // (a copy has none of its own, migration 9): one full-text match serves both.
  const rows = sql(
    `WITH hits AS MATERIALIZED (SELECT rowid, text, scope, bm25(memory_lines) AS rank FROM memory_lines WHERE memory_lines MATCH ?)
     SELECT rowid / ${MEMORY_LINES_PER_CHUNK} AS chunk_id, text, rank FROM hits WHERE scope IN (${marks})
     UNION ALL
     SELECT c.id AS chunk_id, h.text, h.rank FROM hits h JOIN memory_chunks c ON c.copy_of = h.rowid / ${MEMORY_LINES_PER_CHUNK}
       WHERE ${CHUNK_SCOPE} IN (${marks})
     ORDER BY rank LIMIT ?`,
  ).all(match, ...scopes, ...scopes, limit * 4) as Row[];
  return bestLinePerChunk(lineHits(rows, 'chunk_id'), limit);
}

/** Whether the threads of `scopes` hold copies (a fused thread's memory): one probe of a partial index. */
function holdsCopies(sql: PrepareSql, scopes: string[]): boolean {
  const threads = [...new Set(scopes.map(threadOfScope))];
  const probe = `SELECT 1 FROM memory_chunks WHERE copy_of IS NOT NULL AND thread_id IN (${threads.map(() => '?').join(',')}) LIMIT 1`;
  return sql(probe).get(...threads) !== undefined;
}

/**
 * The terms worth a line search: FTS5 scores every line a term matches before it can sort, so a
 * term on more than COMMON_TERM_LINES lines (counted no further than that) would cost more than
 * it tells apart; the vector search covers such questions.
 */
function rareTerms(sql: PrepareSql, terms: string[]): string[] {
  const count = sql(`SELECT count(*) AS n FROM (SELECT 1 FROM memory_lines WHERE memory_lines MATCH ? LIMIT ${COMMON_TERM_LINES + 1})`);
  return terms.filter((t) => ((count.get(`"${t}"`) as Row).n as number) <= COMMON_TERM_LINES);
}

/** Line rows as LineHits: the chunk is `rowid` / 16 for a chunk's own lines, or the copy's id (`chunk_id`). */
function lineHits(rows: Row[], chunk: 'rowid' | 'chunk_id'): LineHit[] {
  // bm25() is lower-is-better and negative; flip it so higher is better.
  return rows.map((r) => ({
    chunkId: chunk === 'rowid' ? Math.floor(r.rowid / MEMORY_LINES_PER_CHUNK) : (r.chunk_id as number),
    line: r.text as string,
    score: -r.rank,
  }));
}
