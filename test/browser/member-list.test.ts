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
