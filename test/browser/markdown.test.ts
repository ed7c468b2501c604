import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { hasOverlongCluster } from '../../src/protocol/clusters.js';
import { corpus } from './markdown-corpus.js';
import { browserSuite, describeBrowser, instrument, item, probeResults, scanDom } from './harness.js';

/** The server refuses longer messages; the composer stops there too. */
const MAX_MESSAGE_CHARS = 4000;

describeBrowser('untrusted markdown in a room', () => {
  // The corpus goes in quickly; the flood guard is not what this test is about.
  const suite = browserSuite({
    server: {
      overrides: { roomOptions: { ratePerSecond: 1000, framesPerSecondPerAddress: 1000, roomMessagesPerSecond: 1000, rateBurst: 1000 } },
    },
  });
  let context: BrowserContext;
  let page: Page;
  const consoleLines: string[] = [];

  beforeAll(async () => {
    await suite.server.app.salon.store.upsertItem(item('news_md', { title: 'Markdown torture test' }));
    context = await suite.browser.newContext();
    await instrument(context);
    page = await context.newPage();
    page.on('console', (m) => consoleLines.push(m.text()));
    page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
    await page.goto(`${suite.server.url}/chat?id=news_md`);
    await page.locator('salon-member-list .count[data-count="1"]').waitFor();
  });

  /** Each text's links as message and as document: their hrefs joined by spaces, or null when none is a link. */
  function linksShown(texts: string[]): Promise<(string | null)[][]> {
    return page.evaluate(async (texts) => {
      const out: (string | null)[][] = [];
      for (const text of texts) {
        const row: (string | null)[] = [];
        for (const asDocument of [false, true]) {
          const el = document.createElement('salon-markdown') as HTMLElement & { text: string; document: boolean; updateComplete: Promise<boolean> };
          el.document = asDocument;
          document.body.append(el);
          el.text = text;
          await el.updateComplete;
          const links = Array.from(el.shadowRoot!.querySelectorAll('a[href]'));
          row.push(links.length ? links.map((a) => a.getAttribute('href')).join(' ') : null);
          el.remove();
        }
        out.push(row);
      }
      return out;
    }, texts);
  }

  it('renders the allowed subset, with safe links', async () => {
    const box = page.locator('salon-composer textarea');
    await box.fill('**b** *i* `c`\nline two [site](https://example.org/x) [mail](mailto:a@example.org)\n\n```\nfenced <b>\n```');
    await box.press('Enter');
    const msg = page.locator('salon-message-item[state=sent]', { hasText: 'line two' });
    await expect.poll(() => msg.count()).toBe(1);
    const md = msg.locator('salon-markdown');
    expect(await md.locator('strong').textContent()).toBe('b');
    expect(await md.locator('em').textContent()).toBe('i');
    expect(await md.locator('p > code').textContent()).toBe('c');
    expect(await md.locator('pre code').textContent()).toBe('fenced <b>\n');
    expect(await md.locator('br').count()).toBe(1);
    const links = md.locator('a');
    expect(await links.count()).toBe(2);
    for (const [i, href] of ['https://example.org/x', 'mailto:a@example.org'].entries()) {
      expect(await links.nth(i).getAttribute('href')).toBe(href);
      expect(await links.nth(i).getAttribute('target')).toBe('_blank');
      expect(await links.nth(i).getAttribute('rel')).toBe('noopener noreferrer nofollow');
    }
  });

  it('links no text written as one web address to another, nor any address carrying credentials', async () => {
    // [markdown, the link's href as shown, or null when the text shows as plain text]
    const cases: [string, string | null][] = [
      ['[https://bank.example/login](https://evil.example/phish)', null],
      ['[www.bank.example](https://evil.example/)', null],
      ['[Sign in at https://bank.example](https://evil.example/)', null],
      ['[**https://bank.example**](https://bank.example.evil.example/)', null],
      ['[//bank.example/login](https://evil.example/)', null],
      ['[https://bank.example@evil.example/](https://evil.example/)', null],
      ['[https://good.example@evil.example/](https://good.example@evil.example/)', null],
      ['[account](https://user:secret@bank.example/)', null],
      ['[https://bank.example/login](https://bank.example/login?next=1)', 'https://bank.example/login?next=1'],
      ['[www.example.org](https://example.org/x)', 'https://example.org/x'],
      ['[See https://bank.example.](https://www.bank.example/a)', 'https://www.bank.example/a'],
      ['[Node.js](https://nodejs.org/)', 'https://nodejs.org/'],
      ['[the docs](https://docs.example/)', 'https://docs.example/'],
    ];
    expect(await linksShown(cases.map(([text]) => text))).toEqual(cases.map(([, href]) => [href, href]));
  });

  it('reads a link’s text as it shows: invisible characters, bidi controls and lookalike slashes hide no address', async () => {
    // [markdown, the link's href as shown, or null when the text shows as plain text]
    const cases: [string, string | null][] = [
      ['[https:/\u200B/bank.example/login](https://evil.example/)', null],
      ['[www\u200B.bank.example](https://evil.example/)', null],
      ['[https://\u2060bank.example](https://evil.example/)', null],
      ['[https:\uFF0F\uFF0Fbank.example](https://evil.example/)', null],
      ['[https:\u2215\u2215bank.example](https://evil.example/)', null],
      // Shown right to left: "www.bank.example".
      ['[\u202Eelpmaxe.knab.www](https://evil.example/)', null],
      ['[the \u2067docs\u2069](https://docs.example/)', null],
      ['[https://bank.example\u200B/login](https://bank.example/login)', 'https://bank.example/login'],
      ['[Node\u00AD.js](https://nodejs.org/)', 'https://nodejs.org/'],
      // Read across the break or the space: "https://" and, below it, "bank.example".
      ['[https://\nbank.example](https://evil.example/)', null],
      ['[https://\\\nbank.example](https://evil.example/)', null],
      ['[https:// bank.example](https://evil.example/)', null],
      ['[notes // more](https://notes.example/)', 'https://notes.example/'],
    ];
    expect(await linksShown(cases.map(([text]) => text))).toEqual(cases.map(([, href]) => [href, href]));
  });

  it('shows the site a link leads to after a text that is a bare host name of another site', async () => {
    // [markdown, the link's text as shown] (every one stays a link)
    const cases: [string, string][] = [
      ['[paypal.com](https://evil.example/login)', 'paypal.com (evil.example)'],
      ['[**paypal.com**](https://paypal.com.evil.example/)', 'paypal.com (paypal.com.evil.example)'],
      ['[bank.example/login](https://evil.example/)', 'bank.example/login (evil.example)'],
      ['[b\u200Bank.example](https://evil.example/)', 'b\u200Bank.example (evil.example)'],
      ['[Node.js](https://nodejs.org/)', 'Node.js (nodejs.org)'],
      ['[example.org](https://www.example.org/x)', 'example.org'],
      ['[Example.ORG/docs](https://example.org/docs)', 'Example.ORG/docs'],
      ['[the docs](https://docs.example/)', 'the docs'],
      ['[3.14](https://math.example/pi)', '3.14'],
    ];
    const shown = await page.evaluate(
      async (texts) => {
        const out: (string | null)[] = [];
        for (const text of texts) {
          const el = document.createElement('salon-markdown') as HTMLElement & { text: string; updateComplete: Promise<boolean> };
          document.body.append(el);
          el.text = text;
          await el.updateComplete;
          out.push(el.shadowRoot!.querySelector('a[href]')?.textContent ?? null);
          el.remove();
        }
        return out;
      },
      cases.map(([text]) => text),
    );
    expect(shown).toEqual(cases.map(([, text]) => text));
  });

  it('links no text written as one e-mail address to another mailbox or site', async () => {
    // [markdown, the link's href as shown, or null when the text shows as plain text]
    const cases: [string, string | null][] = [
      ['[security@bank.example](mailto:phish@evil.example)', null],
      ['[Write to security@bank.example](mailto:security@bank.example.evil.example)', null],
      ['[help@bank.example](https://evil.example/)', null],
      ['[a@example.org](mailto:a@example.org)', 'mailto:a@example.org'],
      ['[Write to A@Example.org.](mailto:a@example.org?subject=Hi)', 'mailto:a@example.org?subject=Hi'],
      ['[help@nodejs.org](https://nodejs.org/contact)', 'https://nodejs.org/contact'],
      ['[@ada](https://social.example/@ada)', 'https://social.example/@ada'],
    ];
    expect(await linksShown(cases.map(([text]) => text))).toEqual(cases.map(([, href]) => [href, href]));
  });

  it('sends every corpus input as a message and leaves nothing that runs', async () => {
    const inputs = corpus();
    const before = await page.locator('salon-message-item[state=sent]').count();
    const box = page.locator('salon-composer textarea');
    let sent = 0;
    for (const { text } of inputs) {
      const body = text.slice(0, MAX_MESSAGE_CHARS);
      // The server refuses these (ERR_BAD_MESSAGE); the render test below still takes them.
      if (!body.trim() || hasOverlongCluster(body)) continue;
      await box.fill(body);
      await box.press('Enter');
      sent++;
      await expect.poll(() => page.locator('salon-message-item[state=sent]').count(), { timeout: 5000 }).toBe(before + sent);
    }
    expect(sent).toBeGreaterThan(30);
    expect(await page.locator('salon-message-item[state=failed]').count()).toBe(0);
    // The payloads are there as text, not as markup.
    expect(await page.locator('salon-message-item', { hasText: 'window.__xss = "script"' }).count()).toBe(1);

    expect(await scanDom(page)).toEqual([]);
    const probe = await probeResults(page);
    expect(probe.xss).toBeUndefined();
    expect(probe.alerts).toEqual([]);
    expect(probe.violations).toEqual([]);
    expect(consoleLines.filter((l) => /xss|pageerror/i.test(l))).toEqual([]);
  });

  // No time budget here: a test asserts no duration (CI shares its cores). A renderer that goes
  // quadratic on some input still fails, at the test's timeout.
  it('renders each full-length input inert', async () => {
    const inputs = corpus();
    await page.evaluate(async (cases) => {
      for (const { text } of cases) {
        const el = document.createElement('salon-markdown') as HTMLElement & { text: string; updateComplete: Promise<boolean> };
        el.dataset.probe = 'render';
        document.body.append(el);
        el.text = text;
        await el.updateComplete;
      }
    }, inputs);
    expect(await page.locator('salon-markdown[data-probe=render]').count()).toBe(inputs.length);
    expect(await scanDom(page)).toEqual([]);
    const probe = await probeResults(page);
    expect(probe.xss).toBeUndefined();
    expect(probe.alerts).toEqual([]);
    expect(probe.violations).toEqual([]);
  });
});
