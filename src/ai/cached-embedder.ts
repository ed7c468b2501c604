/**
 * An Embedder that remembers document vectors: they are kept in the store keyed by (model and
 * dimension, sha256 of the text), so restarts and re-ingests do not embed the same text again.
 * Questions and searches (purpose `query`, the default) pass straight through and are never kept:
 * a question can be private, and a store of them would say what people asked. The cache is
 * bounded (`maxEntries`, oldest dropped first). Texts repeated within one call are embedded once.
 * A failing cache never fails an embed.
 */
import { sha256 } from '../store/hashing.js';
import type { Store } from '../store/types.js';
import type { EmbedPurpose, Embedder } from './types.js';

/** EMBED_CACHE_MAX_ENTRIES's default: ~150 MB of 768-dimension vectors. */
export const DEFAULT_EMBED_CACHE_MAX_ENTRIES = 50_000;

/** The store key of an embedder's vectors: its model name and dimension. */
export function embeddingCacheKey(embedder: Pick<Embedder, 'model' | 'dimensions'>): string {
  return `${embedder.model}@${embedder.dimensions}`;
}

export interface CachedEmbedderOptions {
  /** Told when the cache could not be read or written (the embed still succeeds). */
  onCacheError?: (err: unknown) => void;
  /** Most vectors kept; default DEFAULT_EMBED_CACHE_MAX_ENTRIES. */
  maxEntries?: number;
}

/**
 * `embedder` without the cache when it has one: for what keeps its vectors itself and must be
 * forgotten when deleted (conversation memory), which a cache entry, a text's hash and its vector,
 * would outlive.
 */
export function uncached(embedder: Embedder): Embedder {
  return embedder instanceof CachedEmbedder ? embedder.inner : embedder;
}

/** Wraps `inner` with the store's embedding cache. */
export class CachedEmbedder implements Embedder {
  constructor(
    readonly inner: Embedder,
    private readonly store: Pick<Store, 'getEmbeddings' | 'putEmbeddings'>,
    private readonly options: CachedEmbedderOptions = {},
  ) {}

  get model(): string {
    return this.inner.model;
  }

  get dimensions(): number {
    return this.inner.dimensions;
  }

  get similarityThreshold(): number {
    return this.inner.similarityThreshold;
  }

  get relevanceThreshold(): number {
    return this.inner.relevanceThreshold;
  }

  async embed(texts: string[], signal?: AbortSignal, purpose: EmbedPurpose = 'query'): Promise<Float32Array[]> {
    if (purpose !== 'document') return this.inner.embed(texts, signal, purpose);
    const hashes = texts.map((t) => sha256(t));
    const unique = new Map<string, string>();
    hashes.forEach((h, i) => unique.set(h, texts[i]));
    const found = await this.lookup([...unique.keys()]);
    const missing = [...unique].filter(([h]) => !found.has(h));
    if (missing.length > 0) {
      const vectors = await this.inner.embed(
        missing.map(([, t]) => t),
        signal,
        purpose,
      );
      const entries = missing.map(([textHash], i) => ({ textHash, vector: vectors[i] }));
      for (const e of entries) found.set(e.textHash, e.vector);
      // The key is taken after the call: a remote embedder learns its dimension from the first answer.
      const maxEntries = this.options.maxEntries ?? DEFAULT_EMBED_CACHE_MAX_ENTRIES;
      await this.store.putEmbeddings(embeddingCacheKey(this.inner), entries, maxEntries).catch((err) => this.options.onCacheError?.(err));
    }
    const handedOut = new Set<string>();
    return hashes.map((h) => {
      const v = found.get(h)!;
      if (handedOut.has(h)) return v.slice();
      handedOut.add(h);
      return v;
    });
  }

  private async lookup(hashes: string[]): Promise<Map<string, Float32Array>> {
    const dim = this.inner.dimensions;
    if (dim === 0 || hashes.length === 0) return new Map();
    try {
      const got = await this.store.getEmbeddings(embeddingCacheKey(this.inner), hashes);
      for (const [h, v] of got) if (v.length !== dim) got.delete(h);
      return got;
    } catch (err) {
      this.options.onCacheError?.(err);
      return new Map();
    }
  }
}
