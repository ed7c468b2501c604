import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CachedEmbedder, embeddingCacheKey } from '../../src/ai/cached-embedder.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import type { Embedder } from '../../src/ai/types.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../helpers.js';
import { join } from 'node:path';

/** Counts what reaches the wrapped embedder. */
class CountingEmbedder implements Embedder {
  calls: string[][] = [];
  readonly model = 'counting';
  readonly similarityThreshold = 0.1;
  readonly relevanceThreshold = 0.1;
  private readonly local = new LocalEmbedder({ dimensions: 64 });
  constructor(public dimensions = 64) {}
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls.push(texts);
    this.dimensions = 64;
    return this.local.embed(texts);
  }
}

describe('CachedEmbedder', () => {
  let store: SqliteStore;
  let cleanup: () => void;
  let dir: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    store = new SqliteStore({ filename: join(dir, 'salon.db') });
  });
  afterEach(async () => {
    await store.close();
    cleanup();
  });

  it('embeds a text once: a second embed of the same texts never reaches the model', async () => {
    const inner = new CountingEmbedder();
    const cached = new CachedEmbedder(inner, store);
    const texts = ['alpha beta', 'gamma delta', 'epsilon'];
    const first = await cached.embed(texts, undefined, 'document');
    const second = await cached.embed(texts, undefined, 'document');
    expect(inner.calls).toEqual([texts]);
    expect(second.map((v) => Array.from(v))).toEqual(first.map((v) => Array.from(v)));
  });

  it('survives a restart: vectors come back from the store', async () => {
    await new CachedEmbedder(new CountingEmbedder(), store).embed(['kept across restarts'], undefined, 'document');
    await store.close();
    store = new SqliteStore({ filename: join(dir, 'salon.db') });
    const inner = new CountingEmbedder();
    await new CachedEmbedder(inner, store).embed(['kept across restarts', 'new text'], undefined, 'document');
    expect(inner.calls).toEqual([['new text']]);
  });

  it('dedupes texts within a batch and keeps input order', async () => {
    const inner = new CountingEmbedder();
    const vectors = await new CachedEmbedder(inner, store).embed(['river bank', 'mountain pass', 'river bank', 'river bank'], undefined, 'document');
    expect(inner.calls).toEqual([['river bank', 'mountain pass']]);
    expect(Array.from(vectors[2])).toEqual(Array.from(vectors[0]));
    expect(vectors[2]).not.toBe(vectors[0]);
    expect(Array.from(vectors[1])).not.toEqual(Array.from(vectors[0]));
  });

  it('keys the cache by model and dimension', async () => {
    await new CachedEmbedder(new CountingEmbedder(), store).embed(['same text'], undefined, 'document');
    const other = new CountingEmbedder();
    Object.defineProperty(other, 'model', { value: 'another-model' });
    await new CachedEmbedder(other, store).embed(['same text'], undefined, 'document');
    expect(other.calls).toHaveLength(1);
    expect(embeddingCacheKey({ model: 'm', dimensions: 768 })).toBe('m@768');
    expect((await store.embeddingModels()).map((m) => m.model).sort()).toEqual(['another-model@64', 'counting@64']);
  });

  it('still embeds when the cache fails, and reports the failure', async () => {
    const failures: unknown[] = [];
    const broken = {
      getEmbeddings: async () => {
        throw new Error('disk gone');
      },
      putEmbeddings: async () => {
        throw new Error('disk gone');
      },
    };
    const inner = new CountingEmbedder();
    const vectors = await new CachedEmbedder(inner, broken, { onCacheError: (e) => failures.push(e) }).embed(['x y'], undefined, 'document');
    expect(vectors).toHaveLength(1);
    expect(failures).toHaveLength(2);
  });

  it('never keeps questions: a query embeds every time and leaves nothing in the store', async () => {
    const inner = new CountingEmbedder();
    const cached = new CachedEmbedder(inner, store);
    await cached.embed(['a private question about my cousin']);
    await cached.embed(['a private question about my cousin'], undefined, 'query');
    expect(inner.calls).toHaveLength(2);
    expect(await store.embeddingModels()).toEqual([]);
  });

  it('keeps at most maxEntries vectors, dropping the oldest', async () => {
    const inner = new CountingEmbedder();
    const cached = new CachedEmbedder(inner, store, { maxEntries: 3 });
    for (const text of ['one', 'two', 'three', 'four', 'five']) {
      await cached.embed([text], undefined, 'document');
      // Distinct stored_at values: entries stored within one millisecond tie.
      await new Promise((r) => setTimeout(r, 2));
    }
    expect((await store.embeddingModels())[0].count).toBe(3);
    inner.calls = [];
    await cached.embed(['three', 'four', 'five', 'one'], undefined, 'document');
    expect(inner.calls).toEqual([['one']]);
  });

  it('skips the lookup while a remote embedder does not know its dimension yet', async () => {
    const inner = new CountingEmbedder(0);
    const cached = new CachedEmbedder(inner, store);
    await cached.embed(['first call'], undefined, 'document');
    expect(cached.dimensions).toBe(64);
    await cached.embed(['first call'], undefined, 'document');
    expect(inner.calls).toHaveLength(1);
  });
});
