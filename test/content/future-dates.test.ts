/**
 * Dates from the web that lie ahead: items are listed newest first by their date, so a feed entry,
 * page or thread dated years ahead would sit above everything stored after it. A date more than
 * MAX_DATE_AHEAD_MS ahead of the fetch counts as none (the item sorts by when it was stored).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_DATE_AHEAD_MS, fetchedDateOf } from '../../src/content/dates.js';
import { newsItemFromArticle } from '../../src/content/sources/article.js';
import { newsItemFromEntry, toPlainFeed, videoItemFromEntry } from '../../src/content/sources/feed-items.js';
import { parseFeed } from '../../src/content/sources/feeds.js';
import { storyToItem } from '../../src/content/sources/hn.js';
import { RedditComments } from '../../src/content/sources/reddit.js';
import { validateItem } from '../../src/content/items.js';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const opts = { bodyMaxChars: 200_000 };
const AHEAD = '2100-01-01T00:00:00.000Z';
const SOON = new Date(NOW + MAX_DATE_AHEAD_MS / 2).toISOString();
const PAST = '2026-05-30T08:00:00.000Z';

beforeEach(() => {
  vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function rssItem(pubDate: string): string {
  return `<rss><channel><title>F</title><item><title>T</title><link>https://e.example/a</link><description>Some text.</description><pubDate>${pubDate}</pubDate></item></channel></rss>`;
}

describe('a date from the web far ahead of now', () => {
  it('counts as none, while one within a day ahead or in the past stays', () => {
    expect(fetchedDateOf(AHEAD)).toBeNull();
    expect(fetchedDateOf(SOON)).toBe(SOON);
    expect(fetchedDateOf(PAST)).toBe(PAST);
    expect(fetchedDateOf('not a date')).toBeNull();
    expect(fetchedDateOf(null)).toBeNull();
  });

  it('leaves a feed entry undated, or dated by its article when that is not ahead', () => {
    const ahead = toPlainFeed(parseFeed(rssItem('Fri, 01 Jan 2100 00:00:00 GMT')));
    expect(validateItem(newsItemFromEntry(ahead.entries[0], ahead, null), opts).publishedAt).toBeNull();
    const article = { text: 'The article.', publishedTime: PAST, url: 'https://e.example/a' };
    expect(validateItem(newsItemFromEntry(ahead.entries[0], ahead, article), opts).publishedAt).toBe(PAST);
    expect(validateItem(newsItemFromEntry(ahead.entries[0], ahead, { ...article, publishedTime: AHEAD }), opts).publishedAt).toBeNull();
    const past = toPlainFeed(parseFeed(rssItem('Sat, 30 May 2026 08:00:00 GMT')));
    expect(validateItem(newsItemFromEntry(past.entries[0], past, null), opts).publishedAt).toBe(PAST);
  });

  it('leaves a YouTube entry undated', () => {
    const feed = toPlainFeed(
      parseFeed(
        `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:yt="http://www.youtube.com/xml/schemas/2015"><title>C</title><entry><yt:videoId>abcdef123</yt:videoId><title>V</title><published>${AHEAD}</published></entry></feed>`,
      ),
    );
    expect(validateItem(videoItemFromEntry(feed.entries[0], feed), opts).publishedAt).toBeNull();
  });

  it('leaves an extracted article, an HN story and a Reddit thread undated', async () => {
    expect(validateItem(newsItemFromArticle('https://e.example/p', { title: 'P', text: 'Body text.', publishedTime: AHEAD }), opts).publishedAt).toBeNull();
    expect(validateItem(newsItemFromArticle('https://e.example/p', { title: 'P', text: 'Body text.', publishedTime: PAST }), opts).publishedAt).toBe(PAST);
    const seconds = Date.parse(AHEAD) / 1000;
    const story = { id: 7, type: 'story', by: 'op', title: 'Story', text: 'Own text.', time: seconds };
    expect(validateItem(storyToItem(story, [], null), opts).publishedAt).toBeNull();
    expect(validateItem(storyToItem({ ...story, time: Date.parse(PAST) / 1000 }, [], null), opts).publishedAt).toBe(PAST);
    const thread = [
      { data: { children: [{ kind: 't3', data: { id: 'abc12', title: 'Post', selftext: 'Own text.', is_self: true, created_utc: seconds } }] } },
      { data: { children: [] } },
    ];
    const reddit = new RedditComments({ base: 'http://reddit.test', fetchJson: async () => thread, commentLimit: 10, intervalMs: 0 });
    const discussion = await reddit.discussion('abc12');
    expect(validateItem(discussion.toItem(null), opts).publishedAt).toBeNull();
  });
});
