/**
 * A deletion in slices paced by the WAL (src/store/sqlite-wal-pace.ts): past a length it waits for
 * the checkpoint worker to copy everything, so the WAL starts over instead of growing until the
 * writer checkpoints it on the event loop. Observed through the WAL's length in `-shm` and the
 * pacer's counters, never through durations.
 */
import type Database from 'better-sqlite3';
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteCheckpointer } from '../../src/store/sqlite-checkpointer.js';
import { STAGE_MIN_MESSAGES } from '../../src/store/sqlite-staging.js';
import { WalPacer, type WalCatchUp } from '../../src/store/sqlite-wal-pace.js';
import { SqliteStore, type BackgroundCheckpointTunables } from '../../src/store/sqlite.js';
import type { NewMessage } from '../../src/store/types.js';
import { WalIndexReader } from '../../src/store/wal-index.js';
import { tempDir } from '../helpers.js';
import { until } from '../rooms/helpers.js';
import { createThread } from './new-thread.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A deferred reply of the worker's catch-up. */
type Reply = { log: number; checkpointed: number } | null;

/** A worker whose catch-ups the test answers one by one. */
function heldWorker(): WalCatchUp & { asked: number; answer(reply: Reply): void } {
  const pending: ((reply: Reply) => void)[] = [];
  return {
    asked: 0,
    catchUp() {
      this.asked++;
      return new Promise<Reply>((resolve) => pending.push(resolve));
    },
    answer(reply) {
      pending.shift()!(reply);
    },
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('WalPacer', () => {
  it('asks the worker to checkpoint past nudgeFrames without waiting, and waits past paceFrames until it copied everything', async () => {
    let frames = 10;
    const worker = heldWorker();
    const pacer = new WalPacer({ frames: () => frames }, worker, { nudgeFrames: 100, paceFrames: 200, tries: 3 });
    expect(pacer.pace()).toBeNull();
    expect(worker.asked).toBe(0);
    frames = 150;
    expect(pacer.pace()).toBeNull();
    expect(pacer.pace()).toBeNull();
    // One checkpoint asked for, not one a slice.
    expect(worker.asked).toBe(1);
    frames = 250;
    let resumed = false;
    const waiting = pacer.pace()!.then(() => (resumed = true));
    // Another caller waits on the same catch-up.
    expect(pacer.pace()).not.toBeNull();
    // The early checkpoint ended at 160 frames: the writes went on past it, so it asks again.
    worker.answer({ log: 160, checkpointed: 160 });
    await turn();
    expect(resumed).toBe(false);
    expect(worker.asked).toBe(2);
    // Everything copied, nothing written since: the next commit starts the WAL over.
    worker.answer({ log: 250, checkpointed: 250 });
    await waiting;
    expect(pacer.counts).toEqual({ asked: 2, waits: 1, caughtUp: 1, gaveUp: 0 });
  });

  it('goes on once the WAL started over, or the worker is gone', async () => {
    let frames = 300;
    const worker = heldWorker();
    const pacer = new WalPacer({ frames: () => frames }, worker, { nudgeFrames: 100, paceFrames: 200 });
    const first = pacer.pace()!;
    frames = 3; // a chat message's commit restarted the WAL after the checkpoint
    worker.answer({ log: 300, checkpointed: 300 });
    await first;
    expect(pacer.counts.caughtUp).toBe(1);
    frames = 400;
    const second = pacer.pace()!;
    worker.answer(null);
    await second;
    expect(pacer.counts).toEqual({ asked: 2, waits: 2, caughtUp: 1, gaveUp: 0 });
  });

  it('gives a wait up after `tries` checkpoints that left frames behind, and waits again only further on', async () => {
    let frames = 250;
    const worker = heldWorker();
    const pacer = new WalPacer({ frames: () => frames }, worker, { nudgeFrames: 100, paceFrames: 200, tries: 2 });
    const waiting = pacer.pace()!;
    // A reader's snapshot keeps frames from being copied.
    worker.answer({ log: 250, checkpointed: 120 });
    await turn();
    worker.answer({ log: 250, checkpointed: 120 });
    await waiting;
    expect(pacer.counts).toEqual({ asked: 2, waits: 1, caughtUp: 0, gaveUp: 1 });
    frames = 300;
    expect(pacer.pace()).toBeNull();
    worker.answer({ log: 300, checkpointed: 300 });
    await turn();
    frames = 350;
    expect(pacer.pace()).not.toBeNull();
    worker.answer({ log: 350, checkpointed: 350 });
  });

  it('names bad options', () => {
    const worker = heldWorker();
    expect(() => new WalPacer({ frames: () => 0 }, worker, { nudgeFrames: 100, paceFrames: 100 })).toThrow(/paceFrames/);
    expect(() => new WalPacer({ frames: () => 0 }, worker, { tries: 0 })).toThrow(/tries/);
  });
});

describe('a deletion in slices paced by the WAL', () => {
  const ROOM = 'news_1';
  const message = (threadId: string, n: number): NewMessage => ({
    roomId: ROOM,
    threadId,
    author: { id: 'u1', name: 'Ann', kind: 'user' },
    // ~1 KB a message: the deletion writes a few thousand frames.
    text: `line ${n} of a long talk: ${'words '.repeat(170)}`,
    clientId: `${threadId}-${n}`,
  });

  /** A store with the checkpoint worker, which checkpoints only when asked (`walFrames` out of reach), and a thread of many messages. */
  async function storeWithTalk(tunables: BackgroundCheckpointTunables): Promise<{ file: string; store: SqliteStore }> {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = join(dir, 'salon.db');
    const store = new SqliteStore({ filename: file, backgroundCheckpoints: { walFrames: 1e9, pollMs: 60_000, ...tunables } });
    cleanups.push(() => store.close());
    for (const id of ['thr_talk', 'thr_keep']) await createThread(store, { id, roomId: ROOM, title: id }, 'admin');
    const n = STAGE_MIN_MESSAGES + 512;
    await store.appendMessages(Array.from({ length: n }, (_, i) => message('thr_talk', i)));
    // The worker's start is what this waits for: slow on a busy machine, so not the usual 3 s.
    await until(() => store.writerSettings?.synchronous === 'OFF', 60_000);
    // The WAL empty before the deletion: what it holds after is the deletion's.
    expect(await store.purgeDeleted()).toBe(true);
    return { file, store };
  }

  /**
   * The WAL's salts from the wal-index header in `-shm` (offset 32, 8 bytes): SQLite draws new ones
   * each time the WAL starts over, so they tell a restart that a commit's frame count alone hides
   * (a commit that starts the WAL over and writes more frames than it held before).
   */
  function walSalts(file: string): string {
    const fd = openSync(`${file}-shm`, 'r');
    try {
      const salts = Buffer.alloc(8);
      readSync(fd, salts, 0, 8, 32);
      return salts.toString('hex');
    } finally {
      closeSync(fd);
    }
  }

  /**
   * The WAL's length after every commit of a transaction on `db` made from now on, and how much it
   * grew since the one before (the merge slices' commits between included; all of a commit's
   * frames when the WAL started over in it).
   */
  function walAfterCommits(db: Database.Database, file: string): { after: number[]; added: number[]; restarts: number } {
    const wal = new WalIndexReader(file);
    cleanups.push(() => wal.close());
    const seen = { after: [] as number[], added: [] as number[], restarts: 0 };
    let last = wal.frames()!;
    let salts = walSalts(file);
    const transaction = db.transaction.bind(db);
    vi.spyOn(db, 'transaction').mockImplementation(((fn: (...args: never[]) => unknown) => {
      const tx = transaction(fn);
      const counted =
        (run: (...args: never[]) => unknown) =>
        (...args: never[]) => {
          const out = run(...args);
          const after = wal.frames()!;
          const now = walSalts(file);
          seen.after.push(after);
          if (now !== salts) seen.restarts++;
          seen.added.push(now !== salts ? after : after - last);
          last = after;
          salts = now;
          return out;
        };
      return Object.assign(counted(tx), {
        immediate: counted(tx.immediate),
        deferred: counted(tx.deferred),
        exclusive: counted(tx.exclusive),
        default: counted(tx.default),
      });
    }) as typeof db.transaction);
    return seen;
  }

  const gone = (store: SqliteStore) => () => (store.db.prepare('SELECT count(*) AS n FROM memory_staging').get() as { n: number }).n === 0;

  it('keeps the WAL within paceFrames and a slice: the worker starts it over, the writer never has to', async () => {
    const paceFrames = 200;
    const { file, store } = await storeWithTalk({ nudgeFrames: 100, paceFrames });
    const wal = walAfterCommits(store.db, file);
    expect(await store.deleteThread('thr_talk')).toMatchObject({ messages: STAGE_MIN_MESSAGES + 512 });
    await until(gone(store), 60_000);
    const written = wal.added.reduce((a, b) => a + b, 0);
    expect(store.walPacing!.caughtUp).toBeGreaterThan(0);
    expect(store.walPacing!.gaveUp).toBe(0);
    // The pacer looks after each deletion turn: a slice, then the merge slice that follows it. A
    // turn begun just under paceFrames may end past it by both commits, never by more: the worker
    // then catches up and the next commit starts the WAL over.
    const turn = Math.max(...wal.added.map((added, i) => added + (wal.added[i + 1] ?? 0)));
    // The deletion wrote several times the bound, and the WAL started over each time it got there.
    expect(written).toBeGreaterThan(4 * paceFrames);
    expect(Math.max(...wal.after)).toBeLessThanOrEqual(paceFrames + turn);
    expect(wal.restarts).toBeGreaterThan(0);
    expect(store.writerSettings).toEqual({ synchronous: 'OFF', autocheckpoint: 0 });
    expect((store.db.prepare("SELECT count(*) AS n FROM messages WHERE thread_id = 'thr_talk'").get() as { n: number }).n).toBe(0);
  });

  it('waits for the worker between slices while other writers commit', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const catchUp = SqliteCheckpointer.prototype.catchUp;
    let asked = 0;
    vi.spyOn(SqliteCheckpointer.prototype, 'catchUp').mockImplementation(async function (this: SqliteCheckpointer) {
      asked++;
      await released;
      return catchUp.call(this);
    });
    const { store } = await storeWithTalk({ nudgeFrames: 100, paceFrames: 200 });
    const left = () => (store.db.prepare("SELECT count(*) AS n FROM messages WHERE thread_id = 'thr_talk'").get() as { n: number }).n;
    await store.deleteThread('thr_talk');
    await until(() => (store.walPacing?.waits ?? 0) > 0);
    expect(asked).toBeGreaterThan(0);
    // Held at the bound: the deletion stays where it is, a chat message commits meanwhile.
    const at = left();
    expect(at).toBeGreaterThan(0);
    for (let i = 0; i < 20; i++) await turn();
    const said = await store.appendMessage(message('thr_keep', 1));
    expect(said.message.seq).toBeGreaterThan(0);
    for (let i = 0; i < 20; i++) await turn();
    expect(left()).toBe(at);
    release();
    await until(gone(store), 60_000);
    expect(left()).toBe(0);
    expect(store.walPacing!.caughtUp).toBeGreaterThan(0);
  });
});
