/**
 * The sources an answer keeps: those its text cites. The reranker hands the model three to five
 * sources, and listing every one under an answer that quotes one of them told readers it leaned
 * on unrelated articles.
 */

/** `[2]`, `[2, 5]` or `[2][5]`: the source numbers an answer's text cites. */
const CITATION = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;

/** The numbers an answer's text cites, in no particular order. */
export function citedNumbers(text: string): Set<number> {
  const cited = new Set<number>();
  for (const m of text.matchAll(CITATION)) for (const n of m[1].split(',')) cited.add(Number(n));
  return cited;
}

/**
 * The sources `text` cites, in their own order; all of them when it cites none of them (a model
 * that does not mark its citations still answered from what it was given).
 */
export function citedSources<S extends { n: number }>(text: string, sources: S[]): S[] {
  const cited = citedNumbers(text);
  const kept = sources.filter((s) => cited.has(s.n));
  return kept.length ? kept : sources;
}
