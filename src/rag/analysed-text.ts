/**
 * Texts cut into sentences with each sentence's terms, cached: the same chunks and bodies come
 * back ask after ask (popular items, both stage-1 searches, snippet then passage), and splitting
 * and stemming them is most of what stages 1 and 3 cost besides the models.
 */
import { contentTerms, splitSentences, type Sentence } from '../ai/extractive-text.js';

export interface AnalysedText {
  /** The text with whitespace squashed; sentence offsets point into it. */
  flat: string;
  sentences: Sentence[];
  /** Per sentence, its distinct terms in order of first appearance. */
  terms: string[][];
}

/** Characters of analysed text kept (least recently used dropped first): about 4,000 chunks, tens of MB. */
const CACHE_CHARS = 4_000_000;
/** Texts shorter than this are cheaper to analyse again than to remember. */
const MIN_CACHED_CHARS = 64;

const cache = new Map<string, AnalysedText>();
let cachedChars = 0;

/** `text` squashed, split into sentences and tokenised; the result is shared, so never mutate it. */
export function analyse(text: string): AnalysedText {
  const hit = cache.get(text);
  if (hit) {
    cache.delete(text);
    cache.set(text, hit);
    return hit;
  }
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentences = splitSentences(flat);
  const out: AnalysedText = { flat, sentences, terms: sentences.map((s) => [...new Set(contentTerms(s.text))]) };
  if (text.length >= MIN_CACHED_CHARS) {
    cache.set(text, out);
    cachedChars += text.length;
    for (const [key] of cache) {
      if (cachedChars <= CACHE_CHARS) break;
      cache.delete(key);
      cachedChars -= key.length;
    }
  }
  return out;
}

/** Per sentence, the distinct query terms it holds. */
export function queryTermsOf(a: AnalysedText, query: Set<string>): string[][] {
  return a.terms.map((ts) => ts.filter((t) => query.has(t)));
}
