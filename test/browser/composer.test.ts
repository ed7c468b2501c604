/** The composer with a text near or past the room's limit: nothing typed or pasted is cut off, it says by how much to shorten it, and a screen reader hears each step once. */
import { beforeAll, expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, openAs } from './harness.js';

describeBrowser('the composer', () => {
  const suite = browserSuite({ server: true });

  beforeAll(async () => {
    await suite.server.app.salon.store.upsertItem(item('news_compose', { title: 'Composer drill' }));
  });

  /** `name`'s page in the drill's room, its composer focused, and the texts of the `say` frames it sends. */
  async function openComposer(name: string) {
    const { context, page } = await openAs(suite.browser, name);
    const says: string[] = [];
    page.on('websocket', (ws) =>
      ws.on('framesent', (f) => {
        const frame = JSON.parse(String(f.payload)) as { type?: string; text?: string };
        if (frame.type === 'say') says.push(frame.text ?? '');
      }),
    );
    const box = page.locator('salon-composer textarea');
    try {
      await page.goto(`${suite.server.url}/chat?id=news_compose`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor();
      await box.focus();
    } catch (err) {
      await context.close();
      throw err;
    }
    return { context, page, box, says };
  }

  it('keeps a pasted text longer than the limit whole, says how many characters too many, and sends it once short enough', async () => {
    const { context, page, box, says } = await openComposer('Cal');
    try {
      // As a paste arrives: one insertion of 4,100 characters.
      const long = `${'word '.repeat(819)}tail!`;
      expect(long.length).toBe(4_100);
      await page.keyboard.insertText(long);
      expect(await box.inputValue()).toBe(long);
      const counter = page.locator('salon-composer .count');
      const status = page.locator('salon-composer [data-limit-status]');
      expect(await counter.textContent()).toBe('100 characters too many: shorten it to send');
      expect(await status.textContent()).toBe('Too long to send: shorten the message.');
      expect(await page.locator('salon-composer button[type=submit]').isDisabled()).toBe(true);
      await box.press('Enter');
      expect(await box.inputValue()).toBe(long);

      // Shortened to the limit, it goes: its last space is trimmed off when sent, so it is one under.
      await box.press('End');
      for (let i = 0; i < 100; i++) await box.press('Backspace');
      expect(await counter.textContent()).toBe('1 character left');
      expect(await status.textContent()).toBe('Fewer than 20 characters left.');
      await box.press('Enter');
      await expect.poll(() => says).toEqual([long.slice(0, 4_000).trim()]);
    } finally {
      await context.close();
    }
  });

  it('tells a screen reader each step toward the limit once, not every key', async () => {
    const { context, page } = await openAs(suite.browser, 'Dee');
    try {
      await page.goto(`${suite.server.url}/chat?id=news_compose`);
      const box = page.locator('salon-composer textarea');
      const counter = page.locator('salon-composer .count');
      const status = page.locator('salon-composer [data-limit-status]');
      await box.focus();
      await page.keyboard.insertText('x'.repeat(3_000));
      expect(await status.textContent()).toBe('');
      await page.keyboard.insertText('y'.repeat(600));
      expect(await counter.textContent()).toBe('400 characters left');
      expect(await status.textContent()).toBe('Fewer than 500 characters left.');
      // The visible count changes with every key; what is announced does not.
      await box.press('z');
      expect(await counter.textContent()).toBe('399 characters left');
      expect(await status.textContent()).toBe('Fewer than 500 characters left.');
      expect(await counter.getAttribute('aria-live')).toBeNull();
      expect(await page.locator('salon-composer [aria-live]:not([role="status"])').count()).toBe(0);
      await page.keyboard.insertText('w'.repeat(350));
      expect(await status.textContent()).toBe('Fewer than 100 characters left.');
    } finally {
      await context.close();
    }
  });

  it('takes a text starting with /ask as a question, as the room does: "Only me" is offered, and on, it is asked privately', async () => {
    const { context, page } = await openAs(suite.browser, 'Eli');
    const sent: { type?: string; text?: string; private?: boolean; active?: boolean }[] = [];
    page.on('websocket', (ws) => ws.on('framesent', (f) => sent.push(JSON.parse(String(f.payload)) as (typeof sent)[number])));
    try {
      await page.goto(`${suite.server.url}/chat?id=news_compose`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor();
      const onlyMe = page.locator('salon-composer label.switch', { hasText: 'Only me' });
      expect(await onlyMe.count()).toBe(0);
      const box = page.locator('salon-composer textarea');
      await box.fill('/ask what did the others say about me?');
      await expect.poll(() => onlyMe.count()).toBe(1);
      expect(await page.locator('salon-composer button[type=submit]').textContent()).toContain('Ask');
      await onlyMe.click();
      await box.press('Enter');
      await expect
        .poll(() => sent.filter((f) => f.type === 'ask'))
        .toEqual([expect.objectContaining({ text: 'what did the others say about me?', private: true })]);
      // Nothing of it went to the room, and the room was told the member stopped typing as it turned private.
      expect(sent.filter((f) => f.type === 'say')).toEqual([]);
      expect(sent.filter((f) => f.type === 'typing').at(-1)).toEqual({ type: 'typing', active: false });
    } finally {
      await context.close();
    }
  });

  it('does not count the spaces after the text, which sending trims off', async () => {
    const { context, page, box, says } = await openComposer('Gus');
    try {
      await page.keyboard.insertText(`${'s'.repeat(3_998)}${' '.repeat(10)}`);
      expect(await page.locator('salon-composer .count').textContent()).toBe('2 characters left');
      expect(await page.locator('salon-composer button[type=submit]').isDisabled()).toBe(false);
      await box.press('Enter');
      await expect.poll(() => says).toEqual(['s'.repeat(3_998)]);
    } finally {
      await context.close();
    }
  });

  it('counts the "@ai " the Ask AI switch puts before a question, so a question it says fits is not refused as too long', async () => {
    const { context, page } = await openAs(suite.browser, 'Fay');
    const sent: { type?: string; text?: string }[] = [];
    const refused: string[] = [];
    page.on('websocket', (ws) => {
      ws.on('framesent', (f) => sent.push(JSON.parse(String(f.payload)) as (typeof sent)[number]));
      ws.on('framereceived', (f) => {
        const frame = JSON.parse(String(f.payload)) as { type?: string; code?: string };
        if (frame.type === 'error') refused.push(frame.code ?? '');
      });
    });
    try {
      await page.goto(`${suite.server.url}/chat?id=news_compose`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor();
      const box = page.locator('salon-composer textarea');
      const counter = page.locator('salon-composer .count');
      const submit = page.locator('salon-composer button[type=submit]');
      await box.focus();
      await page.keyboard.insertText('q'.repeat(3_998));
      expect(await counter.textContent()).toBe('2 characters left');
      await page.locator('salon-composer label.switch', { hasText: 'Ask AI' }).click();
      // Sent, it is `@ai ` and the 3,998: four more than the room takes.
      expect(await counter.textContent()).toBe('2 characters too many: shorten it to send');
      expect(await submit.isDisabled()).toBe(true);
      await box.press('Enter');
      expect(await box.inputValue()).toHaveLength(3_998);

      await box.press('End');
      for (let i = 0; i < 2; i++) await box.press('Backspace');
      expect(await counter.textContent()).toBe('0 characters left');
      await box.press('Enter');
      await expect.poll(() => sent.filter((f) => f.type === 'say').map((f) => f.text)).toEqual([`@ai ${'q'.repeat(3_996)}`]);
      await page
        .locator('salon-message-item', { hasText: 'q'.repeat(40) })
        .first()
        .waitFor();
      expect(refused).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
