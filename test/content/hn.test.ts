import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { HnClient, storyToItem, toComment, type HnItem } from '../../src/content/sources/hn.js';
import { RedditComments } from '../../src/content/sources/reddit.js';
import { FIELD_CAPS } from '../../src/content/limits.js';
import { htmlToText } from '../../src/content/extract/html-text.js';
import { validateItem } from '../../src/content/items.js';
import { SalonError } from '../../src/errors.js';
import { loopbackDeps } from '../fixtures-servers/deps.js';
import { recordedHnItem, startHnServer, type HnServer } from '../fixtures-servers/hn-server.js';
import { CORPORA } from '../helpers.js';

let examples: Record<string, any>[] | undefined;
/** A recorded HN API answer, read from the corpora on first use (never at import). */
const byId = (id: number) => {
  examples ??= JSON.parse(readFileSync(join(CORPORA, 'hn/hackernews-api/readme-examples.derived.json'), 'utf8')) as Record<string, any>[];
  return examples.find((e) => e.id === id)! as HnItem;
};

// A story whose first-level kids mix every kind of item the API can answer with.
const MIXED_STORY = {
  by: 'tester',
  id: 7000,
  kids: [8004, 9999, 0, 8001, 424242, 8952, 8002],
  time: 1700000000,
  title: 'Mixed kids',
  type: 'story',
  url: 'https://example.com/mixed',
};

describe('HnClient against the recorded HN API', () => {
  let hn: HnServer;
  beforeAll(async () => {
    hn = await startHnServer({
      7000: MIXED_STORY,
      // An answer naming another item than the one asked for, and a story whose kids cycle back to it.
      7001: { ...MIXED_STORY, id: 8000, title: 'Not story 8000' },
      7002: { ...MIXED_STORY, id: 7002, kids: [7002, 7002, 8001] },
    });
  });
  afterAll(async () => hn.close());
  afterEach(() => {
    hn.requests.length = 0;
  });

  const client = (commentLimit = 10, intervalMs = 0) => new HnClient({ base: hn.base, fetchJson: loopbackDeps().fetchJson, commentLimit, intervalMs });

  it('fetches a story and its first-level comments in kids order (8000-8005 tree)', async () => {
    const { story, comments } = await client().story(8000);
    expect(story.title).toBe('Deterministic comment-tree fixture root');
    expect(comments).toEqual([
      { by: 'alice', text: 'First top-level reply', time: 1700000001 },
      { by: 'bob', text: 'Second top-level reply', time: 1700000002 },
    ]);
    // only first-level kids were asked for
    expect(hn.requests.map((r) => r.path)).toEqual(['/v0/item/8000.json', '/v0/item/8001.json', '/v0/item/8002.json']);
  });

  it('skips deleted, dead, null and missing comments', async () => {
    const { comments } = await client().story(7000);
    expect(comments.map((c) => c.by)).toEqual(['alice', 'nickb', 'bob']);
    const nickb = comments[1].text;
    expect(nickb).toContain('drop the "Throw away your USB drive" tag line');
    expect(nickb.split('\n\n').length).toBe(3);
  });

  it('stops at the comment limit', async () => {
    const { comments } = await client(2).story(7000);
    expect(comments.map((c) => c.by)).toEqual(['alice', 'nickb']);
    expect(hn.requests.map((r) => r.path)).not.toContain('/v0/item/8002.json');
  });

  it('paces requests at least intervalMs apart', async () => {
    // On the fake clock the pacer reads, with the recorded answers in hand: a real clock on a busy
    // machine measured when each request began, not when the pacer let it (a gap of 35 ms for 40).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const started: number[] = [];
      const recorded = async (url: string) => {
        started.push(performance.now());
        return recordedHnItem(Number(/\/item\/(\d+)\.json$/.exec(url)?.[1]));
      };
      const story = new HnClient({ base: hn.base, commentLimit: 10, intervalMs: 40, fetchJson: recorded }).story(8000);
      await vi.runAllTimersAsync();
      expect((await story).story.id).toBe(8000);
      expect(started.length).toBe(3);
      for (let i = 1; i < started.length; i++) expect(started[i] - started[i - 1]).toBeGreaterThanOrEqual(40);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads the top story ids', async () => {
    expect(await client().topStoryIds(3)).toEqual([8000, 1, 126809]);
  });

  it('refuses comments, null and dead items as stories with typed errors', async () => {
    await expect(client().story(8952)).rejects.toMatchObject({ code: 'ERR_INVALID_CONTENT' });
    await expect(client().story(0)).rejects.toMatchObject({ code: 'ERR_CONTENT_NOT_FOUND' });
    await expect(client().story(9999)).rejects.toMatchObject({ code: 'ERR_CONTENT_NOT_FOUND' });
    await expect(client().story(123456789)).rejects.toBeInstanceOf(SalonError);
  });

  it('takes an answer naming another item as no such story, and a kid that is its own story as no comment', async () => {
    await expect(client().story(7001)).rejects.toMatchObject({ code: 'ERR_CONTENT_NOT_FOUND' });
    const { story, comments } = await client().story(7002);
    expect(story.id).toBe(7002);
    expect(comments.map((c) => c.by)).toEqual(['alice']);
  });

  it('validates its options by name', () => {
    expect(() => new HnClient({ base: 'ftp://x', fetchJson: async () => null, commentLimit: 1, intervalMs: 0 })).toThrow(/base/);
    expect(() => new HnClient({ base: hn.base, fetchJson: async () => null, commentLimit: -1, intervalMs: 0 })).toThrow(/commentLimit/);
    expect(() => new HnClient({ base: hn.base, fetchJson: async () => null, commentLimit: 1, intervalMs: -5 })).toThrow(/intervalMs/);
  });
});

describe('HN comment HTML to text', () => {
  it('turns <p> into paragraphs and decodes entities', () => {
    const norvig = toComment(byId(2921983))!;
    expect(norvig.text).toBe(
      "Aw shucks, guys ... you make me blush with your compliments.\n\nTell you what, Ill make a deal: I'll keep writing if you keep reading. K?",
    );
    expect(htmlToText('It&#x27;s 3 &gt; 2 &amp; &quot;quoted&quot; &#x2F; done')).toBe('It\'s 3 > 2 & "quoted" / done');
  });

  it('keeps <pre><code> blocks verbatim and <i> as text', () => {
    const job = htmlToText(byId(192327).text!, { links: 'text+href' });
    expect(job).toContain('\n\nResponsibilities\n\n');
    expect(job).toContain('    * Contribute to product design and implementation discussions\n    * Implement projects');
    expect(htmlToText(byId(121003).text!)).toMatch(/^or HN: the Next Iteration\n\nI get the impression/);
  });

  it('writes links as their target when HN shortened the text, else text (href)', () => {
    const html =
      'See <a href="https://example.com/a/very/long/path/to/page" rel="nofollow">https://example.com/a/very/long/pa...</a> and <a href="https://x.test/">this site</a>.';
    expect(htmlToText(html, { links: 'text+href' })).toBe('See https://example.com/a/very/long/path/to/page and this site (https://x.test/).');
    expect(htmlToText(html)).toBe('See https://example.com/a/very/long/pa... and this site.');
  });
});

describe('storyToItem', () => {
  const opts = { bodyMaxChars: 200_000 };

  it('caps a story’s title and author, and drops an over-long url, before anything reads them', () => {
    const huge = 'x'.repeat(5_000_000);
    const raw = storyToItem({ ...byId(121003), title: `T${huge}`, by: `b${huge}`, url: `https://example.com/${huge}` }, [], null);
    expect(String(raw.title).length).toBeLessThanOrEqual(FIELD_CAPS.title);
    expect(String(raw.author).length).toBeLessThanOrEqual(FIELD_CAPS.author);
    expect(raw.url).toBe('https://news.ycombinator.com/item?id=121003');
    expect(validateItem(raw, opts).title.length).toBeLessThanOrEqual(500);
  });

  it('makes an Ask HN story (text, no url) a news item with the text as body', () => {
    const item = validateItem(storyToItem(byId(121003), [], null), opts);
    expect(item).toMatchObject({
      id: 'news_hn121003',
      kind: 'news',
      title: 'Ask HN: The Arc Effect',
      url: 'https://news.ycombinator.com/item?id=121003',
      category: 'Tech',
      author: 'tel',
      siteName: 'Hacker News',
      source: 'hn',
      publishedAt: new Date(1203647620_000).toISOString(),
    });
    expect(item.body).toMatch(/^or HN: the Next Iteration\n\nI get the impression/);
    expect(item.description.length).toBeLessThanOrEqual(300);
  });

  it('uses the linked article for body, byline and site when there is one', () => {
    const story = byId(8863);
    const comments = [{ by: 'nickb', text: 'hi', time: 1 }];
    const item = validateItem(
      storyToItem(story, comments, {
        title: 'Dropbox',
        text: 'Article body.',
        excerpt: 'Short.',
        byline: 'Drew',
        siteName: 'Dropbox',
        url: 'https://www.getdropbox.com/x',
      }),
      opts,
    );
    expect(item).toMatchObject({
      id: 'news_hn8863',
      title: story.title,
      body: 'Article body.',
      description: 'Short.',
      author: 'Drew',
      siteName: 'Dropbox',
      comments,
    });
    // without the article: the story's own title, no body, the link's host as site, and no author:
    // the submitter of a link wrote the story's title, not the page ("This article is by dhouston").
    const bare = validateItem(storyToItem(story, comments, null), opts);
    expect(bare).toMatchObject({ url: 'http://www.getdropbox.com/u/2/screencast.html', body: '', siteName: 'getdropbox.com', author: null });
  });

  it('dates a linked page by the page, and a story without one by its submission', () => {
    const story = byId(8863);
    const page = { title: 'Dropbox', text: 'Article body.', publishedTime: '2007-03-01T09:00:00Z', url: 'https://www.getdropbox.com/x' };
    expect(validateItem(storyToItem(story, [], page), opts).publishedAt).toBe('2007-03-01T09:00:00.000Z');
    expect(validateItem(storyToItem(story, [], { ...page, publishedTime: 'not a date' }), opts).publishedAt).toBe(
      new Date((story.time as number) * 1000).toISOString(),
    );
  });
});

describe('HN story lists', () => {
  it('reads each story of a list once, however often the list names it', async () => {
    const client = new HnClient({ base: 'http://hn.test/v0', fetchJson: async () => [3, 3, 1, 'x', 3, 2, 1, -4, 5], commentLimit: 1, intervalMs: 0 });
    expect(await client.storyIds('top', 3)).toEqual([3, 1, 2]);
  });
});

describe('timestamps an API sends out of range', () => {
  const opts = { bodyMaxChars: 200_000 };
  // 1e12 s is the year 33,658: a Date holds it, an item's four-digit-year date does not (content/dates.ts).
  const BAD_TIMES = [1e20, -5, 1.5e300, 1e12];

  it('leave an HN story undated and its comments at 0, each kid asked once, instead of failing the story', async () => {
    const items: Record<number, unknown> = {
      1: { id: 1, type: 'story', by: 'op', title: 'Far future', url: 'https://example.com/a', time: 1e20, kids: [2, 3, 4, 5, 5, 5] },
      2: { id: 2, type: 'comment', by: 'a', text: 'negative', time: -5 },
      3: { id: 3, type: 'comment', by: 'b', text: 'fractional', time: 1700000000.5 },
      4: { id: 4, type: 'comment', by: 'c', text: 'huge', time: 1.5e300 },
      5: { id: 5, type: 'comment', by: 'd', text: 'listed three times', time: 1700000000 },
    };
    const asked: string[] = [];
    const fetchJson = async (url: string) => (asked.push(url), items[Number(/item\/(\d+)\.json$/.exec(url)![1])] ?? null);
    const { story, comments } = await new HnClient({ base: 'http://hn.test/v0', fetchJson, commentLimit: 10, intervalMs: 0 }).story(1);
    const item = validateItem(storyToItem(story, comments, null), opts);
    expect(item.publishedAt).toBeNull();
    expect(item.comments.map((c) => [c.by, c.time])).toEqual([
      ['a', 0],
      ['b', 1700000000],
      ['c', 0],
      ['d', 1700000000],
    ]);
    expect(asked.filter((u) => u.endsWith('/item/5.json'))).toHaveLength(1);
  });

  it.each(BAD_TIMES)('leave a Reddit thread undated and its comments at 0 (created_utc %s)', async (time) => {
    const thread = [
      { data: { children: [{ kind: 't3', data: { id: 'abc12', title: 'Post', selftext: 'Own text of the post.', is_self: true, created_utc: time } }] } },
      { data: { children: [{ kind: 't1', data: { author: 'x', body: 'a comment', created_utc: time } }] } },
    ];
    const reddit = new RedditComments({ base: 'http://reddit.test', fetchJson: async () => thread, commentLimit: 10, intervalMs: 0 });
    const item = validateItem((await reddit.discussion('abc12')).toItem(null), opts);
    expect(item.publishedAt).toBeNull();
    expect(item.comments).toEqual([{ by: 'x', text: 'a comment', time: 0 }]);
  });
});

describe('fields an API sends that clean to nothing', () => {
  const opts = { bodyMaxChars: 200_000 };
  // Only spaces, control characters or (on one line: titles, names) bidi controls: validateItem cleans each to '' and refuses it.
  const BLANK = ['   ', '\u0001\u0002', '\u202e\u2066', '\u0085'];
  const BLANK_TEXT = BLANK.filter((t) => !t.includes('\u202e'));

  it('leave an HN comment out, not the story, and give its slot to the next kid', async () => {
    const items: Record<number, unknown> = {
      1: { id: 1, type: 'story', by: 'op', title: BLANK[1], text: 'The story.', time: 1700000000, kids: [2, 3, 4, 5, 6, 7] },
      ...Object.fromEntries(BLANK.map((by, i) => [i + 2, { id: i + 2, type: 'comment', by, text: 'a word', time: 1 }])),
      6: { id: 6, type: 'comment', by: 'e', text: '\u0007\r\n\u0008', time: 1 },
      7: { id: 7, type: 'comment', by: 'kept', text: 'the one live comment', time: 1 },
    };
    const fetchJson = async (url: string) => items[Number(/item\/(\d+)\.json$/.exec(url)![1])] ?? null;
    const { story, comments } = await new HnClient({ base: 'http://hn.test/v0', fetchJson, commentLimit: 1, intervalMs: 0 }).story(1);
    const item = validateItem(storyToItem(story, comments, null), opts);
    expect(item.title).toBe('Hacker News item 1');
    expect(item.comments.map((c) => [c.by, c.text])).toEqual([['kept', 'the one live comment']]);
  });

  it('leave a Reddit comment out, not the thread', async () => {
    const thread = [
      { data: { children: [{ kind: 't3', data: { id: 'abc12', title: BLANK[2], selftext: 'Own text of the post.', is_self: true } }] } },
      {
        data: {
          children: [
            ...BLANK.map((author) => ({ kind: 't1', data: { author, body: 'a word' } })),
            ...BLANK_TEXT.map((body) => ({ kind: 't1', data: { author: 'x', body } })),
            { kind: 't1', data: { author: 'kept', body: 'the one live comment' } },
          ],
        },
      },
    ];
    const reddit = new RedditComments({ base: 'http://reddit.test', fetchJson: async () => thread, commentLimit: 1, intervalMs: 0 });
    const item = validateItem((await reddit.discussion('abc12')).toItem(null), opts);
    expect(item.title).toBe('Reddit thread abc12');
    expect(item.comments.map((c) => [c.by, c.text])).toEqual([['kept', 'the one live comment']]);
  });
});

describe('a Reddit permalink', () => {
  it.each(['.evil.example/r/x/comments/abc12/', '@evil.example/x', ':8080@evil.example/', 'https://evil.example/'])(
    'links a text post to its thread on reddit.com, whatever the API says (%s)',
    async (permalink) => {
      const thread = [
        { data: { children: [{ kind: 't3', data: { id: 'abc12', title: 'Post', selftext: 'Own text.', is_self: true, permalink } }] } },
        { data: { children: [] } },
      ];
      const reddit = new RedditComments({ base: 'http://reddit.test', fetchJson: async () => thread, commentLimit: 1, intervalMs: 0 });
      const item = validateItem((await reddit.discussion('abc12')).toItem(null), { bodyMaxChars: 1000 });
      expect(new URL(item.url!).host).toBe('www.reddit.com');
    },
  );
});
