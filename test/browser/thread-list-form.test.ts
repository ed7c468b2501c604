/**
 * The thread list's "New thread" form and the room's answer to it: a thread started closes the
 * form it was started from, never one the member opened afresh while the creation was under way.
 */
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserSuite, describeBrowser, openAs } from './harness.js';

/** A `<salon-thread-list>` of its own in the page, which answers "Start" by going pending (as the room does). */
async function mountList(page: Page): Promise<void> {
  await page.waitForFunction(() => !!customElements.get('salon-thread-list'));
  await page.evaluate(() => {
    const el = Object.assign(document.createElement('salon-thread-list'), { id: 'form-probe' });
    el.addEventListener('salon-new-thread', () => ((el as unknown as { pending: boolean }).pending = true));
    document.body.append(el);
  });
}

/** The room's answer to the command: the thread was started. */
function answerStarted(page: Page): Promise<void> {
  return page.evaluate(async () => {
    const el = document.querySelector('#form-probe') as unknown as { pending: boolean; status: unknown; updateComplete: Promise<boolean> };
    el.status = { ok: true, text: 'A new thread started.' };
    el.pending = false;
    // Until no update is pending: closing the form is an update of its own.
    while (!(await el.updateComplete));
  });
}

describeBrowser('the new-thread form', () => {
  const suite = browserSuite({ server: true });

  it('closes on success only the form the thread was started from, not one opened again while it was under way', async () => {
    const { context, page } = await openAs(suite.browser, 'Nia');
    try {
      await page.goto(`${suite.server.url}/chat`);
      await mountList(page);
      const list = page.locator('#form-probe');
      const title = list.getByLabel('Title of the new thread');

      // Started and answered: the form's work is done.
      await list.getByRole('button', { name: 'New thread' }).click();
      await title.fill('First');
      await title.press('Enter');
      await list.getByRole('button', { name: 'Starting…' }).waitFor();
      await answerStarted(page);
      await expect.poll(() => title.count()).toBe(0);

      // Started, then the form closed and opened again before the answer came: the new form stays.
      await list.getByRole('button', { name: 'New thread' }).click();
      await title.fill('Second');
      await title.press('Enter');
      await list.getByRole('button', { name: 'Starting…' }).waitFor();
      await list.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => title.count()).toBe(0);
      await list.getByRole('button', { name: 'New thread' }).click();
      await title.waitFor();
      await answerStarted(page);
      expect(await title.count()).toBe(1);
      expect(await title.isEnabled()).toBe(true);
    } finally {
      await context.close();
    }
  });
});
