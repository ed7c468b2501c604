import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { ARTIFACTS, browserSuite, describeBrowser, instrument, item, messageTexts, openAs, probeResults, scanDom } from './harness.js';

interface Summary {
  id: string;
  title: string;
  category: string | null;
}

describeBrowser('content pages and their Discuss links', () => {
  const suite = browserSuite({ server: { env: { SEED_DEMO: 'true' } }, artifacts: true });
  let context: BrowserContext;
  let page: Page;

  async function firstOf(kind: string): Promise<Summary> {
    const res = await fetch(`${suite.server.url}/api/v1/content?kind=${kind}&limit=1`);
    const [first] = ((await res.json()) as { items: Summary[] }).items;
    expect(first, `a seeded ${kind} item`).toBeDefined();
    return first;
  }

  /** Follows the Discuss link of item `id` and checks the room is that item's. */
  async function discuss(id: string, title: string): Promise<void> {
    await page.locator(`salon-discuss-link a[href="/chat?id=${id}"]`).first().click();
    await page.waitForURL(`${suite.server.url}/chat?id=${id}`);
    await expect.poll(() => page.locator('salon-room-header h1').textContent()).toBe(title);
    await expect.poll(() => page.locator('salon-member-list .count').getAttribute('data-count')).toBe('1');
  }

  beforeAll(async () => {
    context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await instrument(context);
    page = await context.newPage();
  });

  it('lists news as cards with picture, category, date and description, filters by category, and counts people in rooms', async () => {
    const news = await firstOf('news');
    // Someone is already in the first story's room: its Discuss link says so.
    const other = await suite.browser.newContext();
    const otherPage = await other.newPage();
    try {
      await otherPage.goto(`${suite.server.url}/chat?id=${news.id}`);
      await otherPage.locator('salon-member-list .count[data-count="1"]').waitFor();

      await page.goto(`${suite.server.url}/`);
      const cards = page.locator('salon-content-card');
      await expect.poll(() => cards.count()).toBeGreaterThan(3);
      const first = cards.first();
      expect(await first.locator('img').getAttribute('src')).toMatch(/\/demo\/img\//);
      expect(await first.locator('.category').textContent()).toBeTruthy();
      expect(await first.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-/);
      expect((await first.locator('p').textContent())!.length).toBeGreaterThan(20);
      expect(await page.locator('salon-discuss-link a').count()).toBe(await cards.count());
      const link = page.locator(`salon-discuss-link a[href="/chat?id=${news.id}"]`);
      await expect.poll(() => link.getAttribute('data-count')).toBe('1');
      expect(await link.getAttribute('aria-label')).toContain('1 person here now');
      // Every picture loaded (same origin, allowed by the CSP).
      const broken = await page.evaluate(() => {
        const imgs: HTMLImageElement[] = [];
        const walk = (root: Document | ShadowRoot) => {
          for (const el of Array.from(root.querySelectorAll('*'))) {
            if (el instanceof HTMLImageElement) imgs.push(el);
            if (el.shadowRoot) walk(el.shadowRoot);
          }
        };
        walk(document);
        return imgs.filter((i) => i.complete && i.naturalWidth === 0).map((i) => i.src);
      });
      expect(broken).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, 'news.png') });

      const category = news.category!;
      await page.locator(`salon-category-filter button[data-category="${category}"]`).click();
      await page.waitForURL(/category=/);
      await expect.poll(async () => new Set(await page.locator('salon-content-card .category').allTextContents())).toEqual(new Set([category]));
      expect(await page.locator(`salon-category-filter button[data-category="${category}"]`).getAttribute('aria-pressed')).toBe('true');
    } finally {
      await other.close();
    }
  });

  it('leads from a news card into that story’s room', async () => {
    const news = await firstOf('news');
    await page.goto(`${suite.server.url}/`);
    await discuss(news.id, news.title);
  });

  it('leads from a post into that post’s room', async () => {
    const post = await firstOf('post');
    await page.goto(`${suite.server.url}/posts`);
    await expect.poll(() => page.locator('salon-content-card').count()).toBeGreaterThan(0);
    await discuss(post.id, post.title);
  });

  it('shows videos with thumbnails, a watch page, and leads from both into the video’s room', async () => {
    const video = await firstOf('video');
    await page.goto(`${suite.server.url}/videos`);
    const card = page.locator('salon-content-card', { has: page.locator(`[data-item="${video.id}"]`) });
    await expect.poll(() => card.locator('img').getAttribute('src')).toMatch(/\/demo\/img\//);
    expect(await card.locator('salon-discuss-link a').getAttribute('href')).toBe(`/chat?id=${video.id}`);
    await page.screenshot({ path: join(ARTIFACTS, 'videos.png') });

    await card.locator('h2 a').click();
    await page.waitForURL(`${suite.server.url}/watch?id=${video.id}`);
    await expect.poll(() => page.locator('salon-watch-page h1').textContent()).toBe(video.title);
    expect(await page.locator('salon-watch-page .meta').textContent()).toBeTruthy();
    expect(await page.locator('salon-watch-page a.player').getAttribute('href')).toMatch(/^https:\/\/video\.example\//);
    expect(await page.locator('salon-watch-page a.player').getAttribute('rel')).toContain('noopener');
    expect((await page.locator('salon-watch-page .description').textContent())!.length).toBeGreaterThan(20);
    await page.screenshot({ path: join(ARTIFACTS, 'watch.png') });
    await discuss(video.id, video.title);

    expect(await scanDom(page)).toEqual([]);
    const probe = await probeResults(page);
    expect(probe.violations).toEqual([]);
  });

  it('switches topic rooms in place, each keeping its own messages', async () => {
    const messages = (p: Page) => messageTexts(p);
    const enterTopic = async (slug: string, title: string) => {
      await page.locator(`salon-topic-tabs a[data-topic="${slug}"]`).click();
      await page.waitForURL(`${suite.server.url}/chat?topic=${slug}`);
      await expect.poll(() => page.locator('salon-room-header h1').textContent()).toBe(title);
      await page.locator('salon-member-list .count[data-count="1"]').waitFor();
    };
    const say = async (text: string) => {
      await page.locator('salon-composer textarea').fill(text);
      await page.locator('salon-composer textarea').press('Enter');
      await page.locator('salon-message-item[state=sent]', { hasText: text }).waitFor();
    };

    await page.goto(`${suite.server.url}/`);
    await page.locator('salon-app nav a', { hasText: 'Topics' }).click();
    await page.waitForURL(`${suite.server.url}/chat`);
    await expect.poll(() => page.locator('salon-topic-tabs a').count()).toBeGreaterThan(2);
    await page.evaluate(() => ((window as unknown as { __samePage: boolean }).__samePage = true));

    await enterTopic('tech', 'Topic: Tech');
    await say('tech hello');
    await enterTopic('science', 'Topic: Science');
    expect((await messages(page)).join('\n')).not.toContain('tech hello');
    await say('science hello');
    await enterTopic('tech', 'Topic: Tech');
    await expect.poll(async () => (await messages(page)).filter((t) => t.includes('tech hello')).length).toBe(1);
    expect((await messages(page)).join('\n')).not.toContain('science hello');
    expect(await page.locator('salon-topic-tabs a[data-topic="tech"]').getAttribute('aria-current')).toBe('page');

    await page.goBack();
    await page.waitForURL(`${suite.server.url}/chat?topic=science`);
    await expect.poll(async () => (await messages(page)).filter((t) => t.includes('science hello')).length).toBe(1);
    // All of it happened in one page: no reloads.
    expect(await page.evaluate(() => (window as unknown as { __samePage?: boolean }).__samePage)).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'topic.png') });
  });

  it('shows no tab for a topic the address names when the server has no such topic', async () => {
    await page.goto(`${suite.server.url}/chat?topic=no-such-topic`);
    await expect.poll(() => page.locator('salon-room [data-fatal]').getAttribute('data-fatal')).toBe('ERR_ROOM_NOT_FOUND');
    await expect.poll(() => page.locator('salon-topic-tabs a').count()).toBeGreaterThan(1);
    expect(await page.locator('salon-topic-tabs a[data-topic="no-such-topic"]').count()).toBe(0);
  });

  it('shows no tab for a topic the address names until its room answers, and one for a topic whose room welcomes the member', async () => {
    const eve = await openAs(suite.browser, 'Eve', { width: 1200, height: 800 });
    let answer = false;
    // The room's socket is held unanswered until `answer`: the page cannot know yet whether the topic exists.
    await eve.page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
      if (answer) ws.connectToServer();
    });
    try {
      await eve.page.goto(`${suite.server.url}/chat?topic=made-up-words`);
      await expect.poll(() => eve.page.locator('salon-topic-tabs a').count()).toBeGreaterThan(1);
      await eve.page.locator('salon-room salon-connection-status').waitFor({ state: 'attached' });
      expect(await eve.page.locator('salon-topic-tabs a[data-topic="made-up-words"]').count()).toBe(0);

      // A topic that exists, its tab left out of the scanned ones: the room's welcome puts it in.
      answer = true;
      await eve.page.evaluate(() => {
        const chat = document.querySelector('salon-app')?.shadowRoot?.querySelector('salon-chat-page') ?? document.querySelector('salon-chat-page');
        (chat as unknown as { topics: string[] }).topics = [];
        history.pushState(null, '', '/chat?topic=tech');
        dispatchEvent(new PopStateEvent('popstate'));
      });
      await expect.poll(() => eve.page.locator('salon-room-header h1').textContent()).toBe('Topic: Tech');
      await expect.poll(() => eve.page.locator('salon-topic-tabs a[data-topic="tech"]').getAttribute('aria-current')).toBe('page');
    } finally {
      await eve.context.close();
    }
  });

  it('starts each topic room afresh: a thread being started in one leaves nothing of it in the next', async () => {
    const gil = await openAs(suite.browser, 'Gil', { width: 1200, height: 800 });
    let hold = false;
    // The answer to the command never comes: the room is left while it is pending.
    await gil.page.routeWebSocket(/\/ws\/rooms\//, (ws) => {
      const server = ws.connectToServer();
      server.onMessage((frame) => {
        const text = String(frame);
        if (!(hold && text.includes('"type":"message"') && text.includes('"kind":"system"'))) ws.send(frame);
      });
    });
    try {
      // Others may be in these topics (the tests before): Gil is in once listed.
      const joined = () => expect.poll(() => gil.page.locator('salon-member-list li .name').allTextContents()).toContain('Gil');
      await gil.page.goto(`${suite.server.url}/chat?topic=tech`);
      await joined();
      hold = true;
      await gil.page.getByRole('button', { name: 'New thread' }).click();
      await gil.page.getByLabel('Title of the new thread').fill('Meant for tech');
      await gil.page.getByLabel('Title of the new thread').press('Enter');
      await gil.page.getByRole('button', { name: 'Starting…' }).waitFor();
      await gil.page.locator('salon-topic-tabs a[data-topic="science"]').click();
      await expect.poll(() => gil.page.locator('salon-room-header h1').textContent()).toBe('Topic: Science');
      await joined();
      // Neither tech's form nor its failed answer ("the connection closed…") shows in science.
      expect(await gil.page.getByLabel('Title of the new thread').count()).toBe(0);
      expect((await gil.page.locator('salon-thread-list p.status').textContent())?.trim()).toBe('');
    } finally {
      await gil.context.close();
    }
  });

  it('shows a topic room’s digest: each recent item with its date, line and links', async () => {
    await suite.server.app.salon.topics.refreshAll();
    await page.goto(`${suite.server.url}/chat?topic=tech`);
    const digest = page.locator('salon-room-header details[data-digest]');
    await digest.locator('summary').click();
    const entries = digest.locator('li');
    await expect.poll(() => entries.count()).toBeGreaterThan(2);
    const tech = ((await (await fetch(`${suite.server.url}/api/v1/content?category=Tech&limit=50`)).json()) as { items: { id: string }[] }).items.map(
      (i) => i.id,
    );
    for (const entry of await entries.all()) {
      const id = await entry.getAttribute('data-item');
      expect(tech).toContain(id);
      expect(await entry.locator('a').first().getAttribute('href')).toMatch(new RegExp(`^/(post|watch|chat)\\?id=${id}$`));
      expect((await entry.locator('.line').textContent())!.length).toBeGreaterThan(10);
      expect(await entry.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-/);
    }
    expect(await digest.locator('a.original').first().getAttribute('rel')).toBe('noopener noreferrer nofollow');
    await page.screenshot({ path: join(ARTIFACTS, 'topic-digest.png') });
  });

  it('explains an unknown video instead of showing nothing', async () => {
    await page.goto(`${suite.server.url}/watch?id=video_nope`);
    await expect.poll(() => page.locator('salon-watch-page h1').textContent()).toBe('No such video');
  });

  it('answers a mistyped address with the page saying "Not found" and a way back, not a page of JSON', async () => {
    for (const path of ['/nosuch', '/rooms/news_n1', '/chat/news_n1']) {
      const response = await page.goto(`${suite.server.url}${path}`);
      expect(response!.status(), path).toBe(404);
      expect(response!.headers()['content-security-policy'], path).toContain("script-src 'self'");
      await expect.poll(() => page.locator('salon-app main h1').textContent()).toBe('Not found');
      expect(await page.locator('salon-app main a[href="/"]').textContent()).toBe('Back to the news');
      expect(await page.title()).toBe('Not found · Salon');
    }
    // The API and the assets still answer in their own terms.
    const api = await page.goto(`${suite.server.url}/api/v1/nope`);
    expect(api!.status()).toBe(404);
    expect(await api!.json()).toMatchObject({ error: { code: 'ERR_NOT_FOUND' } });
    const asset = await fetch(`${suite.server.url}/assets/nope.js`, { headers: { accept: 'text/html' } });
    expect(asset.status).toBe(404);
    expect(asset.headers.get('content-type')).toMatch(/json/);
    expect(await probeResults(page)).toMatchObject({ violations: [] });
  });

  it('shows a video’s whole description, chapters included, as text', async () => {
    const res = await fetch(`${suite.server.url}/api/v1/content/video_v01`);
    const video = (await res.json()) as { body: string; description: string };
    // The stored description is an excerpt for cards; the body holds the whole text.
    expect(video.body).toContain('00:00 Intro');
    expect(video.description).not.toContain('00:00 Intro');
    await page.goto(`${suite.server.url}/watch?id=video_v01`);
    const description = page.locator('salon-watch-page .description');
    await expect.poll(() => description.textContent()).toContain('Chapters');
    const text = (await description.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain(video.body.replace(/\s+/g, ' ').trim());
    // The chapter list keeps its lines.
    expect(await description.innerText()).toMatch(/00:00 Intro\n01:45 Timeline/);

    // A description is text: markup in it shows as typed and runs nothing.
    const hostile = '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script>\n\n**not bold** [link](javascript:alert(1))';
    await suite.server.app.salon.store.upsertItem(item('video_hostile', { title: 'Hostile description', description: 'Short.', body: hostile }));
    await page.goto(`${suite.server.url}/watch?id=video_hostile`);
    await expect.poll(() => description.textContent()).toContain('<script>');
    expect(await description.innerText()).toContain('**not bold** [link](javascript:alert(1))');
    expect(await description.locator('img, script, a, strong').count()).toBe(0);
    expect(await scanDom(page)).toEqual([]);
    expect((await probeResults(page)).xss).toBeUndefined();
  });

  it('says an article or a post is not a video, with a link to its own page, instead of playing it', async () => {
    for (const kind of ['news', 'post']) {
      const other = await firstOf(kind);
      await page.goto(`${suite.server.url}/watch?id=${other.id}`);
      const alert = page.locator('salon-watch-page [role=alert]');
      await expect.poll(() => alert.locator('h1').textContent(), { message: kind }).toBe('Not a video');
      expect(await alert.locator('.error').textContent()).toContain(other.title);
      const expected = kind === 'post' ? `/post?id=${other.id}` : `/chat?id=${other.id}`;
      expect(await alert.getByRole('link', { name: 'Open it' }).getAttribute('href')).toBe(expected);
      expect(await page.locator('salon-watch-page .player').count()).toBe(0);
    }
  });
});
