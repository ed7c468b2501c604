import { describe, expect, it } from 'vitest';
import { ITEM_LIMITS, summarizeItem, validateItem } from '../../src/content/items.js';
import { newsItemFromEntry, videoItemFromEntry } from '../../src/content/sources/feed-items.js';
import { parseFeed } from '../../src/content/sources/feeds.js';
import { HnClient, HnComments, storyToItem } from '../../src/content/sources/hn.js';
import { RedditComments } from '../../src/content/sources/reddit.js';
import { videoEntriesFromJson } from '../../src/content/sources/videos.js';
import { FIELD_CAPS } from '../../src/content/limits.js';
import { newsItemFromArticle } from '../../src/content/sources/article.js';

const opts = { bodyMaxChars: 10_000 };
const base = { id: 'post_links', title: 'Links', body: 'Body.', source: 'api' };

describe('validateItem links', () => {
  it('keeps http(s) URLs and site paths', () => {
    const item = validateItem({ ...base, url: 'https://example.com/a?b=1', image: '/demo/img/p1.svg', thumbnail: 'http://example.com/t.jpg' }, opts);
    expect(item).toMatchObject({ url: 'https://example.com/a?b=1', image: '/demo/img/p1.svg', thumbnail: 'http://example.com/t.jpg' });
  });

  it('never keeps the userinfo of a URL', () => {
    const item = validateItem({ ...base, url: 'https://alice:s3cret@example.com/a', image: 'https://bob@example.com/i.jpg' }, opts);
    expect(item).toMatchObject({ url: 'https://example.com/a', image: 'https://example.com/i.jpg' });
  });

  it('refuses other schemes and paths a browser reads as another host', () => {
    for (const url of ['javascript:alert(1)', 'data:text/html,hi', '//evil.example/x', '/\\evil.example/x', '/a\\b', 'ftp://example.com/x', 'not a url']) {
      for (const field of ['url', 'image', 'thumbnail']) {
        expect(() => validateItem({ ...base, [field]: url }, opts), `${field}=${url}`).toThrow(
          expect.objectContaining({ code: 'ERR_INVALID_CONTENT', message: expect.stringContaining(field) }),
        );
      }
    }
  });

  it('refuses a URL that percent-encoding takes past the limit, as it would be stored', () => {
    // 2,000 characters as given, 18,020 once each CJK character is its nine-character escape.
    const url = `https://example.com/${'漢'.repeat(2_000)}`;
    expect(url.length).toBeLessThan(ITEM_LIMITS.url);
    for (const field of ['url', 'image', 'thumbnail']) {
      expect(() => validateItem({ ...base, [field]: url }, opts), field).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_CONTENT', message: expect.stringContaining('once percent-encoded') }),
      );
    }
    expect(validateItem({ ...base, url: `https://example.com/${'漢'.repeat(200)}` }, opts).url).toHaveLength(20 + 200 * 9);
  });

  it('summaries carry every field but the body, comments and source', () => {
    const item = validateItem({ ...base, comments: [{ by: 'a', text: 'hi', time: 1 }] }, opts);
    const summary = summarizeItem(item);
    expect(summary.commentCount).toBe(1);
    expect(Object.keys(summary).sort()).toEqual(
      Object.keys(item)
        .filter((k) => !['body', 'comments', 'source'].includes(k))
        .concat('commentCount')
        .sort(),
    );
  });
});

describe('blankItem', () => {
  it('takes its kind from the id and empties the optional fields', async () => {
    const { blankItem } = await import('../../src/content/types.js');
    expect(blankItem('video_abc', { title: 'T' })).toEqual({
      id: 'video_abc',
      kind: 'video',
      title: 'T',
      url: null,
      description: '',
      body: '',
      comments: [],
      category: null,
      publishedAt: null,
      image: null,
      author: null,
      channel: null,
      thumbnail: null,
      siteName: null,
      source: 'api',
    });
    expect(() => blankItem('room_1')).toThrow(/not a content id/);
  });
});

describe('validateItem body', () => {
  it('trims each line’s trailing blanks and folds blank lines, in time linear in the body (hostile feeds send megabytes)', () => {
    expect(validateItem({ ...base, body: 'One  \t\nTwo\n\n\n\nThree \n' }, opts).body).toBe('One\nTwo\n\nThree');
    // A long run of blanks not followed by a newline made the old `/[ \t]+\n/` quadratic: 120,000
    // characters took 6.8 s, 2,000,000 would take about half an hour. Only bodyMaxChars are looked at now.
    const hostile = `a${' \t'.repeat(1_000_000)}b`;
    const item = validateItem({ ...base, body: hostile }, opts);
    expect(item.body.startsWith('a')).toBe(true);
    expect(item.body.length).toBeLessThanOrEqual(opts.bodyMaxChars);
  });
});

describe('names and descriptions', () => {
  it('cuts an article’s description and site name before they are cleaned on the event loop', () => {
    const marks = `a${'\u0301'.repeat(16)}`.repeat(100_000);
    const raw = newsItemFromArticle('https://e.example/a', {
      title: 'T',
      text: 'Body text. '.repeat(50),
      excerpt: marks,
      siteName: marks,
      url: 'https://e.example/a',
    });
    expect((raw.siteName as string).length).toBeLessThanOrEqual(FIELD_CAPS.siteName);
    const item = validateItem(raw, opts);
    expect(item.siteName!.length).toBeLessThanOrEqual(ITEM_LIMITS.name);
    expect(item.description.startsWith(marks.slice(0, 170))).toBe(true);
  });

  it('drops bidi embedding, override and isolate controls from one-line fields, fetched or given, and keeps the marks', () => {
    const article = {
      title: 'Invoice \u202Efdp.exe',
      text: 'Body \u202Bkept\u202C.',
      byline: '\u2066Ann\u2069',
      siteName: 'Site\u202D',
      excerpt: 'A \u2067quiet\u2069 day',
      url: 'https://e.example/a',
    };
    const item = validateItem(newsItemFromArticle('https://e.example/a', article), opts);
    expect(item).toMatchObject({ title: 'Invoice fdp.exe', author: 'Ann', siteName: 'Site', description: 'A quiet day', body: 'Body \u202Bkept\u202C.' });
    expect(validateItem({ ...base, title: 'שלום \u200Fworld\u200E', category: '\u202Anews' }, opts)).toMatchObject({
      title: 'שלום \u200Fworld\u200E',
      category: 'news',
    });
  });

  it('keeps a name and a description that follow a long run of whitespace', () => {
    const item = validateItem({ ...base, siteName: `${' \n\t'.repeat(500_000)}The Site`, description: `${'\n'.repeat(500_000)}About it.` }, opts);
    expect(item).toMatchObject({ siteName: 'The Site', description: 'About it.' });
  });
});

describe('images and thumbnails sources find', () => {
  const long = `https://cdn.example/i.jpg?sig=${'a'.repeat(ITEM_LIMITS.url)}`;
  const article = { title: 'T', text: 'Body text.', url: 'https://e.example/a' };

  it('drop themselves when malformed or too long, instead of failing their item', () => {
    for (const image of [long, 'javascript:alert(1)', 'not a url']) {
      expect(validateItem(newsItemFromArticle('https://e.example/a', { ...article, image }), opts).image, image).toBeNull();
      expect(
        validateItem(storyToItem({ id: 1, type: 'story', title: 'S', url: 'https://e.example/a' }, [], { ...article, image }), opts).image,
        image,
      ).toBeNull();
    }
    const feed = parseFeed(
      `<rss><channel><title>F</title><item><title>E</title><link>https://e.example/a</link><media:thumbnail url="${long}"/></item></channel></rss>`,
    );
    expect(validateItem(newsItemFromEntry(feed.entries[0], feed, null), opts).image).toBeNull();
    const youtube = parseFeed(
      `<feed><title>C</title><entry><title>V</title><yt:videoId>abcdefghijk</yt:videoId><media:group><media:thumbnail url="${long}"/></media:group></entry></feed>`,
    );
    expect(validateItem(videoItemFromEntry(youtube.entries[0], youtube), opts).thumbnail).toBeNull();
    const [api] = videoEntriesFromJson({ kind: 'youtube#video', id: 'abcdefghijk', snippet: { title: 'V', thumbnails: { high: { url: long } } } });
    expect(validateItem((api as { item: Record<string, unknown> }).item, opts).thumbnail).toBeNull();
  });

  it('are kept when they are http(s) URLs, resolved against the page', () => {
    const feed = parseFeed(
      '<rss><channel><title>F</title><item><title>E</title><link>https://e.example/a/b</link><media:thumbnail url="../i.jpg"/></item></channel></rss>',
    );
    expect(validateItem(newsItemFromEntry(feed.entries[0], feed, null), opts).image).toBe('https://e.example/i.jpg');
    expect(validateItem(newsItemFromArticle('https://e.example/a', { ...article, image: 'https://cdn.example/i.jpg' }), opts).image).toBe(
      'https://cdn.example/i.jpg',
    );
  });
});

describe('links sources find that an item cannot keep', () => {
  // Past ITEM_LIMITS.url as sent, past it once percent-encoded, and not a URL at all.
  const UNKEPT = [`https://e.example/${'a'.repeat(ITEM_LIMITS.url)}`, `https://e.example/${'\u00e9'.repeat(ITEM_LIMITS.url / 4)}`, 'http://[bad/'];
  const article = { title: 'T', text: 'Body text.' };

  it('give way to the next link, instead of failing the story, thread, entry or article', async () => {
    for (const url of UNKEPT) {
      const story = { id: 1, type: 'story', by: 'op', title: 'S', url, kids: [] };
      const hn = new HnComments(new HnClient({ base: 'http://hn.test/v0', fetchJson: async () => story, commentLimit: 1, intervalMs: 0 }));
      const discussion = await hn.discussion('1');
      expect(discussion.link, url).toBeNull();
      expect(validateItem(discussion.toItem(null), opts).url, url).toBe('https://news.ycombinator.com/item?id=1');
      const page = { ...article, url };
      expect(validateItem(storyToItem({ ...story, url: 'https://e.example/s' }, [], page), opts).url, url).toBe('https://e.example/s');
      expect(validateItem(newsItemFromArticle('https://e.example/a', page), opts).url, url).toBe('https://e.example/a');
      const feed = parseFeed('<rss><channel><title>F</title><item><title>E</title><link>https://e.example/e</link></item></channel></rss>');
      expect(validateItem(newsItemFromEntry(feed.entries[0], feed, page), opts).url, url).toBe('https://e.example/e');
      const youtube = parseFeed(`<feed><title>C</title><entry><title>V</title><yt:videoId>abcdefghijk</yt:videoId><link href="${url}"/></entry></feed>`);
      expect(validateItem(videoItemFromEntry(youtube.entries[0], youtube), opts).url, url).toBe('https://www.youtube.com/watch?v=abcdefghijk');

      const post = { id: 'abc12', title: 'P', selftext: 'Own text.', is_self: false, url, permalink: `/r/x/comments/abc12/${url}` };
      const thread = [{ data: { children: [{ kind: 't3', data: post }] } }, { data: { children: [] } }];
      const reddit = await new RedditComments({ base: 'http://reddit.test', fetchJson: async () => thread, commentLimit: 1, intervalMs: 0 }).discussion(
        'abc12',
      );
      expect(reddit.link, url).toBeNull();
      const kept = validateItem(reddit.toItem(null), opts).url!;
      expect(kept, url).toMatch(/^https:\/\/www\.reddit\.com\/(r\/x\/)?comments\/abc12\//);
      expect(kept.length).toBeLessThanOrEqual(ITEM_LIMITS.url);
    }
  });
});

describe('titles sources find that clean to nothing', () => {
  // Control and bidi characters only: validateItem cleans each to '' and refuses the title.
  const BLANK: [xml: string, text: string][] = [
    ['&#x202E;&#x2066;', '\u202E\u2066'],
    ['&#1;&#2;', '\u0001\u0002'],
  ];

  it('give way to the next title, instead of failing the entry, video or article', () => {
    for (const [title, text] of BLANK) {
      const feed = parseFeed(`<rss><channel><title>F</title><item><title>${title}</title><link>https://e.example/e</link></item></channel></rss>`);
      expect(validateItem(newsItemFromEntry(feed.entries[0], feed, null), opts).title, title).toBe('https://e.example/e');
      expect(validateItem(newsItemFromEntry(feed.entries[0], feed, { title: 'The page', text: 'Body.' }), opts).title, title).toBe('The page');
      const youtube = parseFeed(`<feed><title>C</title><entry><title>${title}</title><yt:videoId>abcdefghijk</yt:videoId></entry></feed>`);
      expect(validateItem(videoItemFromEntry(youtube.entries[0], youtube), opts).title, title).toBe('YouTube video abcdefghijk');
      const page = { title: text, text: 'Body text.', url: 'https://e.example/a' };
      expect(validateItem(newsItemFromArticle('https://e.example/a', page), opts).title, title).toBe('https://e.example/a');
      expect(validateItem(storyToItem({ id: 1, type: 'story', title: text }, [], page), opts).title, title).toBe('Hacker News item 1');
    }
  });
});

describe('item dates', () => {
  // Date.parse takes six-digit years; their ISO strings carry a sign and would sort by it, not by date.
  const far = ['-271821-04-20', '+275760-09-13T00:00:00Z', '-000001-01-01T00:00:00Z', '+010000-01-01T00:00:00Z'];

  it('stores a date as ISO 8601 with a four-digit year, and refuses one outside the years 0000–9999 naming the field', () => {
    expect(validateItem({ ...base, publishedAt: 'Tue, 10 Jun 2025 04:00:00 GMT' }, opts).publishedAt).toBe('2025-06-10T04:00:00.000Z');
    expect(validateItem({ ...base, publishedAt: '0001-01-01T00:00:00Z' }, opts).publishedAt).toBe('0001-01-01T00:00:00.000Z');
    for (const date of far) {
      expect(() => validateItem({ ...base, publishedAt: date }, opts), date).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_CONTENT', message: expect.stringContaining('publishedAt') }),
      );
    }
  });

  it('leaves a feed entry dated outside those years undated, in RSS and Atom, and keeps the entry', () => {
    for (const date of far) {
      const rss = `<rss><channel><title>F</title><item><title>Far</title><link>https://example.com/far</link><pubDate>${date}</pubDate></item></channel></rss>`;
      const atom = `<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title><entry><title>Far</title><link href="https://example.com/far"/><published>${date}</published></entry></feed>`;
      for (const xml of [rss, atom]) {
        const feed = parseFeed(xml, 'far');
        expect(
          feed.entries.map((e) => [e.title, e.published]),
          date,
        ).toEqual([['Far', null]]);
      }
    }
    const near = parseFeed(
      '<rss><channel><title>F</title><item><title>Near</title><link>https://example.com/n</link><pubDate>Tue, 10 Jun 2025 04:00:00 GMT</pubDate></item></channel></rss>',
      'near',
    );
    expect(near.entries[0].published).toBe('2025-06-10T04:00:00.000Z');
  });
});
