/**
 * Two nodes (two PostgreSQL stores, two pools, one schema) filing the same memory chunk into the
 * same thread at once. The first node's transaction is held after its repeat lookup, just before
 * its insert, until the second node's filing is blocked by it (pg_blocking_pids) or has finished:
 * nothing depends on timing. Likewise a private exchange filed on one node while its asker's
 * `/forget private` moves their forget mark on the other, each held in turn.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewMemoryChunk } from '../../src/memory/types.js';
import type { PgDatabase, Sql } from '../../src/store/postgres-db.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { ForgottenExchange } from '../../src/store/types.js';
import { POSTGRES_URL, adminQuery, blockedOrSettled, describePostgres, dropSchema, schemaName } from './postgres-harness.js';
import { windowChunk } from './memory-chunk.js';

const ROOM = 'news_1';
const AT = '2026-11-20T10:00:00.000Z';
const SEEN = '2026-11-20T10:05:00.000Z';

/**
 * Holds `store`'s next transaction before its first statement starting with `prefix` until
 * released; `reached` gives the PostgreSQL backend of the held transaction.
 */
function holdInNextTx(store: PostgresStore, prefix: string): { reached: Promise<number>; release: () => void } {
  const db = (store as unknown as { db: PgDatabase }).db;
  const tx = db.tx.bind(db);
  let reached!: (pid: number) => void;
  let release!: () => void;
  const reachedP = new Promise<number>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  db.tx = <T>(fn: (sql: Sql) => Promise<T>): Promise<T> =>
    tx((sql) =>
      fn({
        async query(text: string, values?: unknown[]) {
          if (!held && text.startsWith(prefix)) {
            held = true;
            reached((await sql.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number);
            await released;
          }
          return sql.query(text, values);
        },
      }),
    );
  return { reached: reachedP, release: () => release() };
}

/** Waits until some connection is blocked by a lock backend `holder` holds (then 'blocked'), or until `work` settles first ('settled'). */
function blockedBy(holder: number, work: Promise<unknown>): Promise<'blocked' | 'settled'> {
  const query = 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))';
  return blockedOrSettled(async () => (await adminQuery(query, [holder])).rows[0].n > 0, work);
}

describePostgres('PostgreSQL store: two nodes filing the same memory chunk at once', () => {
  let schema: string;
  let nodeA: PostgresStore;
  let nodeB: PostgresStore;

  beforeEach(async () => {
    schema = schemaName();
    nodeA = await PostgresStore.open({ connectionString: POSTGRES_URL, schema, poolSize: 2 });
    nodeB = await PostgresStore.open({ connectionString: POSTGRES_URL, schema, poolSize: 2 });
    await nodeA.applyThreadChange({ at: AT, expect: [], createThreads: ['thr_a', 'thr_b'].map((id) => ({ id, roomId: ROOM, title: id })) });
  });

  afterEach(async () => {
    await nodeA.close();
    await nodeB.close();
    await dropSchema(schema);
  });

  const chunk = (over: Partial<NewMemoryChunk> = {}): NewMemoryChunk =>
    windowChunk('the ferry to the lighthouse leaves at dawn on filing days', '2026-11-20', over);

  it('stores the chunk once: the second filing waits for the first and gets its chunk as the repeat, while other words and threads go on', async () => {
    const held = holdInNextTx(nodeA, 'INSERT INTO memory_chunks');
    const first = nodeA.fileMemoryChunk(chunk(), SEEN, undefined, []);
    const holder = await held.reached;

    // Other words in the same thread, and the same words in another thread, are not kept waiting.
    const otherWords = nodeB.fileMemoryChunk(chunk({ text: 'the ferry is cancelled on filing days' }), SEEN, undefined, []);
    expect(await blockedBy(holder, otherWords)).toBe('settled');
    const otherThread = nodeB.fileMemoryChunk(chunk({ threadId: 'thr_b' }), SEEN, undefined, []);
    expect(await blockedBy(holder, otherThread)).toBe('settled');

    const second = nodeB.fileMemoryChunk(chunk(), SEEN, undefined, []);
    const state = await blockedBy(holder, second);
    held.release();
    const [a, b] = await Promise.all([first, second]);

    expect(a).toEqual({ stored: expect.objectContaining({ threadId: 'thr_a', text: chunk().text }) });
    const storedId = 'stored' in a ? a.stored.id : undefined;
    expect(b).toEqual({ repeat: expect.objectContaining({ id: storedId, threadId: 'thr_a' }) });
    // The thread holds the chunk once, beside the other words' chunk.
    expect(await nodeA.countMemoryChunks('thr_a')).toBe(2);
    expect(state).toBe('blocked');
    expect(await otherWords).toEqual({ stored: expect.objectContaining({ threadId: 'thr_a' }) });
    expect(await otherThread).toEqual({ stored: expect.objectContaining({ threadId: 'thr_b' }) });
  });

  describe('a private exchange filed while its asker forgets on the other node', () => {
    const exchange = (forgetMark: number): NewMemoryChunk =>
      chunk({
        kind: 'exchange',
        text: 'Q: What is my locker code? A: Your locker code is 4417.',
        messageIds: [],
        privileged: true,
        owner: 'u_ann',
        forgetMark,
      });

    it('makes the forget wait for a filing that read the old mark, so the read of the store after it finds the chunk', async () => {
      const held = holdInNextTx(nodeA, 'INSERT INTO memory_chunks');
      const filing = nodeA.fileMemoryChunk(exchange(0), SEEN, undefined, []);
      const holder = await held.reached;
      const forget = nodeB.markPrivateForget('u_ann', ROOM);
      const state = await blockedBy(holder, forget);
      held.release();
      expect(await filing).toEqual({ stored: expect.objectContaining({ owner: 'u_ann' }) });
      expect(await forget).toBe(1);
      expect(state).toBe('blocked');
      expect((await nodeB.scanPrivateMemory('u_ann', 0, 10)).map((c) => c.text)).toEqual([exchange(0).text]);
    });

    it('makes a filing wait for a forget, the member’s first (no row yet to lock), and then refuses it', async () => {
      const held = holdInNextTx(nodeB, 'INSERT INTO private_forgets');
      const forget = nodeB.markPrivateForget('u_ann', ROOM);
      const holder = await held.reached;
      const filing = nodeA.fileMemoryChunk(exchange(0), SEEN, undefined, []);
      const adding = nodeA.addMemoryChunk(exchange(0), SEEN);
      const states = [await blockedBy(holder, filing), await blockedBy(holder, adding)];
      held.release();
      expect(await forget).toBe(1);
      await expect(filing).rejects.toBeInstanceOf(ForgottenExchange);
      await expect(adding).rejects.toBeInstanceOf(ForgottenExchange);
      expect(states).toEqual(['blocked', 'blocked']);
      expect(await nodeA.scanPrivateMemory('u_ann', 0, 10)).toEqual([]);
      // Asked after it, under its mark: stored.
      expect(await nodeA.fileMemoryChunk(exchange(1), SEEN, undefined, [])).toEqual({ stored: expect.objectContaining({ owner: 'u_ann' }) });
    });
  });
});
