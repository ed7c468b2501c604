/**
 * How close a graph search's answer comes to the exact one (eval:graph): the graph's hits are scored
 * again exactly and cut to k, as the tiered index does, and compared with the exact top k.
 */

/** One query's exact top k and the graph's answer, both as row numbers, best first. */
export interface QueryOutcome {
  exact: number[];
  found: number[];
  /** The exact cosine of the query with a row. */
  score: (row: number) => number;
}

/** The figures eval:graph prints for one graph and one search list size. */
export interface RecallFigures {
  /** Share of the exact top k's rows the graph's answer holds. */
  recall_at_k: number;
  /** Share of queries whose exact best row came first in the graph's answer. */
  top1: number;
  /** Mean cosine the graph's first row falls short of the exact best row's (0 when it is the same). */
  top1_shortfall_mean: number;
  /** Share of queries whose first row falls more than SHORTFALL_MARGIN short of the exact best. */
  top1_shortfall_over_margin: number;
}

/** A shortfall past this is a different answer, not a near tie. */
export const SHORTFALL_MARGIN = 0.02;

/** Recall and first-row figures over `outcomes` (queries with no exact hit count as found). */
export function recallFigures(outcomes: QueryOutcome[]): RecallFigures {
  let held = 0;
  let wanted = 0;
  let first = 0;
  let shortfall = 0;
  let overMargin = 0;
  for (const { exact, found, score } of outcomes) {
    const answer = new Set(found);
    held += exact.filter((row) => answer.has(row)).length;
    wanted += exact.length;
    if (exact.length === 0) {
      first++;
      continue;
    }
    if (found[0] === exact[0]) first++;
    const short = found.length ? Math.max(0, score(exact[0]) - score(found[0])) : score(exact[0]);
    shortfall += short;
    if (short > SHORTFALL_MARGIN) overMargin++;
  }
  const n = Math.max(1, outcomes.length);
  return {
    recall_at_k: wanted ? held / wanted : 1,
    top1: first / n,
    top1_shortfall_mean: shortfall / n,
    top1_shortfall_over_margin: overMargin / n,
  };
}

/** The `k` rows of `scores` with the highest score, best first (ties by row number). */
export function topRows(scores: ArrayLike<number>, k: number): number[] {
  const rows = Array.from({ length: scores.length }, (_, i) => i);
  rows.sort((a, b) => scores[b] - scores[a] || a - b);
  return rows.slice(0, k);
}
