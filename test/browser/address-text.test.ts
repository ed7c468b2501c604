// What a stranger can put on a page: an address is anyone's link, and a fetched page says what it
// likes about itself. Neither may write the page's own headings, nor name a site its links do not
// lead to.
import { beforeAll, expect, it } from 'vitest';
import { browserSuite, describeBrowser, item, openAs } from './harness.js';

/** Words a link's author would like the page to say in its own voice. */
const LURE = 'Your account is locked. Call 555-0100 now';

describeBrowser('text from addresses and fetched pages', () => {
  const suite = browserSuite({ server: { env: { SEED_DEMO: 'false' } } });

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    // A page on evil.example that calls itself the bank, and an honest one with no author.
    await store.upsertItem(item('news_spoof', { title: 'Security notice', url: 'https://evil.example/notice', siteName: 'Bank of Example', author: null }));
    await store.upsertItem(item('news_plain', { title: 'Plain story', url: 'https://www.news.example/story', siteName: null, author: 'Ana Writer' }));
    await store.upsertItem(item('post_spoof', { kind: 'post', title: 'A post', url: 'https://evil.example/post', siteName: 'Bank of Example', author: null }));
  });

  it('names the site a card leads to, never the site a page says it is', async () => {
    const { context, page } = await openAs(suite.browser, 'Reader');
    try {
      await page.goto(`${suite.server.url}/`);
      const spoof = page.locator('salon-content-card', { has: page.locator('[data-item="news_spoof"]') });
      await expect.poll(() => spoof.locator('[data-site]').textContent()).toBe('evil.example');
      expect(await spoof.locator('.meta').textContent()).not.toContain('Bank of Example');
      const plain = page.locator('salon-content-card', { has: page.locator('[data-item="news_plain"]') });
      expect(await plain.locator('[data-site]').textContent()).toBe('news.example');
      expect(await plain.locator('.meta').textContent()).toContain('Ana Writer');

      await page.goto(`${suite.server.url}/posts`);
      const post = page.locator('salon-content-card', { has: page.locator('[data-item="post_spoof"]') });
      await expect.poll(() => post.locator('[data-site]').textContent()).toBe('evil.example');
      expect(await post.locator('.meta').textContent()).not.toContain('Bank of Example');
    } finally {
      await context.close();
    }
  });

  it('heads a list with a category the store has, never with other words from the address', async () => {
    const { context, page } = await openAs(suite.browser, 'Reader');
    try {
      await page.goto(`${suite.server.url}/?category=${encodeURIComponent(LURE)}`);
      await page.locator('salon-content-page .state', { hasText: 'Nothing here yet.' }).waitFor();
      expect(await page.locator('salon-content-page h1').textContent()).toBe('News');

      // A stored category, however the address writes it, is named as the store does.
      await page.goto(`${suite.server.url}/?category=tech`);
      await page.locator('salon-content-card [data-item="news_spoof"]').waitFor();
      await expect.poll(() => page.locator('salon-content-page h1').textContent()).toBe('News · Tech');
    } finally {
      await context.close();
    }
  });

  it('heads a room still joining with no words from the address', async () => {
    const { context, page } = await openAs(suite.browser, 'Reader');
    try {
      // A socket that never answers: the room stays "joining".
      await page.routeWebSocket(/\/ws\/rooms\//, () => {});
      await page.goto(`${suite.server.url}/chat?id=topic_${encodeURIComponent(LURE)}`);
      await expect.poll(() => page.locator('salon-room-header h1').textContent()).toBe('Joining the discussion…');
      expect(await page.locator('salon-room-header').textContent()).not.toContain('555-0100');
    } finally {
      await context.close();
    }
  });

  it('says an item page’s address names nothing, without repeating the address', async () => {
    const { context, page } = await openAs(suite.browser, 'Reader');
    try {
      for (const path of ['/post', '/watch']) {
        await page.goto(`${suite.server.url}${path}?id=${encodeURIComponent(LURE)}`);
        const alert = page.locator('[role=alert]');
        await alert.locator('h1').waitFor();
        expect(await alert.locator('h1').textContent()).toMatch(/^No such /);
        expect(await alert.textContent(), path).not.toContain('555-0100');
      }
    } finally {
      await context.close();
    }
  });
});
