/**
 * A long message list stays cheap: after paging back through hundreds of messages, a new message
 * updates no other item, back at the newest only a window of messages is rendered, and scrolling
 * up renders the held older ones again with the reader's place kept.
 */
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, messageTexts, openAs, say } from './harness.js';

const DESKTOP = { width: 1200, height: 800 };
const ROOM = 'news_longlist';
const HELD = 400;
/** RENDER_WINDOW in salon-message-list.ts. */
const WINDOW = 150;

/** Counts, from now on, the update cycles of the message items rendered now (lit runs one when a property changed). */
async function countItemUpdates(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __itemUpdates: number };
    w.__itemUpdates = 0;
    const list = document.querySelector('salon-app')!.shadowRoot!.querySelector('salon-chat-page')!.shadowRoot!.querySelector('salon-room')!.shadowRoot!;
    for (const el of Array.from(list.querySelector('salon-message-list')!.shadowRoot!.querySelectorAll('salon-message-item'))) {
      const item = el as unknown as { update: (...args: unknown[]) => void };
      const original = item.update.bind(item);
      item.update = (...args: unknown[]) => {
        w.__itemUpdates++;
        original(...args);
      };
    }
  });
}

/** The top of the message item showing `text`, relative to the list's viewport; with `toTop`, the list is first scrolled to its top. */
const topOf = (page: Page, text: string, toTop = false) =>
  page.evaluate(
    ([wanted, scroll]) => {
      const find = (root: Document | ShadowRoot): Element | null => {
        for (const el of Array.from(root.querySelectorAll('*'))) {
          if (el.tagName === 'SALON-MESSAGE-ITEM' && (el as unknown as { text: string }).text === wanted) return el;
          const inner = el.shadowRoot && find(el.shadowRoot);
          if (inner) return inner;
        }
        return null;
      };
      const item = find(document)!;
      const scroller = (item.getRootNode() as ShadowRoot).querySelector('.scroller')!;
      // Measured at once: the list hears of the scroll only at the next frame.
      if (scroll) scroller.scrollTop = 0;
      return item.getBoundingClientRect().top - scroller.getBoundingClientRect().top;
    },
    [text, toTop] as const,
  );

describeBrowser('a long message list', () => {
  const suite = browserSuite({ server: true });

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item(ROOM, { title: 'A very long discussion' }));
    const thread = await store.ensureMainThread(ROOM);
    for (let i = 1; i <= HELD; i++)
      await store.appendMessage({ roomId: ROOM, threadId: thread.id, author: { id: 'u_old', name: 'Old', kind: 'user' }, text: `old ${i}` });
  });

  it('renders a window of the newest, updates no other item for a new message, and renders older held ones as the reader scrolls up', async () => {
    const lea = await openAs(suite.browser, 'Lea', DESKTOP);
    const bob = await openAs(suite.browser, 'Bob', DESKTOP);
    const { page } = lea;
    try {
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe(`old ${HELD}`);
      const older = page.getByRole('button', { name: 'Load earlier messages' });
      while ((await messageTexts(page))[0] !== 'old 1') {
        const shown = (await messageTexts(page)).length;
        await older.click();
        await expect.poll(async () => (await messageTexts(page)).length).toBeGreaterThan(shown);
      }
      // Paged back to the first: everything loaded is rendered, the reader's place kept at the top.
      expect(await messageTexts(page)).toEqual(Array.from({ length: HELD }, (_, i) => `old ${i + 1}`));
      expect(await older.count()).toBe(0);

      // Someone writes: that message is added, and no other item is touched.
      await bob.page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await page.locator('salon-member-list .count[data-count="2"]').waitFor();
      await countItemUpdates(page);
      await say(bob.page, 'a new one');
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('a new one');
      expect(await page.evaluate(() => (window as unknown as { __itemUpdates: number }).__itemUpdates)).toBe(0);

      // Back to the newest: only a window of messages is rendered; the log still role=log, polite.
      const log = page.getByRole('log', { name: 'Messages' });
      expect(await log.getAttribute('aria-live')).toBe('polite');
      await page.getByRole('button', { name: 'New messages ↓' }).click();
      await expect.poll(async () => (await messageTexts(page)).length).toBe(WINDOW);
      expect((await messageTexts(page)).at(-1)).toBe('a new one');
      expect(await page.locator('salon-message-item', { hasText: 'a new one' }).isVisible()).toBe(true);

      // Scrolling to the top renders the held ones above; what the reader looked at stays in place.
      const first = (await messageTexts(page))[0];
      const before = await topOf(page, first, true);
      await expect.poll(async () => (await messageTexts(page)).length).toBeGreaterThan(WINDOW);
      await expect.poll(async () => Math.abs((await topOf(page, first)) - before)).toBeLessThanOrEqual(2);
      // The keyboard's way up: "Load earlier messages" renders the held ones first, until the first message.
      const show = page.getByRole('button', { name: 'Load earlier messages' });
      // Older messages put in above are not read out as new: the log is busy while they go in.
      await log.evaluate((el) => {
        const w = window as unknown as { __busy: string[] };
        w.__busy = [];
        new MutationObserver(() => w.__busy.push(el.getAttribute('aria-busy') ?? '')).observe(el, { attributes: true, attributeFilter: ['aria-busy'] });
      });
      while ((await messageTexts(page))[0] !== 'old 1') {
        const shown = (await messageTexts(page)).length;
        await show.focus();
        await page.keyboard.press('Enter');
        await expect.poll(async () => (await messageTexts(page)).length).toBeGreaterThan(shown);
      }
      expect(await messageTexts(page)).toEqual([...Array.from({ length: HELD }, (_, i) => `old ${i + 1}`), 'a new one']);
      expect(await show.count()).toBe(0);
      await expect.poll(() => log.getAttribute('aria-busy')).toBe('false');
      expect(await page.evaluate(() => (window as unknown as { __busy: string[] }).__busy)).toContain('true');
    } finally {
      await lea.context.close();
      await bob.context.close();
    }
  });
});
