import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ARTIFACTS, browserSuite, describeBrowser, openAs, probeResults, say, scanDom } from './harness.js';

/** Sends a message and waits until the server has confirmed it. */
async function sayConfirmed(page: Page, text: string): Promise<void> {
  await say(page, text);
  await page.locator('salon-message-item[state=sending]').first().waitFor({ state: 'detached' });
}

describeBrowser('a busy room', () => {
  const suite = browserSuite({ server: { env: { SEED_DEMO: 'true' } }, artifacts: true });

  it('is saved as a screenshot (desktop and phone) with people, markdown, an answer with sources and someone typing', async () => {
    const list = (await (await fetch(`${suite.server.url}/api/v1/content?kind=news&limit=100`)).json()) as { items: { id: string; title: string }[] };
    const story = list.items.find((i) => /sodium-ion/i.test(i.title)) ?? list.items[0];
    const url = `${suite.server.url}/chat?id=${story.id}`;
    const desk = { width: 1280, height: 900 };
    const people = await Promise.all(['Ada Moreno', 'Bob Lindqvist', 'Chen Wei', 'Dana Okafor'].map((n) => openAs(suite.browser, n, desk)));
    const phone = await openAs(suite.browser, 'Eli (phone)', { width: 375, height: 812 });
    try {
      for (const [i, p] of people.entries()) {
        await p.page.goto(url);
        await p.page.locator(`salon-member-list .count[data-count="${i + 1}"]`).waitFor();
      }
      const [ada, bob, chen, dana] = people.map((p) => p.page);
      await sayConfirmed(ada, 'Has anyone read the **NBTC report** itself? 168 Wh/kg at cell level sounds *very* good for sodium-ion.');
      await sayConfirmed(bob, 'Pack level is 142 Wh/kg according to the article — close to LFP.');
      await sayConfirmed(chen, 'The cold-weather number is the interesting bit:\n\n```\n-20 °C: 91% of room-temperature capacity\nLFP reference: ~70%\n```');
      await sayConfirmed(dana, 'Source for the test centre: [NBTC](https://news.example/nbtc) `4,100 cycles @ 1C`');
      await ada.locator('salon-composer label.switch').click();
      await sayConfirmed(ada, 'What did the independent tests find about cycle life and cold weather?');
      await ada.locator('salon-message-item[kind=assistant][state=sent]').waitFor({ timeout: 30_000 });
      await sayConfirmed(bob, 'Thanks! So roughly 11 years of daily cycling before hitting 80%.');
      await phone.page.goto(url);
      // On a phone the people fold behind the room's Details toggle, which says how many are here.
      await phone.page.locator('salon-room .details-toggle [data-here="5"]').waitFor();
      await chen.locator('salon-composer textarea').pressSequentially('Worth noting');
      await dana.locator('salon-typing-indicator span').waitFor();
      await phone.page.locator('salon-typing-indicator span').waitFor();

      const desktopShot = join(ARTIFACTS, 'busy-room.png');
      const phoneShot = join(ARTIFACTS, 'busy-room-375.png');
      await dana.screenshot({ path: desktopShot });
      await phone.page.screenshot({ path: phoneShot });
      expect(statSync(desktopShot).size).toBeGreaterThan(10_000);
      expect(statSync(phoneShot).size).toBeGreaterThan(5_000);
      expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      for (const p of [dana, phone.page]) {
        expect(await scanDom(p)).toEqual([]);
        expect((await probeResults(p)).violations).toEqual([]);
      }
    } finally {
      for (const p of [...people, phone]) await p.context.close();
    }
    // Five pages, six messages and an answer one after another: ~25 s on a quiet 2-core machine,
    // past the default 30 s on CI's busy one.
  }, 90_000);
});
