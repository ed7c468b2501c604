/**
 * `<salon-room-find>` on its own, with older pages the test lets in one at a time: a search of
 * earlier pages ends when the member changes the words or closes the bar, fetching no more pages
 * and saying nothing about words it was not looking for; a bar closed reads nothing out.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserSuite, describeBrowser, openAs } from './harness.js';

const DESKTOP = { width: 1200, height: 800 };

/**
 * Mounts an open find bar over thread a's messages 381–400 ("old n"), whose older pages (50 each,
 * none holding the words looked for) come in only when `window.__release()` lets the next one in.
 */
async function mountBar(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => !!customElements.get('salon-room-find'));
  await page.evaluate(async () => {
    const w = window as unknown as Record<string, unknown>;
    const author = { id: 'u_old', name: 'Old', kind: 'user' };
    const entry = (seq: number) => ({
      key: `m:a${seq}`,
      message: { id: `a${seq}`, seq, roomId: 'news_1', threadId: 'a', author, text: `old ${seq}`, ts: new Date(1_700_000_000_000 + seq * 1000).toISOString() },
      state: 'sent',
      order: seq,
    });
    const waiting: Array<() => void> = [];
    const el = document.createElement('salon-room-find') as HTMLElement & { entries: unknown[]; updateComplete: Promise<unknown> };
    const source = {
      threadId: 'a',
      messages: Array.from({ length: 20 }, (_, i) => entry(381 + i)),
      get hasOlder() {
        return source.messages[0].message.seq > 1;
      },
      loadOlder: () =>
        new Promise<void>((resolve) =>
          waiting.push(() => {
            const first = source.messages[0].message.seq;
            source.messages = [...Array.from({ length: 50 }, (_, i) => entry(first - 50 + i)), ...source.messages];
            el.entries = source.messages;
            resolve();
          }),
        ),
    };
    w.__waiting = waiting;
    w.__release = () => waiting.shift()!();
    Object.assign(el, { open: true, entries: source.messages, source });
    document.body.prepend(el);
    w.__bar = el;
    await el.updateComplete;
  });
}

const waitingPages = (page: Page) => page.evaluate(() => (window as unknown as { __waiting: unknown[] }).__waiting.length);

/** Lets the next page in and waits until the bar has done with it. */
const release = (page: Page) =>
  page.evaluate(async () => {
    const w = window as unknown as { __release(): void; __bar: { updateComplete: Promise<unknown> } };
    w.__release();
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 0));
      await w.__bar.updateComplete;
    }
  });

/** Mounts the bar, looks for "lighthouse" (held nowhere) and asks for earlier messages: the first page waits. */
async function searchingEarlier(page: Page, url: string): Promise<void> {
  await mountBar(page, url);
  const box = page.locator('salon-room-find input');
  await box.fill('lighthouse');
  await box.press('Enter');
  await expect.poll(() => waitingPages(page)).toBe(1);
}

describeBrowser('the find bar while it searches earlier pages', () => {
  const suite = browserSuite({ server: true });

  it('stops searching earlier pages when the words change, even back to the same, and says nothing of the search it left', async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      await mountBar(page, `${suite.server.url}/`);
      const box = page.locator('salon-room-find input');
      await box.fill('lighthouse');
      await expect.poll(() => page.locator('salon-room-find .count').textContent()).toBe('No matches');
      await box.press('Enter');
      await expect.poll(() => waitingPages(page)).toBe(1);

      // The member edits the words while the page is on its way, ending where they began.
      await box.fill('lighthouses');
      await box.fill('lighthouse');
      await release(page);
      // No second page for the search that was left, and no "No earlier matches in …" for it either.
      expect(await waitingPages(page)).toBe(0);
      expect(await page.locator('salon-room-find [data-earlier-note]').count()).toBe(0);
      // The member may search earlier again at once, for the words they have now.
      const again = page.locator('salon-room-find [data-find-earlier]');
      await expect.poll(() => again.isEnabled()).toBe(true);
      await again.click();
      await expect.poll(() => waitingPages(page)).toBe(1);
      await release(page);
      await expect.poll(() => waitingPages(page)).toBe(1);
    } finally {
      await context.close();
    }
  });

  it('fetches no more earlier pages once the bar is closed', async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      await searchingEarlier(page, `${suite.server.url}/`);
      await page.evaluate(async () => {
        const bar = (window as unknown as { __bar: { open: boolean; updateComplete: Promise<unknown> } }).__bar;
        bar.open = false;
        await bar.updateComplete;
      });
      await release(page);
      expect(await waitingPages(page)).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('ends a search of earlier pages when another thread opens, no longer saying it is searching', async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      await searchingEarlier(page, `${suite.server.url}/`);
      await expect.poll(() => page.locator('salon-room-find [data-find-status]').textContent()).toBe('Searching earlier messages…');
      // The member opens thread b: the navigator's source now pages back through b.
      await page.evaluate(() => ((window as unknown as { __bar: { source: { threadId: string } } }).__bar.source.threadId = 'b'));
      await release(page);
      expect(await waitingPages(page)).toBe(0);
      expect(await page.locator('salon-room-find [data-find-status]').textContent()).toBe('');
      expect(await page.locator('salon-room-find [data-earlier-note]').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('drops what it said of the earlier messages of a thread once another thread opens', async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      await searchingEarlier(page, `${suite.server.url}/`);
      // Every page in, back to the thread's first message.
      while ((await waitingPages(page)) > 0) await release(page);
      const note = page.locator('salon-room-find [data-earlier-note]');
      await expect.poll(() => note.textContent()).toMatch(/^No earlier matches in [\d,]+ more messages\./);
      // The member opens thread b: the list is given again, and the note about thread a goes.
      await page.evaluate(async () => {
        const bar = (
          window as unknown as { __bar: { source: { threadId: string; messages: unknown[] }; entries: unknown[]; updateComplete: Promise<unknown> } }
        ).__bar;
        bar.source.threadId = 'b';
        bar.entries = [...bar.entries];
        await bar.updateComplete;
      });
      await expect.poll(() => note.count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});

describeBrowser('the find bar closed while its count waits to be read out', () => {
  const suite = browserSuite({ server: true });

  it('reads nothing out once the room closed it (its toggle), nor when it opens again', async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      await page.clock.install();
      await mountBar(page, `${suite.server.url}/`);
      const status = page.locator('salon-room-find [data-find-status]');
      await page.locator('salon-room-find input').fill('old 39');
      // The room's Find toggle closes the bar by its `open` alone, before typing has paused long enough.
      await page.evaluate(async () => {
        const bar = (window as unknown as { __bar: { open: boolean; updateComplete: Promise<unknown> } }).__bar;
        bar.open = false;
        await bar.updateComplete;
      });
      await page.clock.runFor(2_000);
      expect(await status.textContent()).toBe('');
      await page.evaluate(async () => {
        const bar = (window as unknown as { __bar: { open: boolean; updateComplete: Promise<unknown> } }).__bar;
        bar.open = true;
        await bar.updateComplete;
      });
      expect(await status.textContent()).toBe('');
    } finally {
      await context.close();
    }
  });
});
