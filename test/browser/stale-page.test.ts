/**
 * A page of older messages asked for before a welcome replaced the room's log (a cut catch-up, a
 * wiped store) is dropped when it comes: put into the new log, it stood above a stretch of messages
 * never loaded, and paging back went on below it, so the stretch was never shown.
 */
import type { Page, Route } from 'playwright-core';
import { expect, it } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { browserSuite, describeBrowser, item, messageTexts, openAs } from './harness.js';
import { routeRewritingWelcomes } from './welcome-rewrite.js';

/** The page's list, its updates done after the next frames. */
const settled = (page: Page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

describeBrowser('a page of older messages asked for before the log was replaced', () => {
  const suite = browserSuite({ server: true });

  it('is dropped when it comes, and paging back starts from the new history', async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_stale', { title: 'Stale pages' }));
    const thread = await store.ensureMainThread('news_stale');
    const old: Message[] = [];
    for (let i = 1; i <= 45; i++) {
      const { message } = await store.appendMessage({
        roomId: 'news_stale',
        threadId: thread.id,
        author: { id: 'u_old', name: 'Old', kind: 'user' },
        text: `old ${i}`,
      });
      old.push(message);
    }
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      const socket = await routeRewritingWelcomes(page);
      const held: Route[] = [];
      let hold = true;
      await page.route(/\/api\/v1\/threads\/[^/]+\/messages/, (route) => (hold ? void held.push(route) : route.continue()));
      await page.goto(`${suite.server.url}/chat?id=news_stale`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('old 45');
      const first = (await messageTexts(page))[0];

      // The member asks for earlier messages; before they come, a cut catch-up replaces the log.
      await page.getByRole('button', { name: 'Load earlier messages' }).click();
      await expect.poll(() => held.length).toBe(1);
      const newest = old.slice(39);
      await socket.rejoin((w) => Object.assign(w, { truncated: true, history: newest }));
      await expect.poll(() => messageTexts(page)).toEqual(newest.map((m) => m.text));

      // The page asked for before the rejoin comes now: the messages before `first`.
      hold = false;
      const answered = page.waitForResponse(/\/api\/v1\/threads\/[^/]+\/messages/);
      await held[0].continue();
      await answered;
      await settled(page);
      expect(await messageTexts(page)).toEqual(newest.map((m) => m.text));
      expect(first).not.toBe('old 1');

      // Paging back goes on from the new history: nothing between is skipped.
      await page.getByRole('button', { name: 'Load earlier messages' }).click();
      await expect.poll(() => messageTexts(page)).toEqual(old.slice(Math.max(0, 39 - 50)).map((m) => m.text));
    } finally {
      await context.close();
    }
  });
});
