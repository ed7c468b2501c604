/**
 * Room messages are persisted with their seq before anyone sees them: a restarted server replays
 * every broadcast message, a failing write costs the sender an error and nothing else, and WAL
 * checkpoints run off the event loop (src/store/sqlite-checkpointer.ts).
 */
import { openSync, readSync, closeSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { SAFETY_NET_PAGES, SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES, SqliteCheckpointer } from '../../src/store/sqlite-checkpointer.js';
import { SqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite.js';
import { WriterSync, writerSettings } from '../../src/store/sqlite-writer-sync.js';
import type { NewMessage } from '../../src/store/types.js';
import { SCHED_IDLE, tempDir, threadsUnder } from '../helpers.js';
import { ROOM, connect, item, joined, listen, roomsApp, until } from './helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A store on a file of a new temporary directory (`file`) holding the thread `newMessage` writes to, closed and removed after the test. */
async function storeOnFile(options: Omit<SqliteStoreOptions, 'filename'> = {}): Promise<{ file: string; store: SqliteStore }> {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const file = join(dir, 'salon.db');
  const store = new SqliteStore({ filename: file, ...options });
  cleanups.push(() => store.close());
  await holdThread(store);
  return { file, store };
}

/** Creates the thread `newMessage` writes to. */
async function holdThread(store: SqliteStore): Promise<void> {
  await store.applyThreadChange({
    at: new Date(0).toISOString(),
    expect: [],
    createThreads: [{ id: THREAD, roomId: ROOM, title: 'Main', origin: 'original' }],
  });
}

/** An app over `dir` (kept across restarts) holding the room's item. */
async function appOn(dir: string) {
  const app = await buildApp(testConfig({ DATA_DIR: dir, ADMIN_TOKEN: 'test-admin-token' }), { roomOptions: { rateBurst: 100, shutdownGraceMs: 100 } });
  await app.salon.store.upsertItem(item(ROOM));
  await app.ready();
  return app;
}

/**
 * The WAL's length and how much of it a checkpoint has copied into the database, read from the
 * wal-index in `-shm` as the checkpointer reads it (sqlite.org/walformat.html: mxFrame at 16 of
 * the header, nBackfill at 96, just after the header's two copies).
 */
function walState(dbFile: string): { frames: number; backfilled: number } {
  const fd = openSync(`${dbFile}-shm`, 'r');
  try {
    const header = Buffer.alloc(100);
    readSync(fd, header, 0, 100, 0);
    const u32 = (offset: number) => (endianness() === 'LE' ? header.readUInt32LE(offset) : header.readUInt32BE(offset));
    return { frames: u32(16), backfilled: u32(96) };
  } finally {
    closeSync(fd);
  }
}
const walFrames = (dbFile: string) => walState(dbFile).frames;

const THREAD = 'thr_1';
const newMessage = (i: number): NewMessage => ({
  roomId: ROOM,
  threadId: THREAD,
  author: { id: `u${i % 3}`, name: `U${i % 3}`, kind: 'user' },
  text: `m${i}`,
  clientId: `c${i}`,
});

describe('room message persistence', () => {
  it('replays every broadcast message, in seq order, after a restart', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const first = await appOn(dir);
    const url = await listen(first);
    const ana = await connect(url());
    await ana.hello('Ana');
    const ben = await connect(url());
    await ben.hello('Ben');
    for (let i = 1; i <= 30; i++) (i % 2 ? ana : ben).send({ type: 'say', text: `m${i}`, clientId: `c${i}` });
    await ana.next('message', (f) => f.message.seq === 30);
    await ben.next('message', (f) => f.message.seq === 30);
    const live = ana.all('message').map((f) => f.message);
    expect(live.map((m) => m.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(ben.all('message').map((f) => f.message)).toEqual(live);
    await first.close();

    const second = await appOn(dir);
    cleanups.push(() => second.close());
    const back = await joined(second, 'Ana', ROOM, { lastSeq: 0 });
    expect(back.welcome.history).toEqual(live);
    expect(back.welcome.seq).toBe(30);
    const missed = await joined(second, 'Ben', ROOM, { lastSeq: 25 });
    expect(missed.welcome.history).toEqual(live.slice(25));
    back.client.send({ type: 'say', text: 'after the restart', clientId: 'after' });
    expect((await back.client.next('message')).message.seq).toBe(31);
  });

  it('answers a failing write with ERR_INTERNAL and the clientId; the connection and the seq carry on', async () => {
    const { app, close } = await roomsApp();
    cleanups.push(close);
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'Ben');
    const store = app.salon.store;
    const append = store.appendMessage.bind(store);
    let failures = 1;
    store.appendMessage = async (m) => {
      if (failures-- > 0) throw new Error('disk I/O error');
      return append(m);
    };
    a.client.send({ type: 'say', text: 'lost?', clientId: 'c1' });
    const error = await a.client.next('error');
    expect(error).toMatchObject({ code: 'ERR_INTERNAL', clientId: 'c1' });
    a.client.send({ type: 'say', text: 'again', clientId: 'c1' });
    const atB = await b.client.next('message');
    expect(atB.message).toMatchObject({ seq: 1, text: 'again', clientId: 'c1' });
    expect(b.client.all('message')).toHaveLength(1);
    expect((await a.client.next('message')).message).toEqual(atB.message);
    expect(await store.messagesAfter(ROOM, 0, 10)).toEqual([atB.message]);
  });
});

describe('background WAL checkpoints', () => {
  it('checkpoints in a worker and lets the WAL start over, keeping every message and its seq', async () => {
    const { file, store } = await storeOnFile();
    const checkpoints: { log: number; checkpointed: number }[] = [];
    const running: boolean[] = [];
    const writer = new WriterSync(store.db, { filename: file, synchronous: 'normal' });
    const checkpointer = new SqliteCheckpointer({
      filename: file,
      busyTimeoutMs: 5000,
      pollMs: 5,
      walFrames: 40,
      onRunning: (r) => {
        running.push(r);
        writer.setWorkerRunning(r);
      },
      onCheckpoint: (c) => checkpoints.push(c),
    });
    cleanups.push(() => checkpointer.stop());
    await until(() => running.length > 0, 30_000);
    // Twice: fill the WAL past the threshold, wait until the worker has copied every frame, and
    // check that the next commit starts the WAL over. Waiting on the wal-index (not on a timer or
    // a message count) keeps this independent of machine load.
    let n = 0;
    for (let round = 0; round < 2; round++) {
      while (walFrames(file) < 40) {
        const { message } = await store.appendMessage(newMessage(++n));
        expect(message.seq).toBe(n);
      }
      // The worker reports a checkpoint once its call has returned. Until then it may still hold
      // the wal-index lock it copied under (marking every frame copied comes just before letting
      // go, and a SCHED_IDLE thread can wait long between the two on a busy machine), and a commit
      // meanwhile cannot start the WAL over.
      await until(() => {
        const { frames, backfilled } = walState(file);
        const last = checkpoints.at(-1);
        return frames >= 40 && backfilled === frames && last !== undefined && last.log === frames && last.checkpointed === frames;
      }, 30_000);
      const before = walFrames(file);
      // The restarting commit runs unsynced: the worker's next checkpoint syncs the new header.
      expect(writer.current).toEqual({ synchronous: 'OFF', autocheckpoint: 0 });
      expect(store.db.pragma('synchronous', { simple: true })).toBe(0);
      const { message } = await store.appendMessage(newMessage(++n));
      expect(message.seq).toBe(n);
      expect(walFrames(file)).toBeLessThan(before);
    }
    expect(checkpoints.some((c) => c.log >= 40 && c.checkpointed === c.log)).toBe(true);
    const stored = await store.messagesAfter(ROOM, 0, 5000);
    expect(stored.map((m) => m.text)).toEqual(Array.from({ length: n }, (_, i) => `m${i + 1}`));
    expect(stored.map((m) => m.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    await checkpointer.stop();
    expect(running).toEqual([true, false]);
    expect(writer.current).toEqual({ synchronous: 'NORMAL', autocheckpoint: SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES });
    writer.close();
    await store.close();
    const again = new SqliteStore({ filename: file });
    cleanups.push(() => again.close());
    expect((await again.messagesAfter(ROOM, 0, 5000)).map((m) => m.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  });

  it.runIf(process.platform === 'linux')('runs the worker’s thread in SCHED_IDLE, so the event loop preempts it at once', async () => {
    const { file } = await storeOnFile();
    const idleBefore = threadsUnder(SCHED_IDLE);
    const running: boolean[] = [];
    const checkpointer = new SqliteCheckpointer({ filename: file, busyTimeoutMs: 5000, onRunning: (r) => running.push(r) });
    cleanups.push(() => checkpointer.stop());
    await until(() => running.length > 0, 30_000);
    expect(checkpointer.scheduling).toBe('idle');
    expect(threadsUnder(SCHED_IDLE)).toBe(idleBefore + 1);
    await checkpointer.stop();
    expect(threadsUnder(SCHED_IDLE)).toBe(idleBefore);
  });

  it('leaves checkpoints and the WAL header’s fsync to the worker while it runs, and survives a reopen', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = join(dir, 'salon.db');
    const store = new SqliteStore({ filename: file, backgroundCheckpoints: true });
    await holdThread(store);
    await until(() => store.writerSettings?.synchronous === 'OFF', 60_000);
    expect(store.db.pragma('synchronous', { simple: true })).toBe(0);
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    for (let i = 1; i <= 20; i++) await store.appendMessage(newMessage(i));
    await store.close();
    const again = new SqliteStore({ filename: file });
    cleanups.push(() => again.close());
    expect(again.db.pragma('synchronous', { simple: true })).toBe(1);
    expect(again.db.pragma('wal_autocheckpoint', { simple: true })).toBe(SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES);
    expect((await again.messagesAfter(ROOM, 0, 50)).map((m) => m.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const memory = new SqliteStore({ filename: ':memory:', backgroundCheckpoints: true });
    cleanups.push(() => memory.close());
    expect(memory.writerSettings).toBeNull();
    expect(memory.db.pragma('wal_autocheckpoint', { simple: true })).toBe(SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES);
  });

  it('keeps every commit fsynced with synchronous full, the writer’s checkpoint only a safety net', async () => {
    const { store } = await storeOnFile({ backgroundCheckpoints: true, synchronous: 'full' });
    await until(() => store.writerSettings?.autocheckpoint === SAFETY_NET_PAGES, 60_000);
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('syncs and checkpoints on the writer again while the worker is behind, and not once it caught up', async () => {
    const { file, store } = await storeOnFile();
    // A worker that never checkpoints: only the WAL's length decides (the migrations wrote some).
    const behindFrames = walFrames(file) + 40;
    const writer = new WriterSync(store.db, { filename: file, synchronous: 'normal', behindFrames, guardMs: 5 });
    cleanups.push(() => writer.close());
    writer.setWorkerRunning(true);
    expect(writer.current).toEqual({ synchronous: 'OFF', autocheckpoint: 0 });
    let n = 0;
    while (walFrames(file) < behindFrames) await store.appendMessage(newMessage(++n));
    await until(() => writer.current.synchronous === 'NORMAL');
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1);
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(SAFETY_NET_PAGES);
    // The worker catches up: everything copied, the WAL starts over at the next commit.
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    await store.appendMessage(newMessage(++n));
    await until(() => writer.current.synchronous === 'OFF');
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    writer.setWorkerRunning(false);
    expect(writer.current).toEqual({ synchronous: 'NORMAL', autocheckpoint: SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES });
  });

  it('chooses the writer’s settings from the worker’s state and the WAL’s length', () => {
    const behind = 100;
    expect(writerSettings('normal', false, 5, behind)).toEqual({ synchronous: 'NORMAL', autocheckpoint: SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES });
    expect(writerSettings('full', false, 5, behind)).toEqual({ synchronous: 'FULL', autocheckpoint: SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES });
    expect(writerSettings('normal', true, 99, behind)).toEqual({ synchronous: 'OFF', autocheckpoint: 0 });
    expect(writerSettings('normal', true, 100, behind)).toEqual({ synchronous: 'NORMAL', autocheckpoint: SAFETY_NET_PAGES });
    expect(writerSettings('normal', true, null, behind)).toEqual({ synchronous: 'NORMAL', autocheckpoint: SAFETY_NET_PAGES });
    expect(writerSettings('full', true, 5, behind)).toEqual({ synchronous: 'FULL', autocheckpoint: SAFETY_NET_PAGES });
  });

  it('reports a worker that cannot open the database as not running, and names bad options', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const running: boolean[] = [];
    const missing = new SqliteCheckpointer({ filename: join(dir, 'missing.db'), busyTimeoutMs: 10, onRunning: (r) => running.push(r) });
    await missing.stop();
    expect(running).toEqual([]);
    expect(() => new SqliteCheckpointer({ filename: ':memory:', busyTimeoutMs: 10, onRunning() {} })).toThrow(/filename/);
    expect(() => new SqliteCheckpointer({ filename: join(dir, 'x.db'), busyTimeoutMs: 10, walFrames: 0, onRunning() {} })).toThrow(/walFrames/);
  });
});
