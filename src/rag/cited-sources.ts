/**
 * The sources an answer keeps: those its text cites. The reranker hands the model three to five
 * sources, and listing every one under an answer that quotes one of them told readers it leaned
 * on unrelated articles.
 */

/**
 * `[2]`, `[2, 5]` or `[2][5]`: the source numbers an answer's text cites, at most 100 in one bracket
 * (`[1,1,1,…` over megabytes threw RangeError, a backtrack entry a number).
 */
const CITATION = /\[(\d{1,3}(?:\s*,\s*\d{1,3}){0,99})\]/g;

/** The numbers an answer's text cites, in no particular order (code's `list[1]` is none). */
export function citedNumbers(text: string): Set<number> {
  const cited = new Set<number>();
  for (const m of citationsIn(text)) for (const n of m[1].split(',')) cited.add(Number(n));
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

/** A character after which `[n]` is code (`list[7]`, `f(x)[2]`, `` `a`[1] ``), not a citation. */
const CODE_BEFORE = /[\p{L}\p{N}_)`]/u;

/**
 * `text` without its citations of sources it was not given: `[7]` under an answer given three
 * sources names one nobody can read (a model's invention, or a page's footnote it copied). A
 * marker keeps the numbers that were given (`[2, 7]` → `[2]`) and goes, with the spaces before it,
 * when none was; one that is code is left alone (right after CODE_BEFORE, or after code's own
 * `[n]`: `grid[1][7]`).
 */
export function withoutUngivenCitations(text: string, given: ReadonlySet<number>): string {
  let out = '';
  let from = 0;
  for (const m of citationsIn(text)) {
    const at = m.index;
    const numbers = m[1].split(',').map(Number);
    const kept = numbers.filter((n) => given.has(n));
    if (kept.length === numbers.length) continue;
    out += kept.length ? `${text.slice(from, at)}[${kept.join(', ')}]` : text.slice(from, at).trimEnd();
    from = at + m[0].length;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** The `[n]` markers of `text` that are citations: not code (right after CODE_BEFORE, or after code's own `[n]`). */
function* citationsIn(text: string): Generator<RegExpExecArray & { index: number }> {
  let codeEnd = -1;
  for (const m of text.matchAll(CITATION)) {
    const at = m.index;
    if (at > 0 && (CODE_BEFORE.test(text[at - 1]) || at === codeEnd)) {
      codeEnd = at + m[0].length;
      continue;
    }
    yield m as RegExpExecArray & { index: number };
  }
}
