/**
 * A stranger probing for a member's private asks: a secret told in a private ask, in the main thread
 * and in a thread an admin made privileged, must not come back from any route an anonymous client, another
 * member or even the admin can read: search, asks (HTTP and socket, public and private), room and
 * thread listings, histories, split listings, metrics, and the welcome of a member joining after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, testApp } from '../helpers.js';
import { joined, type Client } from '../rooms/helpers.js';
import { item } from '../store/contract.js';

// The tails hold letters no hex id has, so a message's or an answer's UUID cannot match them by chance.
const SECRET = 'zqlockerkq4711';
const PRIVILEGED_SECRET = 'zqvaultwx9137';

describe('a member’s private asks, probed by strangers', () => {
  let t: Awaited<ReturnType<typeof testApp>>;
  let ann: Client;
  let threadIds: string[];
  let vault: string;
  let address = 0;
  const get = async (url: string, headers: Record<string, string> = {}) =>
    (await t.app.inject({ method: 'GET', url, headers, remoteAddress: `203.0.113.${++address}` })).body;

  beforeAll(async () => {
    t = await testApp({ ASK_LIMIT_USER: '1000', ASK_LIMIT_ROOM: '1000', ASK_LIMIT_IP: '1000' } as never, { roomOptions: { shutdownGraceMs: 100 } });
    await t.app.ready();
    await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
    ann = (await joined(t.app, 'Ann', 'news_1')).client;
    ann.send({ type: 'ask', text: `My locker code is ${SECRET}; is Rust 2.0 out?`, clientId: 'p1', private: true });
    expect((await ann.next('assistant.done', () => true, 10_000)).message.text).toBeTruthy();
    // A second thread, made privileged, and a private ask there. (A public ask's question is posted to
    // the room: only what the assistant remembers of it is Ann's alone.)
    const made = await t.app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/threads', headers: ADMIN, payload: { title: 'Vault' } });
    vault = made.json().thread?.id ?? made.json().id;
    expect(vault).toBeTruthy();
    const configured = await t.app.inject({ method: 'PUT', url: `/api/v1/threads/${vault}/config`, headers: ADMIN, payload: { privileged: true } });
    expect(configured.statusCode).toBe(200);
    ann.send({ type: 'ask', text: `Remember the vault word ${PRIVILEGED_SECRET}; is Rust 2.0 out?`, clientId: 'p2', threadId: vault, private: true });
    await ann.next('assistant.done', () => true, 10_000);
    await t.app.salon.memory.idle();
    threadIds = (await t.app.salon.threads.list('news_1', 50)).threads.map((x) => x.id);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is not read back by anonymous HTTP reads, nor by the admin’s', async () => {
    const urls = [
      `/api/v1/search?q=${encodeURIComponent(`locker code ${SECRET}`)}`,
      `/api/v1/search?q=${encodeURIComponent(`vault word ${PRIVILEGED_SECRET}`)}`,
      '/api/v1/rooms',
      '/api/v1/rooms/news_1',
      '/api/v1/rooms/news_1/messages',
      '/api/v1/rooms/news_1/threads',
      '/api/v1/content/news_1',
      '/metrics',
      '/readyz',
      ...threadIds.flatMap((id) => [`/api/v1/threads/${id}`, `/api/v1/threads/${id}/messages`, `/api/v1/threads/${id}/split`]),
    ];
    for (const url of urls) {
      for (const headers of [{}, ADMIN]) {
        const body = await get(url, headers);
        expect(body, url).not.toContain(SECRET);
        expect(body, url).not.toContain(PRIVILEGED_SECRET);
      }
    }
  });

  it('is not counted where anyone can read: the thread holding only a private exchange shows no memory', async () => {
    const detail = JSON.parse(await get(`/api/v1/threads/${vault}`));
    expect(detail.memory).toMatchObject({ chunks: 0, pending: 0 });
    // It is stored all the same, for Ann's later private asks.
    expect(await t.app.salon.store.countMemoryChunks(vault, 'all')).toBe(1);
  });

  it('is not told to an HTTP asker, whatever the thread', async () => {
    for (const threadId of [undefined, ...threadIds]) {
      for (const text of ['What is my locker code?', 'What is the vault word?', `Is the locker code ${SECRET.slice(0, 8)}?`]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/rooms/news_1/ask',
          payload: { text, ...(threadId ? { threadId } : {}) },
          remoteAddress: `198.51.100.${++address % 250}`,
        });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.body).not.toContain(SECRET.slice(8));
        expect(res.body).not.toContain(PRIVILEGED_SECRET);
      }
    }
  });

  it('is not shown to another member, in their welcome, their public asks or their private ones', async () => {
    const { client: bo, welcome } = await joined(t.app, 'Bo', 'news_1');
    expect(JSON.stringify(welcome)).not.toContain(SECRET);
    expect(JSON.stringify(welcome)).not.toContain(PRIVILEGED_SECRET);
    let n = 0;
    for (const threadId of threadIds) {
      for (const frame of [
        { type: 'ask', text: 'What is my locker code?', private: true },
        { type: 'ask', text: 'What is the vault word?', private: true },
        { type: 'say', text: '@ai What is the locker code?' },
        { type: 'say', text: '@ai What is the vault word?' },
      ]) {
        const clientId = `b${++n}`;
        const from = bo.frames.length;
        bo.send({ ...frame, clientId, threadId });
        await bo.next('assistant.done', () => true, 10_000);
        const seen = JSON.stringify(bo.frames.slice(from));
        expect(seen).not.toContain(SECRET);
        expect(seen).not.toContain(PRIVILEGED_SECRET);
      }
    }
    // Ann's own private ask still finds it: the probe asked the right questions.
    ann.send({ type: 'ask', text: 'What is my locker code?', clientId: 'p3', private: true });
    // (Bo's public answers reach Ann too: hers is the one that names the code, or none does in time.)
    expect((await ann.next('assistant.done', (f) => f.message.text.includes(SECRET), 10_000)).message.text).toContain(SECRET);
  });
});
