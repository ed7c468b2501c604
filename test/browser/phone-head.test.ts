/**
 * A room's head on a 360 × 740 phone: opened with a very long title, context and thread title, it
 * never pushes the composer off the screen; folded, the Details toggle says what it hides (merge
 * suggestions, the thread's memory off), and the row of threads shows a title beside its badges.
 */
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { ADMIN } from '../helpers.js';
import { ARTIFACTS, browserSuite, describeBrowser, item, openAs, say } from './harness.js';

const PHONE = { width: 360, height: 740 };
const ROOM = 'news_phonehead';
const LONG_TITLE = Array.from({ length: 24 }, (_, i) => `Port Avelin council item ${i + 1}`).join(', ');

describeBrowser('a room head on a phone', () => {
  const suite = browserSuite({ server: true, artifacts: true });

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(item(ROOM, { title: LONG_TITLE, description: `${'A long context sentence without an end '.repeat(20)}.` }));
    const main = await store.ensureMainThread(ROOM);
    const res = await fetch(`${suite.server.url}/api/v1/rooms/${ROOM}/threads`, {
      method: 'POST',
      headers: { ...ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'The same council meeting, told again at some length by another member'.slice(0, 120) }),
    });
    const { thread: dup } = (await res.json()) as { thread: { id: string } };
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], setBridges: [{ threadId: main.id, otherId: dup.id, weight: 0.9 }] });
  });

  it('marks the folded Details toggle when it hides merge suggestions or a memory-off note, for the eye and for screen readers', async () => {
    const { context, page } = await openAs(suite.browser, 'Pia', PHONE);
    try {
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      const toggle = page.locator('salon-room .details-toggle');
      await page.locator('salon-room .details-toggle [data-here="1"]').waitFor();
      const marker = toggle.locator('[data-hidden-notes]');
      await expect.poll(() => marker.isVisible()).toBe(true);
      expect(await page.getByRole('button', { name: /^Details.*1 merge suggestion/ }).count()).toBe(1);

      await say(page, '/memory off');
      await expect.poll(() => page.getByRole('button', { name: /^Details.*1 merge suggestion.*memory is off/ }).count()).toBe(1);
      await page.screenshot({ path: join(ARTIFACTS, 'room-360-folded-notes.png') });
      // The open thread's button in the row still shows its title whole beside its two badges.
      const title = page.locator('salon-thread-list button.thread[aria-current="true"] .title');
      await expect.poll(() => title.evaluate((el) => el.clientWidth > 0 && el.scrollWidth <= el.clientWidth)).toBe(true);

      // Opened, the suggestions and the note are there to read: no marker.
      await toggle.click();
      await expect.poll(() => page.locator('salon-thread-header [data-suggestion]').isVisible()).toBe(true);
      expect(await marker.count()).toBe(0);
      await say(page, '/memory on');
    } finally {
      await context.close();
    }
  });

  it('keeps the whole composer on screen with Details open under a very long title, context and thread title', async () => {
    const { context, page } = await openAs(suite.browser, 'Quin', PHONE);
    try {
      await page.goto(`${suite.server.url}/chat?id=${ROOM}`);
      await page.locator('salon-room .details-toggle [data-here="1"]').waitFor();
      await expect.poll(() => page.locator('salon-thread-list button.thread').count()).toBe(2);
      await page.locator('salon-room .details-toggle').click();
      await expect.poll(() => page.locator('salon-thread-header [data-suggestion]').isVisible()).toBe(true);
      await expect.poll(() => page.locator('salon-room-header h1').textContent()).toBe(LONG_TITLE);

      for (const target of ['salon-composer textarea', 'salon-composer button[type=submit]', 'salon-composer input[name=ask]']) {
        const box = (await page.locator(target).boundingBox())!;
        expect(box.y + box.height, target).toBeLessThanOrEqual(PHONE.height);
      }
      expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(PHONE.height);
      await page.screenshot({ path: join(ARTIFACTS, 'room-360-details-long.png') });
      // The messages keep some room, and what the head holds can still be reached by scrolling it.
      expect((await page.locator('salon-message-list').boundingBox())!.height).toBeGreaterThanOrEqual(90);
      const title = page.locator('salon-room-header h1');
      await title.scrollIntoViewIfNeeded();
      expect(await title.isVisible()).toBe(true);
      // Scrolled to its end, the head still shows the toggle that closes it, on top of what scrolled under it.
      await page.locator('salon-room .head').evaluate((head) => (head.scrollTop = head.scrollHeight));
      const toggle = page.locator('salon-room .details-toggle');
      const at = (await toggle.boundingBox())!;
      const head = (await page.locator('salon-room .head').boundingBox())!;
      expect(at.y).toBeGreaterThanOrEqual(head.y - 1);
      expect(at.y + at.height).toBeLessThanOrEqual(head.y + head.height + 1);
      expect(
        await toggle.evaluate(
          (el, [x, y]) => {
            const root = el.getRootNode() as ShadowRoot;
            const hit = root.elementFromPoint(x, y);
            return !!hit && (hit === el || el.contains(hit));
          },
          [at.x + at.width / 2, at.y + at.height / 2],
        ),
      ).toBe(true);
      await toggle.click();
      await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('false');
      await toggle.click();
      const merge = page.getByRole('button', { name: /^Merge “The same council meeting/ });
      await merge.scrollIntoViewIfNeeded();
      const box = (await merge.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(PHONE.height);
    } finally {
      await context.close();
    }
  });
});
