/**
 * SqliteStore.appendMessages writes a large batch (an import) in transactions of APPEND_SLICE_MS,
 * a turn of the event loop between them. No read of the room's or the thread's messages sees the
 * batch before its last transaction commits, live messages stored meanwhile follow all of it, a
 * failure keeps what was stored unread, and the same batch again stores the rest and makes all of
 * it readable (sqlite-unsettled.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { NewMessage } from '../../src/store/types.js';
import type { Message } from '../../src/protocol/messages.js';
import { withTurnsDue } from '../helpers.js';
import { createThread } from './new-thread.js';

const stores: SqliteStore[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const store of stores.splice(0)) await store.close();
});

async function opened(): Promise<{ store: SqliteStore; threadId: string }> {
  const store = new SqliteStore({ filename: ':memory:' });
  stores.push(store);
  return { store, threadId: (await store.ensureMainThread('news_1')).id };
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
async function readings(store: SqliteStore, threadId: string): Promise<Record<string, string[]>> {
  const texts = (ms: Message[]) => ms.map((m) => m.text);
  return {
    after: texts(await store.messagesAfter('news_1', 0, 100)),
    recent: texts(await store.recentMessages('news_1', 100)),
    before: texts(await store.messagesBefore('news_1', Number.MAX_SAFE_INTEGER, 100)),
    thread: texts(await store.threadMessages(threadId, 100)),
    chat: texts(await store.threadChat(threadId, 20)),
    threadAfter: texts(await store.threadMessagesAfter(threadId, 0, 100)),
  };
}

describe('SqliteStore.appendMessages', () => {
  it('is read by nobody before its last transaction, and a live message stored between two follows all of it', async () => {
    const { store, threadId } = await opened();
    await store.appendMessage(live(threadId, 'before'));
    // Read once before, so a kept tail of the thread's chat would be served stale after.
    await store.threadChat(threadId, 20);
    const batch = Array.from({ length: 6 }, (_, n) => said(threadId, n));
    const during: Record<string, string[]>[] = [];
    const counted: number[] = [];
    const appended = await withTurnsDue(async () => {
      const writing = store.appendMessages(batch);
      // Set once the batch has begun: runs only if the event loop turns before the batch is done.
      setImmediate(() => {
        void store.appendMessage(live(threadId)).then(async () => {
          during.push(await readings(store, threadId));
          counted.push(await store.countThreadMessages(threadId));
        });
      });
      return writing;
    });
    expect(appended.map((a) => a.duplicate)).toEqual(new Array(6).fill(false));
    // Between two of the batch's transactions: the live message was readable, none of the batch.
    expect(during).toHaveLength(1);
    for (const texts of Object.values(during[0])) expect(texts).toEqual(['before', 'live']);
    expect(counted).toEqual([2]);
    const all = ['before', ...batch.map((m) => m.text), 'live'];
    for (const texts of Object.values(await readings(store, threadId))) expect(texts).toEqual(all);
    expect(await store.countThreadMessages(threadId)).toBe(all.length);
    const seqs = (await store.messagesAfter('news_1', 0, 100)).map((m) => m.seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await store.lastSeq('news_1')).toBe(8);
  });

  it('keeps what a batch stored before a later transaction failed, unread, and the same batch again stores the rest and shows all of it once', async () => {
    const { store, threadId } = await opened();
    await store.appendMessage(said(threadId, 0));
    // The first is stored already (found again), the last names a thread that does not exist.
    const batch = [...Array.from({ length: 5 }, (_, n) => said(threadId, n)), { ...said(threadId, 9), threadId: 'thr_gone' }];
    const failed = await withTurnsDue(async () => {
      const writing = store.appendMessages(batch);
      setImmediate(() => void store.appendMessage(live(threadId)));
      return writing.then(
        () => null,
        (err: Error) => err,
      );
    });
    expect(failed).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
    // Message 0 was readable before the batch; what the batch stored is not.
    for (const texts of Object.values(await readings(store, threadId))) expect(texts).toEqual(['message 0', 'live']);
    expect(await store.countThreadMessages(threadId)).toBe(2);
    // Sent again without the bad message: nothing stored twice, and all of it readable now.
    const again = await withTurnsDue(() => store.appendMessages(batch.slice(0, 5)));
    expect(again.map((a) => a.duplicate)).toEqual(new Array(5).fill(true));
    const stored = await store.messagesAfter('news_1', 0, 100);
    expect(stored.map((m) => m.text)).toEqual(['message 0', 'message 1', 'message 2', 'message 3', 'message 4', 'live']);
    expect(stored.map((m) => m.id)).toEqual([...again.map((a) => a.message.id), stored[5].id]);
  });

  it('runs batches of one room one after another: one sent beside a batch that fails gets back the rows that batch kept, and shows them', async () => {
    const { store, threadId } = await opened();
    const batch = Array.from({ length: 4 }, (_, n) => said(threadId, n));
    const [failed, second] = await withTurnsDue(() =>
      Promise.all([
        store.appendMessages([...batch, { ...said(threadId, 9), threadId: 'thr_gone' }]).then(
          () => null,
          (err: Error) => err,
        ),
        store.appendMessages(batch),
      ]),
    );
    expect(failed).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
    // The second batch ran after the failed one, finding the rows it kept.
    expect(second.map((a) => a.duplicate)).toEqual([true, true, true, true]);
    const stored = await store.threadMessages(threadId, 10);
    expect(stored.map((m) => m.text)).toEqual(['message 0', 'message 1', 'message 2', 'message 3']);
    expect(stored.map((m) => m.id)).toEqual(second.map((a) => a.message.id));
  });

  it('gives back the seqs it took for messages it found stored, when no later message took one', async () => {
    const { store, threadId } = await opened();
    const batch = Array.from({ length: 6 }, (_, n) => said(threadId, n));
    await store.appendMessages(batch.slice(3));
    // Three found again, three stored, in several transactions.
    const appended = await withTurnsDue(() => store.appendMessages(batch));
    expect(appended.map((a) => a.duplicate)).toEqual([false, false, false, true, true, true]);
    expect(await store.lastSeq('news_1')).toBe(6);
    const { message } = await store.appendMessage(live(threadId));
    expect(message.seq).toBe(7);
  });

  it('keeps no unread range of a batch whose thread was deleted while it was written', async () => {
    const { store } = await opened();
    const side = await createThread(store, { id: 'thr_side', roomId: 'news_1', title: 'side' });
    const batch = Array.from({ length: 6 }, (_, n) => said(side.id, n));
    const failed = await withTurnsDue(async () => {
      const writing = store.appendMessages(batch);
      setImmediate(() => void store.deleteThread(side.id));
      return writing.then(
        () => null,
        (err: Error) => err,
      );
    });
    expect(failed).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
    expect(store.db.prepare('SELECT count(*) FROM unsettled_seqs').pluck().get()).toBe(0);
  });
});
