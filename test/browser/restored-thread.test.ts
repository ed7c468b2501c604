import type { BrowserContext } from 'playwright-core';
import { expect, it } from 'vitest';
import { adminPost, browserSuite, describeBrowser, item, newThread as makeThread, messageTexts, openAs, say, shownMessage, threadButton } from './harness.js';

// The open thread a page restores from the tab (sessionStorage, `salon.room.<roomId>`): written as
// the page goes, not only after the save delay, and followed to its survivor when the room's list
// is cut and leaves it out.

/**
 * Holds every 250 ms timer of the pages of `context` (the room copy's save delay) for good: what
 * the tab keeps then is only what the page wrote as it went.
 */
async function holdSaveDelay(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const later = window.setTimeout.bind(window);
    window.setTimeout = ((fn: TimerHandler, ms?: number, ...args: unknown[]) => (ms === 250 ? 0 : later(fn, ms, ...args))) as typeof window.setTimeout;
  });
}

describeBrowser('the open thread kept in the tab', () => {
  const suite = browserSuite({ server: true });

  const post = <T>(path: string, body: unknown) => adminPost<T>(suite.server, path, body);
  const newThread = (roomId: string, title: string) => makeThread(suite.server, roomId, title);
  const savedThread = (key: string) => JSON.parse(sessionStorage.getItem(key) ?? '{}').threadId as string | undefined;

  it('keeps the thread opened just before a reload, and the one opened before the tab is hidden, with no wait for the save delay', async () => {
    const { store } = suite.server.app.salon;
    const room = 'news_fast_reload';
    await store.upsertItem(item(room, { title: 'Reloaded at once' }));
    await store.ensureMainThread(room);
    const side = await newThread(room, 'Quick look');
    await store.appendMessage({ roomId: room, threadId: side, author: { id: 'u_bob', name: 'Bob', kind: 'user' }, text: 'said in the quick thread' });
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      await holdSaveDelay(context);
      await page.goto(`${suite.server.url}/chat?id=${room}`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await threadButton(page, 'Quick look').click();
      await expect.poll(() => threadButton(page, 'Quick look').getAttribute('aria-current')).toBe('true');
      // Nothing wrote the copy yet: the save delay never ends in this page.
      expect(await page.evaluate(savedThread, `salon.room.${room}`)).not.toBe(side);

      await page.reload();
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await expect.poll(() => threadButton(page, 'Quick look').getAttribute('aria-current')).toBe('true');
      await expect.poll(() => messageTexts(page)).toEqual(['said in the quick thread']);

      // Back to the main thread, then the tab is hidden (a phone's browser may never run another line): written then.
      await threadButton(page, 'Main').click();
      await expect.poll(() => threadButton(page, 'Main').getAttribute('aria-current')).toBe('true');
      expect(await page.evaluate(savedThread, `salon.room.${room}`)).toBe(side);
      await page.evaluate(() => {
        Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
        document.dispatchEvent(new Event('visibilitychange'));
      });
      expect(await page.evaluate(savedThread, `salon.room.${room}`)).toBe('');
    } finally {
      await context.close();
    }
  });

  it('opens the survivor of a restored thread merged while away that the room’s cut list leaves out, and sends there', async () => {
    const { store } = suite.server.app.salon;
    const room = 'news_cut_list';
    await store.upsertItem(item(room, { title: 'A busy room' }));
    await store.ensureMainThread(room);
    const absorbed = await newThread(room, 'Old harbour');
    const survivor = await newThread(room, 'Harbour');
    await store.appendMessage({ roomId: room, threadId: survivor, author: { id: 'u_bob', name: 'Bob', kind: 'user' }, text: 'said in the harbour thread' });
    const { context, page } = await openAs(suite.browser, 'Ada');
    try {
      await page.goto(`${suite.server.url}/chat?id=${room}`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      await threadButton(page, 'Old harbour').click();
      await expect.poll(() => threadButton(page, 'Old harbour').getAttribute('aria-current')).toBe('true');
      await say(page, 'said in the old harbour thread');
      await expect.poll(() => shownMessage(page, 'said in the old harbour thread')).toMatchObject({ state: 'sent' });
      await expect.poll(() => page.evaluate(savedThread, `salon.room.${room}`)).toBe(absorbed);
      await page.goto(`${suite.server.url}/`);

      // While Ada is away the thread is merged, and 50 newer threads are archived: the list (the newest 50 archived) leaves it out.
      await post('/api/v1/threads/merge', { survivorId: survivor, absorbedId: absorbed });
      const newer: string[] = [];
      for (let i = 0; i < 50; i++) newer.push(await newThread(room, `Side ${i}`));
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: newer.map((id) => ({ id, status: 'archived' as const })) });

      await page.goto(`${suite.server.url}/chat?id=${room}`);
      await expect.poll(() => threadButton(page, 'Harbour').getAttribute('aria-current'), { timeout: 15_000 }).toBe('true');
      expect(await threadButton(page, 'Old harbour').count()).toBe(0);
      await expect.poll(() => messageTexts(page)).toEqual(['said in the harbour thread', 'said in the old harbour thread']);
      expect(await page.locator('[data-notice]').textContent()).toContain('“Old harbour” was merged into “Harbour”: this view follows it there.');

      await say(page, 'said after coming back');
      await expect.poll(() => shownMessage(page, 'said after coming back')).toMatchObject({ state: 'sent' });
      expect((await store.threadMessages(survivor, 100)).map((m) => m.text)).toEqual([
        'said in the harbour thread',
        'said in the old harbour thread',
        'said after coming back',
      ]);
    } finally {
      await context.close();
    }
  });
});
