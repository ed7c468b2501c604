/**
 * A question's terms weighed by the words it wrote: the terms of a name with a number (`VS-2`,
 * `Orrery-2`, `COVID-19`) count once, by the heaviest of them a text holds. Counted apart, "VS-2"
 * was two rare terms ("vs" and "2", which also matches every "2.1" and "two"), and a sentence
 * naming the cell outweighed the one giving the energy density asked for. Words of letters only
 * (`four-day`, `sodium-ion`) keep their terms apart: "four" alone still counts in "four have
 * returned". Shared by stage 3's passage choice and the built-in model's sentence choice.
 */
import { contentTerms } from './extractive-text.js';

/**
 * A word as written, its hyphenated parts kept together. Bounded (256 letters a part, 32 parts):
 * unbounded, megabytes of one word threw RangeError (a backtrack entry a step).
 */
const WRITTEN_WORD = /[\p{L}\p{N}]{1,256}(?:[-\u2010\u2011][\p{L}\p{N}]{1,256}){0,32}/gu;

/** A part of a name written in digits: the `2` of `VS-2`. */
const DIGITS = /^\p{N}+$/u;

/** Sums weights of question terms, the terms of a name with a number counting once. */
export type UnitWeigher = (terms: Iterable<string>, weight: (term: string) => number) => number;

/**
 * The weigher of `question`'s terms among `asked` (its askedTerms). A term the question also
 * writes alone ("VS-2 … the 2 cells") counts on its own. A part written in digits counts only
 * beside another part of its name: the "2" of "2.1 kiloelectronvolts" is not Orrery-2.
 */
export function askedUnits(question: string, asked: Iterable<string>): UnitWeigher {
  const wanted = new Set(asked);
  const unitOf = new Map<string, number>();
  const digits = new Set<string>();
  const alone = new Set<string>();
  let units = 0;
  for (const word of question.match(WRITTEN_WORD) ?? []) {
    const parts = word.split(/[-\u2010\u2011]/).map((part) => ({ part, terms: contentTerms(part).filter((t) => wanted.has(t)) }));
    const terms = new Set(parts.flatMap((p) => p.terms));
    if (terms.size === 1) alone.add([...terms][0]);
    if (terms.size < 2 || !parts.some(({ part }) => DIGITS.test(part))) continue;
    units++;
    for (const { part, terms: ts } of parts) {
      for (const t of ts) {
        if (unitOf.has(t)) continue;
        unitOf.set(t, units);
        if (DIGITS.test(part)) digits.add(t);
      }
    }
  }
  for (const t of alone) unitOf.delete(t);
  return (terms, weight) => {
    let sum = 0;
    const heaviest = new Map<number, number>();
    const named = new Set<number>();
    for (const t of new Set(terms)) {
      const unit = unitOf.get(t);
      if (unit === undefined) {
        sum += weight(t);
        continue;
      }
      heaviest.set(unit, Math.max(heaviest.get(unit) ?? 0, weight(t)));
      if (!digits.has(t)) named.add(unit);
    }
    for (const [unit, w] of heaviest) if (named.has(unit)) sum += w;
    return sum;
  };
}
