import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { userIdOfToken } from '../../src/protocol/identity-token.js';
import { member } from '../rooms/helpers.js';
import { ARTIFACTS, browserSuite, describeBrowser, item, messageTexts, openAs, probeResults, say, scanDom } from './harness.js';

const DESKTOP = { width: 1200, height: 800 };
const person = (browser: Browser, name: string, viewport = DESKTOP) => openAs(browser, name, viewport);

/** Faster than anyone types: 16 sends in one go through the composer, past the server's burst allowance. */
async function burst(page: Page): Promise<void> {
  await page.evaluate(() => {
    const find = (root: Document | ShadowRoot): Element | null => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        if (el.tagName === 'SALON-COMPOSER') return el;
        const inner = el.shadowRoot && find(el.shadowRoot);
        if (inner) return inner;
      }
      return null;
    };
    const composer = find(document)!;
    for (let i = 1; i <= 16; i++) {
      composer.dispatchEvent(new CustomEvent('salon-send', { detail: { text: `burst ${i}`, ask: false }, bubbles: true, composed: true }));
    }
  });
}

describeBrowser('a room in two browsers', () => {
  const suite = browserSuite({ server: true });
  /** Opens news_r1 on `page` and waits until its member is listed there, alone. */
  const enterAlone = async (page: Page) => {
    await page.goto(`${suite.server.url}/chat?id=news_r1`);
    await page.locator('salon-member-list .count[data-count="1"]').waitFor();
  };

  beforeAll(async () => {
    await suite.server.app.salon.store.upsertItem(
      item('news_r1', {
        title: 'Harbour bridge reopens after repairs',
        description: 'The bridge carries traffic again after eight months. Engineers replaced two cables.',
        url: 'https://news.example/bridge',
      }),
    );
  });

  it('shows each person the other, their messages and typing; a leave updates the member list', async () => {
    const ada = await person(suite.browser, 'Ada');
    const bob = await person(suite.browser, 'Bob');
    try {
      await ada.page.goto(`${suite.server.url}/chat?id=news_r1`);
      await expect.poll(() => ada.page.locator('salon-member-list .count').getAttribute('data-count')).toBe('1');
      await expect.poll(() => ada.page.locator('salon-room-header h1').textContent()).toBe('Harbour bridge reopens after repairs');
      expect(await ada.page.locator('salon-room-header [data-context]').textContent()).toBe('The bridge carries traffic again after eight months.');
      expect(await ada.page.locator('salon-room-header a[data-original]').getAttribute('href')).toBe('https://news.example/bridge');

      await bob.page.goto(`${suite.server.url}/chat?id=news_r1`);
      for (const p of [ada.page, bob.page]) {
        await expect.poll(() => p.locator('salon-member-list .count').getAttribute('data-count')).toBe('2');
        await expect.poll(() => p.locator('salon-member-list li .name').allTextContents()).toEqual(expect.arrayContaining(['Ada', 'Bob']));
      }

      await say(ada.page, 'Hello **Bob**, did you see the *cables*?');
      const atBob = bob.page.locator('salon-message-item', { hasText: 'did you see the' });
      await expect.poll(() => atBob.count()).toBe(1);
      expect(await atBob.locator('salon-markdown strong').textContent()).toBe('Bob');
      expect(await atBob.locator('salon-markdown em').textContent()).toBe('cables');
      expect(await atBob.locator('.author').textContent()).toContain('Ada');

      await bob.page.locator('salon-composer textarea').pressSequentially('Yes, I');
      await expect.poll(() => ada.page.locator('salon-typing-indicator span').textContent()).toContain('Bob is typing');
      await bob.page.locator('salon-composer textarea').press('Enter');
      await expect.poll(() => ada.page.locator('salon-message-item', { hasText: 'Yes, I' }).count()).toBe(1);
      await expect.poll(() => ada.page.locator('salon-typing-indicator span').count()).toBe(0);
      // Each sees their own message once (the echo replaced the "sending" copy) and marked as theirs.
      await expect.poll(() => ada.page.locator('salon-message-item[mine]').count()).toBe(1);
      expect(await ada.page.locator('salon-message-item').count()).toBe(2);
      expect(await bob.page.locator('salon-message-item').count()).toBe(2);

      await bob.context.close();
      await expect.poll(() => ada.page.locator('salon-member-list .count').getAttribute('data-count')).toBe('1');
      expect(await ada.page.locator('salon-member-list li .name').allTextContents()).toEqual(['Ada']);

      const probe = await probeResults(ada.page);
      expect(probe.violations).toEqual([]);
      expect(probe.alerts).toEqual([]);
      expect(await scanDom(ada.page)).toEqual([]);
    } finally {
      await ada.context.close();
      await bob.context.close().catch(() => {});
    }
  });

  it('keeps the same identity across reloads through the saved token', async () => {
    const cy = await person(suite.browser, 'Cy');
    try {
      await cy.page.goto(`${suite.server.url}/chat?id=news_r1`);
      await say(cy.page, 'first visit');
      // Shown as the member's own while it is still sending; the token is saved when the welcome comes.
      await expect.poll(() => cy.page.locator('salon-message-item[mine][state=sent]').count()).toBe(1);
      const readToken = () => cy.page.evaluate(() => localStorage.getItem('salon.token'));
      await expect.poll(readToken).toMatch(/^v2\./);
      const userId = userIdOfToken((await readToken())!);
      await cy.page.reload();
      await expect.poll(() => cy.page.locator('salon-message-item', { hasText: 'first visit' }).count()).toBe(1);
      // Still recognised as the author after the reload: the server knows the same user id.
      await expect.poll(() => cy.page.locator('salon-message-item[mine]', { hasText: 'first visit' }).count()).toBe(1);
      // The reload's welcome renewed the token (a later issue time), for the same id.
      expect(userIdOfToken((await readToken())!)).toBe(userId);
    } finally {
      await cy.context.close();
    }
  });

  it("keeps a member's message when someone sends another with its clientId, live and on a fresh page", async () => {
    await suite.server.app.salon.store.upsertItem(item('news_cid', { title: 'Copied clientIds' }));
    const ada = await person(suite.browser, 'Ada');
    const bob = await person(suite.browser, 'Bob');
    const eve = await member(`${suite.server.url.replace('http', 'ws')}/ws/rooms/news_cid`, 'Eve');
    try {
      await ada.page.goto(`${suite.server.url}/chat?id=news_cid`);
      await bob.page.goto(`${suite.server.url}/chat?id=news_cid`);
      await ada.page.locator('salon-member-list .count[data-count="3"]').waitFor();
      await say(ada.page, 'the meeting is at 10, room 4');
      const adas = await eve.client.next('message', (f) => f.message.author.name === 'Ada');
      eve.client.send({ type: 'say', text: 'lol', clientId: adas.message.clientId });
      await eve.client.next('message', (f) => f.message.author.name === 'Eve');
      const both = ['the meeting is at 10, room 4', 'lol'];
      for (const page of [ada.page, bob.page]) await expect.poll(() => messageTexts(page)).toEqual(both);
      await bob.page.reload();
      await expect.poll(() => messageTexts(bob.page)).toEqual(both);
    } finally {
      eve.client.close();
      await ada.context.close();
      await bob.context.close();
    }
  });

  it('works from the keyboard, with labelled controls and a polite live region', async () => {
    const fay = await person(suite.browser, 'Fay');
    try {
      await enterAlone(fay.page);
      const log = fay.page.getByRole('log', { name: 'Messages' });
      expect(await log.getAttribute('aria-live')).toBe('polite');
      expect(await fay.page.getByRole('switch', { name: 'Ask AI' }).count()).toBe(1);
      expect(await fay.page.getByRole('navigation', { name: 'Sections' }).count()).toBe(1);
      expect(await fay.page.getByRole('complementary', { name: 'People in this room' }).count()).toBe(1);

      const focused = () =>
        fay.page.evaluate(() => {
          let el: Element | null = document.activeElement;
          while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
          return el ? `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.textContent?.trim() ? `:${el.textContent.trim().slice(0, 20)}` : ''}` : '';
        });
      await fay.page.keyboard.press('Tab');
      expect(await focused()).toBe('a:Skip to content');
      const order: string[] = [];
      for (let i = 0; i < 25 && !order.includes('textarea#message'); i++) {
        await fay.page.keyboard.press('Tab');
        order.push(await focused());
      }
      // Navigation, then the room (original link, own name, messages), then the message box.
      expect(order.indexOf('a:News')).toBeLessThan(order.indexOf('textarea#message'));
      expect(order.findIndex((f) => f.startsWith('div'))).toBeLessThan(order.indexOf('textarea#message'));
      expect(order).toContain('textarea#message');
      await fay.page.keyboard.type('typed with the keyboard');
      await fay.page.keyboard.press('Enter');
      await expect.poll(() => fay.page.locator('salon-message-item[state=sent]', { hasText: 'typed with the keyboard' }).count()).toBe(1);
      expect(await focused()).toBe('textarea#message');
      // The (now disabled) Send button is skipped; next comes the Ask AI switch.
      await fay.page.keyboard.press('Tab');
      expect(await focused()).toMatch(/^input/);
      await fay.page.keyboard.press('Space');
      expect(await fay.page.getByRole('switch', { name: 'Ask AI' }).isChecked()).toBe(true);
    } finally {
      await fay.context.close();
    }
  });

  it('sends a few short messages typed quickly without a refusal, and no "stopped typing" before each', async () => {
    const hal = await person(suite.browser, 'Hal');
    const sent: Record<string, unknown>[] = [];
    hal.page.on('websocket', (ws) => ws.on('framesent', (f) => sent.push(JSON.parse(String(f.payload)) as Record<string, unknown>)));
    try {
      await enterAlone(hal.page);
      const box = hal.page.locator('salon-composer textarea');
      const answers = ['yes', 'no', 'ok', 'sure', 'fine', 'done'];
      for (const text of answers) {
        await box.pressSequentially(text);
        await box.press('Enter');
      }
      await expect.poll(() => hal.page.locator('salon-message-item[mine][state=sent]').count()).toBe(answers.length);
      expect(await hal.page.locator('salon-message-item[state=failed]').count()).toBe(0);
      // Each message is announced by one "typing" at its first key; the server ends it on the say.
      const frames = sent.filter((f) => f.type === 'typing' || f.type === 'say');
      expect(frames.filter((f) => f.type === 'say').map((f) => f.text)).toEqual(answers);
      expect(frames.filter((f) => f.type === 'typing' && f.active === false)).toEqual([]);
    } finally {
      await hal.context.close();
    }
  });

  it('shows a rate-limit refusal on the message and lets the member retry it', async () => {
    const gus = await person(suite.browser, 'Gus');
    try {
      await enterAlone(gus.page);
      await burst(gus.page);
      const failed = gus.page.locator('salon-message-item[state=failed]');
      await expect.poll(() => failed.count()).toBeGreaterThan(0);
      expect(await failed.first().locator('.failed').textContent()).toContain('too fast');
      expect(await gus.page.locator('salon-connection-status [data-notice=ERR_RATE_LIMITED]').count()).toBe(1);
      const sentBefore = await gus.page.locator('salon-message-item[state=sent]').count();
      await new Promise((r) => setTimeout(r, 1500));
      await failed.first().getByRole('button', { name: 'Retry' }).click();
      await expect.poll(() => gus.page.locator('salon-message-item[state=sent]').count()).toBe(sentBefore + 1);
      await gus.page.locator('salon-connection-status').getByRole('button', { name: 'Dismiss this notice' }).click();
      expect(await gus.page.locator('salon-connection-status [data-notice]').count()).toBe(0);
    } finally {
      await gus.context.close();
    }
  });

  it('keeps a notice and its Dismiss on the same lines on a 360 px phone, not a line of its own for the button', async () => {
    const ivy = await person(suite.browser, 'Ivy', { width: 360, height: 740 });
    try {
      await ivy.page.goto(`${suite.server.url}/chat?id=news_r1`);
      await ivy.page.locator('salon-room .details-toggle [data-here="1"]').waitFor();
      await burst(ivy.page);
      const notice = ivy.page.locator('salon-connection-status [data-notice=ERR_RATE_LIMITED]');
      await notice.waitFor();
      const text = (await notice.locator('span').first().boundingBox())!;
      const dismiss = notice.getByRole('button', { name: 'Dismiss this notice' });
      const button = (await dismiss.boundingBox())!;
      expect(button.y).toBeLessThan(text.y + text.height);
      expect(button.x).toBeGreaterThan(text.x + text.width - 1);
      await dismiss.click();
      expect(await ivy.page.locator('salon-connection-status [data-notice]').count()).toBe(0);
    } finally {
      await ivy.context.close();
    }
  });

  it('leaves the keyboard focus on the messages after Retry or Discard, not on the page body', async () => {
    const kim = await person(suite.browser, 'Kim');
    const focused = () =>
      kim.page.evaluate(() => {
        let el: Element | null = document.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        return el ? `${el.tagName.toLowerCase()}${el.getAttribute('role') ? `[role=${el.getAttribute('role')}]` : ''}` : 'none';
      });
    try {
      await enterAlone(kim.page);
      await burst(kim.page);
      const retry = kim.page.locator('salon-message-item[state=failed]').first().getByRole('button', { name: 'Retry' });
      await retry.waitFor();
      await retry.focus();
      await kim.page.keyboard.press('Enter');
      await expect.poll(focused).toBe('div[role=log]');

      await say(kim.page, '/ask');
      const discard = kim.page.locator('salon-message-item[state=failed]', { hasText: '/ask' }).getByRole('button', { name: 'Discard' });
      await discard.waitFor();
      await discard.focus();
      await kim.page.keyboard.press('Enter');
      await expect.poll(() => kim.page.locator('salon-message-item', { hasText: '/ask' }).count()).toBe(0);
      await expect.poll(focused).toBe('div[role=log]');
    } finally {
      await kim.context.close();
    }
  });

  it('answers a mistyped command under it, without a Retry that would be refused again or a banner repeating it', async () => {
    const hal = await person(suite.browser, 'Hal');
    try {
      await enterAlone(hal.page);
      for (const [command, reason] of [
        ['/split', 'name the thread by its id'],
        ['/merge nope', ''],
        ['/ask', 'ask needs a question'],
      ]) {
        await say(hal.page, command);
        const refused = hal.page.locator('salon-message-item[state=failed]').filter({ hasText: command });
        await expect.poll(() => refused.count(), { message: command }).toBe(1);
        expect(await refused.locator('.failed').textContent(), command).toContain(reason ? reason : 'Not sent');
        expect(await refused.getByRole('button', { name: 'Retry' }).count(), command).toBe(0);
        expect(await refused.getByRole('button', { name: 'Discard' }).count(), command).toBe(1);
      }
      expect(await hal.page.locator('salon-connection-status [data-notice]').count()).toBe(0);
      await hal.page.locator('salon-message-item[state=failed]').first().getByRole('button', { name: 'Discard' }).click();
      await expect.poll(() => hal.page.locator('salon-message-item[state=failed]').count()).toBe(2);
    } finally {
      await hal.context.close();
    }
  });

  it('joins as a guest when the saved name would be refused, and keeps its name when a new one would be', async () => {
    // A name saved before the server refused invisible characters: sent at every join, it never got in.
    const ivy = await person(suite.browser, 'Ivy\u200b');
    try {
      await ivy.page.goto(`${suite.server.url}/chat?id=news_r1`);
      const own = ivy.page.locator('salon-member-list li:has(.you) .name');
      await expect.poll(() => own.textContent()).toMatch(/^Guest \d{4}$/);
      const guest = (await own.textContent())!;
      expect(await ivy.page.evaluate(() => localStorage.getItem('salon.name'))).toBe(guest);

      const rename = async (name: string) => {
        await ivy.page.getByRole('button', { name: 'Change your name' }).click();
        await ivy.page.locator('salon-member-list #name').fill(name);
        await ivy.page.locator('salon-member-list').getByRole('button', { name: 'Save' }).click();
      };
      await rename('Salon AI');
      await expect.poll(() => ivy.page.locator('salon-connection-status [data-notice=ERR_NAME_RESERVED]').count()).toBe(1);
      await rename('Iv\u2060y');
      await expect.poll(() => ivy.page.locator('salon-connection-status [data-notice=ERR_NAME_UNUSABLE]').count()).toBe(1);
      expect(await ivy.page.locator('salon-connection-status [data-notice]').textContent()).toContain('visible characters');
      expect(await own.textContent()).toBe(guest);
      expect(await ivy.page.evaluate(() => localStorage.getItem('salon.name'))).toBe(guest);

      await rename('  Ivy   Lee ');
      await expect.poll(() => own.textContent()).toBe('Ivy Lee');
      expect(await ivy.page.evaluate(() => localStorage.getItem('salon.name'))).toBe('Ivy Lee');
    } finally {
      await ivy.context.close();
    }
  });

  it('lays out each paragraph of a message in the direction of its own text: Hebrew and Arabic right to left', async () => {
    await suite.server.app.salon.store.upsertItem(item('news_rtl', { title: 'Both directions' }));
    const rae = await person(suite.browser, 'Rae');
    try {
      await rae.page.goto(`${suite.server.url}/chat?id=news_rtl`);
      await rae.page.locator('salon-member-list .count[data-count="1"]').waitFor();
      await say(rae.page, 'מה שלומך? Salon עובד!');
      await say(rae.page, 'مرحبا بالجميع\n\nHello everyone, and **welcome**');
      await expect.poll(() => rae.page.locator('salon-message-item[mine][state=sent]').count()).toBe(2);
      const directions = await rae.page
        .locator('salon-message-item salon-markdown')
        .evaluateAll((els) => els.map((el) => Array.from(el.shadowRoot!.querySelectorAll('p')).map((p) => getComputedStyle(p).direction)));
      expect(directions).toEqual([['rtl'], ['rtl', 'ltr']]);
      // What is being written, too.
      const box = rae.page.locator('salon-composer textarea');
      await box.fill('שלום');
      expect(await box.evaluate((el) => el.matches(':dir(rtl)'))).toBe(true);
      await box.fill('Hello');
      expect(await box.evaluate((el) => el.matches(':dir(ltr)'))).toBe(true);
    } finally {
      await rae.context.close();
    }
  });

  it('says plainly when a room does not exist', async () => {
    const dee = await person(suite.browser, 'Dee');
    try {
      await dee.page.goto(`${suite.server.url}/chat?id=news_missing`);
      const fatal = dee.page.locator('salon-room [data-fatal]');
      await expect.poll(() => fatal.getAttribute('data-fatal')).toBe('ERR_ROOM_NOT_FOUND');
      expect(await fatal.textContent()).toContain('does not exist');
      expect(await dee.page.locator('salon-composer').count()).toBe(0);
    } finally {
      await dee.context.close();
    }
  });

  it('fits a 360 × 740 phone: the sections on one line, one row of thread buttons, the composer on screen', async () => {
    const room = 'news_r360';
    const { store, threads } = suite.server.app.salon;
    await store.upsertItem(item(room, { title: 'Port Avelin measles outbreak reaches 140 cases; school vaccination clinics extended' }));
    await store.ensureMainThread(room);
    for (const title of ['Vaccination clinics and the queues outside them', 'School closures + the exam timetable'])
      await threads.create(room, title, 'u_someone');
    const nia = await person(suite.browser, 'Nia', { width: 360, height: 740 });
    try {
      await nia.page.goto(`${suite.server.url}/chat?id=${room}`);
      await nia.page.locator('salon-room .details-toggle [data-here="1"]').waitFor();
      await expect.poll(() => nia.page.locator('salon-thread-list button.thread').count()).toBe(3);
      // The header's sections on one line (they wrapped into three rows beside the name).
      const navTops = await nia.page.locator('salon-app nav a').evaluateAll((links) => links.map((a) => Math.round(a.getBoundingClientRect().top)));
      expect(new Set(navTops).size).toBe(1);
      // Each thread button one line high: a long title no longer makes the row tall.
      const heights = await nia.page.locator('salon-thread-list button.thread').evaluateAll((b) => b.map((x) => Math.round(x.getBoundingClientRect().height)));
      expect(Math.max(...heights) - Math.min(...heights)).toBeLessThanOrEqual(1);
      // The whole composer is on screen: the box (its placeholder whole), Send and the Ask AI switch.
      for (const target of ['salon-composer textarea', 'salon-composer button[type=submit]', 'salon-composer input[name=ask]']) {
        const box = (await nia.page.locator(target).boundingBox())!;
        expect(box.y + box.height, target).toBeLessThanOrEqual(740);
      }
      const placeholder = await nia.page.locator('salon-composer textarea').evaluate((el) => {
        const t = el as HTMLTextAreaElement;
        const probe = document.createElement('div');
        const style = getComputedStyle(t);
        Object.assign(probe.style, {
          position: 'absolute',
          visibility: 'hidden',
          font: style.font,
          width: `${t.clientWidth}px`,
          padding: style.padding,
          boxSizing: 'border-box',
          whiteSpace: 'pre-wrap',
          lineHeight: style.lineHeight,
        });
        probe.textContent = t.placeholder;
        document.body.append(probe);
        const fits = probe.getBoundingClientRect().height <= t.clientHeight;
        probe.remove();
        return fits;
      });
      expect(placeholder).toBe(true);
      expect(await nia.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      mkdirSync(ARTIFACTS, { recursive: true });
      await nia.page.screenshot({ path: join(ARTIFACTS, 'room-360.png') });
      // A shorter phone scrolls the page to the composer (the wheel, as a reader would), never cuts it off.
      await nia.page.setViewportSize({ width: 360, height: 600 });
      await nia.page.mouse.move(180, 300);
      await nia.page.mouse.wheel(0, 2000);
      await expect
        .poll(async () => {
          const box = (await nia.page.locator('salon-composer input[name=ask]').boundingBox())!;
          return box.y + box.height <= 600;
        })
        .toBe(true);
    } finally {
      await nia.context.close();
    }
  });

  it('gives the messages at least half of a 360 × 740 phone: the head folds behind a Details toggle the keyboard opens and closes', async () => {
    const room = 'news_rfold';
    const { store, threads } = suite.server.app.salon;
    await store.upsertItem(
      item(room, {
        title: 'Port Avelin measles outbreak reaches 140 cases; school vaccination clinics extended',
        description: 'Health officials said the outbreak is spreading in two schools. Clinics stay open until Friday.',
      }),
    );
    await store.ensureMainThread(room);
    for (const title of ['Vaccination clinics and the queues outside them', 'School closures + the exam timetable'])
      await threads.create(room, title, 'u_someone');
    const nia = await person(suite.browser, 'Nia', { width: 360, height: 740 });
    const bob = await person(suite.browser, 'Bob');
    try {
      await nia.page.goto(`${suite.server.url}/chat?id=${room}`);
      await bob.page.goto(`${suite.server.url}/chat?id=${room}`);
      await nia.page.locator('salon-room .details-toggle [data-here="2"]').waitFor();
      await expect.poll(() => nia.page.locator('salon-thread-list button.thread').count()).toBe(3);
      const toggle = nia.page.getByRole('button', { name: /^Details/ });
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');

      // Folded: the list has at least half the screen, the composer is whole, the page does not scroll.
      const list = (await nia.page.locator('salon-message-list .scroller').boundingBox())!;
      expect(list.height).toBeGreaterThanOrEqual(740 / 2);
      const composer = (await nia.page.locator('salon-composer').boundingBox())!;
      expect(composer.y + composer.height).toBeLessThanOrEqual(740);
      expect(await nia.page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(740);
      // The title and the threads to switch to stay; what folds is hidden from screen readers too.
      expect(await nia.page.locator('salon-room-header h1').isVisible()).toBe(true);
      expect(await nia.page.getByRole('button', { name: /School closures/ }).isVisible()).toBe(true);
      const folded = () => [
        nia.page.locator('salon-room-header [data-context]'),
        nia.page.locator('salon-room-header a[data-original]'),
        nia.page.getByRole('button', { name: 'New thread' }),
        nia.page.locator('salon-member-list ul'),
        nia.page.getByRole('button', { name: 'Split this thread…' }),
      ];
      for (const part of folded()) expect(await part.isVisible(), String(part)).toBe(false);
      expect(await nia.page.getByRole('button', { name: 'Split this thread…' }).count()).toBe(0);
      // The toggle names what it controls, in its own tree.
      const controls = await nia.page
        .locator('salon-room')
        .evaluate((el) =>
          (el.shadowRoot!.querySelector('.details-toggle')!.getAttribute('aria-controls') ?? '').split(' ').map((id) => !!el.shadowRoot!.getElementById(id)),
        );
      expect(controls).toEqual([true, true, true]);
      mkdirSync(ARTIFACTS, { recursive: true });
      await nia.page.screenshot({ path: join(ARTIFACTS, 'room-360-folded.png') });

      // Enter opens it, everything is there, and Space folds it again, the focus staying on the toggle.
      await toggle.focus();
      await nia.page.keyboard.press('Enter');
      await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('true');
      for (const part of folded()) expect(await part.isVisible(), String(part)).toBe(true);
      expect(await nia.page.locator('salon-member-list li .name').allTextContents()).toEqual(expect.arrayContaining(['Nia', 'Bob']));
      const openComposer = (await nia.page.locator('salon-composer').boundingBox())!;
      expect(openComposer.y + openComposer.height).toBeLessThanOrEqual(740);
      await nia.page.screenshot({ path: join(ARTIFACTS, 'room-360-details.png') });
      await nia.page.keyboard.press('Space');
      await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('false');
      expect(await toggle.evaluate((el) => el.getRootNode() instanceof ShadowRoot && (el.getRootNode() as ShadowRoot).activeElement === el)).toBe(true);

      // Folded, a leave still changes the count shown and the one read out.
      await bob.context.close();
      await nia.page.locator('salon-room .details-toggle [data-here="1"]').waitFor();
      expect(await nia.page.locator('salon-member-list [aria-live]').textContent()).toBe('1 person in the room');

      // On a desktop there is nothing to fold: no toggle, the people listed.
      await nia.page.setViewportSize(DESKTOP);
      expect(await nia.page.getByRole('button', { name: /^Details/ }).count()).toBe(0);
      expect(await nia.page.locator('salon-member-list ul').isVisible()).toBe(true);
      expect(await nia.page.locator('salon-room-header [data-context]').isVisible()).toBe(true);
    } finally {
      await nia.context.close();
      await bob.context.close();
    }
  });

  it('is readable at phone width (375 px): nothing overflows sideways', async () => {
    const eve = await person(suite.browser, 'Eve', { width: 375, height: 740 });
    try {
      await eve.page.goto(`${suite.server.url}/chat?id=news_r1`);
      await expect.poll(() => eve.page.locator('salon-member-list .count').getAttribute('data-count')).toBe('1');
      await say(eve.page, 'A long line without breaks: https://example.org/a/very/long/path/that/should/wrap/inside/the/bubble/and/not/push/the/page/wider');
      await expect.poll(() => eve.page.locator('salon-message-item[mine]').count()).toBeGreaterThan(0);
      const width = await eve.page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(375);
      mkdirSync(ARTIFACTS, { recursive: true });
      await eve.page.screenshot({ path: join(ARTIFACTS, 'room-375.png') });
    } finally {
      await eve.context.close();
    }
  });
});
