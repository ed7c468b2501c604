/**
 * Full-text search in the PostgreSQL store: chunk text (the fallback when embedding fails) and the
 * lines of memory chunks. Both match `tsvector` columns (english: stemmed, stopwords
 * left out). A query is any of its words, built by `websearch_to_tsquery`, which never fails on
 * what a user typed.
 *
 * Lines rank the way FTS5's bm25 ranks them in SQLite: each matching term weighs its inverse
 * document frequency (ts_rank has none), times `ts_rank` with length normalisation for how often
 * and how densely the line says it. Scopes are stored as bytes: a private scope holds a NUL
 * (src/memory/scopes.ts), which PostgreSQL text cannot.
 *
 * Both the indexed text and the query are cut into words and folded in JS before PostgreSQL reads
 * them (searchFolded in search-folding.ts, migration 16).
 */
import type { ContentKind } from '../content/types.js';
import { COMMON_TERM_LINES, type LineHit, bestLinePerChunk, lineSlots, queryTerms } from './memory-lines.js';
import type { Sql } from './postgres-db.js';
import { searchFolded } from './search-folding.js';
import type { TextHit } from './types.js';

/** Below this many lines (by the planner's estimate) the line count for term weights is exact. */
const EXACT_COUNT_LINES = 10_000;
/** ts_rank normalisation 1: divide by 1 + log(line length), as bm25 favours short lines. */
const RANK_BY_LENGTH = 1;

/** A query's terms (queryTerms) folded as the indexed text is, each once. */
function foldedTerms(query: string): string[] {
  return [...new Set(queryTerms(query).map(searchFolded))];
}

/** The chunks whose text has any of the query's words, best first. */
export async function searchChunkText(sql: Sql, query: string, limit: number, kinds?: ContentKind[]): Promise<TextHit[]> {
  const terms = foldedTerms(query);
  if (!terms.length) return [];
  const byKind = kinds?.length ? 'AND i.kind = ANY($3)' : '';
  const { rows } = await sql.query(
    `SELECT c.row_id, ts_rank(c.tsv, q) AS rank
       FROM chunks c JOIN items i ON i.id = c.item_id, websearch_to_tsquery('english', $1) q
      WHERE c.tsv @@ q ${byKind} ORDER BY rank DESC, c.row_id LIMIT $2`,
    kinds?.length ? [anyOf(terms), limit, kinds] : [anyOf(terms), limit],
  );
  return rows.map((r) => ({ rowId: r.row_id, score: r.rank }));
}

/** Indexes a chunk's lines under its scope. */
export async function insertLines(sql: Sql, chunkId: number, text: string, scope: string): Promise<void> {
  const lines: number[] = [];
  const texts: string[] = [];
  lineSlots(text).forEach((t, i) => {
    if (!t.trim()) return;
    lines.push(i);
    texts.push(t);
  });
  if (!lines.length) return;
  await sql.query(
    `INSERT INTO memory_lines (chunk_id, line, text, scope, tsv)
     SELECT $1, l, t, $4, to_tsvector('english', f) FROM unnest($2::smallint[], $3::text[], $5::text[]) AS x (l, t, f)`,
    [chunkId, lines, texts, scopeBytes(scope), texts.map(searchFolded)],
  );
}

/** Moves a chunk's lines to another scope (the chunk moved to another thread). */
export async function rescopeLines(sql: Sql, chunkId: number, scope: string): Promise<void> {
  await sql.query('UPDATE memory_lines SET scope = $1 WHERE chunk_id = $2', [scopeBytes(scope), chunkId]);
}

/** The best-matching line of each chunk in `scopes`, best first (Store.searchMemoryLines). */
export async function searchLines(sql: Sql, query: string, scopes: string[], limit: number): Promise<LineHit[]> {
  const terms = foldedTerms(query);
  if (!terms.length || !scopes.length) return [];
  const weights = await termWeights(sql, terms);
  if (!weights.length) return [];
  // Several lines of one chunk may match, so more lines than chunks are read.
  const { rows } = await sql.query(
    `WITH w AS (SELECT websearch_to_tsquery('english', t.term) AS q, t.idf FROM unnest($1::text[], $2::float8[]) AS t (term, idf))
     SELECT l.chunk_id, l.line, l.text, (SELECT sum(w.idf * ts_rank(l.tsv, w.q, ${RANK_BY_LENGTH})) FROM w WHERE l.tsv @@ w.q) AS score
       FROM memory_lines l
      WHERE l.tsv @@ websearch_to_tsquery('english', $3) AND l.scope = ANY($4::bytea[])
      ORDER BY score DESC, l.chunk_id, l.line LIMIT $5`,
    [weights.map((w) => w.term), weights.map((w) => w.idf), anyOf(weights.map((w) => w.term)), scopes.map(scopeBytes), limit * 4],
  );
  return bestLinePerChunk(
    rows.map((r) => ({ chunkId: r.chunk_id, line: r.text, score: r.score })),
    limit,
  );
}

/**
 * The terms worth a line search, with their weights: a term on more than COMMON_TERM_LINES lines
 * (counted no further) would cost more than it tells apart, as in SQLite; a stopword or a term on
 * no line matches nothing. The weight is bm25's inverse document frequency.
 */
async function termWeights(sql: Sql, terms: string[]): Promise<{ term: string; idf: number }[]> {
  const { rows } = await sql.query(
    `SELECT t.term,
            (SELECT count(*) FROM (SELECT 1 FROM memory_lines WHERE tsv @@ q LIMIT ${COMMON_TERM_LINES + 1}) m) AS n,
            (SELECT CASE WHEN reltuples < ${EXACT_COUNT_LINES} THEN (SELECT count(*) FROM memory_lines) ELSE reltuples::bigint END
               FROM pg_class WHERE oid = 'memory_lines'::regclass) AS total
       FROM unnest($1::text[]) AS t (term), websearch_to_tsquery('english', t.term) AS q
      WHERE numnode(q) > 0`,
    [terms],
  );
  return rows
    .filter((r) => r.n > 0 && r.n <= COMMON_TERM_LINES)
    .map((r) => {
      const total = Math.max(r.total as number, r.n as number);
      return { term: r.term as string, idf: Math.log(1 + (total - r.n + 0.5) / (r.n + 0.5)) };
    });
}

/** A websearch query matching any of `terms` (words and numbers only). */
function anyOf(terms: string[]): string {
  return terms.join(' or ');
}

function scopeBytes(scope: string): Buffer {
  return Buffer.from(scope, 'utf8');
}
