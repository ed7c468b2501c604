/** Paging back through a room's history in the browser: "Load earlier messages" until the first. */
import { beforeAll, expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, messageTexts, openAs } from './harness.js';

describeBrowser('room history', () => {
  const suite = browserSuite({ server: true });

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item('news_hist', { title: 'A long discussion' }));
    const thread = await store.ensureMainThread('news_hist');
    for (let i = 1; i <= 75; i++)
      await store.appendMessage({ roomId: 'news_hist', threadId: thread.id, author: { id: 'u_old', name: 'Old', kind: 'user' }, text: `old ${i}` });
  });

  it('shows the latest messages and loads earlier ones with a keyboard-reachable button until the first', async () => {
    const { context, page } = await openAs(suite.browser, 'Reader');
    try {
      await page.goto(`${suite.server.url}/chat?id=news_hist`);
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
