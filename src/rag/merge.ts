/**
 * Merging stage 1's two searches: chunk references are grouped into candidates (an item, or one
 * commenter of an item: chunkGroup), each search keeps its best `k` candidates, and the two lists
 * are merged by group. Only references are needed, so rows are read for the survivors alone.
 */
import type { ChunkRef } from '../search/types.js';

/** Candidates each of the two searches contributes. */
export const SEARCH_K = 10;

/** Weight of a candidate's second-best chunk in its score: breaks ties between items sharing a best chunk (a common title). */
export const SECOND_CHUNK_WEIGHT = 0.25;

/** A merged candidate: its best chunk, the chunk to show (the best that is not the title), its score. */
export interface MergedHit {
  hit: ChunkRef;
  evidence: ChunkRef;
  search: 1 | 2;
  score: number;
}

interface Grouped extends MergedHit {
  order: number;
}

/** One search's hits grouped by candidate key: score = best chunk + a little of the second; the best `k`. */
function groupSearch(hits: ChunkRef[], search: 1 | 2, k: number): Grouped[] {
  const byKey = new Map<string, { best: ChunkRef; second: number; evidence: ChunkRef; order: number }>();
  hits.forEach((hit, order) => {
    const key = hit.group;
    const g = byKey.get(key);
    if (!g) {
      byKey.set(key, { best: hit, second: 0, evidence: hit, order });
      return;
    }
    if (hit.score > g.best.score) {
      g.second = g.best.score;
      g.best = hit;
    } else g.second = Math.max(g.second, hit.score);
    if (g.evidence.title && !hit.title) g.evidence = hit;
  });
  return [...byKey.values()]
    .map((g) => ({ hit: g.best, evidence: g.evidence, search, score: g.best.score + SECOND_CHUNK_WEIGHT * g.second, order: g.order }))
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, k);
}

/**
 * Merges the searches' hits: each search's chunks are grouped into at most `k` candidates (a chunk
 * found by both searches counts once per candidate), then the candidates of both searches are
 * merged by key keeping the better score, best first; ties keep search order.
 */
export function mergeHits(results: ChunkRef[][], k = SEARCH_K): MergedHit[] {
  const merged = new Map<string, Grouped>();
  results.forEach((hits, s) => {
    for (const g of groupSearch(hits, (s + 1) as 1 | 2, k)) {
      const key = g.hit.group;
      const prev = merged.get(key);
      const order = s * 1000 + g.order;
      if (!prev || g.score > prev.score) {
        const evidence = prev && g.evidence.title && !prev.evidence.title ? prev.evidence : g.evidence;
        merged.set(key, { ...g, evidence, order: prev ? Math.min(prev.order, order) : order });
      } else if (prev.evidence.title && !g.evidence.title) prev.evidence = g.evidence;
    }
  });
  return [...merged.values()]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .map(({ hit, evidence, search, score }) => ({ hit, evidence, search, score }));
}
