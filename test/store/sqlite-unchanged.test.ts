/**
 * The SQLite store's reads kept while their tables are unchanged (src/store/sqlite-unchanged.ts):
 * every way a thread, an item or its chunks can be written, through the store or beside it, is
 * read back as written, and a second read of what nothing wrote is answered from the cache.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';
import { RowCache, rowSize } from '../../src/store/sqlite-unchanged.js';
import { tempDir } from '../helpers.js';
import { item } from './contract.js';
import { windowChunk } from './memory-chunk.js';

const AT = '2026-11-01T10:00:00.000Z';
const body = (text: string) => [
  { ord: 0, part: 'title' as const, text: 'A title' },
  { ord: 1, part: 'body' as const, text },
];

describe('SqliteStore: rows kept while their tables are unchanged', () => {
  let dir: { dir: string; cleanup: () => void };
  let store: SqliteStore;
  let other: SqliteStore | undefined;

  beforeEach(async () => {
    dir = tempDir();
    store = new SqliteStore({ filename: join(dir.dir, 'salon.db') });
    await store.putItems([{ item: item('news_1'), chunks: body('the pier reopens in June') }]);
    await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 't1', roomId: 'news_1', title: 'Pier' }] });
  });

  afterEach(async () => {
    await other?.close();
    other = undefined;
    await store.close();
    dir.cleanup();
  });

  /** Reads everything an ask reads twice, and checks the second time came from the cache. */
  async function readTwice() {
    const read = async () => ({
      thread: await store.getThread('t1'),
      items: await store.getItemsWithoutComments(['news_1']),
      chunks: await store.chunksOfItem('news_1'),
    });
    const first = await read();
    const hits = store.unchanged.counts.hits;
    const second = await read();
    expect(second).toEqual(first);
    expect(store.unchanged.counts.hits).toBe(hits + 3);
    return second;
  }

  it('answers a second read of an unchanged thread, item and chunks from memory, each a copy of its own', async () => {
    const { thread, items, chunks } = await readTwice();
    expect(await store.getChunks(chunks.map((c) => c.rowId))).toEqual(chunks);
    const hits = store.unchanged.counts.hits;
    expect(await store.getChunks(chunks.map((c) => c.rowId))).toEqual(chunks);
    expect(store.unchanged.counts.hits).toBe(hits + chunks.length);
    // What a caller does to what it was given is not what the next caller reads.
    thread!.tags.push('mine');
    thread!.title = 'changed by a caller';
    items[0].title = 'changed by a caller';
    chunks[0].text = 'changed by a caller';
    expect((await store.getThread('t1'))!.tags).toEqual([]);
    expect((await store.getThread('t1'))!.title).toBe('Pier');
    expect((await store.getItemsWithoutComments(['news_1']))[0].title).toBe('Title of news_1');
    expect((await store.chunksOfItem('news_1'))[0].text).toBe('A title');
  });

  it('reads a thread again after its memory is turned off, a merge, a child thread and its deletion', async () => {
    await readTwice();
    await store.applyThreadChange({ at: AT, expect: [], updateThreads: [{ id: 't1', memoryEnabled: false }] });
    expect((await store.getThread('t1'))!.memoryEnabled).toBe(false);

    await readTwice();
    await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 't2', roomId: 'news_1', title: 'Other' }] });
    await store.applyThreadChange({ at: AT, expect: [], updateThreads: [{ id: 't2', status: 'archived', mergedInto: 't1' }] });
    expect(await store.getThread('t2')).toMatchObject({ status: 'archived', mergedInto: 't1' });

    await readTwice();
    // A child is another row: the parent's childIds come from it.
    await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 't3', roomId: 'news_1', title: 'Child', parentId: 't1' }] });
    expect((await store.getThread('t1'))!.childIds).toEqual(['t3']);

    await readTwice();
    await store.deleteThread('t3');
    await store.deleteThread('t1');
    expect(await store.getThread('t1')).toBeNull();
    expect(await store.getThread('t3')).toBeNull();
  });

  it('reads an item and its chunks again after it is ingested again and after it is deleted', async () => {
    await readTwice();
    await store.putItems([{ item: item('news_1', { title: 'A new title' }), chunks: body('the pier reopens in July') }]);
    expect((await store.getItemsWithoutComments(['news_1']))[0].title).toBe('A new title');
    const chunks = await store.chunksOfItem('news_1');
    expect(chunks.map((c) => [c.text, c.itemTitle])).toEqual([
      ['A title', 'A new title'],
      ['the pier reopens in July', 'A new title'],
    ]);

    await readTwice();
    // The title alone (same chunks): the chunk rows carry the item's title.
    await store.putItems([{ item: item('news_1', { title: 'A third title' }), chunks: body('the pier reopens in July') }]);
    expect((await store.getChunks(chunks.map((c) => c.rowId))).map((c) => c.itemTitle)).toEqual(['A third title', 'A third title']);

    await readTwice();
    expect(await store.deleteItem('news_1')).toEqual(chunks.map((c) => c.rowId));
    expect(await store.getItemsWithoutComments(['news_1'])).toEqual([]);
    expect(await store.chunksOfItem('news_1')).toEqual([]);
    expect(await store.getChunks(chunks.map((c) => c.rowId))).toEqual([]);
  });

  it('reads again what another connection wrote (a salon command beside the server)', async () => {
    await readTwice();
    other = new SqliteStore({ filename: join(dir.dir, 'salon.db') });
    await other.applyThreadChange({ at: AT, expect: [], updateThreads: [{ id: 't1', memoryEnabled: false }] });
    expect((await store.getThread('t1'))!.memoryEnabled).toBe(false);

    await readTwice();
    await other.putItems([{ item: item('news_1', { title: 'Retitled elsewhere' }), chunks: body('the pier reopens in May') }]);
    expect((await store.getItemsWithoutComments(['news_1']))[0].title).toBe('Retitled elsewhere');
    expect((await store.chunksOfItem('news_1')).map((c) => c.text)).toEqual(['A title', 'the pier reopens in May']);
  });

  it('keeps nothing read inside a transaction that is then rolled back', async () => {
    await readTwice();
    const rolledBack = store.db.transaction(() => {
      store.db.prepare("UPDATE threads SET title = 'never committed', memory_enabled = 0 WHERE id = 't1'").run();
      store.db.prepare("UPDATE items SET title = 'never committed' WHERE id = 'news_1'").run();
      // Read inside the transaction (each read is synchronous up to its answer): its own writes show.
      void store.getThread('t1');
      void store.getItemsWithoutComments(['news_1']);
      void store.chunksOfItem('news_1');
      throw new Error('rolled back');
    });
    expect(() => rolledBack()).toThrow('rolled back');
    expect(await store.getThread('t1')).toMatchObject({ title: 'Pier', memoryEnabled: true });
    expect((await store.getItemsWithoutComments(['news_1']))[0].title).toBe('Title of news_1');
    expect((await store.chunksOfItem('news_1'))[0].itemTitle).toBe('Title of news_1');
  });
});

/** A store in `dir` with one item's room and two threads in it, t1 and t2. */
async function storeWithTwoThreads(dir: string): Promise<SqliteStore> {
  const store = new SqliteStore({ filename: join(dir, 'salon.db') });
  await store.putItems([{ item: item('news_1'), chunks: body('the pier reopens in June') }]);
  await store.applyThreadChange({
    at: AT,
    expect: [],
    createThreads: [
      { id: 't1', roomId: 'news_1', title: 'Pier' },
      { id: 't2', roomId: 'news_1', title: 'Other' },
    ],
  });
  return store;
}

describe('SqliteStore: a thread’s recent chat kept across its own appends', () => {
  let dir: { dir: string; cleanup: () => void };
  let store: SqliteStore;
  /** A second connection: what a fresh read of the file gives. */
  let fresh: SqliteStore;
  let n = 0;

  beforeEach(async () => {
    dir = tempDir();
    store = await storeWithTwoThreads(dir.dir);
    fresh = new SqliteStore({ filename: join(dir.dir, 'salon.db') });
  });

  afterEach(async () => {
    await fresh.close();
    await store.close();
    dir.cleanup();
  });

  const said = (threadId = 't1', text = `line ${++n}`) => ({
    roomId: 'news_1',
    threadId,
    author: { id: `u${n % 3}`, name: `Person ${n % 3}`, kind: 'user' as const },
    text,
    clientId: `c${n}`,
  });
  const append = async (count: number, threadId = 't1') => {
    for (let i = 0; i < count; i++) await store.appendMessage(said(threadId));
  };

  /** The store's recent chat of `threadId` is the fresh connection's, for every seq it could end before and several limits. */
  async function sameAsFresh(threadId = 't1') {
    const seqs = (await fresh.threadMessages(threadId, 1000)).map((m) => m.seq);
    for (const limit of [0, 1, 3, 12, 32, 40]) {
      expect(await store.threadChat(threadId, limit)).toEqual(await fresh.threadChat(threadId, limit));
      for (const before of [...seqs, (seqs.at(-1) ?? 0) + 1])
        expect(await store.threadChat(threadId, limit, before)).toEqual(await fresh.threadChat(threadId, limit, before));
    }
  }

  it('answers the recent chat from memory after appends through the store, as a fresh read gives it', async () => {
    await append(3);
    expect(await store.threadChat('t1', 12)).toEqual(await fresh.threadChat('t1', 12));
    for (let i = 0; i < 40; i++) {
      await append(1);
      const hits = store.unchanged.counts.hits;
      const chat = await store.threadChat('t1', 12);
      // The append was followed: no read of the table.
      expect(store.unchanged.counts.hits).toBe(hits + 1);
      expect(chat).toEqual(await fresh.threadChat('t1', 12));
      expect(chat.at(-1)!.text).toBe(`line ${n}`);
    }
    await sameAsFresh();
    // What a caller does to what it was given is not what the next caller reads.
    const chat = await store.threadChat('t1', 12);
    chat[0].text = 'changed by a caller';
    chat.reverse();
    expect(await store.threadChat('t1', 12)).toEqual(await fresh.threadChat('t1', 12));
    // A thread with no messages, then its first.
    expect(await store.threadChat('t2', 12)).toEqual([]);
    await append(1, 't2');
    expect((await store.threadChat('t2', 12)).map((m) => m.text)).toEqual([`line ${n}`]);
  });

  it('reads the recent chat again after any other write to messages', async () => {
    await append(5);
    await store.threadChat('t1', 12);
    // A resend (the same client id): nothing written, nothing changes.
    await store.appendMessage({ ...said(), clientId: 'c1' });
    await sameAsFresh();
    // Moved to another thread.
    const [first] = await store.threadMessages('t1', 1);
    await store.applyThreadChange({ at: AT, expect: [], moveMessages: [{ ids: [first.id], threadId: 't2' }] });
    await sameAsFresh();
    await sameAsFresh('t2');
    // Several at once.
    await store.appendMessages([said(), said(), said('t2')]);
    await sameAsFresh();
    await sameAsFresh('t2');
    // Through another connection.
    await store.threadChat('t1', 12);
    await fresh.appendMessage(said());
    await sameAsFresh();
    // Written beside the store's methods, and an append whose text SQLite would give back otherwise.
    store.db.prepare("UPDATE messages SET text = 'edited' WHERE thread_id = 't1' AND seq = (SELECT max(seq) FROM messages WHERE thread_id = 't1')").run();
    await sameAsFresh();
    await store.appendMessage(said('t1', 'half a pair \ud83d'));
    await sameAsFresh();
    // An append rolled back inside a transaction of its own.
    await store.threadChat('t1', 12);
    const rolledBack = store.db.transaction(() => {
      void store.appendMessage(said());
      throw new Error('rolled back');
    });
    expect(() => rolledBack()).toThrow('rolled back');
    await sameAsFresh();
    // A thread merged into another, and deleted.
    await store.applyThreadChange({ at: AT, expect: [], moveThreadMessages: [{ fromThreadId: 't2', threadId: 't1' }] });
    await sameAsFresh();
    await sameAsFresh('t2');
  });
});

describe('SqliteStore: memory chunks kept row by row', () => {
  let dir: { dir: string; cleanup: () => void };
  let store: SqliteStore;
  /** A second connection: what a fresh read of the file gives. */
  let fresh: SqliteStore;
  let ids: number[];

  const vector = () => new Float32Array([1, 0, 0, 0]);
  const entry = (text: string, threadId = 't1', copyOf?: number) => ({
    chunk: windowChunk(text, '2026-11-01', { threadId }),
    vector: vector(),
    model: 'm',
    ...(copyOf !== undefined ? { copyOf } : {}),
  });

  beforeEach(async () => {
    dir = tempDir();
    store = await storeWithTwoThreads(dir.dir);
    const { addedMemoryIds } = await store.applyThreadChange({ at: AT, expect: [], addMemory: [entry('one'), entry('two'), entry('three')] });
    const { addedMemoryIds: copies } = await store.applyThreadChange({ at: AT, expect: [], addMemory: [entry('one', 't2', addedMemoryIds[0])] });
    ids = [...addedMemoryIds, ...copies];
    fresh = new SqliteStore({ filename: join(dir.dir, 'salon.db') });
  });

  afterEach(async () => {
    await fresh.close();
    await store.close();
    dir.cleanup();
  });

  /** Reads `ids` through the store: as a fresh connection reads them; returns how many were kept. */
  async function read(): Promise<number> {
    const hits = store.unchanged.counts.hits;
    expect(await store.getMemoryChunkTexts(ids)).toEqual(await fresh.getMemoryChunkTexts(ids));
    return store.unchanged.counts.hits - hits;
  }

  it('answers a second read of unchanged chunks from memory, each a copy of its own', async () => {
    expect(await read()).toBe(0);
    expect(await read()).toBe(4);
    const [first] = await store.getMemoryChunkTexts([ids[0]]);
    first.messageIds.push('mine');
    first.text = 'changed by a caller';
    expect(await read()).toBe(4);
    // A chunk filed: the others stay kept.
    const filed = await store.fileMemoryChunk(windowChunk('four', '2026-11-02', { threadId: 't1' }), AT, { vector: vector(), model: 'm' }, []);
    expect('stored' in filed).toBe(true);
    expect(await read()).toBe(4);
  });

  it('reads a chunk again once it is written, and a copy once its original is', async () => {
    await read();
    // Touched: that row only.
    expect(await store.touchMemoryChunk(ids[1], '2026-11-20T00:00:00.000Z')).toBe(true);
    expect(await read()).toBe(3);
    // The original of the copy written beside the store's methods: both read again.
    store.db.prepare('UPDATE memory_chunks SET text = ? WHERE id = ?').run('one, said again', ids[0]);
    expect(await read()).toBe(2);
    expect((await store.getMemoryChunkTexts([ids[3]]))[0].text).toBe('one, said again');
    // Deleted.
    await store.applyThreadChange({ at: AT, expect: [], deleteMemory: [ids[2]] });
    expect(await read()).toBe(3);
    // Rolled back: read again all the same.
    const rolledBack = store.db.transaction(() => {
      store.db.prepare('UPDATE memory_chunks SET text = ? WHERE id = ?').run('never committed', ids[1]);
      throw new Error('rolled back');
    });
    expect(() => rolledBack()).toThrow('rolled back');
    expect(await read()).toBe(2);
    // Another connection's write: everything read again.
    await fresh.touchMemoryChunk(ids[0], '2026-11-21T00:00:00.000Z');
    expect(await read()).toBe(0);
    expect(await read()).toBe(3);
  });
});

describe('RowCache: bounded by keys and by size', () => {
  const row = (id: number, text: string) => ({ id, text });

  it('drops its oldest entries past its keys or its size, and keeps no entry larger than the whole', () => {
    const cache = new RowCache<number>(['items'], 3, 100);
    for (let id = 1; id <= 4; id++) cache.keep(id, row(id, 'x'.repeat(10)));
    expect([...cache.entries.keys()]).toEqual([2, 3, 4]);
    // 18 bytes a row (10 characters and an id): a row of 70 more pushes out the two oldest.
    expect(rowSize(row(1, 'x'.repeat(10)))).toBe(18);
    cache.keep(5, row(5, 'y'.repeat(62)));
    expect([...cache.entries.keys()]).toEqual([4, 5]);
    expect(cache.size).toBe(18 + 70);
    // A body larger than the cache is read every time, and pushes nothing out.
    cache.keep(6, row(6, 'z'.repeat(200)));
    expect([...cache.entries.keys()]).toEqual([4, 5]);
    // A key's rows weigh together; blobs count their bytes.
    cache.keep(7, [row(7, 'a'), { id: 8, vector: new Uint8Array(4) }]);
    expect(cache.entries.get(7)?.size).toBe(9 + 12);
    expect(cache.size).toBeLessThanOrEqual(100);
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.entries.size).toBe(0);
  });

  it('weighs a key kept again once, at its new rows, and counts it as the newest', () => {
    const cache = new RowCache<number>(['items'], 3, 100);
    cache.keep(1, row(1, 'x'.repeat(10)));
    cache.keep(2, row(2, 'x'.repeat(10)));
    cache.keep(1, row(1, 'x'.repeat(30)));
    expect(cache.size).toBe(18 + 38);
    expect([...cache.entries.keys()]).toEqual([2, 1]);
    // Kept again and again, a key never pushes the others out by a weight it no longer has.
    for (let i = 0; i < 5; i++) cache.keep(1, row(1, 'x'.repeat(30)));
    expect([...cache.entries.keys()]).toEqual([2, 1]);
    expect(cache.size).toBe(18 + 38);
  });
});
