/** The snippet `GET /api/v1/search` shows: about 200 characters around a chunk's best-matching sentence. */
import { contentTerms, splitSentences, type Sentence } from '../ai/local/extractive-text.js';
import { safeCut } from '../content/text.js';

export const SNIPPET_CHARS = 200;

/** The chunk text without the title the chunker may have put in front of it ('' when that is all it holds). */
export function stripTitle(text: string, title: string): string {
  const t = title.trim();
  if (t && text.startsWith(t)) return text.slice(t.length).replace(/^[\s:.\-–—|]+/, '');
  return text;
}

function overlap(query: Set<string>, text: string): number {
  let n = 0;
  for (const t of new Set(contentTerms(text))) if (query.has(t)) n++;
  return n;
}

/** Index of the first word of `text` that is one of `terms`, or -1. */
function firstMatch(text: string, terms: Set<string>): number {
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const [t] = contentTerms(m[0]);
    if (t && terms.has(t)) return m.index;
  }
  return -1;
}

/**
 * About `size` characters of `flat` starting at `anchor` (a sentence of it) — a little before the
 * first of `terms` when that lies past the window — cut at word boundaries, with `…` where text was cut.
 */
export function cutAround(flat: string, anchor: Sentence | undefined, terms: Set<string>, size: number): string {
  let start = anchor ? anchor.start : 0;
  if (anchor && anchor.text.length > size) {
    const hit = firstMatch(anchor.text, terms);
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
  // Text without spaces (emoji, CJK beyond the BMP) is cut by count: never inside a character.
  start = safeCut(flat, start);
  end = safeCut(flat, end);
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}

/**
 * About `size` characters of `text` around the sentence sharing the most terms with `query`
 * (the first sentence when none does), cut at word boundaries, with `…` where text was cut.
 */
export function snippetFor(text: string, query: string, title = '', size = SNIPPET_CHARS): string {
  const flat = (stripTitle(text, title) || text).replace(/\s+/g, ' ').trim();
  if (flat.length <= size) return flat;
  const terms = new Set(contentTerms(query));
  const sentences = splitSentences(flat);
  let best = sentences[0];
  let bestScore = 0;
  for (const s of sentences) {
    const score = overlap(terms, s.text);
    if (score > bestScore) [best, bestScore] = [s, score];
  }
  return cutAround(flat, best, terms, size);
}
