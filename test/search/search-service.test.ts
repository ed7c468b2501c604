// SearchService over a real store, index and the built-in embedder; the text fallback with a failing embedder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { blankItem } from '../../src/content/types.js';
import { Indexer } from '../../src/search/indexer.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { DefaultSearchService } from '../../src/search/search-service.js';
import { refOf } from '../../src/search/chunk-refs.js';
import { snippetFor } from '../../src/search/snippet.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { FlakyEmbedder, itemOf, paragraphs, putItem, type Paragraph } from './corpus.js';
import { silentLogger } from '../../src/logger.js';

/** Counts calls of `obj[name]` from now on; the returned function reads the count. */
function countCalls<T extends object>(obj: T, name: keyof T & string): () => number {
  const original = (obj[name] as (...args: unknown[]) => unknown).bind(obj);
  let calls = 0;
  (obj as Record<string, unknown>)[name] = (...args: unknown[]) => {
    calls++;
    return original(...args);
  };
  return () => calls;
}

describe('DefaultSearchService', () => {
  const store = new SqliteStore({ filename: ':memory:' });
  const embedder = new FlakyEmbedder(new LocalEmbedder({ dimensions: 512 }));
  const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 2, threshold: 10_000 });
  const indexer = new Indexer({ store, index, embedder });
  const warnings: string[] = [];
  const search = new DefaultSearchService({ store, index, embedder, indexer, log: { ...silentLogger, warn: (_d, m) => warnings.push(m) } });
  let corpus: Paragraph[];

  beforeAll(async () => {
    corpus = paragraphs(60);
    // Every third paragraph is a post, and the later half is published later.
    for (const [i, p] of corpus.entries()) {
      const item = itemOf(p, i % 3 === 2 ? 'post' : 'news', i < 30 ? '2023-06-01T00:00:00.000Z' : '2024-06-01T00:00:00.000Z');
      await indexer.chunksChanged(await putItem(store, item));
    }
  });
  afterAll(async () => {
    await indexer.close();
    await index.close();
    await store.close();
  });

  const kindOf = (i: number) => (i % 3 === 2 ? 'post' : 'news');

  it('finds the paragraph a question was asked about, grouped to one hit per item', async () => {
    let top5 = 0;
    const asked = corpus.slice(0, 40);
    for (const [i, p] of asked.entries()) {
      const hits = await search.searchItems(p.questions[0], { k: 5 });
      expect(new Set(hits.map((h) => h.id)).size).toBe(hits.length);
      if (hits.some((h) => h.id === `${kindOf(i)}_${p.id}`)) top5++;
    }
    // The hashing embedder is lexical; most SQuAD questions share words with their paragraph.
    expect(top5 / asked.length).toBeGreaterThanOrEqual(0.9);
  });

  it('returns hits shaped for the API, best first, with a snippet from the best chunk', async () => {
    const p = corpus[4];
    const hits = await search.searchItems(p.questions[0], { k: 3 });
    expect(hits.length).toBeGreaterThan(0);
    for (const h of hits) {
      expect(Object.keys(h).sort()).toEqual(['category', 'id', 'kind', 'publishedAt', 'score', 'site', 'snippet', 'title', 'url']);
      expect(h.snippet.length).toBeLessThanOrEqual(202);
      expect(h.snippet.length).toBeGreaterThan(20);
    }
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThanOrEqual(hits[i].score);
  });

  it('filters by kind, category and publication date', async () => {
    const q = corpus[10].questions[0];
    const posts = await search.searchItems(q, { k: 10, kind: 'post' });
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((h) => h.kind === 'post')).toBe(true);

    const topic = corpus[10].topic;
    const inTopic = await search.searchItems(q, { k: 10, category: topic });
    const topicIds = new Set(corpus.filter((p) => p.topic === topic).map((p) => p.id));
    expect(inTopic.length).toBeGreaterThan(0);
    expect(inTopic.every((h) => topicIds.has(h.id.replace(/^(news|post)_/, '')))).toBe(true);
    // Categories compare as the content list compares them: ASCII letters in any case.
    expect(await search.searchItems(q, { k: 10, category: topic.toUpperCase() })).toEqual(inTopic);

    const recent = await search.searchItems(q, { k: 10, since: '2024-01-01' });
    const recentIds = new Set(corpus.slice(30).map((p) => p.id));
    expect(recent.every((h) => recentIds.has(h.id.replace(/^(news|post)_/, '')))).toBe(true);
    await expect(search.searchItems(q, { k: 3, since: 'last tuesday' })).rejects.toMatchObject({ code: 'ERR_BAD_REQUEST' });

    expect((await search.searchItems(q, { k: 10, source: 'example.test' })).length).toBeGreaterThan(0);
    expect(await search.searchItems(q, { k: 10, source: 'other.test' })).toEqual([]);
    await expect(search.searchItems(q, { k: 3, source: 'https://example.test/' })).rejects.toMatchObject({ code: 'ERR_BAD_REQUEST' });
  });

  it('filters by date and site without reading an item, so a filter that keeps nothing costs no more than one that keeps all', async () => {
    const q = corpus[10].questions[0];
    const items = countCalls(store, 'getItem');
    const batches = countCalls(store, 'getItems');
    const all = await search.searchItems(q, { k: 10 });
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((h) => h.publishedAt && h.site === 'example.test')).toBe(true);
    // Each filter widens the search up to 1,000 chunks; every item among them was read whole before.
    expect(await search.searchItems(q, { k: 10, since: '2100-01-01' })).toEqual([]);
    expect(await search.searchItems(q, { k: 10, source: 'nowhere.test' })).toEqual([]);
    const recent = await search.searchItems(q, { k: 10, since: '2024-01-01' });
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.every((h) => h.publishedAt! >= '2024')).toBe(true);
    expect(items() + batches()).toBe(0);
  });

  it('drops hits under the embedder threshold unless asked not to', async () => {
    const nonsense = 'zqxv wkpj flurb';
    expect(await search.searchChunks(nonsense, { k: 5 })).toEqual([]);
    const unfiltered = await search.searchChunks(nonsense, { k: 5, useThreshold: false });
    expect(unfiltered).toHaveLength(5);
    expect(unfiltered.every((h) => h.match === 'vector')).toBe(true);
  });

  it('falls back to text matching when the embedder fails, and says so once in the log', async () => {
    const p = corpus[7];
    embedder.down = true;
    try {
      const chunks = await search.searchChunks(p.questions[0], { k: 5 });
      expect(chunks.length).toBeGreaterThan(0);
      expect(chunks.every((h) => h.match === 'text')).toBe(true);
      expect(chunks[0].score).toBe(1);
      const items = await search.searchItems(p.questions[0], { k: 5 });
      expect(items.length).toBeGreaterThan(0);
      expect(await search.searchChunks(p.questions[0], { k: 5, filter: { sourceType: 'conversation' } })).toEqual([]);
      expect(warnings.filter((w) => /searching by text instead/.test(w))).toHaveLength(1);
      expect(warnings[0]).toMatch(/ECONNREFUSED/);
    } finally {
      embedder.down = false;
    }
  });

  it('searches several queries with one embedder call, each answered as searchChunks would', async () => {
    const qs = [corpus[3].questions[0], '  ', corpus[9].questions[0]];
    const calls = embedder.calls;
    const many = await search.searchChunksMany(qs, { k: 4, useThreshold: false });
    expect(embedder.calls).toBe(calls + 1);
    expect(many).toHaveLength(3);
    expect(many[1]).toEqual([]);
    expect(many[0]).toEqual(await search.searchChunks(qs[0], { k: 4, useThreshold: false }));
    expect(many[2]).toEqual(await search.searchChunks(qs[2], { k: 4, useThreshold: false }));
    expect(many[0][0].chunk.itemId).not.toBe(many[2][0].chunk.itemId);
  });

  it('finds chunk references without reading rows, each naming the group and title flag of its row', async () => {
    const qs = [`${itemOf(corpus[5]).title}\n${corpus[5].questions[0]}`, corpus[5].questions[0]];
    const full = await search.searchChunksMany(qs, { k: 8, useThreshold: false });
    const reads = countCalls(store, 'getChunks');
    const refs = await search.searchChunkRefsMany(qs, { k: 8, useThreshold: false });
    expect(reads()).toBe(0);
    expect(refs).toEqual(full.map((hits) => hits.map(refOf)));
    expect(refs[0].some((r) => r.title)).toBe(true);
    expect(refs[0].every((r) => r.group.startsWith('news_') || r.group.startsWith('post_'))).toBe(true);

    embedder.down = true;
    try {
      const byText = await search.searchChunkRefsMany(qs, { k: 8 });
      expect(byText).toEqual((await search.searchChunksMany(qs, { k: 8 })).map((hits) => hits.map(refOf)));
      expect(byText[1].every((r) => r.match === 'text')).toBe(true);
    } finally {
      embedder.down = false;
    }
  });

  it('treats an empty query as no hits and a bad k as a programming error', async () => {
    expect(await search.searchChunks('   ', { k: 3 })).toEqual([]);
    await expect(search.searchChunks('x', { k: 0 })).rejects.toThrow(/k must be/);
  });
});

describe('snippetFor', () => {
  const text =
    'The first sentence sets the scene and says nothing much. A second one wanders about for a while without saying anything useful at all, really. ' +
    'Then the key sentence mentions the Eiffel Tower and its wrought iron lattice. After that the text goes on about other things entirely, such as weather and food and travel plans.';

  it('cuts about 200 characters around the best-matching sentence', () => {
    const s = snippetFor(text, 'what is the Eiffel Tower made of');
    expect(s.length).toBeLessThanOrEqual(202);
    expect(s).toContain('Eiffel Tower');
    expect(s.startsWith('…')).toBe(true);
  });

  it('never cuts between the halves of an emoji in text without spaces', () => {
    const loneHalf = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    for (const pad of ['', 'a', 'ab']) {
      const text = `${pad}${'😀'.repeat(150)}. Then the ${'🚋'.repeat(150)} tram sentence ${'🎉'.repeat(150)}`;
      const s = snippetFor(text, 'tram');
      expect(s).toContain('tram');
      expect(loneHalf.test(s)).toBe(false);
    }
  });

  it('drops a leading copy of the title and keeps short text whole', () => {
    expect(snippetFor('My Title\n\nShort body.', 'body', 'My Title')).toBe('Short body.');
  });
});

describe('DefaultSearchService widening a filtered search', () => {
  it('embeds the query once and reads each chunk row once, however many rounds a filter that keeps nothing takes', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const embedder = new FlakyEmbedder(new LocalEmbedder({ dimensions: 256 }));
    const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 1, threshold: 10_000 });
    const indexer = new Indexer({ store, index, embedder });
    const search = new DefaultSearchService({ store, index, embedder, indexer });
    try {
      // 400 articles saying nearly the same thing: every one of their chunks passes the threshold.
      for (let i = 0; i < 400; i++) {
        const item = blankItem(`news_w${i}`, {
          title: `Sodium batteries ${i}`,
          body: `Sodium batteries store grid energy cheaply, report ${i} says.`,
          source: 'api',
        });
        await indexer.chunksChanged(await putItem(store, { ...item, publishedAt: '2024-01-01T00:00:00.000Z' }));
      }
      const embeds = embedder.calls;
      const rowsRead: number[] = [];
      const getChunks = store.getChunks.bind(store);
      store.getChunks = async (ids) => {
        rowsRead.push(...ids);
        return getChunks(ids);
      };
      expect(await search.searchItems('sodium batteries grid energy', { k: 10, since: '2100-01-01' })).toEqual([]);
      expect(embedder.calls - embeds).toBe(1);
      expect(rowsRead.length).toBeGreaterThan(200);
      expect(new Set(rowsRead).size).toBe(rowsRead.length);
      // Unfiltered, the same query still finds its items.
      expect(await search.searchItems('sodium batteries grid energy', { k: 10 })).toHaveLength(10);
    } finally {
      await indexer.close();
      await index.close();
      await store.close();
    }
  });
});
