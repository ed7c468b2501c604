/**
 * PostgresStore.appendMessages writes a batch of more than APPEND_SLICE_MESSAGES (an import) in
 * several transactions: a live message of the room no longer waits for all of it (the batch held
 * the room's seq row lock throughout: 4.3 s behind 5,000 messages), no read of the room's or the
 * thread's messages sees the batch before its last transaction, live messages stored meanwhile
 * follow all of it, and a failure keeps what was stored unread until the same batch again
 * (postgres-unsettled.ts).
 */
import { afterEach, expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { APPEND_SLICE_MESSAGES } from '../../src/store/postgres-unsettled.js';
import type { NewMessage } from '../../src/store/types.js';
import { adminQuery, describePostgres, dropSchema, POSTGRES_URL, schemaName } from './postgres-harness.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function opened(): Promise<{ store: PostgresStore; schema: string; threadId: string }> {
  const schema = schemaName();
  const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
  cleanups.push(
    () => dropSchema(schema),
    () => store.close(),
  );
  return { store, schema, threadId: (await store.ensureMainThread('news_1')).id };
}

const said = (threadId: string, n: number): NewMessage => ({
  roomId: 'news_1',
  threadId,
  author: { id: 'imp_ann', name: 'Ann', kind: 'user' },
  text: `message ${n}`,
  clientId: `import_${n}`,
});

const live = (threadId: string, text = 'live'): NewMessage => ({ roomId: 'news_1', threadId, author: { id: 'u_bo', name: 'Bo', kind: 'user' }, text });

/** The texts every read of the room's and the thread's messages gives. */
async function readings(store: PostgresStore, threadId: string): Promise<Record<string, string[]>> {
  const texts = (ms: Message[]) => ms.map((m) => m.text);
  const n = 10_000;
  return {
    after: texts(await store.messagesAfter('news_1', 0, n)),
    recent: texts(await store.recentMessages('news_1', n)),
    before: texts(await store.messagesBefore('news_1', Number.MAX_SAFE_INTEGER, n)),
    thread: texts(await store.threadMessages(threadId, n)),
    chat: texts(await store.threadChat(threadId, n)),
    threadAfter: texts(await store.threadMessagesAfter(threadId, 0, n)),
  };
}

/** Resolves once the store committed a row of the batch (messages with an `import_` clientId). */
async function someCommitted(schema: string): Promise<void> {
  for (;;) {
    const { rows } = await adminQuery(`SELECT count(*)::int AS n FROM ${schema}.messages WHERE client_id LIKE 'import_%'`);
    if (rows[0].n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describePostgres('PostgresStore.appendMessages in slices', () => {
  it('is read by nobody before its last transaction, and a live message stored meanwhile does not wait for it and follows all of it', async () => {
    const { store, schema, threadId } = await opened();
    await store.appendMessage(live(threadId, 'before'));
    const n = APPEND_SLICE_MESSAGES * 4;
    const batch = Array.from({ length: n }, (_, i) => said(threadId, i));
    let done = false;
    const writing = store.appendMessages(batch).finally(() => (done = true));
    await someCommitted(schema);
    await store.appendMessage(live(threadId));
    const during = await readings(store, threadId);
    const countedDuring = await store.countThreadMessages(threadId);
    const storedBeforeTheBatchEnded = !done;
    const appended = await writing;
    expect(storedBeforeTheBatchEnded).toBe(true);
    for (const texts of Object.values(during)) expect(texts).toEqual(['before', 'live']);
    expect(countedDuring).toBe(2);
    expect(appended.map((a) => a.duplicate)).toEqual(new Array(n).fill(false));
    const all = ['before', ...batch.map((m) => m.text), 'live'];
    for (const texts of Object.values(await readings(store, threadId))) expect(texts).toEqual(all);
    expect(await store.countThreadMessages(threadId)).toBe(all.length);
    const seqs = (await store.messagesAfter('news_1', 0, 10_000)).map((m) => m.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it('keeps what a failed batch stored, unread, and the same batch again stores the rest and shows all of it', async () => {
    const { store, threadId } = await opened();
    const n = APPEND_SLICE_MESSAGES * 2;
    const batch = Array.from({ length: n }, (_, i) => said(threadId, i));
    const failed = await store.appendMessages([...batch, { ...said(threadId, n), threadId: 'thr_gone' }]).then(
      () => null,
      (err: Error) => err,
    );
    expect(failed).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
    await store.appendMessage(live(threadId));
    for (const texts of Object.values(await readings(store, threadId))) expect(texts).toEqual(['live']);
    expect(await store.countThreadMessages(threadId)).toBe(1);
    // Listed for an operator to see (GET /api/v1/rooms/:id, salon import) until the same batch runs again.
    expect(await store.unsettledSeqs('news_1')).toEqual([{ fromSeq: 1, toSeq: n + 1, startedAt: expect.any(String) }]);
    const again = await store.appendMessages(batch);
    expect(again.every((a) => a.duplicate)).toBe(true);
    expect(await store.unsettledSeqs('news_1')).toEqual([]);
    const stored = await store.messagesAfter('news_1', 0, 10_000);
    expect(stored.map((m) => m.text)).toEqual([...batch.map((m) => m.text), 'live']);
    expect(stored.slice(0, n).map((m) => m.id)).toEqual(again.map((a) => a.message.id));
  });

  it('gives back the seqs it took for messages it found stored, when no later message took one', async () => {
    const { store, threadId } = await opened();
    const batch = Array.from({ length: APPEND_SLICE_MESSAGES + 10 }, (_, i) => said(threadId, i));
    await store.appendMessages(batch.slice(0, 10));
    const appended = await store.appendMessages(batch);
    expect(appended.filter((a) => a.duplicate)).toHaveLength(10);
    expect(await store.lastSeq('news_1')).toBe(batch.length);
    const { message } = await store.appendMessage(live(threadId));
    expect(message.seq).toBe(batch.length + 1);
  });
});
