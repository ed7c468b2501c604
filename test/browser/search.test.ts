// The header's search box in Chromium: results, filters, the keyboard and ARIA, and hostile titles shown as text.
import type { Locator, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { browserSuite, describeBrowser, instrument, probeResults, scanDom } from './harness.js';

const DAY = 86_400_000;
const PHRASE = 'orchid greenhouse heating';
const HOSTILE = `<img src=x onerror="window.__xss='search'"> Orchid greenhouse heating bills halve`;

describeBrowser('the search box', () => {
  const suite = browserSuite({ server: { env: { SEED_DEMO: 'false' } } });
  let page: Page;
  let box: Locator;
  let options: Locator;

  /** The id of the element focused, through shadow roots. */
  const focused = () =>
    page.evaluate(() => {
      let el: Element | null = document.activeElement;
      while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
      return el ? `${el.tagName.toLowerCase()}#${el.id}` : null;
    });
  const shownIds = () => options.evaluateAll((els) => els.map((e) => e.getAttribute('data-id')).sort());

  async function search(text: string): Promise<void> {
    await box.fill(text);
    await expect.poll(() => options.count()).toBeGreaterThan(0);
  }

  beforeAll(async () => {
    const now = Date.now();
    const body = (n: string) => `${PHRASE}: ${n}. Growers compare boilers, heat pumps and insulation for orchid houses through the winter.`;
    const items = [
      {
        id: 'news_s1',
        title: HOSTILE,
        url: 'https://www.gardens.example/a',
        category: 'Garden',
        publishedAt: new Date(now - 2 * DAY).toISOString(),
        body: body('one'),
      },
      {
        id: 'post_s2',
        title: 'Heating an orchid greenhouse on a budget',
        url: 'https://blog.plants.example/b',
        category: 'Garden',
        publishedAt: '2020-02-01T00:00:00.000Z',
        body: body('two'),
      },
      {
        id: 'video_s3',
        title: 'Greenhouse heating, measured',
        url: 'https://video.example/c',
        category: 'Science',
        publishedAt: new Date(now - 3 * DAY).toISOString(),
        body: body('three'),
      },
    ].map((i) => ({ ...i, kind: i.id.split('_')[0], description: i.body }));
    const r = await suite.server.app.inject({
      method: 'POST',
      url: '/api/v1/content',
      headers: { authorization: 'Bearer test-admin-token' },
      payload: { items },
    });
    expect(r.statusCode, r.body).toBe(200);
    const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await instrument(context);
    page = await context.newPage();
    box = page.locator('salon-search input[role=combobox]');
    options = page.locator('salon-search [role=listbox] [role=option]');
  });

  it('takes / to focus, shows kind, title, date, site, snippet and a Discuss link per result, as a labelled combobox', async () => {
    await page.goto(`${suite.server.url}/`);
    await page.locator('salon-search input').waitFor();
    expect(await box.getAttribute('aria-expanded')).toBe('false');
    await page.keyboard.press('/');
    expect(await focused()).toBe('input#search-box');
    expect(await box.inputValue()).toBe('');
    await page.keyboard.type(PHRASE);
    await expect.poll(shownIds).toEqual(['news_s1', 'post_s2', 'video_s3']);
    expect(await box.getAttribute('aria-expanded')).toBe('true');
    expect(await box.getAttribute('aria-controls')).toBe('search-results');
    expect(await page.locator('salon-search #search-results').getAttribute('role')).toBe('listbox');
    await expect.poll(() => page.locator('salon-search [role=status]').textContent()).toMatch(/^3 results/);

    const news = options.and(page.locator('[data-id="news_s1"]'));
    expect(await news.locator('.kind').textContent()).toBe('News');
    expect(await news.locator('.title').textContent()).toBe(HOSTILE);
    expect(await news.locator('.title').getAttribute('href')).toBe('/chat?id=news_s1');
    expect(await news.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-/);
    expect(await news.locator('[data-site]').textContent()).toBe('gardens.example');
    expect(await news.locator('.snippet').textContent()).toContain('rchid');
    expect(await news.locator('.discuss').getAttribute('href')).toBe('/chat?id=news_s1');
    expect(await options.and(page.locator('[data-id="post_s2"]')).locator('.title').getAttribute('href')).toBe('/post?id=post_s2');
    expect(await options.and(page.locator('[data-id="video_s3"]')).locator('.title').getAttribute('href')).toBe('/watch?id=video_s3');

    expect(await scanDom(page)).toEqual([]);
    const probe = await probeResults(page);
    expect(probe.xss).toBeUndefined();
    expect(probe.alerts).toEqual([]);
    expect(probe.violations).toEqual([]);
  });

  it('moves through the results with the arrows and opens the active one with Enter', async () => {
    await page.goto(`${suite.server.url}/`);
    await page.locator('salon-search input').waitFor();
    await page.keyboard.press('/');
    await page.keyboard.type(PHRASE);
    await expect.poll(() => options.count()).toBe(3);
    const active = async () => {
      const id = await box.getAttribute('aria-activedescendant');
      const selected = await options.evaluateAll((els) => els.filter((e) => e.getAttribute('aria-selected') === 'true').map((e) => e.id));
      expect(selected).toEqual(id ? [id] : []);
      return id;
    };
    await expect.poll(active).toBe('search-hit-0');
    await box.press('ArrowDown');
    expect(await active()).toBe('search-hit-1');
    await box.press('ArrowDown');
    await box.press('ArrowDown');
    expect(await active()).toBe('search-hit-0');
    await box.press('ArrowUp');
    expect(await active()).toBe('search-hit-2');
    await box.press('Home');
    expect(await active()).toBe('search-hit-0');
    await box.press('End');
    expect(await active()).toBe('search-hit-2');
    expect(await focused()).toBe('input#search-box');

    const target = await options.nth(2).getAttribute('data-id');
    const href = await options.nth(2).locator('.title').getAttribute('href');
    await box.press('Enter');
    await page.waitForURL(`${suite.server.url}${href}`);
    expect(href).toContain(encodeURIComponent(target!));
  });

  it('opens the discussion with Shift+Enter, closes with Escape and clears with a second Escape', async () => {
    await page.goto(`${suite.server.url}/posts`);
    await page.locator('salon-search input').waitFor();
    await search(PHRASE);
    await box.press('Escape');
    expect(await box.getAttribute('aria-expanded')).toBe('false');
    expect(await page.locator('salon-search .panel').isVisible()).toBe(false);
    expect(await box.inputValue()).toBe(PHRASE);
    await box.press('ArrowDown');
    expect(await box.getAttribute('aria-expanded')).toBe('true');
    await box.press('Escape');
    await box.press('Escape');
    expect(await box.inputValue()).toBe('');

    await search(PHRASE);
    const first = await options.first().getAttribute('data-id');
    await box.press('Shift+Enter');
    await page.waitForURL(`${suite.server.url}/chat?id=${first}`);
  });

  it('filters by kind, category, date and site', async () => {
    await page.goto(`${suite.server.url}/`);
    await page.locator('salon-search input').waitFor();
    await search(PHRASE);
    await expect.poll(() => options.count()).toBe(3);
    const filter = (name: string) => page.locator(`salon-search select[data-filter=${name}]`);

    await filter('kind').selectOption('post');
    await expect.poll(shownIds).toEqual(['post_s2']);
    await filter('kind').selectOption('');
    await expect.poll(shownIds).toEqual(['news_s1', 'post_s2', 'video_s3']);

    await filter('category').selectOption('Science');
    await expect.poll(shownIds).toEqual(['video_s3']);
    await filter('category').selectOption('');

    await filter('date').selectOption('month');
    await expect.poll(shownIds).toEqual(['news_s1', 'video_s3']);
    await filter('date').selectOption('');

    // The site filter offers the sites of the results seen.
    expect(await filter('source').locator('option').allTextContents()).toEqual(['All sites', 'blog.plants.example', 'gardens.example', 'video.example']);
    await filter('source').selectOption('gardens.example');
    await expect.poll(shownIds).toEqual(['news_s1']);
    await filter('kind').selectOption('video');
    await expect.poll(() => page.locator('salon-search [data-empty]').count()).toBe(1);
    expect(await options.count()).toBe(0);
    await expect.poll(() => page.locator('salon-search [role=status]').textContent()).toBe('No results.');
  });

  it('leaves / to a text field being typed in', async () => {
    await page.goto(`${suite.server.url}/chat?id=news_s1`);
    const composer = page.locator('salon-composer textarea');
    await composer.click();
    await page.keyboard.type('a/b');
    expect(await composer.inputValue()).toBe('a/b');
    expect(await box.inputValue()).toBe('');
  });
});
