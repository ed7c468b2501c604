/**
 * Words a source may say for a question's word: "how long is the film?" and `the 78-minute
 * melodrama`.
 * Read only where a question's terms are looked for in sources (stage 3's passage choice, the
 * built-in model's sentence choice), not by the stemmer: the built-in embedder and search keep
 * each word its own, so "documentary evidence" is no film to them. A kin found counts as the question's
 * own term, with its weight, once.
 */
import { deedAsked } from './answer-cues.js';
import { contentTerms, IN_FORCE, LEGAL_ACTION, REMEMBERED_TOKEN_MAX_CHARS, stem, STOPWORDS, termOf, termSpellings, words } from './extractive-text.js';
import { recently } from './recently.js';

/** Words of one kind, each a name for the others in news text. Kept small: each pair is a guess about every text. */
const KIN_GROUPS = [
  ['film', 'movie', 'melodrama', 'documentary'],
  ['ship', 'vessel'],
  ['cost', 'price'],
  ['kid', 'child'],
  ['buy', 'purchase'],
  ['start', 'begin'],
  ['big', 'large'],
  ['doctor', 'physician'],
  ['lawyer', 'attorney'],
  ['penalty', 'fine', 'sanction'],
  ['build', 'make'],
  ['safe', 'safety'],
  ['downside', 'drawback', 'disadvantage', 'weakness', 'risk'],
].map((group) => group.map(stem));

/**
 * A title's abbreviation and the words news text writes it in: "who is the CEO?" is told
 * `Ingrid Aasvold, Veldra's chief executive`. The abbreviation stands for the title's last word,
 * one way only: a question asking "executive" asks no CEO.
 */
const WRITTEN_OUT = new Map([[stem('ceo'), stem('executive')]]);

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

/**
 * The terms of the one who does a deed, named by it: "who developed it?" is told `its developer,
 * Calder Therapeutics`, "who makes it?" `the maker`, "who founded it?" `its founder` (stems:
 * `develop` → `developer`, `make` → `maker`, `creat` → `creator`). Read only for a "who" question
 * asking the deed (deedAsked): a source's "developers" tell no developing of what else is asked.
 */
function doersOf(term: string): string[] {
  return [`${term}er`, `${term}or`, ...(term.endsWith('e') ? [`${term}r`] : [])];
}

/** The term of the deed that tells the deed whose term is `term` from the other side (`rais` for `invest`), if any. */
export function deedFromTheOtherSide(term: string): string | undefined {
  return TOLD_FROM_THE_OTHER_SIDE.get(term);
}

/** What a source's word stands for among a question's terms: one term (a kin), or the parts of a compound. */
export type Kin = ReadonlyMap<string, string | readonly string[]>;

/**
 * The last questions' kin and joiners: an ask reads its question at several places, and for each
 * source it quotes (passage.ts), each time making the same sets and expressions.
 */
export const RECENT_QUESTIONS = 8;
const recentKin = new Map<string, Kin>();
const recentJoiners = new Map<string, Joiner>();

/**
 * For `asked` (a question's terms), the terms that stand for one of them: each kin of an asked
 * term maps to it, unless the question asks for the kin itself. Given the question, a word it
 * writes apart (`post-mortem`, `post mortem`) is found written as one word too (`postmortem`),
 * which stands for all its parts: "who wrote the post-mortem?" held no term of the article's
 * "according to the postmortem, signed by …", and was "not covered". A compound that is a kind of
 * an asked term (kindsOf: `gigafactory` for `factory`) stands for it.
 */
export function kinOf(asked: Iterable<string>, question?: string): Kin {
  const wanted = new Set(asked);
  return question === undefined
    ? kinOfTerms(wanted)
    : recently(recentKin, `${question}\u0000${[...wanted].join(' ')}`, () => kinOfQuestion(wanted, question), RECENT_QUESTIONS);
}

function kinOfTerms(wanted: ReadonlySet<string>): Map<string, string | string[]> {
  const out = new Map<string, string | string[]>();
  for (const term of wanted) {
    const written = WRITTEN_OUT.get(term);
    if (written && !wanted.has(written) && !out.has(written)) out.set(written, term);
    for (const group of KIN_GROUPS) {
      if (!group.includes(term)) continue;
      for (const kin of group) if (!wanted.has(kin) && !out.has(kin)) out.set(kin, term);
    }
  }
  return out;
}

/**
 * Words a source says for a phrase's noun, read only where the question says the phrase: "when does
 * it take effect?" is told `The law applies to … from 1 January 2027` (`comes into force`, `is
 * effective from`), and "who brought the case?" `a legal challenge by shopkeepers` (`sued`).
 * Elsewhere an `applies` is no effect, and the measles article's cases are no lawsuits.
 */
const PHRASE_KIN: { phrase: RegExp; terms: string[] }[] = [
  { phrase: IN_FORCE, terms: ['effect', 'force', 'apply', 'effective'] },
  {
    phrase: LEGAL_ACTION,
    terms: ['case', 'lawsuit', 'suit', 'challenge', 'complaint', 'petition', 'sue', 'sued', 'suing'],
  },
].map(({ phrase, terms }) => ({ phrase, terms: [...new Set(terms.map(termOf))] }));

/** The words a source says for a phrase of `question` (PHRASE_KIN), each mapped to the asked term it stands for. */
export function phraseKinOf(asked: ReadonlySet<string>, question: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const { phrase, terms } of PHRASE_KIN) {
    const term = question.match(phrase) ? terms.find((t) => asked.has(t)) : undefined;
    if (term) for (const t of terms) if (!asked.has(t) && !out.has(t)) out.set(t, term);
  }
  return out;
}

function kinOfQuestion(wanted: ReadonlySet<string>, question: string): Kin {
  const out = kinOfTerms(wanted);
  for (const [kin, term] of phraseKinOf(wanted, question)) if (!out.has(kin)) out.set(kin, term);
  const deed = deedAsked(question);
  const otherSide = deed && wanted.has(deed.term) ? TOLD_FROM_THE_OTHER_SIDE.get(deed.term) : undefined;
  if (otherSide && !wanted.has(otherSide) && !out.has(otherSide)) out.set(otherSide, deed!.term);
  if (deed && wanted.has(deed.term)) for (const doer of doersOf(deed.term)) if (!wanted.has(doer) && !out.has(doer)) out.set(doer, deed.term);
  for (const [joined, parts] of compoundsOf(question, wanted)) if (!out.has(joined)) out.set(joined, parts);
  for (const [kind, term] of kindsOf(wanted)) if (!out.has(kind)) out.set(kind, term);
  return out;
}

/**
 * Combining forms that make a word written as one with a whole word after it a kind of that word:
 * a gigafactory is a factory, a supermarket a market, a minibus a bus. Only forms of size and
 * number: `semi` (a semifinal is no final) and `sub` (substance) are not, nor is a word before a
 * word (relationship, deadline, birthday): with no list of words, a prefix that is one cannot be
 * told from a stem before a suffix.
 */
const COMBINING_FORMS = ['giga', 'mega', 'super', 'hyper', 'ultra', 'mini', 'micro', 'nano', 'multi'];
const FORMS = new Set(COMBINING_FORMS);
/** Longest combining form: a word with more letters before a found term is no compound of it. */
export const LONGEST_FORM = Math.max(...COMBINING_FORMS.map((f) => f.length));
/** Fewest letters of a compound's head: `superb` is no `b`, `minimum` no `mum`. */
const HEAD_MIN = 4;
/** Heads a form makes no kind of: units it scales (a gigawatt is no watt) and bound halves (a microphone is no phone). */
const NO_KIND_OF = new Set(
  ['watt', 'byte', 'hertz', 'volt', 'joule', 'gram', 'metre', 'meter', 'litre', 'liter', 'second', 'tonne', 'phone', 'scope', 'graph'].map(stem),
);
const LETTERS_ONLY = /^\p{L}+$/u;

/**
 * The term of the head of `word` (lower-cased) when it is a closed compound of a combining form
 * and a whole word of HEAD_MIN letters or more that the form makes a kind of (`gigafactories` →
 * `factory`); '' for any other word. `concatenate` holds `cat` but no form before it.
 */
export function headTermOf(word: string): string {
  for (const form of COMBINING_FORMS) {
    if (!word.startsWith(form)) continue;
    const head = word.slice(form.length);
    if (head.length < HEAD_MIN || !LETTERS_ONLY.test(head)) return '';
    const term = termOf(head);
    return term && mayHead(term) ? term : '';
  }
  return '';
}

/** Whether `part` is a combining form (`giga` before `factory`). */
export function isCombiningForm(part: string): boolean {
  return FORMS.has(part);
}

/** Whether a term may be the head of a compound (headTermOf): long enough, and a form makes it no other thing. */
export function mayHead(term: string): boolean {
  return term.length >= HEAD_MIN && !NO_KIND_OF.has(term);
}

/**
 * For `asked` (a question's terms), the terms of the compounds that are kinds of one of them, each
 * mapped to it (`gigafactory` → `factory`): a source's gigafactory is the question's factory. Made
 * once a term and remembered: a kin table is read word by word, so a source's words cost one look
 * up each, not a test of every form.
 */
export function kindsOf(asked: Iterable<string>): Map<string, string> {
  const wanted = new Set(asked);
  const out = new Map<string, string>();
  for (const term of wanted) {
    for (const kind of kindTerms(term)) if (!wanted.has(kind) && !out.has(kind)) out.set(kind, term);
  }
  return out;
}

function kindTerms(term: string): readonly string[] {
  const make = () => (mayHead(term) && LETTERS_ONLY.test(term) && !headTermOf(term) ? COMBINING_FORMS.map((form) => stem(form + term)) : []);
  // A term longer than any word is not kept: each entry would hold it nine times over.
  return term.length > REMEMBERED_TOKEN_MAX_CHARS ? make() : recently(kindCache, term, make, KIND_CACHE_SIZE);
}
const KIND_CACHE_SIZE = 10_000;
const kindCache = new Map<string, readonly string[]>();

/**
 * The heads of the compounds `question` asks (`gigafactory` → `factory`, headTermOf), each mapped
 * to its compound's term, for sources that name the compound too: there `the factory's total
 * cost` is the gigafactory's. Anywhere else the head may be another thing (a market is no
 * supermarket), so a caller reads them only in such a source.
 */
export function headsAsked(question: string, asked: Iterable<string>): Map<string, string> {
  const wanted = new Set(asked);
  const out = new Map<string, string>();
  for (const word of words(question)) {
    const term = termOf(word);
    if (!wanted.has(term)) continue;
    const head = headTermOf(word);
    if (head && !wanted.has(head) && !out.has(head)) out.set(head, term);
  }
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
  if (!kin.size) return terms;
  // Read for every sentence of every source an ask quotes: most hold no kin, and keep their array.
  let out: string[] | undefined;
  for (let i = 0; i < terms.length; i++) {
    const asked = kin.get(terms[i]);
    if (asked === undefined) out?.push(terms[i]);
    else {
      out ??= terms.slice(0, i);
      if (typeof asked === 'string') out.push(asked);
      else out.push(...asked);
    }
  }
  return out ?? terms;
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
 * reads a few hundred, at three places). Scanning a sentence for words side by side cost ~10 µs in
 * a loop of one, so a sentence is read only from where the first part of an asked term written
 * apart may stand (firstPartsOf: `post ` or `post-` for `postmortem`); most sentences hold none.
 */
export function joinerFor(wanted: ReadonlySet<string>): Joiner {
  return recently(recentJoiners, [...wanted].join(' '), () => newJoiner(new Set(wanted)), RECENT_QUESTIONS);
}

function newJoiner(wanted: ReadonlySet<string>): Joiner {
  const prefixes = [...wanted].map((t) => termSpellings(t).prefix).filter((p) => p.length > SPACED_PART_MIN);
  const places = prefixes.length ? firstPartsOf(prefixes) : null;
  // A question of many or long terms has no places to look at: every text is scanned whole.
  const apart = (lower: string) => (places ? writtenApartFrom(lower, places(lower)) : writtenApart(lower));
  const mayJoin = (text: string, lower?: string | null) => prefixes.length > 0 && (!places || places(lower ?? text.toLowerCase(), true).length > 0);
  const join = (terms: string[], text: string) => {
    if (!prefixes.length) return terms;
    let joined: string[] | undefined;
    for (const { parts, spaced } of apart(text.toLowerCase())) {
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
  /**
   * False where no sentence of `text` can write an asked term apart: the joiner gives back the terms
   * of each as they are. `lower`, when given, is `text` lower-cased (a split's copy, query-match.ts).
   */
  mayJoin(text: string, lower?: string | null): boolean;
}

/** Asked terms the places cover, and the longest first part: past either, every sentence is scanned. */
const FILTER_MAX_TERMS = 16;
const FILTER_MAX_PART = 24;

/** A word of a lower-cased text that may be the first part of an asked term written apart: from `at` to `end`. */
interface FirstPart {
  at: number;
  end: number;
  /** Before a space or tab (`post mortem`), else before a hyphen (`post-mortem`). */
  spaced: boolean;
}

/**
 * Where a lower-cased text may write an asked term apart, as writtenApart reads it: each whole
 * word that is a beginning of an asked term and short of the whole, before a space or tab (two
 * letters or more, no stopword: `po`, `pos`, … `postmorte` for `postmortem`) or before a hyphen
 * (`post-`, `e-` for `email`). A word before a space is looked for only where its first two letters
 * stand, one before a hyphen from the hyphen. Scanning every word of every sentence cost ~5 µs a
 * sentence, and a hyphen alone sent a fifth of news sentences to it. Null for a question of many or
 * long terms (a 4,000-letter word): a list of every beginning of such a word took seconds to make.
 */
function firstPartsOf(prefixes: string[]): ((lower: string, firstOnly?: boolean) => FirstPart[]) | null {
  if (prefixes.length > FILTER_MAX_TERMS || prefixes.some((p) => p.length > FILTER_MAX_PART + 1)) return null;
  // writtenApart's words are runs of letters: a beginning with a digit is never one.
  const letters = prefixes.map((p) => p.slice(0, p.match(NOT_LETTER)?.index ?? p.length));
  const beforeSpace = new Set<string>();
  const beforeHyphen = new Set<string>();
  for (const [i, p] of prefixes.entries()) {
    for (let n = 1; n < p.length && n <= letters[i].length; n++) {
      const beginning = p.slice(0, n);
      beforeHyphen.add(beginning);
      if (n >= SPACED_PART_MIN && !STOPWORDS.has(beginning)) beforeSpace.add(beginning);
    }
  }
  const starts = [...new Set([...beforeSpace].map((b) => b.slice(0, SPACED_PART_MIN)))];
  return (lower, firstOnly = false) => {
    const found: FirstPart[] = [];
    for (const hyphen of HYPHENS) {
      for (let end = lower.indexOf(hyphen); end >= 0; end = lower.indexOf(hyphen, end + 1)) {
        // Beginnings are at most FILTER_MAX_PART letters: a longer run is cut, and found in none.
        const word = WORD_BEFORE.exec(lower.slice(Math.max(0, end - FILTER_MAX_PART - 1), end));
        if (word && beforeHyphen.has(word[0]) && !letterBefore(lower, end - word[0].length)) {
          found.push({ at: end - word[0].length, end, spaced: false });
          if (firstOnly) return found;
        }
      }
    }
    for (const start of starts) {
      for (let at = lower.indexOf(start); at >= 0; at = lower.indexOf(start, at + 1)) {
        if (letterBefore(lower, at)) continue;
        const end = wordEnd(lower, at);
        if ((lower[end] === ' ' || lower[end] === '\t') && beforeSpace.has(lower.slice(at, end))) {
          found.push({ at, end, spaced: true });
          if (firstOnly) return found;
        }
      }
    }
    return found;
  };
}

/**
 * writtenApart's compounds, each once and in its order, read only from the first parts found
 * (firstPartsOf): a hyphen's word that begins a chain, with the rest of the chain, and a spaced
 * word with the word after it.
 */
function writtenApartFrom(lower: string, firstParts: FirstPart[]): { parts: string[]; spaced: boolean }[] {
  // writtenApart yields a chain as it reaches the next word (or the end), before that word's pair.
  const found: { order: number; parts: string[]; spaced: boolean }[] = [];
  for (const { at, end, spaced } of firstParts) {
    const first = lower.slice(at, end);
    if (spaced) {
      let next = end;
      while (lower[next] === ' ' || lower[next] === '\t') next++;
      const second = wordAt(lower, next);
      if (second && second.length >= SPACED_PART_MIN) found.push({ order: 2 * next + 1, parts: [first, second], spaced });
      continue;
    }
    // A word after a hyphen that follows a word is inside a chain, not its first part.
    if (at >= 2 && HYPHENS.has(lower[at - 1]) && letterBefore(lower, at - 1)) continue;
    const parts = [first];
    let to = end;
    for (let part = wordAt(lower, to + 1); HYPHENS.has(lower[to]) && part; part = wordAt(lower, to + 1)) {
      parts.push(part);
      to += 1 + part.length;
    }
    if (parts.length < 2) continue;
    LETTER_ANYWHERE.lastIndex = to;
    found.push({ order: 2 * (LETTER_ANYWHERE.exec(lower)?.index ?? lower.length), parts, spaced });
  }
  return found.length > 1 ? found.sort((a, b) => a.order - b.order) : found;
}

/** The run of letters that begins at `at`, or undefined. */
function wordAt(lower: string, at: number): string | undefined {
  WORD_AT.lastIndex = at;
  return WORD_AT.exec(lower)?.[0];
}

/** Whether a letter ends just before `at` (a surrogate pair read as one character). */
function letterBefore(lower: string, at: number): boolean {
  if (at <= 0) return false;
  // Most text is ASCII, read without an expression; the rest as Unicode tells.
  const c = lower.charCodeAt(at - 1);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
  return LETTER_LAST.test(lower.slice(Math.max(0, at - 2), at));
}

/** Where the run of letters that begins at `at` ends. */
function wordEnd(lower: string, at: number): number {
  for (let i = at; ; i++) {
    const c = lower.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) continue;
    if (!(c >= 128)) return i;
    // A letter past ASCII (or not): the expression reads the whole run.
    WORD_AT.lastIndex = at;
    return at + (WORD_AT.exec(lower)?.[0].length ?? 0);
  }
}

const NOT_LETTER = /\P{L}/u;
/** The run of letters at `lastIndex`. */
const WORD_AT = /\p{L}+/uy;
/** The run of letters a string ends with. */
const WORD_BEFORE = /\p{L}+$/u;
/** A string that ends in a letter (a surrogate pair read as one character). */
const LETTER_LAST = /\p{L}$/u;
/** The next letter from `lastIndex`. */
const LETTER_ANYWHERE = /\p{L}/gu;
