// Overlong grapheme clusters in stored and fetched text (one character carrying thousands of marks or
// modifiers froze a tab: Chromium lays a cluster out in time that grows with the square of its
// length). The server refuses them in new messages; whatever still reaches the page is cut to
// MAX_CLUSTER_EXTENDERS where it comes in and in the markdown renderer.
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { MAX_CLUSTER_EXTENDERS, hasOverlongCluster } from '../../src/protocol/clusters.js';
import { browserSuite, describeBrowser, item, openAs } from './harness.js';
import { OVERLONG_CLUSTERS } from './markdown-corpus.js';
import { createThread } from '../store/new-thread.js';

const [SKIN_TONES, ACUTES] = OVERLONG_CLUSTERS.map((c) => c.text);
const SKIN_CUT = '\u{1F3FB}'.repeat(MAX_CLUSTER_EXTENDERS);
const ACUTE_CUT = `a${'\u0301'.repeat(MAX_CLUSTER_EXTENDERS)}`;

/** Every text node, attribute value and the document's title, shadow roots included, one per line. */
function shownStrings(page: Page): Promise<string> {
  return page.evaluate(() => {
    const out: string[] = [document.title];
    const visit = (root: Document | ShadowRoot) => {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      while (walker.nextNode()) out.push(walker.currentNode.textContent ?? '');
      for (const el of Array.from(root.querySelectorAll('*'))) {
        if (el.tagName === 'SCRIPT' || el.tagName === 'STYLE') continue;
        for (const attr of Array.from(el.attributes)) out.push(attr.value);
        if (el.shadowRoot) visit(el.shadowRoot);
      }
    };
    visit(document);
    return out.join('\n');
  });
}

/** The text each message's markdown shows, in order. */
function renderedMessages(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const walk = (root: Document | ShadowRoot) => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        if (el.tagName === 'SALON-MESSAGE-ITEM') out.push(el.shadowRoot?.querySelector('salon-markdown')?.shadowRoot?.textContent?.trim() ?? '');
        else if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(document);
    return out;
  });
}

describeBrowser('overlong grapheme clusters', () => {
  const suite = browserSuite({ server: { env: { SEED_DEMO: 'false' } } });

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    // Straight into the store, as text stored before the server refused it.
    await store.upsertItem(item('news_marks', { title: `Marks ${SKIN_TONES}`, description: `${ACUTES}. More words.`, author: SKIN_TONES }));
    await store.upsertItem(item('post_marks', { kind: 'post', title: ACUTES, author: SKIN_TONES, body: `# ${SKIN_TONES}\n\n${ACUTES}\n\n- ${SKIN_TONES}` }));
    const main = await store.ensureMainThread('news_marks');
    await createThread(store, { id: 'thr_marks', roomId: 'news_marks', title: `Thread ${ACUTES}` }, 'admin');
    const mallory = { id: 'u_mallory', name: `Mallory${SKIN_TONES}`, kind: 'user' as const };
    for (const text of [SKIN_TONES, ACUTES]) await store.appendMessage({ roomId: 'news_marks', threadId: main.id, author: mallory, text });
  });

  it('shows a room’s stored messages, names, title and threads with each cluster cut', async () => {
    const { context, page } = await openAs(suite.browser, 'Reader');
    try {
      await page.goto(`${suite.server.url}/chat?id=news_marks`);
      await expect.poll(() => renderedMessages(page)).toEqual([SKIN_CUT, ACUTE_CUT]);
      await page.locator('salon-thread-list', { hasText: 'Thread a' }).waitFor();
      await expect.poll(() => page.locator('salon-room-header h1').textContent()).toBe(`Marks ${SKIN_CUT}`);
      const shown = await shownStrings(page);
      expect(hasOverlongCluster(shown)).toBe(false);
      expect(shown).toContain(`Mallory${SKIN_CUT}`);
      expect(shown).toContain(`Thread ${ACUTE_CUT}`);
    } finally {
      await context.close();
    }
  });

  it('shows fetched pages with each cluster cut', async () => {
    const { context, page } = await openAs(suite.browser, 'Reader');
    try {
      await page.goto(`${suite.server.url}/`);
      await page.locator('salon-content-card [data-item="news_marks"]').waitFor();
      let shown = await shownStrings(page);
      expect(hasOverlongCluster(shown)).toBe(false);
      expect(shown).toContain(`Marks ${SKIN_CUT}`);
      expect(shown).toContain(ACUTE_CUT);

      await page.goto(`${suite.server.url}/post?id=post_marks`);
      await expect.poll(() => page.locator('salon-post-page h1').textContent()).toBe(ACUTE_CUT);
      const body = await page.locator('salon-post-page salon-markdown').evaluate((el) => el.shadowRoot!.textContent!);
      expect(body.replace(/\s+/g, ' ').trim()).toBe(`${SKIN_CUT} ${ACUTE_CUT} ${SKIN_CUT}`);
      shown = await shownStrings(page);
      expect(hasOverlongCluster(shown)).toBe(false);
    } finally {
      await context.close();
    }
  });

  it('shows nothing overlong from an address: a category, a room id while it joins', async () => {
    const { context, page } = await openAs(suite.browser, 'Reader');
    try {
      // An address is anyone's link; the server takes a request line of up to 16 KB.
      const inAddress = encodeURIComponent(SKIN_TONES.slice(0, 2000));
      await page.goto(`${suite.server.url}/?category=${inAddress}`);
      await page.locator('salon-content-page .state', { hasText: 'Nothing here yet.' }).waitFor();
      expect(await page.locator('salon-content-page h1').textContent()).toBe('News');
      expect(hasOverlongCluster(await shownStrings(page))).toBe(false);
      // A socket that never answers: the room stays "joining".
      await page.routeWebSocket(/\/ws\/rooms\//, () => {});
      await page.goto(`${suite.server.url}/chat?id=topic_${inAddress}`);
      await expect.poll(() => page.locator('salon-room-header h1').textContent()).toBe('Joining the discussion…');
      expect(hasOverlongCluster(await shownStrings(page))).toBe(false);
    } finally {
      await context.close();
    }
  });

  it('cuts what the page renders itself: markdown given an overlong cluster', async () => {
    const { context, page } = await openAs(suite.browser, 'Reader');
    try {
      await page.goto(`${suite.server.url}/posts`);
      const rendered = await page.evaluate(
        async (texts) => {
          const out: string[] = [];
          for (const document_ of [false, true]) {
            for (const text of texts) {
              const el = document.createElement('salon-markdown') as HTMLElement & { text: string; document: boolean; updateComplete: Promise<boolean> };
              el.document = document_;
              document.body.append(el);
              el.text = text;
              await el.updateComplete;
              out.push(el.shadowRoot!.textContent!.trim());
            }
          }
          return out;
        },
        [SKIN_TONES, ACUTES],
      );
      expect(rendered).toEqual([SKIN_CUT, ACUTE_CUT, SKIN_CUT, ACUTE_CUT]);
    } finally {
      await context.close();
    }
  });
});
