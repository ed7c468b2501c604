/**
 * The line search of conversation memory, as both stores do it: each chunk's lines are indexed for
 * full-text search and searched within the chunks' scopes (PostgreSQL keeps the scope on each
 * line, SQLite reads it from the line's chunk); a query keeps only its rarer terms, and a chunk
 * scores by its best line plus a little for each further matching line.
 */

/** Lines a query term may match before the line search leaves it out (the vector search covers such questions). */
export const COMMON_TERM_LINES = 2_000;
/** How much each further matching line of a chunk adds to its best line's score (a fact told over several lines). */
export const SECOND_LINE_WEIGHT = 0.25;
/** Lines of a chunk indexed on their own; lines past the last slot are joined into it. */
export const MEMORY_LINES_PER_CHUNK = 16;

/** A memory line search hit: the best line of a chunk and its score (higher is better). */
export interface LineHit {
  chunkId: number;
  line: string;
  score: number;
}

/**
 * Distinct terms a query searches with, at most. Each costs a count of the lines it is on (up to
 * COMMON_TERM_LINES of them) and a share of the match: a 4,000-character question of 800 words
 * each said on ~1,900 lines held the event loop for over a second in SQLite.
 */
export const MAX_QUERY_TERMS = 32;

/**
 * The distinct lower-case words and numbers of a query, in order; past MAX_QUERY_TERMS the longest
 * (the most specific, as a rule) are kept, in their order.
 */
export function queryTerms(query: string): string[] {
  const terms = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  if (terms.length <= MAX_QUERY_TERMS) return terms;
  const kept = new Set(
    terms
      .map((t, i) => ({ t, i }))
      .sort((a, b) => b.t.length - a.t.length || a.i - b.i)
      .slice(0, MAX_QUERY_TERMS)
      .map((x) => x.t),
  );
  return terms.filter((t) => kept.has(t));
}

/** A chunk's text cut into its line slots (some may be blank: callers skip those, keeping the slot numbers). */
export function lineSlots(text: string): string[] {
  const lines = text.split('\n');
  // Lines past the last slot stay searchable, joined into it.
  return [...lines.slice(0, MEMORY_LINES_PER_CHUNK - 1), lines.slice(MEMORY_LINES_PER_CHUNK - 1).join(' ')];
}

/**
 * Matching lines, best first, folded into one hit per chunk: the chunk's first line in that order
 * is its best, each further one adds SECOND_LINE_WEIGHT of its score. Best first, at most `limit`.
 */
export function bestLinePerChunk(lines: LineHit[], limit: number): LineHit[] {
  const best = new Map<number, LineHit>();
  for (const l of lines) {
    const found = best.get(l.chunkId);
    if (!found) best.set(l.chunkId, { ...l });
    else found.score += SECOND_LINE_WEIGHT * l.score;
  }
  return [...best.values()].sort((a, b) => b.score - a.score).slice(0, limit);
}
