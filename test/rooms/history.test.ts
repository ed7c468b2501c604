/**
 * Bounded replay: a welcome never carries more history than fits the socket's send limit, and the
 * rest is paged with GET /api/v1/rooms/:id/messages?before=.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_REPLAY_MAX_BYTES } from '../../src/rooms/options.js';
import { ROOM, connect, listen, roomsApp } from './helpers.js';

type Started = Awaited<ReturnType<typeof roomsApp>>;
const running: Started[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
});

const BIG = '€'.repeat(3_900); // ~11.7 KB of UTF-8 per message

async function roomWith(messages: number) {
  const started = await roomsApp();
  running.push(started);
  const { store } = started.app.salon;
  const thread = await store.ensureMainThread(ROOM);
  for (let i = 1; i <= messages; i++)
    await store.appendMessage({ roomId: ROOM, threadId: thread.id, author: { id: 'u_x', name: 'X', kind: 'user' }, text: `${i} ${BIG}` });
  return started;
}

describe('bounded replay', () => {
  it('cuts a long replay to the newest messages that fit, marks it truncated, and pages back to the first', async () => {
    const { app } = await roomWith(300);
    const url = await listen(app);
    const client = await connect(url());
    let welcomeBytes = 0;
    client.ws.on('message', (data) => {
      const text = String(data);
      if (text.startsWith('{"type":"welcome"')) welcomeBytes = Buffer.byteLength(text);
    });
    const welcome = await client.hello('Back', { lastSeq: 0 });
    expect(welcome.truncated).toBe(true);
    expect(welcomeBytes).toBeLessThan(DEFAULT_REPLAY_MAX_BYTES + 4_096);
    const seqs: number[] = welcome.history.map((m: { seq: number }) => m.seq);
    expect(seqs.at(-1)).toBe(300);
    expect(seqs.length).toBeLessThan(300);
    // Page back until the first message: every seq exactly once.
    let before = seqs[0];
    const all = [...seqs];
    for (;;) {
      const res = await app.inject({ url: `/api/v1/rooms/${ROOM}/messages?before=${before}&limit=100` });
      expect(res.statusCode).toBe(200);
      const page = res.json() as { messages: { seq: number }[]; hasMore: boolean };
      all.unshift(...page.messages.map((m) => m.seq));
      if (!page.hasMore) break;
      before = page.messages[0].seq;
    }
    expect(all).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
  });

  it('reads from the store about what the welcome can carry, not every missed message', async () => {
    const { app } = await roomWith(600);
    const url = await listen(app);
    await (await connect(url())).hello('Here');
    // Every message the store hands out from now on is counted.
    const store = app.salon.store as unknown as Record<string, (...args: unknown[]) => Promise<unknown[]>>;
    const names = ['messagesBefore', 'messagesAfter', 'recentMessages'];
    let read = 0;
    for (const name of names) {
      const original = store[name];
      store[name] = async (...args) => {
        const out = await original.apply(store, args);
        read += out.length;
        return out;
      };
    }
    try {
      const welcome = await (await connect(url())).hello('Back', { lastSeq: 1 });
      expect(welcome.truncated).toBe(true);
      const seqs: number[] = welcome.history.map((m: { seq: number }) => m.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => 601 - seqs.length + i));
      // 22 messages of ~11.7 KB fit in 256 KiB; the replay read all 500 it could replay (5.9 MB).
      expect(read).toBeGreaterThanOrEqual(seqs.length);
      expect(read).toBeLessThanOrEqual(2 * seqs.length + 32);
    } finally {
      for (const name of names) delete store[name];
    }
  });

  it('gives small replays whole', async () => {
    const { app } = await roomWith(5);
    const url = await listen(app);
    const welcome = await (await connect(url())).hello('Back', { lastSeq: 2 });
    expect(welcome.history.map((m: { seq: number }) => m.seq)).toEqual([3, 4, 5]);
    expect(welcome.truncated).toBeUndefined();
  });

  it('answers bad pages with ERR_BAD_REQUEST and unknown rooms with ERR_ROOM_NOT_FOUND', async () => {
    const { app } = await roomWith(3);
    const latest = (await app.inject({ url: `/api/v1/rooms/${ROOM}/messages` })).json();
    expect(latest.messages.map((m: { seq: number }) => m.seq)).toEqual([1, 2, 3]);
    expect(latest.hasMore).toBe(false);
    for (const q of ['before=0', 'before=x', 'limit=0', 'limit=101', 'other=1']) {
      const res = await app.inject({ url: `/api/v1/rooms/${ROOM}/messages?${q}` });
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.code, q).toBe('ERR_BAD_REQUEST');
    }
    const missing = await app.inject({ url: '/api/v1/rooms/news_missing/messages' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('ERR_ROOM_NOT_FOUND');
  });
});
