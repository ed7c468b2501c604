/** Stage-1 snippets: the title plus about 150 characters around the chunk's best-matching sentence. */
import { contentTerms, splitSentences, type Sentence } from '../ai/extractive-text.js';

/** Characters of chunk text a snippet keeps besides the title. */
export const SNIPPET_CHARS = 150;

/** The chunk text without the title the chunker may have put in front of it. */
export function stripTitle(text: string, title: string): string {
  const t = title.trim();
  if (t && text.startsWith(t)) return text.slice(t.length).replace(/^[\s:.\-–—|]+/, '');
  return text;
}

/** A text cut into sentences, each with the distinct query terms it holds: tokenised once, used twice. */
export interface MatchedText {
  flat: string;
  sentences: Sentence[];
  /** Per sentence, the distinct query terms in it. */
  matches: string[][];
}

/** Splits `text` (whitespace squashed) into sentences and finds the query terms of each. */
export function matchText(text: string, query: Set<string>): MatchedText {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentences = splitSentences(flat);
  const matches = sentences.map((s) => [...new Set(contentTerms(s.text).filter((t) => query.has(t)))]);
  return { flat, sentences, matches };
}

/** The query terms anywhere in a matched text. */
export function termsOf(m: MatchedText): string[] {
  return [...new Set(m.matches.flat())];
}

/** About `size` characters starting at the best-matching sentence, cut at word boundaries. */
export function windowOf(m: MatchedText, idf: (t: string) => number, size = SNIPPET_CHARS): string {
  const { flat, sentences, matches } = m;
  if (flat.length <= size) return flat;
  let best = 0;
  let bestScore = -1;
  matches.forEach((terms, i) => {
    const score = terms.reduce((sum, t) => sum + idf(t), 0);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  });
  const anchor = sentences[best];
  let start = anchor.start;
  // A long sentence whose match lies past the window: start a little before the first matching word.
  if (anchor.text.length > size && matches[best].length) {
    const hit = firstMatch(anchor.text, new Set(matches[best]));
    if (hit > size / 2) start = anchor.start + hit - Math.floor(size / 3);
  }
  start = Math.max(0, Math.min(start, flat.length - size));
  if (start > 0) {
    const space = flat.indexOf(' ', start - 1);
    if (space >= 0 && space - start < 20) start = space + 1;
  }
  let end = Math.min(flat.length, start + size);
  if (end < flat.length) {
    const space = flat.lastIndexOf(' ', end);
    if (space > start + size * 0.6) end = space;
  }
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}

/** windowOf for a text not matched yet. */
export function windowAround(text: string, query: Set<string>, idf: (t: string) => number, size = SNIPPET_CHARS): string {
  return windowOf(matchText(text, query), idf, size);
}

function firstMatch(sentence: string, terms: Set<string>): number {
  for (const m of sentence.matchAll(/[\p{L}\p{N}]+/gu)) {
    const [t] = contentTerms(m[0]);
    if (t && terms.has(t)) return m.index;
  }
  return 0;
}

/** `Label: …text…`: what the reranker sees of one candidate. */
export function makeSnippet(label: string, excerpt: string): string {
  return excerpt ? `${label}: ${excerpt}` : label;
}
