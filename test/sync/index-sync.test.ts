/**
 * IndexSync with a fake feed and a real (SQLite) change log: what other nodes log is applied once,
 * its own echoes never; a notice that skips seqs, and the feed coming back, make it read the log;
 * a seq the log skipped is looked for again until it shows up or is given up.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChangeFeed } from '../../src/sync/change-feed.js';
import { DEFAULT_LOG_RETENTION_MS, DEFAULT_RESYNC_MS, GAP_WAIT_MS, IndexSync, MAX_CHANGE_IDS, MAX_GAPS } from '../../src/sync/index-sync.js';
import { silentLogger } from '../../src/logger.js';
import { DEFAULT_QUERY_TIMEOUT_MS } from '../../src/store/postgres-db.js';
import { PostgresStore } from '../../src/store/postgres.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { IndexChange, Store } from '../../src/store/types.js';
import { tempStore } from '../helpers.js';
import { until } from '../rooms/helpers.js';
import { POSTGRES_URL, describePostgres, dropSchema, schemaName, urlWithSchema } from '../store/postgres-harness.js';

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

it('applies once a notice heard while a read of the log that applies its entry waits to run', async () => {
  await sync.begin();
  const early = await theirs('documents', [1, 2]);
  // The first read of the log is queued; the notice comes before it runs, and is applied after it.
  sync.start();
  feed.hear(early);
  await until(() => applied.length > 0);
  // Changes are applied one at a time: once the next notice is applied, so is whatever came before.
  feed.hear(await theirs('memory', [3]));
  await until(() => applied.some((a) => a.target === 'memory'));
  expect(applied).toEqual([
    { target: 'documents', ids: [1, 2] },
    { target: 'memory', ids: [3] },
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

it('starts after a quiet day whose entries were all pruned without taking the seqs before the next entry for missing', async () => {
  for (let i = 1; i <= 5; i++) await theirs('documents', [i]);
  // Older than the log keeps them.
  const raw = new Database(join(temp.dir, 'salon.db'));
  raw.prepare('UPDATE index_changes SET logged_at = ?').run(Date.now() - 2 * DEFAULT_LOG_RETENTION_MS);
  raw.close();
  await store.pruneIndexChanges(DEFAULT_LOG_RETENTION_MS);
  const warnings: string[] = [];
  const log = { ...silentLogger, warn: (_: object, message: string) => void warnings.push(message) };
  const target = { applyStored: async (ids: number[]) => void applied.push({ target: 'documents', ids }) };
  const lookedFor = vi.spyOn(store, 'indexChangesAt');
  const restarted = new IndexSync({ store, feed, nodeId: 'me', log, targets: { documents: target, memory: target } });
  try {
    await restarted.begin();
    restarted.start();
    feed.hear(await theirs('documents', [6]));
    await until(() => applied.some((a) => a.ids[0] === 6));
    // The next reads of the log look for no seq below it: seqs 1 to 5 were logged and pruned, not missing.
    feed.connected();
  } finally {
    await restarted.close();
  }
  expect(applied).toEqual([{ target: 'documents', ids: [6] }]);
  expect(lookedFor).not.toHaveBeenCalled();
  expect(warnings).toEqual([]);
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

/**
 * A node's IndexSync on a PostgreSQL store of its own schema, with a second connection to it (for
 * writes the store would not make); `done` closes all three and drops the schema.
 */
async function onPostgres(): Promise<{ pgStore: PostgresStore; client: pg.Client; ids: number[]; own: IndexSync; done: () => Promise<void> }> {
  const schema = schemaName();
  const pgStore = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
  const client = new pg.Client({ connectionString: urlWithSchema(schema) });
  const ids: number[] = [];
  const own = new IndexSync({
    store: pgStore,
    feed,
    nodeId: 'me',
    targets: { documents: { applyStored: async (changed: number[]) => void ids.push(...changed) }, memory: { applyStored: async () => {} } },
    resyncMs: 3_600_000,
  });
  const done = async () => {
    await client.end().catch(() => undefined);
    await own.close();
    await pgStore.close();
    await dropSchema(schema);
  };
  return { pgStore, client, ids, own, done };
}

describePostgres('IndexSync on PostgreSQL: an insert committed after later ones', () => {
  it('applies the entry whose transaction stayed open while more than a hundred later ones committed', async () => {
    const { pgStore, client: other, ids, own, done } = await onPostgres();
    try {
      await own.begin();
      own.start();
      await other.connect();
      await other.query('BEGIN');
      // Its seq is taken now; nobody else sees the row until COMMIT.
      const { rows } = await other.query("INSERT INTO index_changes (target, ids) VALUES ('documents', '[1]') RETURNING seq");
      for (let i = 2; i <= 150; i++) await pgStore.logIndexChange('documents', [i]);
      feed.connected();
      await until(() => ids.length === 149);
      expect(ids).not.toContain(1);
      await other.query('COMMIT');
      feed.connected();
      await until(() => ids.includes(1));
      expect(Number(rows[0].seq)).toBeLessThan(await pgStore.lastIndexChange());
    } finally {
      await done();
    }
  });
});

it('applies an entry whose first apply failed at a later read, however many entries came after it', async () => {
  let failing = true;
  const ids: number[] = [];
  const flaky = {
    applyStored: async (changed: number[]) => {
      if (failing && changed.includes(1)) throw new Error('embedder away');
      ids.push(...changed);
    },
  };
  const own = new IndexSync({ store, feed, nodeId: 'me', targets: { documents: flaky, memory: flaky }, resyncMs: 3_600_000 });
  try {
    await own.begin();
    own.start();
    for (let i = 1; i <= 150; i++) await theirs('documents', [i]);
    feed.connected();
    await until(() => ids.length === 149);
    failing = false;
    feed.connected();
    await until(() => ids.includes(1));
  } finally {
    await own.close();
  }
});

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

/**
 * A store whose entries under `hidden` are not visible yet, as an insert PostgreSQL has not
 * committed, though later seqs are; `show` commits one.
 */
function withUncommitted(inner: Store) {
  const hidden = new Set<number>();
  const askedAt: number[][] = [];
  const visible = (changes: IndexChange[]) => changes.filter((c) => !hidden.has(c.seq));
  const store = Object.assign(Object.create(inner) as Store, {
    indexChangesAfter: async (after: number, limit: number) => visible(await inner.indexChangesAfter(after, limit)),
    indexChangesAt: async (seqs: number[]) => (askedAt.push(seqs), visible(await inner.indexChangesAt(seqs))),
  });
  return { store, hidden, askedAt, show: (seq: number) => hidden.delete(seq) };
}

describe('seqs that become visible after later ones (gaps)', () => {
  let slow: ReturnType<typeof withUncommitted>;
  let own: IndexSync;
  let warnings: string[];

  /** An IndexSync on the store with uncommitted entries, catching up every `resyncMs`; call after fake timers, if any. */
  async function following(resyncMs = 3_600_000) {
    slow = withUncommitted(store);
    warnings = [];
    const log = { ...silentLogger, warn: (_: object, message: string) => void warnings.push(message) };
    const target = (name: string) => ({ applyStored: async (ids: number[]) => void applied.push({ target: name, ids }) });
    own = new IndexSync({ store: slow.store, feed, nodeId: 'me', targets: { documents: target('documents'), memory: target('memory') }, log, resyncMs });
    await own.begin();
    own.start();
  }
  afterEach(async () => {
    await own?.close();
    vi.useRealTimers();
  });

  const appliedIds = () => applied.map((a) => a.ids[0]);

  /** Another node's change whose insert has not committed (hidden before it is logged: a read may run meanwhile). */
  async function uncommitted(target: 'documents' | 'memory', ids: number[]) {
    const seq = (await store.lastIndexChange()) + 1;
    slow.hidden.add(seq);
    const notice = await theirs(target, ids);
    expect(notice.s).toBe(seq);
    return notice;
  }

  it('applies an entry committed after more than a hundred later ones at the next catch-up', async () => {
    await following();
    const late = await uncommitted('documents', [1]);
    for (let i = 2; i <= 150; i++) await theirs('documents', [i]);
    feed.connected();
    await until(() => applied.length === 149);
    expect(appliedIds()).not.toContain(1);
    slow.show(late.s);
    feed.connected();
    await until(() => appliedIds().includes(1));
    // Found once: the catch-up after that neither applies it again nor asks for it.
    const asked = slow.askedAt.length;
    feed.connected();
    await theirs('memory', [500]);
    feed.connected();
    await until(() => appliedIds().includes(500));
    expect(appliedIds().filter((id) => id === 1)).toHaveLength(1);
    expect(slow.askedAt.slice(asked).flat()).not.toContain(late.s);
  });

  it('applies a gap’s entry when its notice comes, and the log later only confirms it', async () => {
    await following();
    const late = await uncommitted('memory', [7]);
    for (let i = 0; i < 120; i++) await theirs('documents', [100 + i]);
    feed.connected();
    await until(() => applied.length === 120);
    slow.show(late.s);
    feed.hear(late);
    await until(() => appliedIds().includes(7));
    feed.connected();
    await theirs('documents', [999]);
    feed.connected();
    await until(() => appliedIds().includes(999));
    expect(appliedIds().filter((id) => id === 7)).toHaveLength(1);
  });

  it('gives a gap that never fills up after GAP_WAIT_MS and no longer asks the store for it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const resyncMs = 30_000;
    await following(resyncMs);
    const skipped = await uncommitted('documents', [1]);
    await theirs('documents', [2]);
    feed.connected();
    await until(() => applied.length === 1);
    await vi.advanceTimersByTimeAsync(resyncMs);
    expect(slow.askedAt.flat()).toContain(skipped.s);
    await vi.advanceTimersByTimeAsync(GAP_WAIT_MS);
    expect(warnings).toContain('index change log seqs never seen given up (most likely skipped by the store: an insert rolled back)');
    const asked = slow.askedAt.length;
    await vi.advanceTimersByTimeAsync(resyncMs * 3);
    expect(slow.askedAt.slice(asked).flat()).not.toContain(skipped.s);
    // Committed after all that (PostgreSQL finished an insert its client had given up on): too late here.
    slow.show(skipped.s);
    await vi.advanceTimersByTimeAsync(resyncMs);
    expect(appliedIds()).toEqual([2]);
  });

  it('tracks at most MAX_GAPS missing seqs, the highest, whatever seqs the log or notices name', async () => {
    await following();
    // Notices never open gaps: far ahead or a long run of seqs the log does not hold.
    feed.hear({ n: 'evil', s: 2 ** 52, t: 'memory', i: [1] });
    for (let s = 1; s <= 50; s++) feed.hear({ n: 'evil', s: s * 1_000, t: 'memory', i: [2] });
    const first = await theirs('documents', [3]);
    feed.connected();
    await until(() => appliedIds().includes(3));
    expect(slow.askedAt).toEqual([]);
    // A store that skips a huge range (a sequence set forward): only the highest MAX_GAPS below it are looked for.
    const raw = new Database(join(temp.dir, 'salon.db'));
    raw.prepare('INSERT INTO index_changes (seq, target, ids, logged_at) VALUES (?, ?, ?, ?)').run(first.s + 10 ** 12, 'documents', '[4]', Date.now());
    raw.close();
    feed.connected();
    await until(() => appliedIds().includes(4));
    feed.connected();
    await until(() => slow.askedAt.length > 0);
    const asked = slow.askedAt[0];
    expect(asked).toHaveLength(MAX_GAPS);
    expect(Math.min(...asked)).toBe(first.s + 10 ** 12 - MAX_GAPS);
    expect(Math.max(...asked)).toBe(first.s + 10 ** 12 - 1);
    expect(warnings).toContain('index change log seqs given up: too many missing below the position');
  });
});

it('keeps the gap bound well past the longest a PostgreSQL statement waits for its answer', () => {
  expect(GAP_WAIT_MS).toBeGreaterThanOrEqual(5 * DEFAULT_QUERY_TIMEOUT_MS);
  expect(GAP_WAIT_MS).toBeGreaterThanOrEqual(5 * DEFAULT_RESYNC_MS);
  expect(GAP_WAIT_MS).toBeLessThan(DEFAULT_LOG_RETENTION_MS);
});

describe('a change log that goes back (a restored store)', () => {
  let errors: string[];
  let restored: IndexSync;

  /** An IndexSync that records its errors; started on the log as it stands. */
  async function following(): Promise<void> {
    errors = [];
    const log = { ...silentLogger, error: (_: object, message: string) => void errors.push(message) };
    const target = (name: string) => ({ applyStored: async (ids: number[]) => void applied.push({ target: name, ids }) });
    restored = new IndexSync({ store, feed, nodeId: 'me', log, targets: { documents: target('documents'), memory: target('memory') } });
    await restored.begin();
    restored.start();
  }
  afterEach(async () => {
    await restored?.close();
  });

  /** Puts the log back to what it held through `seq`, its sequence included, as a restored backup does. */
  function restoreThrough(seq: number): void {
    const raw = new Database(join(temp.dir, 'salon.db'));
    raw.prepare('DELETE FROM index_changes WHERE seq > ?').run(seq);
    raw.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'index_changes'").run(seq);
    raw.close();
  }

  /** Logs other nodes' changes of documents `ids`, one entry each; reads the log once they are applied. */
  async function logged(ids: number[]): Promise<void> {
    for (const id of ids) await theirs('documents', [id]);
    feed.connected();
    await until(() => ids.every((id) => applied.some((a) => a.ids[0] === id)));
  }

  it('reads what was logged after the restore while the log still ends below the position', async () => {
    await following();
    await logged([1, 2, 3, 4, 5]);
    restoreThrough(2);
    // Logged under seqs 3 and 4 again, below the position (5): skipped for good before.
    await logged([30, 40]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/went back/);
  });

  it('reads what was logged after the restore once the log has passed the position again', async () => {
    await following();
    await logged([1, 2, 3, 4, 5]);
    restoreThrough(2);
    for (const id of [30, 40, 50]) await theirs('documents', [id]);
    // Seq 5 now holds another entry, and 6 and 7 follow: only those were read before.
    await logged([60, 70]);
    expect(applied.map((a) => a.ids[0])).toEqual(expect.arrayContaining([30, 40, 50, 60, 70]));
    expect(errors).toHaveLength(1);
  });

  it('takes the position’s entry pruned behind a newer one for no restore', async () => {
    await following();
    await logged([1, 2, 3]);
    await theirs('documents', [4]);
    const raw = new Database(join(temp.dir, 'salon.db'));
    raw.prepare('UPDATE index_changes SET logged_at = ?').run(Date.now() - 2 * DEFAULT_LOG_RETENTION_MS);
    raw.close();
    await store.pruneIndexChanges(DEFAULT_LOG_RETENTION_MS);
    await logged([5]);
    expect(applied.map((a) => a.ids[0])).toEqual([1, 2, 3, 4, 5]);
    expect(errors).toEqual([]);
  });
});

describePostgres('IndexSync on PostgreSQL: a restored store', () => {
  it('reads what was logged after the restore, under seqs the node had passed', async () => {
    const { pgStore, client: admin, ids, own, done } = await onPostgres();
    try {
      await own.begin();
      own.start();
      await admin.connect();
      for (let i = 1; i <= 5; i++) await pgStore.logIndexChange('documents', [i]);
      feed.connected();
      await until(() => ids.length === 5);
      // A backup taken after the second entry, restored: its rows and its sequence.
      const { rows } = await admin.query('SELECT seq FROM index_changes ORDER BY seq LIMIT 2');
      const kept = Number(rows[1].seq);
      await admin.query('DELETE FROM index_changes WHERE seq > $1', [kept]);
      await admin.query("SELECT setval(pg_get_serial_sequence('index_changes', 'seq'), $1)", [kept]);
      for (const id of [30, 40]) await pgStore.logIndexChange('documents', [id]);
      feed.connected();
      await until(() => ids.includes(30) && ids.includes(40));
    } finally {
      await done();
    }
  });
});
