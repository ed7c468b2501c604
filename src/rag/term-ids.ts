/**
 * Terms as small integers, and contentTerms (src/ai/extractive-text.ts) per sentence for
 * plain-ASCII text without a regex or a string per word.
 *
 * Stages 1 and 3 tokenise ~13,000 characters an ask, mostly text they have not seen before, right
 * after the models and the vector search have pushed everything else out of the CPU caches; a
 * JavaScript Map of words and a Set per sentence then cost a cache miss or several per word. Here
 * a word is hashed while its characters are walked and looked up in one flat table (its hash, its
 * length, its term id and where its characters are kept, side by side), so a word seen before
 * costs one or two misses and no allocation; a sentence's distinct terms come out as ids.
 */
import { stem, STOPWORDS, type Sentence } from '../ai/extractive-text.js';

const SLOT_BITS = 18;
const SLOTS = 1 << SLOT_BITS;
const SLOT_MASK = SLOTS - 1;
/** Int32 fields per slot: hash, length (0 = free), term id, offset of the word's characters. */
const FIELDS = 4;
/** Words remembered before the table is emptied at the next call (half its slots keeps probes short). */
const MAX_WORDS = SLOTS >> 1;
/** Within one call the table stops growing here, so a probe always ends at a free slot. */
const FULL_WORDS = (SLOTS >> 2) * 3;
/** Bytes of word characters kept (ASCII words, one byte a character). */
const POOL_BYTES = 4 << 20;
/** Distinct terms given ids before they are all forgotten (and every analysis made with them). */
const MAX_TERMS = 1 << 21;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 16777619;
const STOPWORD = -1;

const table = new Int32Array(SLOTS * FIELDS);
const pool = new Uint8Array(POOL_BYTES);
let poolUsed = 0;
let words = 0;

const ids = new Map<string, number>();
const texts: string[] = [];
/** Changes whenever ids are forgotten, so analyses holding old ids can tell they are stale. */
let generation = 0;
/** Per term id, the last sentence (by stamp) it was put in. */
let lastStamp = new Int32Array(1024);
let stamp = 0;
let scratch = new Int32Array(4096);

/** The current id generation: ids from an earlier one mean nothing any more. */
export function termGeneration(): number {
  return generation;
}

/** The id of `term`, given one if it has none yet. */
export function termId(term: string): number {
  let id = ids.get(term);
  if (id === undefined) {
    id = texts.length;
    texts.push(term);
    ids.set(term, id);
    if (id >= lastStamp.length) {
      const grown = new Int32Array(lastStamp.length * 2);
      grown.set(lastStamp);
      lastStamp = grown;
    }
  }
  return id;
}

/** The id `term` has, or -1 when it has none (then no analysed text holds it). */
export function knownTermId(term: string): number {
  return ids.get(term) ?? -1;
}

/** The term an id stands for. */
export function termText(id: number): string {
  return texts[id];
}

/** Forgets every word and term (tests, and when the tables are full). */
export function resetTermIds(): void {
  forgetWords();
  ids.clear();
  texts.length = 0;
  lastStamp = new Int32Array(1024);
  stamp = 0;
  generation++;
}

function forgetWords(): void {
  table.fill(0);
  poolUsed = 0;
  words = 0;
}

/** Term ids of a text's sentences, concatenated: sentence i holds ids[offsets[i] … offsets[i + 1]). */
export interface SentenceTermIds {
  ids: Int32Array;
  offsets: Int32Array;
}

/**
 * Per sentence of `text` (plain ASCII, whitespace squashed, as analyse makes it), the ids of the
 * distinct terms contentTerms gives for the sentence's text, in order of first appearance.
 */
export function asciiSentenceTermIds(text: string, sentences: Sentence[]): SentenceTermIds {
  if (texts.length >= MAX_TERMS) resetTermIds();
  if (words >= MAX_WORDS || poolUsed > POOL_BYTES - 4096) forgetWords();
  if (stamp > 0x7ffffff0 - sentences.length) {
    lastStamp.fill(0);
    stamp = 0;
  }
  const lower = text.toLowerCase();
  // A text of n characters has at most n/2 + 1 words.
  if (scratch.length < (text.length >> 1) + 2) scratch = new Int32Array((text.length >> 1) + 2);
  const offsets = new Int32Array(sentences.length + 1);
  let n = 0;
  for (let k = 0; k < sentences.length; k++) {
    offsets[k] = n;
    const mark = ++stamp;
    const end = sentences[k].end;
    let start = -1;
    let hash = 0;
    // Squashed text separates sentences with whitespace only, so no word straddles two of them.
    for (let i = sentences[k].start; i <= end; i++) {
      const c = i < end ? lower.charCodeAt(i) : 0;
      if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
        if (start < 0) {
          start = i;
          hash = FNV_OFFSET;
        }
        hash = Math.imul(hash ^ c, FNV_PRIME);
      } else if (start >= 0) {
        const id = termOfWord(lower, start, i, hash);
        if (id !== STOPWORD && lastStamp[id] !== mark) {
          lastStamp[id] = mark;
          scratch[n++] = id;
        }
        start = -1;
      }
    }
  }
  offsets[sentences.length] = n;
  return { ids: scratch.slice(0, n), offsets };
}

/** The term id of the word lower[start, end) (STOPWORD for a stopword), whose hash is `hash`. */
function termOfWord(lower: string, start: number, end: number, hash: number): number {
  const length = end - start;
  for (let slot = hash & SLOT_MASK; ; slot = (slot + 1) & SLOT_MASK) {
    const at = slot * FIELDS;
    const len = table[at + 1];
    if (len === 0) return learn(lower, start, end, hash, at);
    if (len === length && table[at] === hash && sameChars(table[at + 3], lower, start, length)) return table[at + 2];
  }
}

function learn(lower: string, start: number, end: number, hash: number, at: number): number {
  const word = lower.slice(start, end);
  const term = STOPWORDS.has(word) ? '' : stem(word);
  const id = term ? termId(term) : STOPWORD;
  const length = end - start;
  if (words < FULL_WORDS && poolUsed + length <= POOL_BYTES) {
    for (let j = 0; j < length; j++) pool[poolUsed + j] = lower.charCodeAt(start + j);
    table[at] = hash;
    table[at + 1] = length;
    table[at + 2] = id;
    table[at + 3] = poolUsed;
    poolUsed += length;
    words++;
  }
  return id;
}

function sameChars(offset: number, text: string, at: number, length: number): boolean {
  for (let j = 0; j < length; j++) if (pool[offset + j] !== text.charCodeAt(at + j)) return false;
  return true;
}
