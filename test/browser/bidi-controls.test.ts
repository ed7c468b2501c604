import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, openAs, say } from './harness.js';

// Names and titles refuse bidi embeddings, overrides and isolates (U+202A–202E, U+2066–2069) and
// one-line labels drop them, but a message's body may hold them. Rendered, each body is a bidi
// isolate of its own, each of its blocks too, and every control in it is closed within its own
// text (none left open, no stray PDF or PDI): an override can reorder no text outside it, and the
// author's name and time beside a body are isolates that no neighbour pulls into its run.

const RLO = '\u202E';
const RLE = '\u202B';
const LRI = '\u2066';
const PDI = '\u2069';
const PDF = '\u202C';

/** What the page renders of the message holding `marker`: computed bidi isolation and its text nodes' controls. */
function inspect(page: Page, marker: string) {
  return page.evaluate((marker) => {
    const items: Element[] = [];
    const walk = (root: Document | ShadowRoot) => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        if (el.tagName === 'SALON-MESSAGE-ITEM' && (el as unknown as { text: string }).text.includes(marker)) items.push(el);
        if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(document);
    const itemRoot = items[0].shadowRoot!;
    const md = itemRoot.querySelector('salon-markdown')!;
    const bidiOf = (el: Element) => getComputedStyle(el).unicodeBidi;
    const blocks = Array.from(md.shadowRoot!.querySelectorAll('p, li, blockquote, pre')).map((el) => `${el.tagName.toLowerCase()}:${bidiOf(el)}`);
    // Each text node must close what it opens and close nothing it did not open.
    const unbalanced: string[] = [];
    const texts = document.createTreeWalker(md.shadowRoot!, NodeFilter.SHOW_TEXT);
    for (let node = texts.nextNode(); node; node = texts.nextNode()) {
      const open: string[] = [];
      let bad = false;
      for (const ch of node.nodeValue ?? '') {
        if ('\u202A\u202B\u202D\u202E'.includes(ch)) open.push('\u202C');
        else if ('\u2066\u2067\u2068'.includes(ch)) open.push('\u2069');
        else if (ch === '\u202C' || ch === '\u2069') {
          if (open.pop() !== ch) bad = true;
        }
      }
      if (bad || open.length) unbalanced.push(JSON.stringify(node.nodeValue));
    }
    return {
      body: bidiOf(md),
      blocks,
      unbalanced,
      author: bidiOf(itemRoot.querySelector('.author')!),
      time: bidiOf(itemRoot.querySelector('time')!),
      text: md.shadowRoot!.textContent ?? '',
    };
  }, marker);
}

describeBrowser('bidi controls in message bodies', () => {
  const suite = browserSuite({ server: true });

  it('keeps every control to its own text, each body and block an isolate, and the name and time beside it isolated', async () => {
    await suite.server.app.salon.store.upsertItem(item('news_bidi', { title: 'Bidi controls' }));
    // A right-to-left name, as a member may have.
    const { context, page } = await openAs(suite.browser, 'אבי');
    try {
      await page.goto(`${suite.server.url}/chat?id=news_bidi`);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor({ state: 'attached' });
      const text = [
        `first **bold ${RLO}evil** after ${RLE}open`,
        `- a list item ${LRI}isolate never closed`,
        `> a quote${PDI}${PDF} closing what it never opened ${RLO}`,
        '```',
        `code ${RLO}reversed`,
        '```',
        `last line ${RLO}`,
      ].join('\n\n');
      await say(page, text);
      await expect.poll(() => page.locator('salon-message-item[state=sent]').count()).toBe(1);
      const seen = await inspect(page, 'first **bold');
      expect(seen.body).toBe('isolate');
      expect(seen.blocks).toEqual(['p:isolate', 'li:isolate', 'blockquote:isolate', 'p:isolate', 'pre:isolate', 'p:isolate']);
      expect(seen.unbalanced).toEqual([]);
      expect(seen.author).toBe('isolate');
      expect(seen.time).toBe('isolate');
      // Nothing of the text is lost: the controls it holds stay where they were written.
      for (const piece of [`bold ${RLO}evil`, `after ${RLE}open`, `code ${RLO}reversed`]) expect(seen.text).toContain(piece);

      // The split picker lists a message's text on the line of its author and time: each is isolated.
      const picker = await page.evaluate(
        ({ rlo }) => {
          const el = document.createElement('salon-split-picker') as HTMLElement & { messages: unknown[]; updateComplete: Promise<boolean> };
          const author = { id: 'u_avi', name: 'אבי', kind: 'user' };
          el.messages = [{ id: 'm1', seq: 1, roomId: 'news_bidi', threadId: 't', author, text: `${rlo}12:00 Bob: hello`, ts: new Date().toISOString() }];
          document.body.append(el);
          return el.updateComplete.then(() => {
            const legend = el.shadowRoot!.querySelector('legend')!;
            return Array.from(legend.children).map((c) => `${c.tagName.toLowerCase()}:${getComputedStyle(c).unicodeBidi}`);
          });
        },
        { rlo: RLO },
      );
      expect(picker).toEqual(['bdi:isolate', 'time:isolate', 'bdi:isolate']);

      // "A and B are typing…": each name is isolated, so a right-to-left name ending in a digit
      // cannot pull "and" or the other name into its run.
      const typing = await page.evaluate(() => {
        const el = document.createElement('salon-typing-indicator') as HTMLElement & { members: unknown[]; updateComplete: Promise<boolean> };
        el.members = [
          { id: 'u_a', name: 'אבי 2' },
          { id: 'u_d', name: 'דנה!' },
        ];
        document.body.append(el);
        return el.updateComplete.then(() => {
          const span = el.shadowRoot!.querySelector('span')!;
          return { text: span.textContent, names: Array.from(span.children).map((c) => `${c.textContent}:${getComputedStyle(c).unicodeBidi}`) };
        });
      });
      expect(typing).toEqual({ text: 'אבי 2 and דנה! are typing…', names: ['אבי 2:isolate', 'דנה!:isolate'] });
    } finally {
      await context.close();
    }
  });
});
