/**
 * IndexSync with a fake feed and a real (SQLite) change log: what other nodes log is applied once,
 * its own echoes never; a notice that skips seqs, and the feed coming back, make it read the log.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChangeFeed } from '../../src/sync/change-feed.js';
import { IndexSync, MAX_CHANGE_IDS } from '../../src/sync/index-sync.js';
import { silentLogger } from '../../src/logger.js';
import { PostgresStore } from '../../src/store/postgres.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/types.js';
import { tempStore } from '../helpers.js';
import { until } from '../rooms/helpers.js';
import { POSTGRES_URL, describePostgres, dropSchema, schemaName } from '../store/postgres-harness.js';

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
  close(): void {}
  hear(notice: object): void {
    this.hearRaw(JSON.stringify(notice));
  }
  hearRaw(payload: string): void {
    for (const h of this.handlers) h(payload);
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

/**
 * What another node (or Redis) sends is the sender's word: checked field by field, and never what
 * moves the node's position in the log. Run on both stores: PostgreSQL refuses a seq past bigint
 * where SQLite answers nothing.
 */
function noticesOnTheWord(kind: string, open: () => Promise<{ store: Store; close: () => Promise<void> }>) {
  describe(`notices are the sender's word (${kind})`, () => {
    let own: { store: Store; close: () => Promise<void> };
    let sync: IndexSync;
    let feed: FakeFeed;
    let applied: number[][];
    let warnings: string[];
    let readFrom: number[];

    beforeEach(async () => {
      own = await open();
      feed = new FakeFeed();
      applied = [];
      warnings = [];
      readFrom = [];
      const target = { applyStored: async (ids: number[]) => void applied.push(ids) };
      const reads = own.store.indexChangesAfter.bind(own.store);
      const store = Object.assign(Object.create(own.store) as Store, {
        indexChangesAfter: (after: number, limit: number) => (readFrom.push(after), reads(after, limit)),
      });
      const log = { ...silentLogger, warn: (_: object, message: string) => void warnings.push(message) };
      sync = new IndexSync({ store, feed, nodeId: 'me', targets: { documents: target, memory: target }, log, resyncMs: 3_600_000 });
      await sync.begin();
      sync.start();
      await until(() => readFrom.length === 1);
    });
    afterEach(async () => {
      await sync.close();
      await own.close();
    });

    /** Another node's change, logged; its notice is returned, not sent. */
    const logged = async (ids: number[]) => ({ n: 'other', s: await own.store.logIndexChange('memory', ids), t: 'memory', i: ids });

    it('drops a notice with a field no store or node gives, with a warning, and applies the next real one', async () => {
      const bad: unknown[] = [
        { n: 'evil', s: 1e300, t: 'memory', i: [] },
        { n: 'evil', s: 2 ** 53, t: 'memory', i: [1] },
        { n: 'evil', s: 0, t: 'memory', i: [1] },
        { n: 'evil', s: 1.5, t: 'memory', i: [1] },
        { n: 'evil', s: '3', t: 'memory', i: [1] },
        { n: 'evil', s: 3, t: 'vectors', i: [1] },
        { n: 'evil', s: 3, t: 'memory', i: [1, 2.5] },
        { n: 'evil', s: 3, t: 'memory', i: [-1] },
        { n: 'evil', s: 3, t: 'memory', i: 'all' },
        { n: '', s: 3, t: 'memory', i: [1] },
        { s: 3, t: 'memory', i: [1] },
        null,
      ];
      for (const notice of bad) feed.hear(notice as object);
      feed.hearRaw('{"n":"evil","s":1e400');
      const real = await logged([2]);
      feed.hear(real);
      await until(() => applied.length === 1);
      await sync.close();
      expect(applied).toEqual([[2]]);
      expect(warnings.filter((w) => w === 'malformed index change notice dropped')).toHaveLength(bad.length + 1);
      expect(readFrom.every((after) => Number.isSafeInteger(after) && after < 100)).toBe(true);
    });

    it('moves its position only as far as the log holds entries, whatever seqs notices name', async () => {
      // Far ahead: left to the log, which holds nothing there.
      feed.hear({ n: 'evil', s: 2 ** 40, t: 'memory', i: [77] });
      // A run of seqs the log does not hold yet, each the next one: looked up (they are ids), never a position.
      for (let s = 1; s <= 150; s++) feed.hear({ n: 'evil', s, t: 'memory', i: [1_000 + s] });
      await until(() => applied.length === 150);
      // The real entries under the same seqs come after: one whose notice is heard, one whose notice was lost.
      feed.hear(await logged([5]));
      await logged([6]);
      await until(() => applied.some((ids) => ids[0] === 5));
      feed.connected();
      await until(() => applied.some((ids) => ids[0] === 6));
      expect(applied.flat()).not.toContain(77);
      expect(readFrom.every((after) => after < 100)).toBe(true);
    });
  });
}

noticesOnTheWord('SQLite', async () => tempStore());
describePostgres('IndexSync on PostgreSQL', () =>
  noticesOnTheWord('PostgreSQL', async () => {
    const schema = schemaName();
    const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
    return {
      store,
      close: async () => {
        await store.close();
        await dropSchema(schema);
      },
    };
  }),
);

it('logs a change of more ids than a notice carries as several entries, each sent', async () => {
  await sync.begin();
  sync.start();
  const ids = Array.from({ length: MAX_CHANGE_IDS * 2 + 5 }, (_, i) => i + 1);
  await sync.record('documents', ids);
  const sent = feed.sent.map((n) => JSON.parse(n) as { s: number; i: number[] });
  expect(sent.map((n) => n.i.length)).toEqual([MAX_CHANGE_IDS, MAX_CHANGE_IDS, 5]);
  expect(sent.flatMap((n) => n.i)).toEqual(ids);
  expect((await store.indexChangesAfter(0, 10)).map((c) => c.seq)).toEqual(sent.map((n) => n.s));
});
