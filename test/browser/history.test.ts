/** Paging back through a room's history in the browser: "Load earlier messages" until the first. */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { describeBrowser, ensureClientBuilt, item, launchBrowser, messageTexts, openAs, startServer, type TestServer } from './harness.js';

describeBrowser('room history', () => {
  let browser: Browser;
  let server: TestServer;
  let cleanup: () => void;

  beforeAll(async () => {
    await ensureClientBuilt();
    const dir = tempDir();
    cleanup = dir.cleanup;
    browser = await launchBrowser();
    server = await startServer(dir.dir);
    const { store } = server.app.salon;
    await store.upsertItem(item('news_hist', { title: 'A long discussion' }));
    const thread = await store.ensureMainThread('news_hist');
    for (let i = 1; i <= 75; i++)
      await store.appendMessage({ roomId: 'news_hist', threadId: thread.id, author: { id: 'u_old', name: 'Old', kind: 'user' }, text: `old ${i}` });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    cleanup?.();
  });

  it('shows the latest messages and loads earlier ones with a keyboard-reachable button until the first', async () => {
    const { context, page } = await openAs(browser, 'Reader');
    try {
      await page.goto(`${server.url}/chat?id=news_hist`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('old 75');
      expect((await messageTexts(page)).length).toBeLessThan(75);
      const older = page.getByRole('button', { name: 'Load earlier messages' });
      for (let clicks = 0; clicks < 5 && (await messageTexts(page)).length < 75; clicks++) {
        const shown = (await messageTexts(page)).length;
        await older.waitFor();
        await older.focus();
        await page.keyboard.press('Enter');
        await expect.poll(async () => (await messageTexts(page)).length).toBeGreaterThan(shown);
      }
      await expect.poll(() => messageTexts(page)).toEqual(Array.from({ length: 75 }, (_, i) => `old ${i + 1}`));
      expect(await older.count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});
