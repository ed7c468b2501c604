/**
 * IndexSync with a fake feed and a real (SQLite) change log: what other nodes log is applied once,
 * its own echoes never; a notice that skips seqs, and the feed coming back, make it read the log.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { ChangeFeed } from '../../src/sync/change-feed.js';
import { IndexSync } from '../../src/sync/index-sync.js';
import { silentLogger } from '../../src/logger.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { tempStore } from '../helpers.js';
import { until } from '../rooms/helpers.js';

class FakeFeed implements ChangeFeed {
  readonly shared = true;
  readonly sent: string[] = [];
  private handlers: ((notice: string) => void)[] = [];
  private changeHandlers: ((connected: boolean) => void)[] = [];
  async publish(notice: string): Promise<void> {
    this.sent.push(notice);
  }
  subscribe(handler: (notice: string) => void): void {
    this.handlers.push(handler);
  }
  onConnectionChange(handler: (connected: boolean) => void): void {
    this.changeHandlers.push(handler);
  }
  hear(notice: object): void {
    for (const h of this.handlers) h(JSON.stringify(notice));
  }
  connected(): void {
    for (const h of this.changeHandlers) h(true);
  }
}

let temp: ReturnType<typeof tempStore>;
let store: SqliteStore;
let feed: FakeFeed;
let sync: IndexSync;
let applied: { target: string; ids: number[] }[];

beforeEach(async () => {
  temp = tempStore();
  store = temp.store;
  feed = new FakeFeed();
  applied = [];
  const target = (name: string) => ({ applyStored: async (ids: number[]) => void applied.push({ target: name, ids }) });
  sync = new IndexSync({ store, feed, nodeId: 'me', targets: { documents: target('documents'), memory: target('memory') } });
});
afterEach(async () => {
  await sync.close();
  await temp.close();
});

/** Another node's change: logged in the store, its notice returned. */
async function theirs(target: 'documents' | 'memory', ids: number[]) {
  const seq = await store.logIndexChange(target, ids);
  return { n: 'other', s: seq, t: target, i: ids };
}

it('applies what was logged before it started once, then other nodes’ notices, never its own', async () => {
  await sync.begin();
  const early = await theirs('documents', [1, 2]);
  sync.start();
  await until(() => applied.length === 1);
  feed.hear(early);
  await sync.record('memory', [9]);
  const own = JSON.parse(feed.sent[0]);
  expect(own).toMatchObject({ n: 'me', t: 'memory', i: [9] });
  feed.hear(own);
  const next = await theirs('memory', [5]);
  feed.hear(next);
  await until(() => applied.length === 2);
  expect(applied).toEqual([
    { target: 'documents', ids: [1, 2] },
    { target: 'memory', ids: [5] },
  ]);
});

it('reads the log when a notice skips seqs and when the feed is back', async () => {
  await sync.begin();
  sync.start();
  await theirs('documents', [3]);
  const heard = await theirs('documents', [4]);
  feed.hear(heard);
  await until(() => applied.length === 2);
  expect(applied.map((a) => a.ids[0]).sort()).toEqual([3, 4]);
  await theirs('memory', [7]);
  feed.connected();
  await until(() => applied.length === 3);
  expect(applied[2]).toEqual({ target: 'memory', ids: [7] });
});

it('prunes the log on its timer and says when the node could not read the log for longer than it is kept', async () => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
  try {
    const errors: string[] = [];
    const log = { ...silentLogger, error: (_: object, message: string) => void errors.push(message) };
    const pruned: number[] = [];
    const pruning = Object.assign(Object.create(store) as SqliteStore, {
      pruneIndexChanges: async (keepMs: number) => (pruned.push(keepMs), 0),
    });
    const own = new IndexSync({
      store: pruning,
      feed,
      nodeId: 'me',
      targets: { documents: { applyStored: async () => {} }, memory: { applyStored: async () => {} } },
      log,
      retentionMs: 5_000,
      pruneEveryMs: 1_000,
      resyncMs: 60_000,
    });
    await own.begin();
    own.start();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(pruned).toEqual([5_000, 5_000, 5_000]);
    expect(errors).toEqual([]);
    // The next catch-up (the resync) comes after more than the retention: entries may be gone.
    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => errors.length > 0);
    expect(errors[0]).toMatch(/restart it/);
    await own.close();
  } finally {
    vi.useRealTimers();
  }
});
