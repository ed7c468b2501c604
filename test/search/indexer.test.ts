// The Indexer (ChunkSink) over a real SQLite store and the built-in embedder. Needs the build.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LOCAL_EMBEDDER_MODEL, LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { CachedEmbedder } from '../../src/ai/cached-embedder.js';
import type { Embedder } from '../../src/ai/types.js';
import { INDEX_EMBEDDER_META_KEY } from '../../src/ai/model-check.js';
import { Indexer, RETRY_BATCH } from '../../src/search/indexer.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { FAILURE_SUMMARY_INTERVAL_MS } from '../../src/repeated-failure-log.js';
import { FlakyEmbedder, itemOf, paragraphs, putItem } from './corpus.js';
import { linesLog } from '../helpers.js';

/** An indexer's parts for the tests of what it logs: a flaky embedder, a store, an index and a log kept as lines. */
function loggedParts() {
  const flaky = new FlakyEmbedder(new LocalEmbedder({ dimensions: 128 }));
  const store = new SqliteStore({ filename: ':memory:' });
  const index = new SearchIndex({ model: flaky.model, dimensions: 128, threads: 1, threshold: 10_000 });
  return { flaky, store, index, ...linesLog() };
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

function setup(embedder: Embedder = new LocalEmbedder({ dimensions: 256 }), store = new SqliteStore({ filename: ':memory:' })) {
  const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 1, threshold: 10_000 });
  const indexer = new Indexer({ store, index, embedder, retryMs: 50 });
  open.push(store, index, indexer);
  return { store, index, indexer, embedder };
}

describe('Indexer', () => {
  it('embeds added chunks, removes removed ones, and records the embedder', async () => {
    const { store, index, indexer, embedder } = setup();
    const [a, b] = paragraphs(2);
    await indexer.chunksChanged(await putItem(store, itemOf(a)));
    await indexer.chunksChanged(await putItem(store, itemOf(b)));
    expect(index.size).toBe(await store.countChunks());
    expect(JSON.parse((await store.getMeta(INDEX_EMBEDDER_META_KEY))!)).toEqual({ model: embedder.model, dimensions: 256 });

    // New text for item a: its old chunks leave the index, the new ones arrive.
    const before = await store.chunksOfItem(`news_${a.id}`);
    const change = await putItem(store, { ...itemOf(a), body: 'A completely different body about sailing boats and wind.' });
    await indexer.chunksChanged(change);
    expect(change.removed.length).toBeGreaterThan(0);
    expect(index.size).toBe(await store.countChunks());
    const [vector] = await embedder.embed(['sailing boats and wind']);
    const hits = await index.search(vector, 1);
    expect(before.map((c) => c.rowId)).not.toContain(hits[0].rowId);
    expect((await store.getChunks([hits[0].rowId]))[0].itemId).toBe(`news_${a.id}`);
  });

  it('loads every stored chunk at start', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    for (const p of paragraphs(30)) await putItem(store, itemOf(p)); // stored while no indexer ran
    const { index, indexer } = setup(undefined, store);
    await indexer.load();
    expect(indexer.state).toBe('ready');
    expect(index.size).toBe(await store.countChunks());
    expect(index.size).toBeGreaterThanOrEqual(60);
  });

  it('refuses to mix vectors of another embedder: state mismatch, nothing indexed', async () => {
    const { store, index, indexer } = setup();
    await store.setMeta(INDEX_EMBEDDER_META_KEY, JSON.stringify({ model: 'nomic-embed-text', dimensions: 768 }));
    await putItem(store, itemOf(paragraphs(1)[0]));
    await indexer.load();
    expect(indexer.state).toBe('mismatch');
    expect(index.size).toBe(0);
    await indexer.chunksChanged(await putItem(store, itemOf(paragraphs(2)[1])));
    expect(index.size).toBe(0);
    expect(JSON.parse((await store.getMeta(INDEX_EMBEDDER_META_KEY))!).model).toBe('nomic-embed-text');
  });

  it('rebuilds an index an earlier built-in embedder made, at load: no mismatch, no old vector left', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    // The earlier version, as the store knows it: its name on the index and its vectors in the embedding cache.
    const current = new LocalEmbedder({ dimensions: 256 });
    const [elsewhere] = await current.embed(['an unrelated vector space of another version']);
    const model = LOCAL_EMBEDDER_MODEL.replace(/\d+$/, (v) => String(Number(v) - 1));
    const earlier: Embedder = { ...current, model, dimensions: 256, embed: async (texts) => texts.map(() => elsewhere) };
    const old = setup(new CachedEmbedder(earlier, store), store);
    for (const p of paragraphs(3)) await old.indexer.chunksChanged(await putItem(store, itemOf(p)));
    expect(JSON.parse((await store.getMeta(INDEX_EMBEDDER_META_KEY))!).model).toBe(model);
    await old.indexer.close();

    const { index, indexer } = setup(new CachedEmbedder(current, store), store);
    await indexer.load();
    expect(indexer.state).toBe('ready');
    const chunks = await store.scanChunks(0, 1000);
    expect(index.size).toBe(chunks.length);
    expect(JSON.parse((await store.getMeta(INDEX_EMBEDDER_META_KEY))!)).toEqual({ model: LOCAL_EMBEDDER_MODEL, dimensions: 256 });
    for (const chunk of chunks) {
      const [vector] = await current.embed([chunk.text]);
      expect((await index.search(vector, 1))[0]).toMatchObject({ rowId: chunk.rowId, score: expect.closeTo(1, 3) });
    }
  });

  it('keeps ingestion going when the embedder is down and indexes the chunks once it is back', async () => {
    const flaky = new FlakyEmbedder(new LocalEmbedder({ dimensions: 128 }));
    const { store, index, indexer } = setup(flaky);
    flaky.down = true;
    await expect(indexer.chunksChanged(await putItem(store, itemOf(paragraphs(1)[0])))).resolves.toBeUndefined();
    expect(index.size).toBe(0);
    expect(indexer.pending).toBe(await store.countChunks());
    flaky.down = false;
    await expect.poll(() => indexer.pending, { timeout: 5000 }).toBe(0);
    expect(index.size).toBe(await store.countChunks());
  });

  it('tells the other nodes of a stored change even when a shutdown stops its embedding', async () => {
    const local = new LocalEmbedder({ dimensions: 128 });
    let calls = 0;
    // A remote model's call in flight: it answers only when aborted.
    const slow: Embedder = {
      ...local,
      model: local.model,
      dimensions: 128,
      embed: (_texts, signal) => {
        calls++;
        return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
      },
    };
    const store = new SqliteStore({ filename: ':memory:' });
    const index = new SearchIndex({ model: slow.model, dimensions: 128, threads: 1, threshold: 10_000 });
    const stopping = new AbortController();
    const told: number[][] = [];
    const indexer = new Indexer({ store, index, embedder: slow, signal: stopping.signal, onChanged: (ids) => told.push(ids) });
    open.push(store, index, indexer);
    const change = await putItem(store, itemOf(paragraphs(1)[0]));
    const following = indexer.chunksChanged(change);
    await expect.poll(() => calls).toBe(1);
    stopping.abort(new Error('shutting down'));
    await expect(following).rejects.toThrow('shutting down');
    expect(index.size).toBe(0);
    // The rows are in the store: the other nodes must look them up.
    expect(told).toEqual([change.added.map((c) => c.rowId)]);
  });

  it('logs a failing embedder once, then at most a summary a minute, and its recovery once; every failure is counted', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    try {
      const { flaky, store, index, lines, log } = loggedParts();
      let counted = 0;
      // Retries an hour apart: only the ingests below call the embedder.
      const indexer = new Indexer({ store, index, embedder: flaky, log, retryMs: 3_600_000, onEmbedFailure: () => counted++ });
      open.push(store, index, indexer);
      const items = paragraphs(6);
      const ingest = async (i: number) => indexer.chunksChanged(await putItem(store, itemOf(items[i])));

      flaky.down = true;
      await ingest(0);
      const first = lines[0];
      expect(lines).toEqual([expect.stringMatching(/^WARN embedding \d+ chunks failed; retrying in 3600 s$/)]);
      await ingest(1);
      await ingest(2);
      expect(lines).toEqual([first]);
      expect(counted).toBe(3);
      expect(counted).toBe(flaky.calls);
      // One summary at the end of the minute, with the count not logged and the last error.
      await vi.advanceTimersByTimeAsync(FAILURE_SUMMARY_INTERVAL_MS - 1);
      expect(lines).toEqual([first]);
      await vi.advanceTimersByTimeAsync(1);
      expect(lines).toEqual([
        first,
        'WARN embedding chunks for the index failed 2 more time(s) in the last 60 s; the last: connect ECONNREFUSED 127.0.0.1:11434',
      ]);
      // A minute without failures writes nothing; a failure after it is summarised a minute later.
      await vi.advanceTimersByTimeAsync(FAILURE_SUMMARY_INTERVAL_MS);
      await ingest(3);
      expect(lines).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(FAILURE_SUMMARY_INTERVAL_MS);
      expect(lines.slice(2)).toEqual([
        'WARN embedding chunks for the index failed 1 more time(s) in the last 60 s; the last: connect ECONNREFUSED 127.0.0.1:11434',
      ]);
      expect(counted).toBe(4);

      // Back: one line, then nothing.
      flaky.down = false;
      await ingest(4);
      expect(lines.slice(3)).toEqual(['INFO embedding chunks for the index works again after 4 failure(s) in 180 s']);
      await ingest(5);
      await vi.advanceTimersByTimeAsync(2 * FAILURE_SUMMARY_INTERVAL_MS);
      expect(lines).toHaveLength(4);
      expect(counted).toBe(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it('logs a store failing every retry of the waiting chunks once, then at most a summary a minute, and its recovery once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    try {
      const { flaky, store, index, lines, log } = loggedParts();
      const indexer = new Indexer({ store, index, embedder: flaky, log, retryMs: 10_000 });
      open.push(store, index, indexer);
      // Chunks wait for the embedder; it is back, but the store fails the retries' reads.
      flaky.down = true;
      await indexer.chunksChanged(await putItem(store, itemOf(paragraphs(1)[0])));
      const waiting = indexer.pending;
      expect(waiting).toBeGreaterThan(0);
      flaky.down = false;
      const getChunks = store.getChunks.bind(store);
      const read = vi.spyOn(store, 'getChunks').mockRejectedValue(new Error('SQLITE_BUSY: database is locked'));
      const retries = () => lines.filter((l) => l.includes('retrying the embedding of waiting chunks'));

      await vi.advanceTimersByTimeAsync(10_000);
      expect(read).toHaveBeenCalledTimes(1);
      expect(retries()).toEqual([expect.stringMatching(/^WARN retrying the embedding of waiting chunks failed/)]);
      // Five more failing retries within the minute: counted, not logged, until its end.
      await vi.advanceTimersByTimeAsync(FAILURE_SUMMARY_INTERVAL_MS - 10_000);
      expect(read).toHaveBeenCalledTimes(6);
      expect(retries()).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(read).toHaveBeenCalledTimes(7);
      expect(retries().slice(1)).toEqual([
        'WARN retrying the embedding of waiting chunks failed 5 more time(s) in the last 60 s; the last: SQLITE_BUSY: database is locked',
      ]);

      // The store is back: the next retry embeds what waited, and says so once.
      read.mockImplementation(getChunks);
      await vi.advanceTimersByTimeAsync(10_000);
      await expect.poll(() => indexer.pending).toBe(0);
      expect(index.size).toBe(waiting);
      expect(retries().slice(2)).toEqual(['INFO retrying the embedding of waiting chunks works again after 7 failure(s) in 70 s']);
      await vi.advanceTimersByTimeAsync(2 * FAILURE_SUMMARY_INTERVAL_MS);
      expect(retries()).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('holds at most maxWaiting ids while the embedder is down, and embeds everything in bounded steps once it is back', async () => {
    const flaky = new FlakyEmbedder(new LocalEmbedder({ dimensions: 128 }));
    const store = new SqliteStore({ filename: ':memory:' });
    const index = new SearchIndex({ model: flaky.model, dimensions: 128, threads: 1, threshold: 10_000 });
    const indexer = new Indexer({ store, index, embedder: flaky, retryMs: 20, maxWaiting: 25 });
    open.push(store, index, indexer);
    const asked: number[] = [];
    const getChunks = store.getChunks.bind(store);
    vi.spyOn(store, 'getChunks').mockImplementation(async (ids) => (asked.push(ids.length), getChunks(ids)));
    flaky.down = true;
    const items = paragraphs(150);
    for (const p of items) {
      await indexer.chunksChanged(await putItem(store, itemOf(p)));
      expect(indexer.pending).toBeLessThanOrEqual(25);
    }
    // Retries while it is down try one batch each, and keep the bound.
    const calls = flaky.calls;
    await expect.poll(() => flaky.calls, { timeout: 5000 }).toBeGreaterThan(calls + 2);
    expect(indexer.pending).toBeLessThanOrEqual(25);
    // Removed while waiting: never embedded.
    const gone = await putItem(store, { ...itemOf(items[0]), body: 'A short new body.' });
    await indexer.chunksChanged(gone);
    const total = await store.countChunks();
    expect(total).toBeGreaterThan(RETRY_BATCH);
    expect(index.size).toBe(0);
    expect(indexer.behind).toBe(true);

    flaky.down = false;
    await expect.poll(() => index.size, { timeout: 10_000 }).toBe(total);
    await expect.poll(() => indexer.behind, { timeout: 5000 }).toBe(false);
    expect(indexer.pending).toBe(0);
    const stored = (await store.scanChunks(0, 10_000)).map((c) => c.rowId);
    expect(index.heads(stored).every(Boolean)).toBe(true);
    expect(index.heads(gone.removed).some(Boolean)).toBe(false);
    // The store was asked for waiting rows a bounded batch at a time.
    expect(Math.max(...asked)).toBeLessThanOrEqual(RETRY_BATCH);
  });

  it('reindexes with a new embedder: new dimension, every chunk re-embedded, record updated', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const first = setup(new LocalEmbedder({ dimensions: 64 }), store);
    for (const p of paragraphs(5)) await first.indexer.chunksChanged(await putItem(store, itemOf(p)));
    await first.indexer.close();

    const wider = new LocalEmbedder({ dimensions: 96 });
    const index = new SearchIndex({ model: wider.model, dimensions: 96, threads: 1, threshold: 10_000 });
    const indexer = new Indexer({ store, index, embedder: wider });
    open.push(index, indexer);
    const ticks: boolean[] = [];
    let total = 0;
    await indexer.reindex({ setTotal: (t) => (total = t), tick: (ok = true) => ticks.push(ok) });
    expect(total).toBe(await store.countChunks());
    expect(ticks.filter(Boolean)).toHaveLength(total);
    expect(index.dimensions).toBe(96);
    expect(index.size).toBe(total);
    expect(JSON.parse((await store.getMeta(INDEX_EMBEDDER_META_KEY))!)).toEqual({ model: wider.model, dimensions: 96 });
  });
});
