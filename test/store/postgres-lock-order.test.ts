/**
 * The order in which the PostgreSQL store's deletions (of memory, of a thread) and bridge rewrites
 * lock rows, against thread operations on other nodes. Each node's transaction runs here on a connection of its own,
 * the store's own statements (pruneIn, applyChangeIn, deleteThreadIn) without the store's retry,
 * so a transaction PostgreSQL aborts to break a deadlock shows as its error (40P01) instead of
 * being run again. The interleaving is made by holding transactions open and one statement back,
 * and by waiting until PostgreSQL reports a connection blocked by another (pg_blocking_pids):
 * nothing depends on timing.
 */
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { NewMemoryChunk } from '../../src/memory/types.js';
import type { Sql } from '../../src/store/postgres-db.js';
import { insertMemoryInThread, pruneIn } from '../../src/store/postgres-memory.js';
import { applyChangeIn, deleteThreadIn } from '../../src/store/postgres-threads.js';
import { PostgresStore } from '../../src/store/postgres.js';
import type { ThreadChange } from '../../src/store/types.js';
import { POSTGRES_URL, adminQuery, blockedOrSettled, describePostgres, dropSchema, schemaName, urlWithSchema } from './postgres-harness.js';
import { windowChunk } from './memory-chunk.js';

const ROOM = 'news_1';
const AT = '2026-11-20T10:00:00.000Z';
/** Retention's cut: the chunk below was last seen before it. */
const EXPIRED_BEFORE = '2026-11-10T00:00:00.000Z';
const OID_INT8 = 20;

/** Picks a statement by its text and values. */
type StatementTest = (text: string, values?: unknown[]) => boolean;

/** One node's transaction on a connection of its own. */
interface NodeTx {
  sql: Sql;
  pid: number;
  /** Keeps the `nth` statement starting with `prefix` (or that `prefix` picks) back until released. */
  holdBefore(prefix: string | StatementTest, nth?: number): { reached: Promise<void>; release: () => void };
  /** Commits when `work` resolves, rolls back when it rejects; settles as `work` did. */
  finish<T>(work: Promise<T>): Promise<T>;
  end(): Promise<void>;
}

async function nodeTx(url: string): Promise<NodeTx> {
  // bigint ids as numbers, as the store reads them.
  const getTypeParser = ((oid: number, format?: 'text' | 'binary') =>
    oid === OID_INT8 && format !== 'binary' ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'];
  const client = new pg.Client({ connectionString: url, types: { getTypeParser } });
  await client.connect();
  const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
  await client.query('BEGIN');
  let hold: { picks: StatementTest; left: number; reached: () => void; released: Promise<void> } | undefined;
  return {
    pid,
    sql: {
      async query(text: string, values?: unknown[]) {
        if (hold && hold.picks(text, values) && --hold.left === 0) {
          const { reached, released } = hold;
          hold = undefined;
          reached();
          await released;
        }
        return client.query(text, values);
      },
    },
    holdBefore(prefix, nth = 1) {
      let reached!: () => void;
      let release!: () => void;
      const reachedP = new Promise<void>((resolve) => (reached = resolve));
      const picks: StatementTest = typeof prefix === 'string' ? (text) => text.startsWith(prefix) : prefix;
      hold = { picks, left: nth, reached, released: new Promise<void>((resolve) => (release = resolve)) };
      return { reached: reachedP, release: () => release() };
    },
    finish: (work) =>
      work.then(
        async (result) => {
          await client.query('COMMIT');
          return result;
        },
        async (err) => {
          await client.query('ROLLBACK');
          throw err;
        },
      ),
    end: () => client.end(),
  };
}

/** Waits until `waiter` is blocked by a lock `holder` holds (then 'blocked'), or until `work` settles first ('settled'). */
function blockedBy(waiter: NodeTx, holder: NodeTx, work: Promise<unknown>): Promise<'blocked' | 'settled'> {
  const query = 'SELECT $2::int = ANY(pg_blocking_pids($1::int)) AS blocked';
  return blockedOrSettled(async () => (await adminQuery(query, [waiter.pid, holder.pid])).rows[0].blocked, work);
}

/** How a transaction ended: 'ok', or its error's code (40P01 for a deadlock's victim). */
const outcome = (o: PromiseSettledResult<unknown>) => (o.status === 'fulfilled' ? 'ok' : ((o.reason as { code?: string }).code ?? String(o.reason)));

/** A merge's change: `absorbed` archived into `survivor`, with the chunks it read in `absorbed` and whatever else is there. */
const mergeChange = (survivor: string, absorbed: string, chunkIds: number[], versions: Record<string, number>): ThreadChange => ({
  at: AT,
  expect: [survivor, absorbed].map((id) => ({ id, version: versions[id] })),
  updateThreads: [{ id: survivor }, { id: absorbed, status: 'archived', mergedInto: survivor }],
  moveThreadMessages: [{ fromThreadId: absorbed, threadId: survivor }],
  moveMemory: [{ ids: chunkIds, threadId: survivor, roomId: ROOM }],
  moveThreadMemory: [{ fromThreadId: absorbed, threadId: survivor, roomId: ROOM }],
});

describePostgres('PostgreSQL store: lock order of deletions against thread operations', () => {
  let schema: string;
  let store: PostgresStore;
  const opened: NodeTx[] = [];
  const begin = async () => {
    const tx = await nodeTx(urlWithSchema(schema));
    opened.push(tx);
    return tx;
  };
  const version = async (id: string) => (await store.getThread(id))!.version;

  beforeEach(async () => {
    schema = schemaName();
    store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema, poolSize: 2 });
    await store.applyThreadChange({
      at: AT,
      expect: [],
      createThreads: ['thr_a', 'thr_b', 'thr_d'].map((id) => ({ id, roomId: ROOM, title: id })),
    });
  });

  afterEach(async () => {
    for (const tx of opened.splice(0)) await tx.end().catch(() => undefined);
    await store.close();
    await dropSchema(schema);
  });

  const chunk = (over: Partial<NewMemoryChunk> = {}): NewMemoryChunk => windowChunk('an old window about the harbour', '2026-11-01', over);

  /**
   * Node 1 merges thread A into B, moving the chunk, and holds its transaction open; node 2's
   * deletion of the chunk starts and waits for A's lock; the merge commits. Node 3 then merges B
   * into D, listing the chunk it read in B. The deletion is held before it bumps versions until
   * node 3 is blocked by it (or has finished). The deletion must have locked B, where the chunk
   * is now, before deleting it: it used to delete it there still holding only A, and then wait
   * for B while node 3 held B and waited for the chunk.
   */
  async function deletionRacingMerges(deletion: (sql: Sql, chunkId: number) => Promise<unknown>, over: Partial<NewMemoryChunk> = {}) {
    const c = await store.addMemoryChunk(chunk(over), '2026-11-01T10:05:00.000Z');
    const merge = await begin();
    await applyChangeIn(merge.sql, mergeChange('thr_b', 'thr_a', [c.id], { thr_a: await version('thr_a'), thr_b: await version('thr_b') }));
    const deleting = await begin();
    const bump = deleting.holdBefore('UPDATE threads SET version');
    const deleted = deleting.finish(deletion(deleting.sql, c.id));
    expect(await blockedBy(deleting, merge, deleted)).toBe('blocked');
    await merge.finish(Promise.resolve());
    await Promise.race([bump.reached, deleted.catch(() => undefined)]);

    const versionOfB = await version('thr_b');
    const second = await begin();
    const merged = second.finish(applyChangeIn(second.sql, mergeChange('thr_d', 'thr_b', [c.id], { thr_b: versionOfB, thr_d: await version('thr_d') })));
    expect(await blockedBy(second, deleting, merged)).toBe('blocked');
    bump.release();
    const outcomes = await Promise.allSettled([deleted, merged]);
    return { c, versionOfB, outcomes };
  }

  it('retention locks the thread a merge moved an expired chunk to before deleting it, so a second merge cannot deadlock with it', async () => {
    const { c, versionOfB, outcomes } = await deletionRacingMerges((sql) => pruneIn(sql, null, 100, EXPIRED_BEFORE, 16));
    // The expired chunk goes from B and B changes; the merge that read B before loses the race, as to any change.
    expect(outcomes.map(outcome)).toEqual(['ok', 'ERR_THREAD_CHANGED']);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: [c.id] });
    expect(await store.getMemoryChunks([c.id])).toEqual([]);
    expect(await version('thr_b')).toBe(versionOfB + 1);
    expect((await store.getThread('thr_b'))!.status).toBe('active');
  });

  it('/forget private locks the thread a merge moved the chunk to before deleting it, so a second merge cannot deadlock with it', async () => {
    // A member's private exchange, deleted as forgetPrivate deletes a slice of them.
    const secret = { kind: 'exchange' as const, privileged: true, owner: 'u_ann', messageIds: ['m1'] };
    const { c, versionOfB, outcomes } = await deletionRacingMerges((sql, id) => applyChangeIn(sql, { at: AT, expect: [], deleteMemory: [id] }), secret);
    expect(outcomes.map(outcome)).toEqual(['ok', 'ERR_THREAD_CHANGED']);
    expect(await store.getMemoryChunks([c.id])).toEqual([]);
    expect(await version('thr_b')).toBe(versionOfB + 1);
    expect((await store.getThread('thr_b'))!.status).toBe('active');
  });

  it('deletes a thread with its children locked in id order, so a merge of a child with its parent cannot deadlock with it', async () => {
    // The child sorts before its parent: a merge of the two locks the child, then the parent.
    await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 'thr_p', roomId: ROOM, title: 'parent' }] });
    await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 'thr_c', roomId: ROOM, title: 'child', parentId: 'thr_p' }] });
    const versions = { thr_c: await version('thr_c'), thr_p: await version('thr_p') };
    const deletion = await begin();
    const started = deletion.holdBefore('DELETE FROM memory_chunks');
    const deleted = deletion.finish(deleteThreadIn(deletion.sql, 'thr_p'));
    await started.reached;
    const merge = await begin();
    const merged = merge.finish(applyChangeIn(merge.sql, mergeChange('thr_p', 'thr_c', [], versions)));
    expect(await blockedBy(merge, deletion, merged)).toBe('blocked');
    started.release();
    const outcomes = await Promise.allSettled([deleted, merged]);
    // The merge finds its survivor gone, as after any deletion that landed first.
    expect(outcomes.map(outcome)).toEqual(['ok', 'ERR_THREAD_NOT_FOUND']);
    expect(await store.getThread('thr_p')).toBeNull();
    expect(await store.getThread('thr_c')).toMatchObject({ status: 'active', parentId: null });
  });

  it('a bridge refresh and a merge rewrite a room’s bridges one after the other, and the refresh that read the threads before the merge writes nothing', async () => {
    // A's and B's bridges to D, as a refresh wrote them.
    await store.applyThreadChange({ at: AT, expect: [], setBridges: ['thr_a', 'thr_b'].map((id) => ({ threadId: id, otherId: 'thr_d', weight: 0.7 })) });
    // Another node's refresh lists the room's threads (A before B) and computes, while B absorbs A.
    const listed = await store.listThreads(ROOM, 0);
    expect(listed.map((t) => t.id)).toEqual(['thr_a', 'thr_b', 'thr_d']);
    const versions = { thr_a: await version('thr_a'), thr_b: await version('thr_b') };
    // The merge drops the survivor's bridges, then the absorbed thread's: it is held before A's.
    const merge = await begin();
    const dropping = merge.holdBefore((text, values) => text.startsWith('DELETE FROM thread_bridges') && JSON.stringify(values).includes('"thr_a"'));
    const merged = merge.finish(
      applyChangeIn(merge.sql, {
        ...mergeChange('thr_b', 'thr_a', [], versions),
        dropBridgesOf: ['thr_b', 'thr_a'],
        setBridges: [{ threadId: 'thr_b', otherId: 'thr_d', weight: 0.7 }],
      }),
    );
    await dropping.reached;
    const refresh = await begin();
    const refreshed = refresh.finish(
      applyChangeIn(refresh.sql, {
        at: AT,
        expect: [],
        bridgesRead: listed.map(({ id, version: v }) => ({ id, version: v })),
        dropBridgesOf: listed.map((t) => t.id),
        setBridges: [
          { threadId: 'thr_a', otherId: 'thr_b', weight: 0.9 },
          { threadId: 'thr_a', otherId: 'thr_d', weight: 0.7 },
          { threadId: 'thr_b', otherId: 'thr_d', weight: 0.7 },
        ],
      }),
    );
    expect(await blockedBy(refresh, merge, refreshed)).toBe('blocked');
    dropping.release();
    const outcomes = await Promise.allSettled([merged, refreshed]);
    // Written in list order, the refresh held A's rows and waited for B's, the merge the other way
    // round: one of them was aborted (40P01). Now the refresh waits for the room, then finds A and B
    // changed and gives way (ThreadBridges refreshes the room again later).
    expect(outcomes.map(outcome)).toEqual(['ok', 'ERR_THREAD_CHANGED']);
    expect(await store.threadBridges('thr_a')).toEqual([]);
    expect(await store.threadBridges('thr_b')).toEqual([{ threadId: 'thr_b', otherId: 'thr_d', weight: 0.7 }]);
    expect(await store.threadBridges('thr_d')).toEqual([{ threadId: 'thr_d', otherId: 'thr_b', weight: 0.7 }]);
  });

  it('prunes a thread over its cap with the thread locked first, so a merge moving its chunks cannot deadlock with it', async () => {
    // The cap locks a thread's chunks newest first, a merge moves them in id order: the second is the newer.
    const first = await store.addMemoryChunk(chunk({ text: 'the first window' }), '2026-11-17T10:00:00.000Z');
    const second = await store.addMemoryChunk(chunk({ text: 'the second window' }), '2026-11-18T10:00:00.000Z');
    const merge = await begin();
    const moving = merge.holdBefore('UPDATE memory_chunks SET thread_id', 2);
    const versions = { thr_a: await version('thr_a'), thr_b: await version('thr_b') };
    const merged = merge.finish(applyChangeIn(merge.sql, mergeChange('thr_b', 'thr_a', [first.id, second.id], versions)));
    await moving.reached;
    // A chunk landed in A at its cap (none kept), on another node.
    const pruning = await begin();
    const pruned = pruning.finish(pruneIn(pruning.sql, 'thr_a', 0, EXPIRED_BEFORE));
    expect(await blockedBy(pruning, merge, pruned)).toBe('blocked');
    moving.release();
    const outcomes = await Promise.allSettled([merged, pruned]);
    expect(outcomes.map(outcome)).toEqual(['ok', 'ok']);
    // The merge took both to B before the cap of A read what it holds.
    expect(outcomes[1]).toEqual({ status: 'fulfilled', value: [] });
    expect((await store.getMemoryChunks([first.id, second.id])).map((c) => c.threadId)).toEqual(['thr_b', 'thr_b']);
  });

  it('stores a chunk that waited for a merge of its thread in the survivor, where the merge put the rest of its memory', async () => {
    const before = await store.addMemoryChunk(chunk({ text: 'a window before the merge' }), AT);
    const versions = { thr_a: await version('thr_a'), thr_b: await version('thr_b') };
    // The merge is applied and not committed yet: it holds A's row for update.
    const merge = await begin();
    await applyChangeIn(merge.sql, mergeChange('thr_b', 'thr_a', [before.id], versions));
    // Another node stores a window of A, embedded before the merge began.
    const adding = await begin();
    const added = adding.finish(insertMemoryInThread(adding.sql, chunk({ text: 'a window about the lighthouse' }), AT));
    expect(await blockedBy(adding, merge, added)).toBe('blocked');
    await merge.finish(Promise.resolve());
    const stored = await added;
    // It waited for A's row and read it archived: it went on to B, not into the shell nobody searches.
    expect(stored.threadId).toBe('thr_b');
    expect((await store.getMemoryChunks([before.id, stored.id])).map((c) => c.threadId)).toEqual(['thr_b', 'thr_b']);
    expect(await store.countMemoryChunks('thr_a')).toBe(0);
    expect((await store.searchMemoryLines('lighthouse', ['thr_b'], 5)).map((h) => h.chunkId)).toEqual([stored.id]);
  });
});
