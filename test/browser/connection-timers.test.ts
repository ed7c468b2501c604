/**
 * The room's timers across a lost connection: the reconnect countdown keeps counting when its
 * element is moved in the page, and the first key after a rejoin tells the room at once.
 */
import type { WebSocketRoute } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, openAs } from './harness.js';

describeBrowser('connection timers', () => {
  const suite = browserSuite({ server: true });

  beforeAll(async () => {
    await suite.server.app.salon.store.upsertItem(item('news_timers', { title: 'Timers' }));
  });

  it('goes on counting down to the reconnect when the status bar is taken out of the page and put back', async () => {
    const { context, page } = await openAs(suite.browser, 'Tia');
    try {
      await page.clock.install();
      await page.goto(`${suite.server.url}/chat`);
      await page.waitForFunction(() => !!customElements.get('salon-connection-status'));
      const text = () =>
        page.evaluate(async () => {
          const el = document.querySelector('#countdown-probe') as HTMLElement & { updateComplete: Promise<unknown> };
          await el.updateComplete;
          return el.shadowRoot!.querySelector('[data-state]')?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
        });
      await page.evaluate(() => {
        const el = Object.assign(document.createElement('salon-connection-status'), {
          id: 'countdown-probe',
          status: 'reconnecting',
          retryAt: Date.now() + 10_000,
        });
        document.body.append(el);
      });
      expect(await text()).toContain('Reconnecting in 10 s');
      await page.clock.runFor(2_000);
      expect(await text()).toContain('Reconnecting in 8 s');
      // Moved (taken out and put back, as a re-render of its parent may do): it keeps counting.
      await page.evaluate(() => {
        const el = document.querySelector('#countdown-probe')!;
        el.remove();
        document.body.append(el);
      });
      await page.clock.runFor(3_000);
      expect(await text()).toContain('Reconnecting in 5 s');
    } finally {
      await context.close();
    }
  });

  it('tells the room at the first key after a rejoin that the member is typing, without waiting out the resend interval', async () => {
    const { context, page } = await openAs(suite.browser, 'Tom');
    const sent: Record<string, unknown>[] = [];
    let welcomes = 0;
    let socket: WebSocketRoute | null = null;
    await page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
      socket = ws;
      const server = ws.connectToServer();
      ws.onMessage((m) => {
        sent.push({ ...(JSON.parse(String(m)) as Record<string, unknown>), socket: welcomes });
        server.send(m);
      });
      server.onMessage((m) => {
        if ((JSON.parse(String(m)) as { type?: string }).type === 'welcome') welcomes++;
        ws.send(m);
      });
    });
    try {
      // The page's clock stands still: no resend interval can pass between the two keys.
      await page.clock.setFixedTime(new Date());
      await page.goto(`${suite.server.url}/chat?id=news_timers`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor();
      const box = page.locator('salon-composer textarea');
      await box.pressSequentially('a');
      await expect.poll(() => sent.filter((f) => f.type === 'typing' && f.active === true).length).toBe(1);

      await socket!.close({ code: 1001, reason: 'going away' });
      await expect.poll(() => welcomes).toBe(2);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor();
      await box.pressSequentially('b');
      await expect.poll(() => sent.filter((f) => f.type === 'typing' && f.active === true && f.socket === 2).length).toBe(1);
    } finally {
      await context.close();
    }
  });
});
