/**
 * The HTTP ask and import name a thread as a socket's `say` does, and are refused with the codes
 * the store and the socket give for it: ERR_THREAD_ARCHIVED (409) for a thread leading to no active
 * thread, ERR_THREAD_NOT_FOUND (404) for one that is gone; a merged thread leads to its survivor.
 * Run on SQLite and, where it answers, PostgreSQL.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { MAX_MERGE_HOPS } from '../../src/store/thread-survivor.js';
import { ADMIN } from '../helpers.js';
import { describePostgres, freshSchema } from '../store/postgres-harness.js';
import { roomsApp } from './helpers.js';
import { createThread } from '../store/new-thread.js';

const ROOM = 'news_1';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const ask = (app: FastifyInstance, threadId: string) =>
  app.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/ask`, payload: { text: 'anyone there?', threadId } });
const importInto = (app: FastifyInstance, threadId: string) =>
  app.inject({
    method: 'POST',
    url: `/api/v1/rooms/${ROOM}/import`,
    headers: ADMIN,
    payload: { threadId, messages: [{ author: { name: 'Ann' }, text: 'from the export', ts: '2023-05-08T13:00:00.000Z' }] },
  });

/** A thread archived without a merge, a chain merged on past MAX_MERGE_HOPS, and a deleted thread. */
async function archivedThreads(app: FastifyInstance) {
  const { store } = app.salon;
  const main = (await store.ensureMainThread(ROOM)).id;
  const at = new Date().toISOString();
  // No thread operation archives a thread without merging it; only a write to the store can.
  await createThread(store, { id: 'thr_closed', roomId: ROOM, title: 'Closed' }, 'admin');
  await store.applyThreadChange({ at, expect: [], updateThreads: [{ id: 'thr_closed', status: 'archived' }] });
  const chain = Array.from({ length: MAX_MERGE_HOPS + 1 }, (_, i) => `thr_far${i}`);
  await store.applyThreadChange({ at, expect: [], createThreads: chain.map((id) => ({ id, roomId: ROOM, title: id })) });
  for (const [i, id] of chain.entries())
    await store.applyThreadChange({ at, expect: [], updateThreads: [{ id, status: 'archived', mergedInto: chain[i + 1] ?? main }] });
  await createThread(store, { id: 'thr_gone', roomId: ROOM, title: 'Gone' }, 'admin');
  await store.deleteThread('thr_gone');
  return { main, closed: 'thr_closed', far: chain[0], near: chain[1], gone: 'thr_gone' };
}

/**
 * A thread `thr_side` of ROOM, merged into the room's main thread just before the store's next
 * `write` runs: after the route looked the thread up, before what it writes reaches the store.
 */
async function mergedBeforeNext(app: FastifyInstance, write: 'appendMessage' | 'appendMessages') {
  const { store } = app.salon;
  const main = (await store.ensureMainThread(ROOM)).id;
  await createThread(store, { id: 'thr_side', roomId: ROOM, title: 'Side' }, 'admin');
  const original = (store[write] as (...args: unknown[]) => Promise<unknown>).bind(store);
  const merged = vi.spyOn(store, write).mockImplementationOnce((async (...args: unknown[]) => {
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: 'thr_side', status: 'archived', mergedInto: main }] });
    return original(...args);
  }) as never);
  return { main, merged };
}

function suite(open: () => Promise<FastifyInstance>) {
  it('refuses an ask naming a thread that leads to no active thread with ERR_THREAD_ARCHIVED, and a gone one with ERR_THREAD_NOT_FOUND', async () => {
    const app = await open();
    const t = await archivedThreads(app);
    for (const threadId of [t.closed, t.far]) {
      const res = await ask(app, threadId);
      expect([res.statusCode, res.json().error.code], threadId).toEqual([409, 'ERR_THREAD_ARCHIVED']);
    }
    const gone = await ask(app, t.gone);
    expect([gone.statusCode, gone.json().error.code]).toEqual([404, 'ERR_THREAD_NOT_FOUND']);
    // Nothing was posted in the room for any of them.
    expect(await app.salon.store.lastSeq(ROOM)).toBe(0);
  });

  it('asks the assistant in the thread the question was filed in, when a merge commits between the lookup and the post', async () => {
    const app = await open();
    // The merge lands after the route looked the thread up and before it posts the question.
    const { main, merged } = await mergedBeforeNext(app, 'appendMessage');
    const asked = vi.spyOn(app.salon.assistant, 'ask');
    const res = await ask(app, 'thr_side');
    expect(res.statusCode, res.body).toBe(200);
    expect(merged).toHaveBeenCalled();
    // The question went to the survivor, so the answer searches and remembers the survivor's thread.
    expect(asked.mock.calls[0][0].threadId).toBe(main);
    expect(res.json().message.threadId).toBe(main);
  });

  it('gives an import the thread its messages were filed in, with their memory, when a merge commits between the lookup and the write', async () => {
    const app = await open();
    const { store, memory } = app.salon;
    const { main, merged } = await mergedBeforeNext(app, 'appendMessages');
    const res = await importInto(app, 'thr_side');
    expect(res.statusCode, res.body).toBe(200);
    expect(merged).toHaveBeenCalled();
    expect(res.json().threadId).toBe(main);
    await memory.idle();
    expect(await store.countThreadMessages(main)).toBe(1);
    // The import's last window was closed in the thread that holds its messages.
    expect(await memory.stats(main)).toEqual({ chunks: 1, pending: 0 });
  });

  it('stores nothing new when an import a merge raced is run again, into the survivor or the absorbed thread', async () => {
    const app = await open();
    const { store } = app.salon;
    const { main, merged } = await mergedBeforeNext(app, 'appendMessages');
    const first = await importInto(app, 'thr_side');
    expect(first.statusCode, first.body).toBe(200);
    expect(merged).toHaveBeenCalled();
    const lastSeq = await store.lastSeq(ROOM);
    // Its messages were filed in the survivor with keys naming the thread the import looked up.
    for (const threadId of [main, 'thr_side']) {
      const again = await importInto(app, threadId);
      expect(again.json(), threadId).toEqual({ ...first.json(), stored: 0 });
    }
    expect(await store.lastSeq(ROOM)).toBe(lastSeq);
    expect(await store.countThreadMessages(main)).toBe(1);
  });

  it('refuses an import into a thread that leads to no active thread with ERR_THREAD_ARCHIVED, and files one into a merged thread under its survivor', async () => {
    const app = await open();
    const t = await archivedThreads(app);
    for (const threadId of [t.closed, t.far]) {
      const res = await importInto(app, threadId);
      expect([res.statusCode, res.json().error.code], threadId).toEqual([409, 'ERR_THREAD_ARCHIVED']);
    }
    const gone = await importInto(app, t.gone);
    expect([gone.statusCode, gone.json().error.code]).toEqual([404, 'ERR_THREAD_NOT_FOUND']);
    expect(await app.salon.store.lastSeq(ROOM)).toBe(0);
    const near = await importInto(app, t.near);
    expect(near.statusCode, near.body).toBe(200);
    expect(near.json().threadId).toBe(t.main);
    await app.salon.memory.idle();
    expect(await app.salon.store.countThreadMessages(t.main)).toBe(1);
  });
}

describe('thread targets of the HTTP ask and import (SQLite)', () => {
  suite(async () => {
    const t = await roomsApp();
    closers.push(t.close);
    return t.app;
  });
});

describePostgres('thread targets of the HTTP ask and import (PostgreSQL)', () => {
  suite(async () => {
    const schema = await freshSchema();
    closers.push(schema.drop);
    const t = await roomsApp({ DATABASE_URL: schema.url });
    closers.push(t.close);
    return t.app;
  });
});
