/**
 * `<salon-message-list>` on its own, against what the reader does while something is under way:
 * a followed source's mark lasts its full time when the source is followed again, a list removed
 * leaves no timer or frame behind, a page asked for in one thread does not grow another's window,
 * and a cited message still being paged back to does not pull the view off where the reader went.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserSuite, describeBrowser, openAs } from './harness.js';

const DESKTOP = { width: 1200, height: 800 };
/** HIGHLIGHT_MS in salon-message-list.ts. */
const HIGHLIGHT_MS = 2_500;

interface ListProps {
  view?: string;
  /** Sequence numbers of the thread's messages, oldest first. */
  seqs?: number[];
  hasOlder?: boolean;
  loadingOlder?: boolean;
}

/** Opens the app's page (for its elements) and mounts a lone list 400 px high; `window.__olderAsked` counts its requests for an older page. */
async function mountList(page: Page, url: string, props: ListProps): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => !!customElements.get('salon-message-list'));
  await page.evaluate(() => {
    const w = window as unknown as Record<string, unknown>;
    const el = document.createElement('salon-message-list');
    el.style.cssText = 'display: block; height: 400px; width: 600px';
    w.__olderAsked = 0;
    el.addEventListener('salon-load-older', () => (w.__olderAsked as number)++);
    document.body.prepend(el);
    w.__list = el;
  });
  await setList(page, props);
}

/** Sets the list's properties (its entries from `seqs`) and waits for its update and the frame after it. */
async function setList(page: Page, props: ListProps): Promise<void> {
  await page.evaluate(async ({ view, seqs, hasOlder, loadingOlder }) => {
    const el = (window as unknown as { __list: HTMLElement & { updateComplete: Promise<unknown> } }).__list;
    const thread = view ?? (el as unknown as { view: string }).view;
    const author = { id: 'u_old', name: 'Old', kind: 'user' };
    const fields: Record<string, unknown> = {};
    if (view !== undefined) fields.view = view;
    if (hasOlder !== undefined) fields.hasOlder = hasOlder;
    if (loadingOlder !== undefined) fields.loadingOlder = loadingOlder;
    if (seqs)
      fields.entries = seqs.map((seq) => ({
        key: `m:${thread}${seq}`,
        message: {
          id: `${thread}${seq}`,
          seq,
          roomId: 'news_1',
          threadId: thread,
          author,
          text: `${thread} ${seq}`,
          ts: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
        },
        state: 'sent',
        order: seq,
      }));
    Object.assign(el, fields);
    await el.updateComplete;
  }, props);
  await settle(page);
}

/** Lets the list's queued work run: its microtasks and the updates they ask for (a task between each, which a paused clock does not hold up). */
const settle = (page: Page) =>
  page.evaluate(async () => {
    const el = (window as unknown as { __list: { updateComplete: Promise<unknown> } }).__list;
    for (let i = 0; i < 3; i++) {
      await el.updateComplete;
      await new Promise((r) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = r;
        channel.port2.postMessage(0);
      });
    }
  });

/** The ids of the messages the list renders, and of those marked as a followed source's. */
const rendered = (page: Page) =>
  page.evaluate(() => {
    const root = (window as unknown as { __list: HTMLElement }).__list.shadowRoot!;
    const items = Array.from(root.querySelectorAll('salon-message-item[data-id]'));
    return { ids: items.map((e) => e.getAttribute('data-id')), marked: items.filter((e) => e.hasAttribute('highlight')).map((e) => e.getAttribute('data-id')) };
  });

const followSource = (page: Page, messageIds: string[]) =>
  page.evaluate((messageIds) => {
    const el = (window as unknown as { __list: HTMLElement }).__list;
    el.dispatchEvent(new CustomEvent('salon-show-messages', { detail: { messageIds } }));
  }, messageIds);

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describeBrowser('the message list while the reader moves on', () => {
  const suite = browserSuite({ server: true });

  it('keeps a source followed again marked for its full time, and leaves no timer or frame behind once removed', async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      // The page's clock stands still but when the test moves it.
      await page.clock.install({ time: new Date('2026-01-10T09:00:00Z') });
      await mountList(page, `${suite.server.url}/`, { view: 'a', seqs: range(1, 20) });
      await page.clock.pauseAt(new Date('2026-01-10T10:00:00Z'));
      await followSource(page, ['a5']);
      await settle(page);
      expect((await rendered(page)).marked).toEqual(['a5']);

      // Followed again before the first mark ends: the second mark lasts its own HIGHLIGHT_MS.
      await page.clock.runFor(HIGHLIGHT_MS - 500);
      await followSource(page, ['a5']);
      await settle(page);
      await page.clock.runFor(1_000);
      expect((await rendered(page)).marked).toEqual(['a5']);
      await page.clock.runFor(HIGHLIGHT_MS);
      expect((await rendered(page)).marked).toEqual([]);

      // From now on, every timer and frame the page asks for is tracked until it runs or is cancelled.
      await page.evaluate(() => {
        const w = window as unknown as Record<string, unknown> & typeof globalThis;
        const pending = new Set<string>();
        w.__pending = pending;
        const { setTimeout: set, clearTimeout: clear, requestAnimationFrame: raf, cancelAnimationFrame: caf } = window;
        w.setTimeout = ((fn: () => void, ms?: number) => {
          const id: number = set(() => {
            pending.delete(`t${id}`);
            fn();
          }, ms);
          pending.add(`t${id}`);
          return id;
        }) as typeof setTimeout;
        w.clearTimeout = ((id: number) => {
          pending.delete(`t${id}`);
          clear(id);
        }) as typeof clearTimeout;
        w.requestAnimationFrame = (fn: FrameRequestCallback) => {
          const id = raf((t) => {
            pending.delete(`f${id}`);
            fn(t);
          });
          pending.add(`f${id}`);
          return id;
        };
        w.cancelAnimationFrame = (id: number) => {
          pending.delete(`f${id}`);
          caf(id);
        };
      });
      await followSource(page, ['a7']);
      await page.evaluate(() => (window as unknown as { __list: { updateComplete: Promise<unknown> } }).__list.updateComplete);
      expect((await rendered(page)).marked).toEqual(['a7']);
      expect(await page.evaluate(() => (window as unknown as { __pending: Set<string> }).__pending.size)).toBeGreaterThan(0);
      const left = await page.evaluate(() => {
        const w = window as unknown as { __list: HTMLElement; __pending: Set<string> };
        w.__list.remove();
        return [...w.__pending];
      });
      expect(left).toEqual([]);
      // Nothing stays marked on the items it leaves.
      expect((await rendered(page)).marked).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('does not grow the window for a page that came in after the reader left the thread they asked it in', async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      await mountList(page, `${suite.server.url}/`, { view: 'a', seqs: range(391, 400), hasOlder: true });
      // "Load earlier messages" in thread a; the reader opens thread b before that page comes in.
      await page.locator('salon-message-list').getByRole('button', { name: 'Load earlier messages' }).click();
      expect(await page.evaluate(() => (window as unknown as { __olderAsked: number }).__olderAsked)).toBe(1);
      await setList(page, { loadingOlder: true });
      await setList(page, { view: 'b', seqs: range(301, 400), hasOlder: true, loadingOlder: false });
      expect((await rendered(page)).ids).toHaveLength(100);

      // Up thread b (not near its top), a page of b comes in that the reader did not ask for here (the find bar's, say).
      await page.locator('salon-message-list .scroller').evaluate(async (el) => {
        el.scrollTop = 1_000;
        // The scroll event fires at the next frame.
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      });
      await settle(page);
      await setList(page, { seqs: range(251, 400) });
      // The window keeps its first message: the 50 older ones are held, not rendered.
      const { ids } = await rendered(page);
      expect(ids).toHaveLength(100);
      expect(ids[0]).toBe('b301');
    } finally {
      await context.close();
    }
  });

  it('does not move to a cited message paged back to after the reader went to a find match, or wrote a message', async () => {
    const { context, page } = await openAs(suite.browser, 'Ada', DESKTOP);
    try {
      await mountList(page, `${suite.server.url}/`, { view: 'a', seqs: range(201, 400), hasOlder: true });
      // A source cites message 150, older than any held: the list asks for the page before.
      await followSource(page, ['a150']);
      await settle(page);
      expect(await page.evaluate(() => (window as unknown as { __olderAsked: number }).__olderAsked)).toBe(1);
      await setList(page, { loadingOlder: true });

      // Meanwhile the reader goes to the find bar's match, message 390.
      await page.evaluate(() => (window as unknown as { __list: { showFound(key: string, query: string): void } }).__list.showFound('m:a390', 'a 390'));
      await settle(page);
      expect((await rendered(page)).ids).toContain('a390');
      // The page comes in (101–200): the view stays on the match.
      await setList(page, { seqs: range(101, 400), loadingOlder: false });
      let now = await rendered(page);
      expect(now.ids).toContain('a390');
      expect(now.ids).not.toContain('a150');
      expect(now.marked).toEqual([]);

      // Again, and this time the reader writes a message while the page is on its way.
      await followSource(page, ['a50']);
      await settle(page);
      expect(await page.evaluate(() => (window as unknown as { __olderAsked: number }).__olderAsked)).toBe(2);
      await setList(page, { loadingOlder: true });
      await page.evaluate(async () => {
        const el = (window as unknown as { __list: HTMLElement & { entries: unknown[]; updateComplete: Promise<unknown> } }).__list;
        const author = { id: 'u_me', name: 'Me', kind: 'user' };
        const mine = {
          key: 'c:c1',
          message: { id: '', clientId: 'c1', seq: 0, roomId: 'news_1', threadId: 'a', author, text: 'mine', ts: new Date().toISOString() },
          state: 'sending',
        };
        el.entries = [...el.entries, mine];
        await el.updateComplete;
      });
      await settle(page);
      await page.evaluate(async () => {
        const el = (window as unknown as { __list: HTMLElement & { entries: unknown[]; loadingOlder: boolean; updateComplete: Promise<unknown> } }).__list;
        const author = { id: 'u_old', name: 'Old', kind: 'user' };
        const older = Array.from({ length: 100 }, (_, i) => ({
          key: `m:a${i + 1}`,
          message: {
            id: `a${i + 1}`,
            seq: i + 1,
            roomId: 'news_1',
            threadId: 'a',
            author,
            text: `a ${i + 1}`,
            ts: new Date(1_700_000_000_000 + (i + 1) * 1000).toISOString(),
          },
          state: 'sent',
          order: i + 1,
        }));
        el.entries = [...older, ...el.entries];
        el.loadingOlder = false;
        await el.updateComplete;
      });
      await settle(page);
      now = await rendered(page);
      expect(now.ids.at(-1)).toBe('');
      expect(now.ids).not.toContain('a50');
      expect(now.marked).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
