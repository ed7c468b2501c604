/**
 * Which of a question's terms each sentence of a text holds: what snippets (stage 1) and passage
 * choice (stage 3) need to know of the ~13,000 characters an ask reads.
 *
 * Tokenising every word and stemming it (or looking it up in a table of known words) costs a
 * cache miss or two per word: the models and the vector search run in between and evict whatever
 * the last ask left. Looking for the question's few terms instead is a handful of sequential
 * string searches per text: each term is searched by the prefix all its words share
 * (termSpellings), and each word found is confirmed by termOf, so the result is exactly that of
 * contentTerms on every sentence (test/rag/query-match.test.ts checks it on real passages).
 */
import { contentTerms, splitSentences, squashKeepingListEntries, termOf, termSpellings, words, type Sentence } from '../ai/local/extractive-text.js';
import { headTermOf, isCombiningForm, LONGEST_FORM, mayHead } from '../ai/local/kin.js';
import { squash } from '../text.js';

/** A text cut into sentences, each with the distinct query terms it holds. */
export interface MatchedText {
  /** The text with whitespace squashed (a list entry's line break may stay); sentence offsets point into it. */
  flat: string;
  sentences: Sentence[];
  /** Per sentence, the distinct query terms in it, in the order they first appear. */
  matches: string[][];
  /** `flat` lower-cased when it is plain ASCII (kept with the split: callers reading it lower-cased need not copy it again), else null. */
  lower: string | null;
}

/**
 * Splits `text` (whitespace squashed by `flatten`) into sentences and finds the query terms of
 * each. With `kinds`, a compound of a combining form and a query term's word is that term
 * (kin.ts's headTermOf: a source's `gigafactory` is the question's `factory`) unless its own term
 * is in the query: it is found where the term's word is, inside the compound, so no more is searched.
 */
export function matchQuery(text: string, query: ReadonlySet<string>, flatten: (text: string) => string = squash, kinds = false): MatchedText {
  const { flat, sentences, lower } = splitText(text, flatten);
  if (query.size === 0) return { flat, sentences, matches: sentences.map(() => []), lower };
  const matches =
    lower !== null
      ? asciiMatches(lower, sentences, query, kinds)
      : sentences.map((s) => inOrder(kinds ? termsReadingKinds(s.text, query) : contentTerms(s.text), query));
  return { flat, sentences, matches, lower };
}

/** A text flattened and cut into sentences: what matchQuery reads whatever the query. */
interface SplitText {
  flat: string;
  /** Frozen: every match of the text shares them. */
  sentences: Sentence[];
  /** `flat` lower-cased when it is plain ASCII (asciiMatches), else null. */
  lower: string | null;
}

/**
 * Characters of texts whose split is kept (each counted once for the text, once for its flattened
 * copy and once lower-cased): about the chunks and passages of the last twenty asks in a room.
 */
export const SPLIT_TEXTS_CHARS = 1_000_000;

/**
 * The last texts split, by text, most recently used last, each with its split for each flattening
 * it was matched with (FLATTENINGS; another flattening is not kept). An ask matches the same chunk
 * several times (its snippet, the relevance check, its passage) and the asks of a room keep finding
 * the same chunks: splitting into sentences was a third of matching. A split depends on the text
 * alone, so it needs no invalidation; the keys are the texts themselves.
 */
const splits = new Map<string, (SplitText | undefined)[]>();
const FLATTENINGS: readonly ((text: string) => string)[] = [squash, squashKeepingListEntries];
let splitChars = 0;

function splitText(text: string, flatten: (text: string) => string): SplitText {
  const way = FLATTENINGS.indexOf(flatten);
  const kept = way < 0 ? undefined : splits.get(text);
  const split = kept?.[way];
  if (kept && split) {
    splits.delete(text);
    splits.set(text, kept);
    return split;
  }
  const made = newSplit(text, flatten);
  if (way < 0) return made;
  const chars = (kept ? 0 : text.length) + made.flat.length + (made.lower?.length ?? 0);
  if (chars > SPLIT_TEXTS_CHARS) return made;
  const ways = kept ?? [];
  ways[way] = made;
  splits.delete(text);
  splits.set(text, ways);
  splitChars += chars;
  for (const [oldest, its] of splits) {
    if (splitChars <= SPLIT_TEXTS_CHARS) break;
    splits.delete(oldest);
    splitChars -= oldest.length + its.reduce((sum, t) => sum + (t ? t.flat.length + (t.lower?.length ?? 0) : 0), 0);
  }
  return made;
}

function newSplit(text: string, flatten: (text: string) => string): SplitText {
  const flat = flatten(text);
  const sentences = splitSentences(flat);
  for (const s of sentences) Object.freeze(s);
  return { flat, sentences: Object.freeze(sentences) as Sentence[], lower: ASCII_ONLY.test(flat) ? flat.toLowerCase() : null };
}

/** How many texts' splits are kept, and their characters (tests). */
export function splitsKept(): { texts: number; chars: number } {
  return { texts: splits.size, chars: splitChars };
}

/** contentTerms of `text`, a compound whose head is a query term read as that term (matchQuery's `kinds`). */
function termsReadingKinds(text: string, query: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    const t = termOf(w);
    if (!t) continue;
    const head = query.has(t) ? '' : headTermOf(w);
    out.push(head && query.has(head) ? head : t);
  }
  return out;
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** The distinct query terms among `terms`, in order. */
function inOrder(terms: string[], query: ReadonlySet<string>): string[] {
  return [...new Set(terms.filter((t) => query.has(t)))];
}

/** Plain ASCII text: words are runs of [a-z0-9], as contentTerms's fast path has them. */
function asciiMatches(lower: string, sentences: Sentence[], query: ReadonlySet<string>, kinds: boolean): string[][] {
  // Where each query term's words start: [position, term] pairs.
  const found: [number, string][] = [];
  for (const term of query) {
    const { prefix, whole } = termSpellings(term);
    for (const needle of [prefix, ...whole]) {
      for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + 1)) {
        if (at > 0 && isWordChar(lower.charCodeAt(at - 1))) {
          const start = kinds ? compoundStart(lower, at, term, query) : -1;
          if (start >= 0) found.push([start, term]);
          continue;
        }
        let end = at + needle.length;
        while (end < lower.length && isWordChar(lower.charCodeAt(end))) end++;
        if (termOf(lower.slice(at, end)) === term) found.push([at, term]);
      }
    }
  }
  found.sort((a, b) => a[0] - b[0]);
  // Squashed text separates sentences with whitespace only, so no word straddles two of them.
  const matches: string[][] = sentences.map(() => []);
  let s = 0;
  for (const [at, term] of found) {
    while (s < sentences.length && sentences[s].end <= at) s++;
    if (s === sentences.length) break;
    if (at >= sentences[s].start && !matches[s].includes(term)) matches[s].push(term);
  }
  return matches;
}

/**
 * Where the compound holding `term`'s word at `at` begins, when a combining form is all that comes
 * before it in its word and the compound is a kind of the term (headTermOf) whose own term is not
 * queried; else -1. At most LONGEST_FORM letters are read back.
 */
function compoundStart(lower: string, at: number, term: string, query: ReadonlySet<string>): number {
  if (!mayHead(term)) return -1;
  let start = at;
  while (start > 0 && isWordChar(lower.charCodeAt(start - 1))) {
    if (at - start >= LONGEST_FORM) return -1;
    start--;
  }
  if (!isCombiningForm(lower.slice(start, at))) return -1;
  let end = at;
  while (end < lower.length && isWordChar(lower.charCodeAt(end))) end++;
  const word = lower.slice(start, end);
  return headTermOf(word) === term && !query.has(termOf(word)) ? start : -1;
}

function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}
