import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ARTIFACTS, browserSuite, describeBrowser, openAs } from './harness.js';
import { threadView } from './thread-fixture.js';

const PHONE = { width: 360, height: 740 };
const WORD = 'Unbroken'.repeat(40);
const URL = `https://${'sub'.repeat(30)}.example.org/${'path'.repeat(150)}`;
const NAME = 'W'.repeat(32);
const THREADS = [threadView('t1', { title: WORD, main: true }), threadView('t2', { title: WORD })];

/**
 * Mounts `tag` with `props` in a 340 px box on the page and returns what sticks out of the box:
 * descendants (shadow roots included) past its edges that no scrolling or clipping ancestor inside
 * the box contains (a sideways-scrolling row, an ellipsis, a code block's scrollbar are fine).
 */
async function overflowOf(page: Page, tag: string, props: Record<string, unknown>): Promise<string[]> {
  return page.evaluate(
    ({ tag, props }) => {
      const box = document.createElement('div');
      box.style.cssText = 'width: 340px; margin: 0 10px; overflow: visible';
      const el = Object.assign(document.createElement(tag), props);
      box.append(el);
      document.body.prepend(box);
      return (el as unknown as { updateComplete: Promise<unknown> }).updateComplete.then(async () => {
        // Children render after their parent: wait for every element below to finish too.
        const all = (root: Element | ShadowRoot): Element[] =>
          Array.from(root.querySelectorAll('*')).flatMap((e) => [e, ...(e.shadowRoot ? all(e.shadowRoot) : [])]);
        const below = (e: Element): Element[] => (e.shadowRoot ? all(e.shadowRoot) : []);
        await Promise.all(below(el).map((e) => (e as unknown as { updateComplete?: Promise<unknown> }).updateComplete));
        const edge = box.getBoundingClientRect();
        const parentOf = (e: Element): Element | null => e.parentElement ?? ((e.getRootNode() as ShadowRoot).host || null);
        const contained = (e: Element): boolean => {
          for (let p = parentOf(e); p && p !== box; p = parentOf(p)) {
            if (getComputedStyle(p).overflowX !== 'visible') return p.getBoundingClientRect().right <= edge.right + 0.5;
          }
          return false;
        };
        const out: string[] = [];
        for (const e of [el, ...below(el)]) {
          const r = e.getBoundingClientRect();
          if (r.width <= 1 || (r.right <= edge.right + 0.5 && r.left >= edge.left - 0.5) || contained(e)) continue;
          out.push(
            `<${e.tagName.toLowerCase()} class="${e.getAttribute('class') ?? ''}"> ${Math.round(r.left - edge.left)}..${Math.round(r.right - edge.left)} px`,
          );
        }
        box.remove();
        return out;
      });
    },
    { tag, props },
  );
}

describeBrowser('long words, names and URLs on a phone', () => {
  const suite = browserSuite({ server: true, artifacts: true });

  it('keeps a 32-character name, a long word and a long URL inside a 340 px column, in every element that shows them', async () => {
    const { context, page } = await openAs(suite.browser, 'Nia', PHONE);
    try {
      await page.goto(`${suite.server.url}/`);
      await page.waitForFunction(() => !!customElements.get('salon-typing-indicator') && !!customElements.get('salon-message-item'));
      const person = { id: 'u_w', name: NAME, kind: 'user' };
      const source = { n: 1, id: 'news_1', kind: 'news', title: WORD, url: URL, sourceType: 'document', snippet: WORD };
      const cases: [string, Record<string, unknown>][] = [
        ['salon-message-item', { author: person, text: `${WORD} ${URL}`, ts: '2026-01-10T09:00:00.000Z' }],
        ['salon-message-item', { author: person, text: 'mine', mine: true, state: 'failed', error: WORD, clientId: 'c1' }],
        [
          'salon-message-item',
          { author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' }, kind: 'assistant', text: 'An answer [1]', sources: [source] },
        ],
        ['salon-source-list', { sources: [source, { ...source, n: 2, url: null, messageIds: ['m1'], kind: 'thread' }] }],
        [
          'salon-typing-indicator',
          {
            members: [
              { id: 'a', name: NAME },
              { id: 'b', name: 'M'.repeat(32) },
            ],
          },
        ],
        [
          'salon-member-list',
          {
            members: [
              { id: 'a', name: NAME },
              { id: 'b', name: 'M'.repeat(32) },
            ],
            count: 2,
            you: { id: 'a', name: NAME },
          },
        ],
        ['salon-connection-status', { status: 'open', notice: { code: 'ERR_X', level: 'error', message: `${WORD} ${URL}` } }],
        [
          'salon-room-header',
          {
            room: {
              id: 'topic_x',
              kind: 'topic',
              title: WORD,
              url: URL,
              context: `${WORD}. ${WORD} Recent in x`,
              digest: [{ id: 'news_1', kind: 'news', title: WORD, line: WORD, url: URL, publishedAt: null }],
            },
          },
        ],
        ['salon-room-header', { room: { id: 'news_1', kind: 'news', title: WORD, url: URL, context: `${WORD}. More.` } }],
        [
          'salon-thread-header',
          {
            thread: THREADS[0],
            threads: THREADS,
            count: 3,
            suggestions: [{ survivorId: 't1', absorbedId: 't2', weight: 0.9 }],
          },
        ],
        ['salon-thread-list', { threads: THREADS, current: 't1' }],
      ];
      const found: string[] = [];
      for (const [tag, props] of cases) {
        for (const problem of await overflowOf(page, tag, props)) found.push(`${tag}: ${problem}`);
      }
      expect(found).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
