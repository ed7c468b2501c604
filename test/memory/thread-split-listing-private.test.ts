/**
 * The split listing (the admin's `GET /api/v1/threads/:id/split` and a member's `/split <id>`)
 * shows the first 200 characters of each message: a private ask's question and answer, and what
 * the assistant remembers of it for its asker alone, must not be among them.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { item, joined, ROOM } from '../rooms/helpers.js';
import { call, threadsApp, type Json } from './thread-helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const SECRET = 'zqlocker';

it('leaves a private ask and its private memory out of the split listing, for the admin and for members', async () => {
  const a = await threadsApp(closers);
  const { store, memory } = a.salon;
  await a.salon.ingest.pipeline.put(item(ROOM, { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
  const ann = (await joined(a, 'Ann')).client;
  const bo = (await joined(a, 'Bo')).client;
  ann.send({ type: 'say', text: 'Is Rust 2.0 out yet?', clientId: 'p0' });
  await ann.next('message', (f) => f.message.clientId === 'p0');
  ann.send({ type: 'ask', text: `My locker code is ${SECRET}; is Rust 2.0 out?`, clientId: 'p1', private: true });
  await ann.next('assistant.done', () => true, 10_000);
  const main = (await call(a, 'GET', `/api/v1/rooms/${ROOM}/threads`)).threads[0];
  // The exchange is remembered, for Ann alone: the secret is in the thread's memory.
  await vi.waitFor(
    async () => {
      await memory.idle();
      const remembered = await store.scanThreadMemory(main.id, 0, 100);
      expect(remembered.filter((c) => c.privileged && c.text.includes(SECRET))).toHaveLength(1);
    },
    { timeout: 10_000 },
  );

  const listing = await call(a, 'GET', `/api/v1/threads/${main.id}/split`);
  expect(listing.messages.map((m: Json) => m.text)).toEqual(['Is Rust 2.0 out yet?']);
  expect(listing.total).toBe(1);
  expect(JSON.stringify(listing)).not.toContain(SECRET);

  bo.send({ type: 'say', text: `/split ${main.id}`, clientId: 's1' });
  const reply = (await bo.next('message', (f) => f.message.clientId === 's1', 10_000)).message.text as string;
  expect(reply).toContain('Is Rust 2.0 out yet?');
  expect(reply).not.toContain(SECRET);
  expect(reply).not.toContain('locker');
});
