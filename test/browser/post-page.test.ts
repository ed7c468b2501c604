// The page of a post (/post?id=…) in Chromium: what it shows, where it leads, and that nothing in a hostile post runs.
import { validateItem } from '../../src/content/items.js';
import { postFromMarkdown } from '../../src/content/sources/posts.js';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { browserSuite, describeBrowser, instrument, item, probeResults, scanDom } from './harness.js';
import { ACTIVE_PAYLOADS, corpus } from './markdown-corpus.js';

const HOSTILE_TITLE = '<img src=x onerror="window.__xss=\'title\'"><script>window.__xss="title"</script> & "quotes"';

/** The text an element shows, its shadow root's included. */
const shownText = (el: Locator) => el.evaluate((e) => e.shadowRoot?.textContent ?? '');

const GOOD_BODY = [
  'An opening paragraph with **bold**, *italic* and `code`.',
  '',
  '# A section',
  '',
  '### A subsection',
  '',
  '- first point',
  '- second point with [a link](https://example.org/read)',
  '',
  '```sh',
  'echo "<b>not bold</b>"',
  '```',
  '',
  'A [bad link](javascript:window.__xss=1) and a <b>raw tag</b>.',
].join('\n');

describeBrowser('the page of a post', () => {
  const suite = browserSuite({ server: { env: { SEED_DEMO: 'false' } } });
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const { store } = suite.server.app.salon;
    await store.upsertItem(
      item('post_good', {
        title: 'A good post',
        author: 'Rosa Lindenmayer',
        category: 'Tech',
        description: 'What the post says, briefly.',
        body: GOOD_BODY,
        url: 'https://blog.example.org/good',
        publishedAt: '2026-09-28T17:30:00.000Z',
      }),
    );
    const hostileBody = [...ACTIVE_PAYLOADS, ...corpus().map((c) => c.text)].join('\n\n');
    await store.upsertItem(
      item('post_hostile', {
        title: HOSTILE_TITLE,
        author: '<script>window.__xss="author"</script>',
        category: '<img src=x onerror=alert(1)>',
        body: hostileBody,
        url: 'javascript:window.__xss="url"',
        image: 'javascript:window.__xss="image"',
      }),
    );
    await store.upsertItem(item('video_v', { title: 'A video' }));
    // A post read from a markdown file, as `salon ingest --file` and the demo seed read them.
    await store.upsertItem(
      validateItem(postFromMarkdown('---\ntitle: From a file\n---\n# From a file\n\n## Part one\n\nSome *emphasis* here.\n', 'file.md'), {
        bodyMaxChars: 200_000,
      }),
    );
    context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await instrument(context);
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  it('is where a post’s card leads, and shows title, author, date and the body as markdown', async () => {
    await page.goto(`${suite.server.url}/posts`);
    const card = page.locator('salon-content-card', { has: page.locator('[data-item="post_good"]') });
    expect(await card.locator('h2 a').getAttribute('href')).toBe('/post?id=post_good');
    await card.locator('h2 a').click();
    await page.waitForURL(`${suite.server.url}/post?id=post_good`);

    const post = page.locator('salon-post-page');
    await expect.poll(() => post.locator('h1').textContent()).toBe('A good post');
    expect(await page.title()).toBe('A good post · Salon');
    expect(await post.locator('[data-author]').textContent()).toBe('Rosa Lindenmayer');
    expect(await post.locator('.meta time').getAttribute('datetime')).toBe('2026-09-28T17:30:00.000Z');
    expect(await post.locator('.kicker').textContent()).toBe('Tech');
    expect(await page.locator('salon-app nav a[aria-current="page"]').textContent()).toBe('Posts');

    const md = post.locator('salon-markdown');
    expect(await md.getAttribute('document')).not.toBeNull();
    expect(await md.locator('strong').textContent()).toBe('bold');
    expect(await md.locator('h2').textContent()).toBe('A section');
    expect(await md.locator('h3').textContent()).toBe('A subsection');
    expect(await md.locator('h1').count()).toBe(0);
    expect(await md.locator('li').count()).toBe(2);
    expect(await md.locator('pre code').textContent()).toBe('echo "<b>not bold</b>"\n');
    const links = md.locator('a');
    // The javascript: link stays text.
    expect(await links.count()).toBe(1);
    expect(await links.getAttribute('href')).toBe('https://example.org/read');
    expect(await links.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    expect(await shownText(md)).toContain('[bad link](javascript:window.__xss=1)');
    expect(await shownText(md)).toContain('<b>raw tag</b>');

    const original = post.locator('a[data-original]');
    expect(await original.getAttribute('href')).toBe('https://blog.example.org/good');
    expect(await original.textContent()).toContain('blog.example.org');
  });

  it('renders a post read from a markdown file as markdown: its sections and emphasis', async () => {
    await page.goto(`${suite.server.url}/post?id=post_file`);
    const md = page.locator('salon-post-page salon-markdown');
    await expect.poll(() => md.locator('h2').textContent()).toBe('Part one');
    expect(await md.locator('em').textContent()).toBe('emphasis');
    expect(await shownText(md)).not.toContain('##');
  });

  it('shows who is in the post’s room, and its Discuss link leads there and back', async () => {
    const other = await suite.browser.newContext();
    try {
      const otherPage = await other.newPage();
      await otherPage.goto(`${suite.server.url}/chat?id=post_good`);
      await otherPage.locator('salon-member-list .count[data-count="1"]').waitFor();

      await page.goto(`${suite.server.url}/post?id=post_good`);
      const link = page.locator('salon-post-page salon-discuss-link a').first();
      await expect.poll(() => link.getAttribute('data-count')).toBe('1');
      expect(await link.getAttribute('href')).toBe('/chat?id=post_good');
      expect(await link.getAttribute('aria-label')).toContain('1 person here now');
      await link.click();
      await page.waitForURL(`${suite.server.url}/chat?id=post_good`);
      await expect.poll(() => page.locator('salon-room-header h1').textContent()).toBe('A good post');
      await page.locator('salon-room-header a[data-post-page]').click();
      await page.waitForURL(`${suite.server.url}/post?id=post_good`);
    } finally {
      await other.close();
    }
  });

  it('shows a hostile post as text: the title escaped, no script, handler or javascript: URL run or left', async () => {
    await page.goto(`${suite.server.url}/post?id=post_hostile`);
    const post = page.locator('salon-post-page');
    await expect.poll(() => post.locator('h1').textContent()).toBe(HOSTILE_TITLE);
    expect(await page.title()).toBe(`${HOSTILE_TITLE} · Salon`);
    expect(await post.locator('[data-author]').textContent()).toBe('<script>window.__xss="author"</script>');
    await expect.poll(() => post.locator('salon-markdown p').count()).toBeGreaterThan(50);
    expect(await shownText(post.locator('salon-markdown'))).toContain('window.__xss = "script"');
    // A javascript: url or picture is not shown at all.
    expect(await post.locator('a[data-original]').count()).toBe(0);
    expect(await post.locator('img').count()).toBe(0);

    expect(await scanDom(page)).toEqual([]);
    const probe = await probeResults(page);
    expect(probe.xss).toBeUndefined();
    expect(probe.alerts).toEqual([]);
    expect(probe.violations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it('renders every corpus input as a whole document, inert', async () => {
    const inputs = corpus().map((c) => c.text);
    // Each input on its own, and all of them at once well past one segment, plus long worst cases.
    const documents = [...inputs, inputs.join('\n\n'), '```\n' + '<script>x</script>\n'.repeat(20_000), `# h\n\n${'*a'.repeat(100_000)}`];
    const rendered = await page.evaluate(async (texts) => {
      const out: number[] = [];
      for (const text of texts) {
        const el = document.createElement('salon-markdown') as HTMLElement & { text: string; document: boolean; updateComplete: Promise<boolean> };
        el.dataset.probe = 'document';
        el.document = true;
        document.body.append(el);
        el.text = text;
        await el.updateComplete;
        out.push(el.shadowRoot!.textContent!.length);
      }
      return out;
    }, documents);
    expect(rendered).toHaveLength(documents.length);
    expect(await scanDom(page)).toEqual([]);
    const probe = await probeResults(page);
    expect(probe.xss).toBeUndefined();
    expect(probe.alerts).toEqual([]);
    expect(probe.violations).toEqual([]);
  });

  it('says so for an id that is missing, unknown or not a post', async () => {
    for (const [address, heading] of [
      ['/post', 'No such post'],
      ['/post?id=post_nope', 'No such post'],
      ['/post?id=%3Cscript%3E', 'No such post'],
      ['/post?id=video_v', 'Not a post'],
    ]) {
      await page.goto(`${suite.server.url}${address}`);
      await expect.poll(() => page.locator('salon-post-page [role=alert] h1').textContent(), { message: address }).toBe(heading);
    }
    expect(await page.locator('salon-post-page [role=alert] a', { hasText: 'Open it' }).getAttribute('href')).toBe('/watch?id=video_v');
    expect((await probeResults(page)).xss).toBeUndefined();
  });
});
