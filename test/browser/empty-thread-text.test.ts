/** What an empty thread suggests: a topic room's AI is asked about its topic, an item room's about its item. */
import { beforeAll, expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, openAs } from './harness.js';

describeBrowser('an empty thread', () => {
  const suite = browserSuite({ server: true });

  beforeAll(async () => {
    await suite.server.app.salon.store.upsertItem(item('news_empty', { title: 'Nothing said yet' }));
  });

  it('suggests asking the AI about the topic in a topic room, and about the item in an item room', async () => {
    const { context, page } = await openAs(suite.browser, 'Ivo');
    try {
      const empty = page.locator('salon-message-list p.empty');
      await page.goto(`${suite.server.url}/chat?topic=tech`);
      await expect.poll(() => page.locator('salon-room-header h1').textContent()).toBe('Topic: Tech');
      await expect.poll(() => empty.textContent()).toBe('No messages yet. Say hello, or ask the AI about this topic and its recent items.');

      await page.goto(`${suite.server.url}/chat?id=news_empty`);
      await expect.poll(() => page.locator('salon-room-header h1').textContent()).toBe('Nothing said yet');
      await expect.poll(() => empty.textContent()).toBe('No messages yet. Say hello, or ask the AI about this item.');
    } finally {
      await context.close();
    }
  });
});
