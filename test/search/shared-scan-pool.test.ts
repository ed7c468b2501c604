/**
 * One scan pool for a process's indexes (src/search/flat/shared-scan-pool.ts): started by the
 * first index that needs threads, open while any index holds it, closed by the last to close.
 */
import { describe, expect, it } from 'vitest';
import { FlatIndex } from '../../src/search/flat/flat-index.js';
import { SharedScanPool } from '../../src/search/flat/shared-scan-pool.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { clustered, entries } from './helpers.js';

const DIM = 16;
const rows = entries(clustered(64, DIM, 4, 3));

/** A flat index on `pool` that sends every scan to the pool's threads. */
const onThreads = (pool: ReturnType<ReturnType<SharedScanPool['user']>['pool']>) =>
  new FlatIndex({ dimensions: DIM, pool, initialCapacity: 8, inlineScanFloats: 0 });

describe('SharedScanPool', () => {
  it('starts no threads until a user needs them, then gives every user the same pool', async () => {
    const shared = new SharedScanPool({ threads: 1 });
    const documents = shared.user();
    const memory = shared.user();
    expect(documents.started).toBeNull();
    expect(memory.started).toBeNull();
    const pool = memory.pool();
    expect(documents.started).toBe(pool);
    expect(documents.pool()).toBe(pool);
    await documents.release();
    await memory.release();
  });

  it('stays open while any user holds it, and the last release closes it', async () => {
    const shared = new SharedScanPool({ threads: 1 });
    const first = shared.user();
    const second = shared.user();
    const index = onThreads(second.pool());
    await index.upsert(rows);
    await first.release();
    await first.release(); // a second release by the same user counts once
    expect(second.started).not.toBeNull();
    expect((await index.search(rows[5].vector, 3))[0].rowId).toBe(rows[5].rowId);
    const pool = second.pool();
    await second.release();
    expect(second.started).toBeNull();
    await expect(pool.scan({} as never)).rejects.toMatchObject({ code: 'ERR_NOT_READY' });
    expect(() => second.pool()).toThrow(/released/);
    expect(() => shared.user()).toThrow(/closed/);
    await index.close();
  });

  it('closes without ever starting when no user needed threads', async () => {
    const shared = new SharedScanPool({ threads: 1 });
    const user = shared.user();
    await user.release();
    expect(user.started).toBeNull();
  });

  it('lets two search indexes scan on one pool, whichever closes first', async () => {
    const shared = new SharedScanPool({ threads: 1 });
    const options = { model: 'test', dimensions: DIM, threads: 1, threshold: 1_000_000, pool: shared };
    const documents = new SearchIndex(options);
    const memory = new SearchIndex(options);
    expect(documents.scanPool).toBeNull();
    await memory.upsert(rows.slice(0, 32));
    expect(memory.scanPool).not.toBeNull();
    expect(documents.scanPool).toBe(memory.scanPool);
    await documents.upsert(rows.slice(32));
    await memory.close();
    expect((await documents.search(rows[40].vector, 1))[0].rowId).toBe(rows[40].rowId);
    await documents.close();
    expect(documents.scanPool).toBeNull();
  });
});
