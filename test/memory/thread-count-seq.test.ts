/**
 * A thread's detail says at which room seq its message count was read, so the page can tell which
 * live messages the count holds already: a message stored while it was counted is not left out of
 * what the seq claims.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ROOM } from '../rooms/helpers.js';
import { call, threadsApp, threadWith, TRAINS } from './thread-helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('a thread detail’s count', () => {
  it('carries the room seq it was read at, read again when a message was stored while counting', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Night trains', TRAINS);
    const { store } = a.salon;
    const before = await store.lastSeq(ROOM);
    expect(await call(a, 'GET', `/api/v1/threads/${trains.id}`)).toMatchObject({ messages: 3, seq: before });

    // A message is stored in the thread while its messages are being counted (before the count reads them).
    const count = store.countThreadMessages.bind(store);
    const storeOne = () => store.appendMessage({ roomId: ROOM, threadId: trains.id, author: { id: 'u_cy', name: 'Cy', kind: 'user' }, text: 'One more.' });
    let storeWhen: 'before' | 'after' | '' = 'before';
    store.countThreadMessages = async (id: string) => {
      const when = storeWhen;
      storeWhen = '';
      if (when === 'before') await storeOne();
      const n = await count(id);
      if (when === 'after') await storeOne();
      return n;
    };
    try {
      // The seq names the message the count holds: its echo, at that seq, is not counted again.
      expect(await call(a, 'GET', `/api/v1/threads/${trains.id}`)).toMatchObject({ messages: 4, seq: before + 1 });
      // Stored just after the count read the messages: a seq read then would claim a message the count lacks.
      storeWhen = 'after';
      expect(await call(a, 'GET', `/api/v1/threads/${trains.id}`)).toMatchObject({ messages: 5, seq: before + 2 });
    } finally {
      store.countThreadMessages = count;
    }
  });
});
