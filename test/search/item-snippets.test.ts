// Item search cuts a snippet only for the items it returns: a chunk's text is read for its snippet alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { blankItem } from '../../src/content/types.js';
import { Indexer } from '../../src/search/indexer.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { DefaultSearchService } from '../../src/search/search-service.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { putItem } from './corpus.js';

describe('DefaultSearchService.searchItems snippets', () => {
  const store = new SqliteStore({ filename: ':memory:' });
  const embedder = new LocalEmbedder({ dimensions: 256 });
  const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 1, threshold: 10_000 });
  const indexer = new Indexer({ store, index, embedder });
  const search = new DefaultSearchService({ store, index, embedder, indexer });
  /** Reads of a chunk row's text by the search service (each snippet reads its chunk's once). */
  let textReads = 0;

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
    const getChunks = store.getChunks.bind(store);
    store.getChunks = async (ids) =>
      (await getChunks(ids)).map((row) => {
        const { text, ...rest } = row;
        return Object.defineProperty(rest, 'text', { enumerable: true, get: () => (textReads++, text) }) as typeof row;
      });
  });
  afterAll(async () => {
    await indexer.close();
    await index.close();
    await store.close();
  });

  it('cuts a snippet for each item it returns and for no other', async () => {
    textReads = 0;
    const hits = await search.searchItems('sodium batteries grid energy', { k: 3 });
    expect(hits).toHaveLength(3);
    for (const h of hits) expect(h.snippet).toMatch(/Sodium batteries/);
    expect(textReads).toBe(3);
  });
});
