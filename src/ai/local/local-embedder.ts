/**
 * The built-in embedder (docs/architecture.md): deterministic feature hashing, offline and instant.
 *
 * Three feature groups are counted per text: stemmed content words, pairs of neighbouring
 * content words, and character n-grams inside words (which catch spelling variants and
 * morphology the stemmer misses). Counts get sublinear weights (1 + ln tf); each group is
 * L2-normalised on its own and scaled by its weight, so long texts do not let one group drown
 * the others; the features are hashed with a sign bit into one vector, which is L2-normalised.
 */
import { tokenize } from './text-features.js';
import { STOPWORDS, stem, worthRemembering } from './extractive-text.js';
import type { Embedder } from '../types.js';
import { numberWithin, wholeNumber } from '../../options.js';

/** Default dimension, also LOCAL_EMBED_DIM's default. */
export const DEFAULT_LOCAL_DIMENSIONS = 2048;
export const MIN_LOCAL_DIMENSIONS = 32;
export const MAX_LOCAL_DIMENSIONS = 4096;
/**
 * Bump when features change, so stored vectors are recognised as stale: the index of an earlier
 * version is rebuilt at start (isEarlierLocalModel), memory's and the embedding cache's vectors
 * are keyed by it. v2: "against" is a word of the text, no longer a stopword. v3: "opposed" is
 * the word "against", "favor" the word "favour". v4: "drop", "decline" and "decrease" are the
 * word "fall", "increase" the word "rise". v5: "support", "supported" and "backed" are the word
 * "favour". v6: "used", "using", "aged", "owed", "eyed", "iced" and their -ing forms are their
 * base word, as the shared stemmer now reads them. v7: the -ed and -ing forms of a base of four
 * letters and a final e are the base (`voted` and `voting` are `vote`, no longer `vot`; `rated` is
 * no longer `rat`; `rising` is `rise`), and `added` is `add`. v8: an -eed word's forms lose
 * its -ed as the word does (`speeding` is `spe`, as `speed` is), the -ed form of an -ee verb is
 * its base (`freed` is `free`, `guaranteed` `guarante`), and `gases`, `buses`, `ashes` are `gas`,
 * `bus`, `ash`. v9: `bit` is its own word, no longer `bite`, and twelve bases of five letters keep
 * their final e in every form (`plane` is no longer `plan`, `united` no longer `unit`, `quite` no
 * longer `quit`). v10: `lay` is the verb lay's, no longer `lie`, and `laid` is `lay`. v11:
 * American spellings are the British ones (`license` is `licence`, `organize` `organise`,
 * `color` `colour`), and `programme` is `program`. v12: a verb's -ise and a noun's -is lose their
 * ending as -ism does (`criticise` is `critic`, as `criticism` is; `analysis` is `analys`, as
 * `analyse` is; `organise` is `organ`).
 */
export const LOCAL_EMBEDDER_MODEL = 'salon-local-hash-v12';
const LOCAL_MODEL_VERSION = /^salon-local-hash-v(\d+)$/;

/**
 * Whether vectors of `stored` were made by an earlier version of the built-in embedder that
 * `current` is, at the same dimension: made again at start, offline, without `salon reindex`.
 */
export function isEarlierLocalModel(stored: { model: string; dimensions: number }, current: { model: string; dimensions: number }): boolean {
  const was = LOCAL_MODEL_VERSION.exec(stored.model);
  const is = LOCAL_MODEL_VERSION.exec(current.model);
  return !!was && !!is && current.model === LOCAL_EMBEDDER_MODEL && Number(was[1]) < Number(is[1]) && stored.dimensions === current.dimensions;
}

/**
 * Cosine under which two texts count as unrelated. Measured on the XQuAD passages at 2048
 * dimensions: a question and its own passage score 0.33 at the median (under 1 % fall below
 * 0.12); a question and a passage of another article score 0.04 at the median (3 % reach 0.12).
 */
export const LOCAL_SIMILARITY_THRESHOLD = 0.12;
/**
 * A question whose best match scores under this is not covered by the index (the assistant
 * abstains). Chosen with `npm run eval:retrieval` on XQuAD (half the articles indexed): 98.8 % of
 * questions about indexed passages are still answered, 83 % of questions about the other
 * articles, asked in unrelated rooms, are abstained on (0.20: 97.5 % and 92 %; 0.12: 100 % and 25 %).
 */
export const LOCAL_RELEVANCE_THRESHOLD = 0.18;

/** Relative weight of each feature group in the final vector. */
export interface FeatureWeights {
  words: number;
  pairs: number;
  chars: number;
}

export const DEFAULT_FEATURE_WEIGHTS: Readonly<FeatureWeights> = { words: 1, pairs: 0.3, chars: 1.3 };
const CHAR_NGRAM_MIN = 3;
const CHAR_NGRAM_MAX = 4;

/** Texts embedded between two yields to the event loop (about 10 ms of work). */
const YIELD_EVERY = 64;
/** Rounds of warmUp: by then V8 has optimised the hot loops (measured: the 3rd–7th calls were the slow ones). */
const WARM_UP_ROUNDS = 12;
/** A chat window's worth of text, as memory embeds (names, times, numbers, ordinary words). */
const WARM_UP_TEXT = [
  'Ann (24 Nov 2026, 09:14): The council approved the new pier for 2.4 million dollars last week.',
  'Bo (24 Nov 2026, 09:15): Construction starts in March; the ferry keeps running meanwhile.',
  'Cy (24 Nov 2026, 09:17): Who pays for it? My cousin said taxes go up by 3 percent.',
].join('\n');
/** Distinct tokens whose features are remembered; the memo is dropped when it fills. */
const TOKEN_CACHE_MAX = 100_000;

const SEED_WORD = 0x9e3779b1;
const SEED_PAIR = 0x85ebca6b;
const SEED_CHAR = 0xc2b2ae35;

interface TokenFeatures {
  /** Hash of the stemmed word. */
  word: number;
  /** Hashes of the character n-grams of the word with boundary marks. */
  grams: Uint32Array;
}

export interface LocalEmbedderOptions {
  /** Vector length, 32..4096 (LOCAL_EMBED_DIM). */
  dimensions?: number;
  /** Group weights; the defaults were chosen on a QA retrieval set (bench/embedder-quality). */
  weights?: Partial<FeatureWeights>;
  /** Smallest and largest character n-gram, within 1..8. */
  charGrams?: [number, number];
}

/** FNV-1a over a string's UTF-16 code units, then a murmur finaliser for the low bits. */
function hashString(s: string, seed: number, from = 0, to = s.length): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = from; i < to; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return finalise(h);
}

function finalise(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A multiset of feature hashes: pushed into a reusable typed array, then sorted so equal hashes
 * sit together and each run length is a term frequency (cheaper than a Map per text).
 */
class HashBag {
  private items = new Uint32Array(1024);
  private length = 0;

  push(h: number): void {
    if (this.length === this.items.length) {
      const bigger = new Uint32Array(this.items.length * 2);
      bigger.set(this.items);
      this.items = bigger;
    }
    this.items[this.length++] = h;
  }

  /** Adds the bag's sublinear (1 + ln tf), unit-normalised counts times `weight` into `out`, then empties it. */
  drainInto(out: Float32Array, weight: number): void {
    const n = this.length;
    this.length = 0;
    if (n === 0 || weight === 0) return;
    const sorted = this.items.subarray(0, n).sort();
    let norm = 0;
    for (let i = 0; i < n;) {
      let j = i + 1;
      while (j < n && sorted[j] === sorted[i]) j++;
      const w = 1 + Math.log(j - i);
      norm += w * w;
      i = j;
    }
    const scale = weight / Math.sqrt(norm);
    const dim = out.length;
    for (let i = 0; i < n;) {
      const h = sorted[i];
      let j = i + 1;
      while (j < n && sorted[j] === h) j++;
      // The top bit picks the sign, so collisions cancel out on average instead of piling up.
      const sign = h & 0x80000000 ? -1 : 1;
      out[(h & 0x7fffffff) % dim] += sign * scale * (1 + Math.log(j - i));
      i = j;
    }
  }
}

function l2normalise(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
  if (norm === 0) return v;
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i] *= inv;
  return v;
}

/** Deterministic feature-hashing embedder. Same text, same vector, on every machine. */
export class LocalEmbedder implements Embedder {
  readonly model = LOCAL_EMBEDDER_MODEL;
  readonly dimensions: number;
  readonly similarityThreshold = LOCAL_SIMILARITY_THRESHOLD;
  readonly relevanceThreshold = LOCAL_RELEVANCE_THRESHOLD;
  private readonly weights: FeatureWeights;
  private readonly gramMin: number;
  private readonly gramMax: number;
  private readonly cache = new Map<string, TokenFeatures | null>();
  /** Scratch space reused by every (synchronous) embedOne. */
  private readonly words = new HashBag();
  private readonly pairs = new HashBag();
  private readonly chars = new HashBag();

  constructor(options: LocalEmbedderOptions = {}) {
    const dimensions = options.dimensions ?? DEFAULT_LOCAL_DIMENSIONS;
    wholeNumber('LocalEmbedder', 'dimensions', dimensions, MIN_LOCAL_DIMENSIONS, MAX_LOCAL_DIMENSIONS);
    const weights = { ...DEFAULT_FEATURE_WEIGHTS, ...options.weights };
    for (const [name, w] of Object.entries(weights)) {
      numberWithin('LocalEmbedder', `weights.${name}`, w, 0);
    }
    const [gmin, gmax] = options.charGrams ?? [CHAR_NGRAM_MIN, CHAR_NGRAM_MAX];
    if (!Number.isInteger(gmin) || !Number.isInteger(gmax) || gmin < 1 || gmax > 8 || gmin > gmax) {
      throw new RangeError(`charGrams: expected [min, max] with 1 ≤ min ≤ max ≤ 8, got [${gmin}, ${gmax}]`);
    }
    this.dimensions = dimensions;
    this.weights = weights;
    this.gramMin = gmin;
    this.gramMax = gmax;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i++) {
      // Yield now and then so a large batch does not stall the rooms sharing the event loop.
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise<void>((r) => setImmediate(r));
      signal?.throwIfAborted();
      out.push(this.embedOne(texts[i]));
    }
    signal?.throwIfAborted();
    return out;
  }

  /**
   * Embeds a sample text a dozen times, one round per event-loop turn. A fresh process runs the
   * first calls in V8's interpreter, 1–10 ms each instead of ~0.1 ms; without this the first memory
   * windows of every room, closing together after a start, would hold the rooms' messages.
   */
  async warmUp(): Promise<void> {
    for (let i = 0; i < WARM_UP_ROUNDS; i++) {
      await new Promise<void>((r) => setImmediate(r));
      this.embedOne(`${WARM_UP_TEXT} ${i}`);
    }
  }

  /** Distinct tokens whose features are remembered now. */
  get memoisedTokens(): number {
    return this.cache.size;
  }

  /** The vector of one text, synchronously. */
  embedOne(text: string): Float32Array {
    const { words, pairs, chars } = this;
    let previous = -1;
    for (const token of tokenize(text)) {
      const f = this.features(token);
      if (!f) {
        previous = -1;
        continue;
      }
      words.push(f.word);
      if (previous >= 0) pairs.push(finalise((Math.imul(previous, 31) + f.word) ^ SEED_PAIR));
      previous = f.word;
      for (let i = 0; i < f.grams.length; i++) chars.push(f.grams[i]);
    }
    const out = new Float32Array(this.dimensions);
    words.drainInto(out, this.weights.words);
    pairs.drainInto(out, this.weights.pairs);
    chars.drainInto(out, this.weights.chars);
    return l2normalise(out);
  }

  /** The hashed features of one token (null for a stopword), memoised: vocabularies are small. */
  private features(token: string): TokenFeatures | null {
    const cached = this.cache.get(token);
    if (cached !== undefined) return cached;
    const f = this.computeFeatures(token);
    if (!worthRemembering(token)) return f;
    if (this.cache.size >= TOKEN_CACHE_MAX) this.cache.clear();
    this.cache.set(token, f);
    return f;
  }

  private computeFeatures(token: string): TokenFeatures | null {
    let f: TokenFeatures | null = null;
    if (!STOPWORDS.has(token) && (token.length > 1 || /\d/.test(token))) {
      const padded = `<${token}>`;
      const grams: number[] = [];
      for (let n = this.gramMin; n <= this.gramMax; n++) {
        for (let i = 0; i + n <= padded.length; i++) grams.push(hashString(padded, SEED_CHAR + n, i, i + n));
      }
      f = { word: hashString(stem(token), SEED_WORD), grams: Uint32Array.from(grams) };
    }
    return f;
  }
}
