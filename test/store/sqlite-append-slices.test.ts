/**
 * SqliteStore.appendMessages writes a large batch (an import) in transactions of APPEND_SLICE_MS,
 * a turn of the event loop between them; a failure keeps what was stored (readers may have seen it),
 * and the same batch again stores the rest.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { NewMessage } from '../../src/store/types.js';
import { withTurnsDue } from '../helpers.js';

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

describe('SqliteStore.appendMessages', () => {
  it('lets other work run between its transactions: a live message is stored while a batch is', async () => {
    const { store, threadId } = await opened();
    const batch = Array.from({ length: 6 }, (_, n) => said(threadId, n));
    const seen: number[] = [];
    const appended = await withTurnsDue(async () => {
      const writing = store.appendMessages(batch);
      // Set once the batch has begun: runs only if the event loop turns before the batch is done.
      setImmediate(() => {
        void store.appendMessage({ roomId: 'news_1', threadId, author: { id: 'u_bo', name: 'Bo', kind: 'user' }, text: 'live' });
        void store.lastSeq('news_1').then((seq) => seen.push(seq));
      });
      return writing;
    });
    expect(appended.map((a) => a.duplicate)).toEqual(new Array(6).fill(false));
    const stored = await store.threadMessages(threadId, 10);
    expect(stored.map((m) => m.text)).toContain('live');
    // The live message went in between two of the batch's transactions.
    expect(stored.findIndex((m) => m.text === 'live')).toBeGreaterThan(0);
    expect(stored.findIndex((m) => m.text === 'live')).toBeLessThan(6);
    expect(seen).toHaveLength(1);
  });

  it('keeps what a batch stored before a later transaction failed, and the same batch again stores the rest once', async () => {
    const { store, threadId } = await opened();
    await store.appendMessage(said(threadId, 0));
    // The first is stored already (found again), the last names a thread that does not exist.
    const batch = [...Array.from({ length: 5 }, (_, n) => said(threadId, n)), { ...said(threadId, 9), threadId: 'thr_gone' }];
    const failed = await withTurnsDue(async () => {
      const writing = store.appendMessages(batch);
      setImmediate(() => void store.appendMessage({ roomId: 'news_1', threadId, author: { id: 'u_bo', name: 'Bo', kind: 'user' }, text: 'live' }));
      return writing.then(
        () => null,
        (err: Error) => err,
      );
    });
    expect(failed).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
    const kept = (await store.threadMessages(threadId, 10)).map((m) => m.text);
    expect(kept.filter((t) => t !== 'live')).toEqual(['message 0', 'message 1', 'message 2', 'message 3', 'message 4']);
    expect(kept).toContain('live');
    // Sent again without the bad message: nothing stored twice.
    const again = await withTurnsDue(() => store.appendMessages(batch.slice(0, 5)));
    expect(again.map((a) => a.duplicate)).toEqual(new Array(5).fill(true));
    expect(await store.threadMessages(threadId, 10)).toHaveLength(6);
  });

  it('runs batches of one room one after another: one sent beside a batch that fails gets back the rows that batch kept', async () => {
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
});
