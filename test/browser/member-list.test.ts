/** Renaming oneself from the member list by keyboard: Escape and Cancel close the form, and the focus comes back to "change". */
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, openAs } from './harness.js';

/** The focused element, inside shadow roots: its tag and its accessible label or text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    let el: Element | null = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    return el ? `${el.tagName.toLowerCase()}:${el.getAttribute('aria-label') ?? el.textContent?.trim() ?? ''}` : '';
  });

describeBrowser('the member list', () => {
  const suite = browserSuite({ server: true });

  beforeAll(async () => {
    await suite.server.app.salon.store.upsertItem(item('news_names', { title: 'Names drill' }));
  });

  it('closes the name form with Escape or Cancel, and after a rename, leaving the focus on "change"; an emoji name keeps its first character whole', async () => {
    const { context, page } = await openAs(suite.browser, '😀 Ann');
    try {
      await page.goto(`${suite.server.url}/chat?id=news_names`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor();
      expect(await page.locator('salon-member-list .avatar').textContent()).toBe('😀');
      const change = page.getByRole('button', { name: 'Change your name' });
      const input = page.getByRole('textbox', { name: 'Your name' });

      await change.click();
      await expect.poll(() => focused(page)).toBe('input:');
      await page.keyboard.press('Escape');
      expect(await input.count()).toBe(0);
      await expect.poll(() => focused(page)).toBe('button:Change your name');

      await page.keyboard.press('Enter');
      await expect.poll(() => focused(page)).toBe('input:');
      await page.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => focused(page)).toBe('button:Change your name');

      await page.keyboard.press('Enter');
      await input.fill('Annie');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('salon-member-list li .name').allTextContents()).toEqual(['Annie']);
      await expect.poll(() => focused(page)).toBe('button:Change your name');
    } finally {
      await context.close();
    }
  });
});

describeBrowser('the member list of a room larger than it lists', () => {
  // The server lists the first members to join (100 by default); two here, so the third is past them.
  const suite = browserSuite({ server: { overrides: { roomOptions: { maxListedMembers: 2 } } } });

  beforeAll(async () => {
    await suite.server.app.salon.store.upsertItem(item('news_crowd', { title: 'A crowded room' }));
  });

  it('shows the member themselves, with "change", though the server lists only those who came first', async () => {
    const people = [await openAs(suite.browser, 'Ann'), await openAs(suite.browser, 'Bob'), await openAs(suite.browser, 'Cy')];
    try {
      for (const [i, { page }] of people.entries()) {
        await page.goto(`${suite.server.url}/chat?id=news_crowd`);
        await page.locator(`salon-member-list .count[data-count="${i + 1}"]`).waitFor();
      }
      const { page } = people[2];
      await expect.poll(() => page.locator('salon-member-list li .name').allTextContents()).toEqual(['Cy', 'Ann', 'Bob']);
      expect(await page.locator('salon-member-list .you').textContent()).toBe('(you)');
      expect(await page.locator('salon-member-list .more').count()).toBe(0);
      await page.getByRole('button', { name: 'Change your name' }).click();
      await page.getByRole('textbox', { name: 'Your name' }).fill('Cyril');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('salon-member-list li .name').allTextContents()).toEqual(['Cyril', 'Ann', 'Bob']);
      // Those listed see the third as one of the others.
      await expect.poll(() => people[0].page.locator('salon-member-list .more').textContent()).toBe('and 1 other');
    } finally {
      for (const { context } of people) await context.close();
    }
  });
});
