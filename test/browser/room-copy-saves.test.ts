/**
 * The room's copy in sessionStorage (room-memory.ts) is written again only when what it holds
 * changed: presence, typing and an answer being written are not in it, and used to rewrite it.
 */
import type { Page, WebSocketRoute } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, messageTexts, openAs } from './harness.js';

const ROOM = 'news_copy';
const BOB = { id: 'u_bob', name: 'Bob' };

/** Records in the page every value written to the room's copy, before any page script runs. */
async function recordCopyWrites(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript((key) => {
    const writes: string[] = [];
    (window as unknown as { __copyWrites: string[] }).__copyWrites = writes;
    const setItem = Storage.prototype.setItem;
    Storage.prototype.setItem = function (this: Storage, k: string, value: string) {
      if (this === sessionStorage && k === key) writes.push(value);
      return setItem.call(this, k, value);
    };
  }, `salon.room.${ROOM}`);
  return () => page.evaluate(() => [...(window as unknown as { __copyWrites: string[] }).__copyWrites]);
}

/** Routes the page's room socket to the server; the test may also speak to the page as the server. */
async function routed(page: Page): Promise<(frame: object) => void> {
  let route: WebSocketRoute | undefined;
  await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
    route = ws;
    const server = ws.connectToServer();
    ws.onMessage((m) => server.send(m));
    server.onMessage((m) => ws.send(m));
  });
  return (frame) => route!.send(JSON.stringify(frame));
}

describeBrowser("the room's copy in sessionStorage", () => {
  const suite = browserSuite({ server: true });

  it('is not written again for presence, typing or an answer in progress, and is for a new message', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item(ROOM, { title: 'Copies' }));
    const main = await store.ensureMainThread(ROOM);
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      const writes = await recordCopyWrites(page);
      const send = await routed(page);
      await page.clock.install();
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await page.clock.runFor(1_000);
      const joined = (await writes()).length;
      // The welcome named the main thread: the copy holds it.
      expect(joined).toBeGreaterThan(0);

      send({ type: 'presence', members: [BOB], count: 2, joined: BOB });
      send({ type: 'typing', user: BOB, active: true });
      send({ type: 'assistant.progress', id: 'ans_bob', stage: 'writing' });
      send({ type: 'assistant.delta', id: 'ans_bob', text: 'An answer on its way' });
      await page.locator('salon-member-list .count[data-count="2"]').waitFor({ state: 'attached' });
      await page.locator('salon-typing-indicator', { hasText: 'Bob is typing' }).waitFor();
      await page.locator('salon-message-item[data-answer="ans_bob"]').waitFor();
      await page.clock.runFor(1_000);
      expect((await writes()).length).toBe(joined);

      const message = {
        id: 'm_bob',
        seq: 1,
        roomId: ROOM,
        threadId: main.id,
        author: { ...BOB, kind: 'user' },
        text: 'Bob says hello',
        ts: new Date().toISOString(),
      };
      send({ type: 'message', message });
      await expect.poll(() => messageTexts(page)).toContain('Bob says hello');
      await page.clock.runFor(1_000);
      const after = await writes();
      expect(after).toHaveLength(joined + 1);
      expect(after.at(-1)).toContain('Bob says hello');
    } finally {
      await context.close();
    }
  });
});
