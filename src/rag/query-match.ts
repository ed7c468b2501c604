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
import { contentTerms, splitSentences, termOf, termSpellings, type Sentence } from '../ai/local/extractive-text.js';
import { squash } from '../text.js';

/** A text cut into sentences, each with the distinct query terms it holds. */
export interface MatchedText {
  /** The text with whitespace squashed (a list entry's line break may stay); sentence offsets point into it. */
  flat: string;
  sentences: Sentence[];
  /** Per sentence, the distinct query terms in it, in the order they first appear. */
  matches: string[][];
}

/**
 * Splits `text` (whitespace squashed by `flatten`) into sentences and finds the query terms of
 * each.
 */
export function matchQuery(text: string, query: ReadonlySet<string>, flatten: (text: string) => string = squash): MatchedText {
  const flat = flatten(text);
  const sentences = splitSentences(flat);
  if (query.size === 0) return { flat, sentences, matches: sentences.map(() => []) };
  const matches = ASCII_ONLY.test(flat) ? asciiMatches(flat, sentences, query) : sentences.map((s) => inOrder(contentTerms(s.text), query));
  return { flat, sentences, matches };
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** The distinct query terms among `terms`, in order. */
function inOrder(terms: string[], query: ReadonlySet<string>): string[] {
  return [...new Set(terms.filter((t) => query.has(t)))];
}

/** Plain ASCII text: words are runs of [a-z0-9], as contentTerms's fast path has them. */
function asciiMatches(flat: string, sentences: Sentence[], query: ReadonlySet<string>): string[][] {
  const lower = flat.toLowerCase();
  // Where each query term's words start: [position, term] pairs.
  const found: [number, string][] = [];
  for (const term of query) {
    const { prefix, whole } = termSpellings(term);
    for (const needle of [prefix, ...whole]) {
      for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + 1)) {
        if (at > 0 && isWordChar(lower.charCodeAt(at - 1))) continue;
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

function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}
