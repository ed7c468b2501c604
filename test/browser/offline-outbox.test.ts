/**
 * Messages written while the room was away go out at the rejoin without tripping the server's flood
 * guard: it admits a socket's frames 5 a second with a burst of 10 (the hello among them), and the
 * page sent every unsent message at once, so the tenth and later failed as "sending too fast".
 */
import { expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, messageTexts, openAs, say } from './harness.js';

describeBrowser('messages written offline', () => {
  const suite = browserSuite({ server: true });

  it('are all sent at the rejoin, in the order written, none refused as a flood', async () => {
    await suite.server.app.salon.store.upsertItem(item('news_outbox', { title: 'Outbox' }));
    const { context, page } = await openAs(suite.browser, 'Oda');
    const refusals: string[] = [];
    page.on('websocket', (ws) =>
      ws.on('framereceived', (f) => {
        const frame = JSON.parse(String(f.payload)) as { type?: string; code?: string };
        if (frame.type === 'error') refusals.push(String(frame.code));
      }),
    );
    try {
      await page.goto(`${suite.server.url}/chat?id=news_outbox`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor();
      await context.setOffline(true);
      await page.locator('salon-connection-status [data-state=offline]').waitFor({ timeout: 20_000 });
      const written = Array.from({ length: 16 }, (_, i) => `offline note ${i + 1}`);
      for (const text of written) await say(page, text);
      await expect.poll(() => page.locator('salon-message-item[state=sending]').count()).toBe(written.length);

      await context.setOffline(false);
      await expect.poll(() => page.locator('salon-message-item[state=sending]').count(), { timeout: 20_000 }).toBe(0);
      expect(await page.locator('salon-message-item[state=failed]').count()).toBe(0);
      expect(refusals).toEqual([]);
      expect(await messageTexts(page)).toEqual(written);
      const stored = await suite.server.app.salon.store.recentMessages('news_outbox', 50);
      expect(stored.map((m) => m.text)).toEqual(written);
    } finally {
      await context.close();
    }
  });
});
