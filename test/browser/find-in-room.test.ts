/**
 * "Find in this room": the message list renders only a window of what it holds, so the browser's
 * find-in-page cannot reach the rest. The room's find bar (Ctrl+Shift+F, or Find in the head)
 * looks through every held message and older pages on demand, says "n of m", brings the match
 * into view within a bounded window, highlights its words without touching its DOM, tells screen
 * readers, and fits a phone.
 */
import { join } from 'node:path';
import type { Page, Route } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { ARTIFACTS, browserSuite, describeBrowser, item, messageTexts, openAs, probeResults, scanDom } from './harness.js';

const DESKTOP = { width: 1200, height: 800 };
const PHONE = { width: 360, height: 740 };
const ROOM = 'news_findroom';
const HELD = 400;
/** RENDER_WINDOW in salon-message-list.ts. */
const WINDOW = 150;
/** The two messages holding the word looked for, both far outside the newest window. */
const TEXTS: Record<number, string> = {
  3: 'The old **Lighthouse** of Port Avelin is for sale',
  120: '<img src=x onerror="window.__xss=1"> lighthouse keepers vote tonight',
};

/** The deepest focused element's tag and aria-label or name. */
const focused = (page: Page) =>
  page.evaluate(() => {
    let el = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    return `${el?.tagName.toLowerCase()}:${el?.getAttribute('aria-label') ?? el?.id ?? ''}`;
  });

/** The texts the find highlight covers now (CSS Custom Highlight API). */
const highlighted = (page: Page) =>
  page.evaluate(() => {
    const h = CSS.highlights.get('salon-find');
    return h ? Array.from(h as unknown as Iterable<Range>, (r) => r.toString()) : [];
  });

/** The found message's text, and whether it lies wholly within the list's visible area. */
const foundItem = (page: Page) =>
  page.evaluate(() => {
    const find = (root: Document | ShadowRoot): Element | null => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        if (el.tagName === 'SALON-MESSAGE-ITEM' && el.hasAttribute('found')) return el;
        const inner = el.shadowRoot && find(el.shadowRoot);
        if (inner) return inner;
      }
      return null;
    };
    const el = find(document);
    if (!el) return null;
    const box = el.getBoundingClientRect();
    const view = (el.getRootNode() as ShadowRoot).querySelector('.scroller')!.getBoundingClientRect();
    return { text: (el as unknown as { text: string }).text, inView: box.top >= view.top - 1 && box.bottom <= view.bottom + 1 };
  });

const count = (page: Page) => page.locator('salon-room-find .count').textContent();
const status = (page: Page) => page.locator('salon-room-find [data-find-status]').textContent();

describeBrowser('find in this room', () => {
  const suite = browserSuite({ server: true, artifacts: true });

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item(ROOM, { title: 'The harbour discussion' }));
    const thread = await store.ensureMainThread(ROOM);
    for (let i = 1; i <= HELD; i++)
      await store.appendMessage({ roomId: ROOM, threadId: thread.id, author: { id: 'u_old', name: 'Old', kind: 'user' }, text: TEXTS[i] ?? `old ${i}` });
  });

  it('finds held messages outside the render window, n of m, brings each into view in a bounded window and highlights it, without taking Ctrl+F', async () => {
    const { context, page } = await openAs(suite.browser, 'Lea', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe(`old ${HELD}`);
      // Every message held: paged back to the first, then back at the newest, where only a window renders.
      const older = page.getByRole('button', { name: 'Load earlier messages' });
      while ((await messageTexts(page))[0] !== 'old 1') {
        const shown = (await messageTexts(page)).length;
        await older.click();
        await expect.poll(async () => (await messageTexts(page)).length).toBeGreaterThan(shown);
      }
      await page.locator('salon-message-list .scroller').evaluate((el) => (el.scrollTop = el.scrollHeight));
      await expect.poll(async () => (await messageTexts(page)).length).toBe(WINDOW);
      expect((await messageTexts(page)).some((t) => /lighthouse/i.test(t))).toBe(false);

      // Ctrl+F stays the browser's; Ctrl+Shift+F opens the room's find bar from the composer.
      await page.evaluate(() => {
        const w = window as unknown as { __ctrlF: boolean[] };
        w.__ctrlF = [];
        window.addEventListener('keydown', (e) => e.key === 'f' && e.ctrlKey && w.__ctrlF.push(e.defaultPrevented));
      });
      await page.locator('salon-composer textarea').focus();
      await page.keyboard.press('Control+f');
      expect(await page.evaluate(() => (window as unknown as { __ctrlF: boolean[] }).__ctrlF)).toEqual([false]);
      expect(await page.locator('salon-room-find').isVisible()).toBe(false);
      await page.keyboard.press('Control+Shift+F');
      const box = page.getByRole('searchbox', { name: 'Find in this room' });
      await expect.poll(() => box.isVisible()).toBe(true);
      expect(await focused(page)).toBe('input:find-box');
      expect(await page.getByRole('button', { name: 'Find in this room' }).getAttribute('aria-expanded')).toBe('true');

      // Typing finds at once: the newest match first, brought into view, its words highlighted.
      await page.keyboard.type('LIGHTHOUSE');
      await expect.poll(() => count(page)).toBe('1 of 2');
      await expect.poll(() => foundItem(page)).toEqual({ text: TEXTS[120], inView: true });
      await expect.poll(() => highlighted(page)).toEqual(['lighthouse']);
      // The window moved to the match: it renders a bounded stretch, not everything after it.
      expect((await messageTexts(page)).length).toBeLessThanOrEqual(WINDOW);
      await expect.poll(() => status(page)).toMatch(/^1 of 2: Old, .*lighthouse keepers vote tonight$/);

      // Enter: the next older match; again: wraps to the newest; Shift+Enter: back.
      await page.keyboard.press('Enter');
      await expect.poll(() => count(page)).toBe('2 of 2');
      await expect.poll(() => foundItem(page)).toEqual({ text: TEXTS[3], inView: true });
      // Found in the shown text ("**Lighthouse**" shows as bold "Lighthouse").
      await expect.poll(() => highlighted(page)).toEqual(['Lighthouse']);
      expect((await messageTexts(page))[0]).toBe('old 1');
      expect((await messageTexts(page)).length).toBeLessThanOrEqual(WINDOW);
      await expect.poll(() => status(page)).toMatch(/^2 of 2: Old, .*Lighthouse\*\* of Port Avelin/);
      await page.screenshot({ path: join(ARTIFACTS, 'find-in-room-1200.png') });
      await page.keyboard.press('Enter');
      await expect.poll(() => count(page)).toBe('1 of 2');
      await page.keyboard.press('Shift+Enter');
      await expect.poll(() => count(page)).toBe('2 of 2');
      // The buttons do the same.
      await page.getByRole('button', { name: 'Previous match (newer)' }).click();
      await expect.poll(() => foundItem(page)).toEqual({ text: TEXTS[120], inView: true });

      // Below the moved window, the later messages are a button (and a scroll) away.
      const later = page.getByRole('button', { name: 'Show later messages' });
      expect(await later.count()).toBe(1);
      await later.focus();
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await messageTexts(page)).length).toBeGreaterThan(WINDOW);

      // No match: said, and nothing marked.
      await box.fill('harbourmaster');
      await expect.poll(() => count(page)).toBe('No matches');
      await expect.poll(() => foundItem(page)).toBeNull();
      await expect.poll(() => status(page)).toBe('No matches.');

      // The hostile text was found and shown as text: nothing ran.
      await box.fill('keepers');
      await expect.poll(() => foundItem(page)).toEqual({ text: TEXTS[120], inView: true });
      expect(await scanDom(page)).toEqual([]);
      expect((await probeResults(page)).xss).toBeUndefined();

      // Escape closes it, clears the mark and the highlight, and gives the focus back to the composer.
      await box.press('Escape');
      await expect.poll(() => page.locator('salon-room-find').isVisible()).toBe(false);
      expect(await focused(page)).toBe('textarea:message');
      expect(await foundItem(page)).toBeNull();
      expect(await highlighted(page)).toEqual([]);
      // Opened again, it keeps its words, selected.
      await page.keyboard.press('Control+Shift+F');
      await expect.poll(() => box.isVisible()).toBe(true);
      expect(await box.inputValue()).toBe('keepers');
      expect(await box.evaluate((el: HTMLInputElement) => [el.selectionStart, el.selectionEnd])).toEqual([0, 7]);
    } finally {
      await context.close();
    }
  });

  /** Opens the room and looks for a word only its earlier pages hold: no match among the messages loaded; the find box. */
  async function findingBeyondHeld(page: Page) {
    await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
    await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe(`old ${HELD}`);
    await page.getByRole('button', { name: 'Find in this room' }).click();
    const box = page.getByRole('searchbox', { name: 'Find in this room' });
    await box.fill('lighthouse');
    await expect.poll(() => count(page)).toBe('No matches');
    return box;
  }

  it('searches earlier pages of the history on demand when the messages held do not match', async () => {
    const { context, page } = await openAs(suite.browser, 'Mo', DESKTOP);
    try {
      const box = await findingBeyondHeld(page);
      await expect.poll(() => status(page)).toBe('No matches in the 20 messages loaded. Search earlier messages to look further back.');

      await page.getByRole('button', { name: 'Search earlier messages' }).click();
      await expect.poll(() => count(page)).toBe('1 of 1');
      await expect.poll(() => foundItem(page)).toEqual({ text: TEXTS[120], inView: true });
      // Past the oldest match held, Next looks further back.
      await box.press('Enter');
      await expect.poll(() => count(page)).toBe('2 of 2');
      await expect.poll(() => foundItem(page)).toEqual({ text: TEXTS[3], inView: true });
      // The thread's start is reached: nothing more to search.
      expect(await page.getByRole('button', { name: 'Search earlier messages' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('shows nothing of a search of earlier pages that ends after the bar was closed', async () => {
    const { context, page } = await openAs(suite.browser, 'Ola', DESKTOP);
    const held: Route[] = [];
    let holding = false;
    await page.route(/\/api\/v1\/threads\/[^/]+\/messages\?/, (route) => (holding ? void held.push(route) : void route.continue()));
    try {
      const box = await findingBeyondHeld(page);
      holding = true;
      await page.getByRole('button', { name: 'Search earlier messages' }).click();
      await expect.poll(() => held.length).toBe(1);
      // Closed while the first page is on its way; the search then goes on to its end.
      await box.press('Escape');
      await expect.poll(() => page.locator('salon-room-find').getAttribute('open')).toBeNull();
      holding = false;
      for (const route of held.splice(0)) await route.continue();
      const searching = () => page.locator('salon-room-find').evaluate((el) => (el as unknown as { searching: boolean }).searching);
      await expect.poll(searching, { timeout: 10_000 }).toBe(false);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      expect(await foundItem(page)).toBeNull();
      expect(await highlighted(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('searching earlier pages keeps the list to a window, even when every message held was rendered', async () => {
    const { context, page } = await openAs(suite.browser, 'Noa', DESKTOP);
    try {
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await expect.poll(async () => (await messageTexts(page)).at(-1)).toBe(`old ${HELD}`);
      // One page back: every message held is rendered, from the first.
      await page.getByRole('button', { name: 'Load earlier messages' }).click();
      await expect.poll(async () => (await messageTexts(page)).length).toBe(70);
      await page.getByRole('button', { name: 'Find in this room' }).click();
      await page.getByRole('searchbox', { name: 'Find in this room' }).fill('lighthouse');
      await expect.poll(() => count(page)).toBe('No matches');
      // Five pages back to message 120: they are searched, not all rendered.
      await page.getByRole('button', { name: 'Search earlier messages' }).click();
      await expect.poll(() => count(page)).toBe('1 of 1');
      await expect.poll(() => foundItem(page)).toEqual({ text: TEXTS[120], inView: true });
      expect((await messageTexts(page)).length).toBeLessThanOrEqual(WINDOW);
    } finally {
      await context.close();
    }
  });

  it('works on a 360 × 740 phone: Find in the folded head, the bar and the composer on screen, the match in view', async () => {
    const { context, page } = await openAs(suite.browser, 'Pia', PHONE);
    try {
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await page.locator('salon-room .details-toggle [data-here="1"]').waitFor();
      const find = page.getByRole('button', { name: 'Find in this room' });
      const head = (await page.locator('salon-room .head').boundingBox())!;
      const at = (await find.boundingBox())!;
      // On the head's one line, beside the Details toggle.
      expect(at.y + at.height).toBeLessThanOrEqual(head.y + head.height + 1);
      await find.click();
      const box = page.getByRole('searchbox', { name: 'Find in this room' });
      await box.fill('lighthouse');
      await page.getByRole('button', { name: 'Search earlier messages' }).click();
      await expect.poll(() => foundItem(page)).toEqual({ text: TEXTS[120], inView: true });
      await expect.poll(() => highlighted(page)).toEqual(['lighthouse']);

      for (const target of [
        'salon-composer textarea',
        'salon-composer button[type=submit]',
        'salon-room-find input',
        'salon-room-find button[aria-label="Close find"]',
      ]) {
        const b = (await page.locator(target).boundingBox())!;
        expect(b.x + b.width, target).toBeLessThanOrEqual(PHONE.width);
        expect(b.y + b.height, target).toBeLessThanOrEqual(PHONE.height);
      }
      await page.screenshot({ path: join(ARTIFACTS, 'find-in-room-360.png') });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(PHONE.height);
      await page.getByRole('button', { name: 'Close find' }).click();
      await expect.poll(() => box.isVisible()).toBe(false);
      expect(await focused(page)).toBe('button:Find in this room');
    } finally {
      await context.close();
    }
  });
});
