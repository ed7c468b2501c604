/**
 * What a split may ask for: at most SPLIT_MAX_MESSAGES messages in a part and in all its parts
 * together, refused before the thread is read; and never every message of the thread it splits,
 * the main thread or another (docs/architecture.md, "A split never empties its thread").
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SPLIT_MAX_MESSAGES } from '../../src/protocol/threads.js';
import { joined, ROOM } from '../rooms/helpers.js';
import { call, GARDEN, threadsApp, threadWith, TRAINS, type Json } from './thread-helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of closers.splice(0).reverse()) await c();
});

const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `m_${from + i}`);

describe('a split naming too many messages', () => {
  it('is refused by the schema when one part names more than SPLIT_MAX_MESSAGES, before the thread is read', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Mixed', TRAINS);
    const read = vi.spyOn(a.salon.store, 'threadMessages');
    const body = await call(a, 'POST', `/api/v1/threads/${t.id}/split`, { parts: [{ title: 'Big', messageIds: ids(SPLIT_MAX_MESSAGES + 1) }] }, 400);
    expect(body.error.code).toBe('ERR_BAD_REQUEST');
    expect(body.error.message).toContain(`must NOT have more than ${SPLIT_MAX_MESSAGES} items`);
    expect(read).not.toHaveBeenCalled();
  });

  it('is refused with ERR_BAD_THREAD_OP when its parts together name more, before the thread is read', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Mixed', TRAINS);
    const read = vi.spyOn(a.salon.store, 'threadMessages');
    const half = SPLIT_MAX_MESSAGES / 2;
    const parts = [
      { title: 'One', messageIds: ids(half + 1) },
      { title: 'Two', messageIds: ids(half, half + 1) },
    ];
    const body = await call(a, 'POST', `/api/v1/threads/${t.id}/split`, { parts }, 400);
    expect(body.error).toEqual({
      code: 'ERR_BAD_THREAD_OP',
      message: `Cannot do that: a split moves at most ${SPLIT_MAX_MESSAGES} messages; its parts name ${SPLIT_MAX_MESSAGES + 1}`,
    });
    expect(read).not.toHaveBeenCalled();
    // The same parts a message short are not refused for their size (their ids are unknown).
    parts[1].messageIds.pop();
    expect((await call(a, 'POST', `/api/v1/threads/${t.id}/split`, { parts }, 400)).error.message).toContain('is not in thread');
  });
});

describe('a split that would empty its thread', () => {
  it('is refused for a thread that is not the main one, pointing to merge, changing nothing', async () => {
    const a = await threadsApp(closers);
    const t = await threadWith(a, ROOM, 'Mixed', [...TRAINS, ...GARDEN]);
    const parts = [
      { title: 'Trains', messageIds: t.messageIds.slice(0, 3) },
      { title: 'Garden', messageIds: t.messageIds.slice(3) },
    ];
    const body = await call(a, 'POST', `/api/v1/threads/${t.id}/split`, { parts }, 400);
    expect(body.error.code).toBe('ERR_BAD_THREAD_OP');
    expect(body.error.message).toContain('merge the thread into another instead');
    expect((await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads`)).threads).toHaveLength(2);
    expect((await call(a, 'GET', `/api/v1/threads/${t.id}`)).messages).toBe(6);
    // Leaving it one message, the same split is made.
    parts[1].messageIds.pop();
    const r = await call(a, 'POST', `/api/v1/threads/${t.id}/split`, { parts });
    expect(r.threads.map((c: Json) => c.title)).toEqual(['Trains', 'Garden']);
    expect((await call(a, 'GET', `/api/v1/threads/${t.id}/messages`)).messages.map((m: Json) => m.id)).toEqual([t.messageIds[5]]);
  });

  it('is refused for the main thread, through the API and a member’s /split', async () => {
    const a = await threadsApp(closers);
    const main = (await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads`)).threads[0];
    expect(main.main).toBe(true);
    const messages = TRAINS.map(([name, text], i) => ({ author: { name }, text, ts: new Date(Date.UTC(2026, 10, 1, 10, i)).toISOString() }));
    const { messageIds } = await call(a, 'POST', `/api/v1/rooms/${ROOM}/import`, { messages });
    const body = await call(a, 'POST', `/api/v1/threads/${main.id}/split`, { parts: [{ title: 'All', messageIds }] }, 400);
    expect(body.error).toEqual({ code: 'ERR_BAD_THREAD_OP', message: expect.stringContaining('every message out of the main thread') });

    const { client } = await joined(a, 'Ann');
    client.send({ type: 'say', text: `/split ${main.id} confirm titles=All msgs_0=${messageIds.join(',')}`, clientId: 's1' });
    expect(await client.next('error', (f) => f.clientId === 's1', 10_000)).toMatchObject({ code: 'ERR_BAD_THREAD_OP' });
    expect((await call(a, 'GET', `/api/v1/threads/${main.id}`)).messages).toBe(3);
    expect((await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads`)).threads).toHaveLength(1);
  });

  it('is made when the thread holds messages older than the newest SPLIT_MAX_MESSAGES it names', async () => {
    const a = await threadsApp(closers);
    const { store, threads } = a.salon;
    const t = await threads.create(ROOM, 'Long', 'admin');
    const author = { id: 'u_ann', name: 'Ann', kind: 'user' as const };
    const at = (i: number) => new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString();
    const stored = await store.appendMessages(
      Array.from({ length: SPLIT_MAX_MESSAGES + 1 }, (_, i) => ({ roomId: ROOM, threadId: t.id, author, text: `line ${i}`, ts: at(i) })),
    );
    const all = stored.map((s) => s.message.id);
    const r = await threads.split(t.id, [{ title: 'Newest', messageIds: all.slice(1) }], 'compaction', 'admin');
    expect(await store.countThreadMessages(r.threads[0].id)).toBe(SPLIT_MAX_MESSAGES);
    expect((await store.threadMessages(t.id, 10)).map((m) => m.id)).toEqual([all[0]]);
  });
});
