// Item search cuts a snippet only for the items it returns (snippetFor counted through a module mock).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { blankItem } from '../../src/content/types.js';
import { Indexer } from '../../src/search/indexer.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { DefaultSearchService } from '../../src/search/search-service.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { putItem } from './corpus.js';

const snippets = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../../src/search/snippet.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/search/snippet.js')>();
  return {
    ...real,
    snippetFor: (...args: Parameters<typeof real.snippetFor>) => {
      snippets.calls++;
      return real.snippetFor(...args);
    },
  };
});

describe('DefaultSearchService.searchItems snippets', () => {
  const store = new SqliteStore({ filename: ':memory:' });
  const embedder = new LocalEmbedder({ dimensions: 256 });
  const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 1, threshold: 10_000 });
  const indexer = new Indexer({ store, index, embedder });
  const search = new DefaultSearchService({ store, index, embedder, indexer });

  beforeAll(async () => {
    // 60 articles saying nearly the same thing: a search's first round finds many more items than k.
    for (let i = 0; i < 60; i++) {
      const item = blankItem(`news_s${i}`, {
        title: `Sodium batteries ${i}`,
        body: `Sodium batteries store grid energy cheaply, report ${i} says.`,
        source: 'api',
      });
      await indexer.chunksChanged(await putItem(store, item));
    }
  });
  afterAll(async () => {
    await indexer.close();
    await index.close();
    await store.close();
  });

  it('cuts a snippet for each item it returns and for no other', async () => {
    snippets.calls = 0;
    const hits = await search.searchItems('sodium batteries grid energy', { k: 3 });
    expect(hits).toHaveLength(3);
    for (const h of hits) expect(h.snippet).toMatch(/Sodium batteries/);
    expect(snippets.calls).toBe(3);
  });
});
