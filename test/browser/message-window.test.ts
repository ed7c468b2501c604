/**
 * The message list renders a bounded window of the messages it holds, whatever brings a message
 * into view: following an answer's discussion source to a message far back (held already, or
 * paged back to) renders a stretch around it, never everything from it to the newest. And the
 * "New messages ↓" jump means what it says: it shows when messages arrived below the view, not
 * because the reader scrolled up.
 */
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import type { Message, Source } from '../../src/protocol/messages.js';
import { browserSuite, describeBrowser, item, messageTexts, openAs, say } from './harness.js';

const DESKTOP = { width: 1200, height: 800 };
const ROOM = 'news_window';
const HELD = 400;
/** RENDER_WINDOW in salon-message-list.ts. */
const WINDOW = 150;
const ANSWER = 'Port Avelin sold its lighthouse, as was said here [1].';

/** The message list's update finished, after the browser ran its pending scroll events (they fire at the next frame). */
const settled = (page: Page) =>
  page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const find = (root: Document | ShadowRoot): Element | null => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        if (el.tagName === 'SALON-MESSAGE-LIST') return el;
        const inner = el.shadowRoot && find(el.shadowRoot);
        if (inner) return inner;
      }
      return null;
    };
    await (find(document) as unknown as { updateComplete: Promise<unknown> }).updateComplete;
  });

/** From now on, records the most message items the list has rendered at the end of any of its updates. */
const countMostItems = (page: Page) =>
  page.evaluate(() => {
    const w = window as unknown as { __mostItems: number };
    w.__mostItems = 0;
    const cls = customElements.get('salon-message-list') as unknown as { prototype: { updated(this: HTMLElement, c: unknown): void } };
    const original = cls.prototype.updated;
    cls.prototype.updated = function (this: HTMLElement, changed: unknown) {
      w.__mostItems = Math.max(w.__mostItems, this.shadowRoot!.querySelectorAll('salon-message-item').length);
      original.call(this, changed);
    };
  });
const mostItems = (page: Page) => page.evaluate(() => (window as unknown as { __mostItems: number }).__mostItems);

const scrollList = (page: Page, to: 'top' | 'bottom') =>
  page.locator('salon-message-list .scroller').evaluate((el, where) => (el.scrollTop = where === 'top' ? 0 : el.scrollHeight), to);

describeBrowser('the message list’s window', () => {
  const suite = browserSuite({ server: true });
  let cited: Message;

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item(ROOM, { title: 'The lighthouse sale' }));
    const thread = await store.ensureMainThread(ROOM);
    const old = { id: 'u_old', name: 'Old', kind: 'user' as const };
    for (let i = 1; i <= HELD; i++) {
      const { message } = await store.appendMessage({
        roomId: ROOM,
        threadId: thread.id,
        author: old,
        text: i === 3 ? 'The lighthouse is for sale' : `old ${i}`,
      });
      if (i === 3) cited = message;
    }
    const source: Source = {
      n: 1,
      id: thread.id,
      kind: 'thread',
      title: 'From this discussion — Old',
      url: null,
      sourceType: 'conversation',
      snippet: cited.text,
      messageIds: [cited.id],
      authors: ['Old'],
      from: cited.ts,
      to: cited.ts,
    };
    await store.appendMessage({
      roomId: ROOM,
      threadId: thread.id,
      author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' },
      text: ANSWER,
      sources: [source],
    });
  });

  /**
   * Clicks the answer's discussion source and waits for the cited message to be marked; no more
   * than a window of items was rendered at any update on the way, and the message is in view.
   */
  async function followSource(page: Page): Promise<void> {
    await countMostItems(page);
    await page.locator('salon-message-item[kind=assistant] salon-source-list button.show').click();
    await page.locator(`salon-message-item[data-id="${cited.id}"][highlight]`).waitFor({ state: 'attached' });
    expect(await mostItems(page)).toBeLessThanOrEqual(WINDOW);
    // Within the list's visible area (the mark itself goes after a moment).
    await expect
      .poll(() =>
        page.locator(`salon-message-item[data-id="${cited.id}"]`).evaluate((el) => {
          const box = el.getBoundingClientRect();
          const view = (el.getRootNode() as ShadowRoot).querySelector('.scroller')!.getBoundingClientRect();
          return box.top >= view.top - 1 && box.bottom <= view.bottom + 1;
        }),
      )
      .toBe(true);
  }

  it('follows a source to a message older than those held: pages back to it and renders a window around it, not everything after it', async () => {
    const { context, page } = await openAs(suite.browser, 'Lea', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe(ANSWER);
      await followSource(page);
      const shown = await messageTexts(page);
      expect(shown).toContain(cited.text);
      expect(shown.length).toBeLessThanOrEqual(WINDOW);
      // Below the window, the later messages are a button away.
      expect(await page.getByRole('button', { name: 'Show later messages' }).count()).toBe(1);
    } finally {
      await context.close();
    }
  });

  it('follows a source to a held message outside the window: renders a window around it, not everything after it', async () => {
    const { context, page } = await openAs(suite.browser, 'Mo', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe(ANSWER);
      const older = page.getByRole('button', { name: 'Load earlier messages' });
      while ((await messageTexts(page))[0] !== 'old 1') {
        const shown = (await messageTexts(page)).length;
        await older.click();
        await expect.poll(async () => (await messageTexts(page)).length).toBeGreaterThan(shown);
      }
      // Back at the newest: only a window renders, without the cited message.
      await scrollList(page, 'bottom');
      await expect.poll(async () => (await messageTexts(page)).length).toBe(WINDOW);
      expect(await messageTexts(page)).not.toContain(cited.text);

      await followSource(page);
      expect((await messageTexts(page)).length).toBeLessThanOrEqual(WINDOW);
      // "Latest messages" takes the reader back to the newest window.
      await page.getByRole('button', { name: 'Latest messages ↓' }).click();
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe(ANSWER);
      expect((await messageTexts(page)).length).toBe(WINDOW);
    } finally {
      await context.close();
    }
  });

  it('shows "New messages ↓" only when messages arrived below the view, not because the reader scrolled up', async () => {
    const lea = await openAs(suite.browser, 'Ada', DESKTOP);
    const bob = await openAs(suite.browser, 'Bob', DESKTOP);
    const { page } = lea;
    try {
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe(ANSWER);
      const jump = page.locator('salon-message-list button.jump');
      await scrollList(page, 'top');
      await settled(page);
      expect(await page.locator('salon-message-list .scroller').evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeGreaterThan(96);
      expect(await jump.count()).toBe(0);

      // Someone writes while the reader is up there: now there is something new below.
      await bob.page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await page.locator('salon-member-list .count[data-count="2"]').waitFor();
      await say(bob.page, 'news from below');
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('news from below');
      const news = page.getByRole('button', { name: 'New messages ↓' });
      await news.waitFor();
      await news.click();
      await expect.poll(() => jump.count()).toBe(0);
      expect(await page.locator('salon-message-item', { hasText: 'news from below' }).isVisible()).toBe(true);
    } finally {
      await lea.context.close();
      await bob.context.close();
    }
  });

  it('renders a step of a reconnect’s catch-up below a reader who is up the list, not all of it at once', async () => {
    const { store } = suite.server.app.salon;
    const room = 'news_catchup';
    await store.upsertItem(item(room, { title: 'Catching up' }));
    const thread = await store.ensureMainThread(room);
    const post = async (from: number, to: number) => {
      for (let i = from; i <= to; i++)
        await store.appendMessage({ roomId: room, threadId: thread.id, author: { id: 'u_old', name: 'Old', kind: 'user' }, text: `catch ${i}` });
    };
    await post(1, 30);
    const { context, page } = await openAs(suite.browser, 'Eve', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=${room}`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('catch 30');
      await scrollList(page, 'top');
      await settled(page);
      await context.setOffline(true);
      await page.locator('salon-connection-status [data-state=offline]').waitFor({ timeout: 20_000 });
      // 300 missed: fewer than the 500 a rejoin is given, so they all come in its welcome.
      await post(31, 330);
      await countMostItems(page);
      await context.setOffline(false);
      const news = page.getByRole('button', { name: 'New messages ↓' });
      await news.waitFor({ timeout: 20_000 });
      // The reader's 20 and a step of 100 below them; the rest wait below the window.
      expect(await mostItems(page)).toBeLessThanOrEqual(120);
      expect(await page.getByRole('button', { name: 'Show later messages' }).count()).toBe(1);
      expect((await messageTexts(page))[0]).toBe('catch 11');
      await news.click();
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe('catch 330');
      expect((await messageTexts(page)).length).toBe(WINDOW);
    } finally {
      await context.close();
    }
  });
});
