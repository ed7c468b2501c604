/**
 * Texts cut into sentences with each sentence's terms (as ids, term-ids.ts), cached: the same
 * chunks and bodies come back ask after ask in a room (its own item, popular items), and splitting
 * and stemming them is most of what stages 1 and 3 cost besides the models.
 *
 * The sentences are splitSentences' and each sentence's terms are the distinct terms contentTerms
 * gives for its text (test/rag/analysed-text.test.ts checks this); plain-ASCII text, the common
 * case, takes the faster path of term-ids.ts.
 *
 * A text is cached the second time it is analysed, not the first: most chunks are seen once, and
 * keeping their analyses costs more (in garbage collection of a larger old generation) than
 * analysing them did. The cache is keyed by the text itself, so a re-ingested item whose text
 * changed is analysed afresh, and entries of changed or deleted items are never asked for again
 * and age out.
 */
import { contentTerms, splitSentences, type Sentence } from '../ai/extractive-text.js';
import { asciiSentenceTermIds, knownTermId, termGeneration, termId, termText } from './term-ids.js';

export interface AnalysedText {
  /** The text with whitespace squashed; sentence offsets point into it. */
  flat: string;
  sentences: Sentence[];
  /** Ids of each sentence's distinct terms: sentence i holds termIds[termOffsets[i] … termOffsets[i + 1]). */
  termIds: Int32Array;
  termOffsets: Int32Array;
  /** The term-id generation the ids belong to. */
  generation: number;
}

/** Characters of analysed text kept (least recently used dropped first): about 3,000 chunks. */
const CACHE_CHARS = 2_000_000;
/** Texts shorter than this are cheaper to analyse again than to remember. */
const MIN_CACHED_CHARS = 64;
/** Hashes of texts analysed once, remembered to admit them into the cache when they come back. */
const SEEN_MAX = 50_000;

const cache = new Map<string, AnalysedText>();
let cachedChars = 0;
const seen = new Set<number>();

/** `text` squashed, split into sentences and tokenised; the result may be shared, so never mutate it. */
export function analyse(text: string): AnalysedText {
  const hit = cache.get(text);
  if (hit && hit.generation === termGeneration()) {
    cache.delete(text);
    cache.set(text, hit);
    return hit;
  }
  const flat = squash(text);
  const sentences = splitSentences(flat);
  const { ids, offsets } = ASCII_ONLY.test(flat) ? asciiSentenceTermIds(flat, sentences) : unicodeTermIds(sentences);
  const out: AnalysedText = { flat, sentences, termIds: ids, termOffsets: offsets, generation: termGeneration() };
  if (hit) forget(text);
  if (text.length >= MIN_CACHED_CHARS && (hit || secondSight(text))) remember(text, out);
  return out;
}

/** The distinct terms of sentence `i`, as contentTerms spells them. */
export function sentenceTerms(a: AnalysedText, i: number): string[] {
  const out: string[] = [];
  for (let j = a.termOffsets[i]; j < a.termOffsets[i + 1]; j++) out.push(termText(a.termIds[j]));
  return out;
}

/** Per sentence, the distinct query terms it holds (in the sentence's order). */
export function queryTermsOf(a: AnalysedText, query: Set<string>): string[][] {
  const wanted = new Map<number, string>();
  for (const t of query) {
    const id = knownTermId(t);
    if (id >= 0) wanted.set(id, t);
  }
  const out: string[][] = [];
  for (let i = 0; i + 1 < a.termOffsets.length; i++) {
    const found: string[] = [];
    if (wanted.size) {
      for (let j = a.termOffsets[i]; j < a.termOffsets[i + 1]; j++) {
        const t = wanted.get(a.termIds[j]);
        if (t !== undefined) found.push(t);
      }
    }
    out.push(found);
  }
  return out;
}

/** Empties the cache and what it has seen (tests). */
export function clearAnalysedTexts(): void {
  cache.clear();
  cachedChars = 0;
  seen.clear();
}

/** Analyses held in the cache (tests and troubleshooting). */
export function analysedTextsCached(): number {
  return cache.size;
}

/** Whitespace runs squashed to one space and the ends trimmed; most stored text needs neither, and the check is cheaper than the replace. */
export function squash(text: string): string {
  return NEEDS_SQUASH.test(text) ? text.replace(/\s+/g, ' ').trim() : text;
}

/** Whitespace other than single spaces between non-spaces. */
const NEEDS_SQUASH = /[^\S ]| {2}|^ | $/;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** contentTerms of each sentence, deduplicated, as ids: the general path for text that is not plain ASCII. */
function unicodeTermIds(sentences: Sentence[]): { ids: Int32Array; offsets: Int32Array } {
  const all: number[] = [];
  const offsets = new Int32Array(sentences.length + 1);
  sentences.forEach((s, i) => {
    offsets[i] = all.length;
    for (const t of new Set(contentTerms(s.text))) all.push(termId(t));
  });
  offsets[sentences.length] = all.length;
  return { ids: Int32Array.from(all), offsets };
}

/** Whether `text` was analysed before (by a 32-bit hash; a rare collision only admits a text early). */
function secondSight(text: string): boolean {
  const h = fnv1a(text);
  if (seen.has(h)) {
    seen.delete(h);
    return true;
  }
  if (seen.size >= SEEN_MAX) seen.clear();
  seen.add(h);
  return false;
}

function remember(text: string, analysed: AnalysedText): void {
  cache.set(text, analysed);
  cachedChars += text.length;
  while (cachedChars > CACHE_CHARS) forget(cache.keys().next().value as string);
}

function forget(text: string): void {
  if (cache.delete(text)) cachedChars -= text.length;
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h;
}
