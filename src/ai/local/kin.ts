/**
 * Words a source may say for a question's word: "how long is the film?" and `the 78-minute
 * melodrama`.
 * Read only where a question's terms are looked for in sources (stage 3's passage choice, the
 * built-in model's sentence choice), not by the stemmer: the built-in embedder and search keep
 * each word its own, so "documentary evidence" is no film to them. A kin found counts as the question's
 * own term, with its weight, once.
 */
import { deedAsked } from './answer-cues.js';
import { contentTerms, stem, STOPWORDS, termOf, termSpellings } from './extractive-text.js';

/** Words of one kind, each a name for the others in news text. Kept small: each pair is a guess about every text. */
const KIN_GROUPS = [
  ['film', 'movie', 'melodrama', 'documentary'],
  ['ship', 'vessel'],
  ['cost', 'price'],
].map((group) => group.map(stem));

/**
 * Deeds news text tells from the other side of the deal: "who invested in Veldra?" is answered by
 * `The company raised €310 million in a Series C round …, led by Fjordline Capital`, which holds
 * neither "invested" nor "Veldra", and was "not covered". Read only for a "who" question asking
 * the deed (deedAsked), where the one who raised is the one asked about: "how much did Veldra
 * raise?" and "why did the council raise fares?" ask no investor.
 */
const TOLD_FROM_THE_OTHER_SIDE = new Map([
  [stem('invest'), stem('raise')],
  [stem('fund'), stem('raise')],
  [stem('finance'), stem('raise')],
]);

/** The term of the deed that tells the deed whose term is `term` from the other side (`rais` for `invest`), if any. */
export function deedFromTheOtherSide(term: string): string | undefined {
  return TOLD_FROM_THE_OTHER_SIDE.get(term);
}

/** What a source's word stands for among a question's terms: one term (a kin), or the parts of a compound. */
export type Kin = ReadonlyMap<string, string | readonly string[]>;

/**
 * For `asked` (a question's terms), the terms that stand for one of them: each kin of an asked
 * term maps to it, unless the question asks for the kin itself. Given the question, a word it
 * writes apart (`post-mortem`, `post mortem`) is found written as one word too (`postmortem`),
 * which stands for all its parts: "who wrote the post-mortem?" held no term of the article's
 * "according to the postmortem, signed by …", and was "not covered".
 */
export function kinOf(asked: Iterable<string>, question?: string): Map<string, string | string[]> {
  const wanted = new Set(asked);
  const out = new Map<string, string | string[]>();
  for (const term of wanted) {
    for (const group of KIN_GROUPS) {
      if (!group.includes(term)) continue;
      for (const kin of group) if (!wanted.has(kin) && !out.has(kin)) out.set(kin, term);
    }
  }
  if (question === undefined) return out;
  const deed = deedAsked(question);
  const otherSide = deed && wanted.has(deed.term) ? TOLD_FROM_THE_OTHER_SIDE.get(deed.term) : undefined;
  if (otherSide && !wanted.has(otherSide) && !out.has(otherSide)) out.set(otherSide, deed!.term);
  for (const [joined, parts] of compoundsOf(question, wanted)) if (!out.has(joined)) out.set(joined, parts);
  return out;
}

/**
 * The compounds `question` writes apart, each as its term written as one word (`postmortem`) and
 * the parts among `asked` it stands for (`post`, `mortem`): a word written with hyphens, or two
 * words side by side that are both asked (`post mortem`).
 */
export function compoundsOf(question: string, asked: Iterable<string>): Map<string, string[]> {
  const wanted = new Set(asked);
  const out = new Map<string, string[]>();
  for (const { parts: written, spaced } of writtenApart(question.toLowerCase())) {
    const parts = written.flatMap((part) => contentTerms(part)).filter((t) => wanted.has(t));
    if (!parts.length || (spaced && parts.length < written.length)) continue;
    const joined = contentTerms(written.join(''))[0];
    if (joined && !wanted.has(joined) && !out.has(joined)) out.set(joined, parts);
  }
  return out;
}

/** A run of letters: a word, or a part of one written with hyphens. */
const LETTERS = /\p{L}+/gu;
/** Shortest part of two words side by side read as one (`post mortem`): `a lot` is no `alot`. */
const SPACED_PART_MIN = 2;

/**
 * The compounds `lower` (lower-cased text) may write apart, as their parts: each word written with
 * hyphens (`post-mortem`, `state-of-the-art`), and each two words with only spaces between
 * (`post mortem`). Words are found one run at a time and the gaps between them read once, so a
 * 50,000-letter word costs one pass (a pattern for a hyphenated word tried from each of its
 * letters read it again from each).
 */
function* writtenApart(lower: string): Generator<{ parts: string[]; spaced: boolean }> {
  let chain: string[] = [];
  let before = '';
  let end = -1;
  for (const m of lower.matchAll(LETTERS)) {
    const join = end < 0 ? 'none' : gapKind(lower, end, m.index);
    if (join === 'hyphen') chain.push(m[0]);
    else {
      if (chain.length > 1) yield { parts: chain, spaced: false };
      chain = [m[0]];
    }
    if (join === 'space' && before.length >= SPACED_PART_MIN && m[0].length >= SPACED_PART_MIN) yield { parts: [before, m[0]], spaced: true };
    before = m[0];
    end = m.index + m[0].length;
  }
  if (chain.length > 1) yield { parts: chain, spaced: false };
}

/** What stands between two words from `from` to `to`: one hyphen, spaces or tabs only, or anything else. */
function gapKind(text: string, from: number, to: number): 'hyphen' | 'space' | 'other' {
  if (to - from === 1 && HYPHENS.has(text[from])) return 'hyphen';
  for (let i = from; i < to; i++) if (text[i] !== ' ' && text[i] !== '\t') return 'other';
  return to > from ? 'space' : 'other';
}
const HYPHENS = new Set(['-', '\u2010', '\u2011']);

/** `terms` with each kin read as the asked term it stands for, and a compound as its parts, in order. */
export function asAsked(terms: string[], kin: Kin): string[] {
  return kin.size ? terms.flatMap((t) => kin.get(t) ?? t) : terms;
}

/**
 * `terms` (a text's) with the terms of the words it writes apart that the question writes as one
 * (`wanted`): "who wrote the postmortem?" and a report's `post-mortem` or `post mortem`. Only a
 * pair whose first part begins an asked term is stemmed, so the words of every text are not.
 */
export function withJoined(terms: string[], text: string, wanted: ReadonlySet<string>): string[] {
  return joinerFor(wanted)(terms, text);
}

/**
 * withJoined for one question's terms (`wanted`), made once for all the sentences it reads (an ask
 * reads a few hundred). Scanning a sentence for words side by side cost ~10 µs in a loop of one, so
 * a sentence is scanned only where it holds a hyphen, or a whole word, no stopword, that begins an
 * asked term before a space or tab (`post ` for `postmortem`); most hold neither.
 */
export function joinerFor(wanted: ReadonlySet<string>): Joiner {
  const prefixes = [...wanted].map((t) => termSpellings(t).prefix).filter((p) => p.length > SPACED_PART_MIN);
  const spacedPair = prefixes.length ? spacedPairFilter(prefixes) : null;
  const mayJoin = (text: string) => prefixes.length > 0 && (!spacedPair || HYPHEN_IN.test(text) || holdsBeginning(text, spacedPair));
  const join = (terms: string[], text: string) => {
    if (!mayJoin(text)) return terms;
    let joined: string[] | undefined;
    for (const { parts, spaced } of writtenApart(text.toLowerCase())) {
      const [first] = parts;
      if (!prefixes.some((p) => p.length > first.length && p.startsWith(first))) continue;
      // `in vested interests` is no `invested`: words side by side join only as two content words.
      if (spaced && parts.some((part) => STOPWORDS.has(part))) continue;
      const word = parts.join('');
      if (!prefixes.some((p) => word.startsWith(p))) continue;
      const term = termOf(word);
      if (term && wanted.has(term)) (joined ??= []).push(term);
    }
    return joined ? [...terms, ...joined] : terms;
  };
  return Object.assign(join, { mayJoin });
}

/** withJoined for one question's terms (joinerFor). */
export interface Joiner {
  (terms: string[], text: string): string[];
  /** False where no sentence of `text` can write an asked term apart: the joiner gives back the terms of each as they are. */
  mayJoin(text: string): boolean;
}

const HYPHEN_IN = /[-\u2010\u2011]/;

/** Asked terms the filter covers, and the longest first part: past either, every sentence is scanned. */
const FILTER_MAX_TERMS = 16;
const FILTER_MAX_PART = 24;

/**
 * What a text must hold to write an asked term apart with a space or tab: a whole word that is a
 * beginning of it, two letters or more and short of the whole, before a space or tab (`po`, `pos`,
 * … `postmorte`), as one expression of nested optional letters (`po(?:s(?:t…)?)?`), linear in the
 * text; a stopword found so is passed over (`in` for `industry`). Null for a question of many or
 * long terms (a 4,000-letter word), which every sentence is scanned for instead: a list of every
 * beginning of such a word took seconds to make and test.
 */
function spacedPairFilter(prefixes: string[]): RegExp | null {
  if (prefixes.length > FILTER_MAX_TERMS || prefixes.some((p) => p.length > FILTER_MAX_PART + 1)) return null;
  const beginnings = prefixes.map((p) => {
    const letters = Array.from(p.slice(0, -1));
    const rest = letters.slice(SPACED_PART_MIN).reduceRight((inner, letter) => `(?:${escapeRegExp(letter)}${inner})?`, '');
    return letters.slice(0, SPACED_PART_MIN).map(escapeRegExp).join('') + rest;
  });
  return new RegExp(`(?<!\\p{L})(?:${beginnings.join('|')})(?=[ \\t])`, 'giu');
}

/** Whether `text` holds a whole word `filter` matches (a beginning of an asked term) that is no stopword (writtenApart's pairs skip those). */
function holdsBeginning(text: string, filter: RegExp): boolean {
  for (const m of text.matchAll(filter)) if (!STOPWORDS.has(m[0].toLowerCase())) return true;
  return false;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
