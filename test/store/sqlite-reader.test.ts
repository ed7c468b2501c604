/**
 * The memory's line search on a reader thread (store/sqlite-reader.ts): the same hits as the main
 * connection's, for plain, private and shared lines, what was committed just before included; and a
 * reader that cannot read leaves the search to the main connection instead of failing it.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewMemoryChunk } from '../../src/memory/types.js';
import { privateScope } from '../../src/memory/scopes.js';
import { SqliteReader } from '../../src/store/sqlite-reader.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { preparedStatements, storesOnOneFile, tempDir } from '../helpers.js';
import { annsWindow } from './memory-chunk.js';

const AT = '2026-11-01T10:00:00.000Z';

function chunk(threadId: string, text: string, owner: string | null = null): NewMemoryChunk {
  return annsWindow({ threadId, text, messageId: `m_${text.length}`, at: AT, owner });
}

/** Line-search statements a store prepared on its own connection (its statement cache, read for the test). */
function preparedMatches(store: SqliteStore): number {
  return preparedStatements(store).filter((sql) => /memory_lines MATCH \?( AND |\))/.test(sql) && !sql.includes('count(*)')).length;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A store on a new file with a reader thread, and one on the same file reading on its own connection. */
function twoStores(): { threaded: SqliteStore; plain: SqliteStore; file: string } {
  const { stores, file, close } = storesOnOneFile({ threaded: { readerThread: true }, plain: {} });
  cleanups.push(close);
  return { ...stores, file };
}

describe('the line search on a reader thread', () => {
  it('finds what the main connection finds: plain, private and shared lines, and what was committed just before', async () => {
    const { threaded, plain } = twoStores();
    await threaded.applyThreadChange({ at: AT, expect: [], createThreads: ['t1', 't2'].map((id) => ({ id, roomId: 'news_1', title: id })) });
    const v = Float32Array.from([0.6, 0.8, 0]);
    const herons = await threaded.addMemoryChunk(chunk('t1', 'Ann: the herons nest by the weir in March'), AT, { vector: v, model: 'm@3' });
    await threaded.addMemoryChunk(chunk('t1', 'Bo: herons again, and a kingfisher'), AT);
    await threaded.addMemoryChunk(chunk('t1', 'Cy: my heron count is private', 'u_cy'), AT);
    const same = async (query: string, scopes: string[]) => {
      const hits = await threaded.searchMemoryLines(query, scopes, 10);
      expect(hits).toEqual(await plain.searchMemoryLines(query, scopes, 10));
      return hits;
    };
    expect((await same('herons weir', ['t1'])).length).toBeGreaterThan(0);
    expect((await same('heron count', ['t1', privateScope('t1', 'u_cy')])).some((h) => h.line.includes('private'))).toBe(true);
    expect((await same('heron count', ['t1'])).some((h) => h.line.includes('private'))).toBe(false);
    // A copy in another thread shares its original's lines (the search's second statement).
    await threaded.applyThreadChange({ at: AT, expect: [], addMemory: [{ chunk: chunk('t2', herons.text), vector: v, model: 'm@3', copyOf: herons.id }] });
    const shared = await same('herons weir', ['t2']);
    expect(shared.length).toBe(1);
    expect(shared[0].chunkId).not.toBe(herons.id);
    // Written a moment ago on the main connection, read at once on the thread.
    const late = await threaded.addMemoryChunk(chunk('t1', 'Di: an osprey over the weir today'), AT);
    expect((await same('osprey', ['t1'])).map((h) => h.chunkId)).toEqual([late.id]);
    // The threaded store's own connection never prepared the search's statements: the thread ran them.
    expect(preparedMatches(threaded)).toBe(0);
    expect(preparedMatches(plain)).toBeGreaterThan(0);
  });

  it('leaves a search to the main connection when its thread cannot read, and keeps answering', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    // No such file: the worker cannot open it, and every read it is sent comes back unread.
    const reader = new SqliteReader({ filename: join(dir, 'missing.db'), busyTimeoutMs: 100 });
    cleanups.push(() => reader.stop());
    expect(await reader.all('SELECT 1 AS one', [])).toBeNull();
    expect(await reader.all('SELECT 1 AS one', [])).toBeNull();

    const { threaded } = twoStores();
    await threaded.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 't1', roomId: 'news_1', title: 't1' }] });
    const c = await threaded.addMemoryChunk(chunk('t1', 'Ann: the herons nest by the weir'), AT);
    expect((await threaded.searchMemoryLines('herons', ['t1'], 5)).map((h) => h.chunkId)).toEqual([c.id]);
    // A statement the thread cannot run is run on the main connection, which reports its error.
    const own = new SqliteReader({ filename: (threaded.db as unknown as { name: string }).name, busyTimeoutMs: 100 });
    cleanups.push(() => own.stop());
    expect(await own.all('SELECT no_such_column FROM memory_chunks', [])).toBeNull();
    expect(await own.all('SELECT count(*) AS n FROM memory_chunks', [])).toEqual([{ n: 1 }]);
  });

  it('answers null once stopped, and refuses a database in memory', async () => {
    const { threaded } = twoStores();
    const reader = new SqliteReader({ filename: (threaded.db as unknown as { name: string }).name, busyTimeoutMs: 100 });
    expect(await reader.all('SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
    await reader.stop();
    expect(await reader.all('SELECT 1 AS one', [])).toBeNull();
    expect(() => new SqliteReader({ filename: ':memory:', busyTimeoutMs: 100 })).toThrow(/expected a database file/);
  });
});
