/**
 * The item builders run on the event loop every room shares, after a worker parsed the feed or
 * extracted the page: whatever a source sends (a feed entry's content up to FIELD_CAPS.content, a
 * Reddit post's text, a video's description), they clean only a bounded part of it. Cleaning is
 * counted where every text goes through it (clampClusters, content/text.ts's cleanText), so no
 * figure depends on the machine's speed.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';

vi.mock('../../src/protocol/clusters.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/protocol/clusters.js')>();
  return { ...actual, clampClusters: vi.fn(actual.clampClusters) };
});

// Files share their worker's modules (isolate: false): builders another file loaded first hold the
// real clampClusters, so the modules are loaded afresh here, where the mock applies.
let clampClusters: typeof import('../../src/protocol/clusters.js').clampClusters;
let newsItemFromEntry: typeof import('../../src/content/sources/feed-items.js').newsItemFromEntry;
let toPlainFeed: typeof import('../../src/content/sources/feed-items.js').toPlainFeed;
let videoItemFromEntry: typeof import('../../src/content/sources/feed-items.js').videoItemFromEntry;
let parseFeed: typeof import('../../src/content/sources/feeds.js').parseFeed;
let RedditComments: typeof import('../../src/content/sources/reddit.js').RedditComments;
let storyToItem: typeof import('../../src/content/sources/hn.js').storyToItem;
let videoEntriesFromJson: typeof import('../../src/content/sources/videos.js').videoEntriesFromJson;
let newsItemFromArticle: typeof import('../../src/content/sources/article.js').newsItemFromArticle;
let FIELD_CAPS: typeof import('../../src/content/limits.js').FIELD_CAPS;
let validateItem: typeof import('../../src/content/items.js').validateItem;

beforeAll(async () => {
  vi.resetModules();
  ({ clampClusters } = await import('../../src/protocol/clusters.js'));
  ({ newsItemFromEntry, toPlainFeed, videoItemFromEntry } = await import('../../src/content/sources/feed-items.js'));
  ({ parseFeed } = await import('../../src/content/sources/feeds.js'));
  ({ RedditComments } = await import('../../src/content/sources/reddit.js'));
  ({ storyToItem } = await import('../../src/content/sources/hn.js'));
  ({ videoEntriesFromJson } = await import('../../src/content/sources/videos.js'));
  ({ newsItemFromArticle } = await import('../../src/content/sources/article.js'));
  ({ FIELD_CAPS } = await import('../../src/content/limits.js'));
  ({ validateItem } = await import('../../src/content/items.js'));
});

/** The longest text cleaned while `build` runs. */
function longestCleaned(build: () => unknown): number {
  const clamp = vi.mocked(clampClusters);
  clamp.mockClear();
  build();
  // A build that cleaned nothing through the mock would pass below without testing anything.
  expect(clamp).toHaveBeenCalled();
  return Math.max(0, ...clamp.mock.calls.map(([text]) => text.length));
}

/** More than any builder needs to look at: a few times a description. */
const BOUND = 100_000;
/** A letter under 2,000,000 combining marks: what an item keeps of it is one letter and sixteen marks. */
const MARKS = `a${'\u0301'.repeat(2_000_000)}`;

describe('item builders clean a bounded part of what a source sends', () => {
  it('a feed entry whose content is the whole of its text', () => {
    const feed = toPlainFeed(parseFeed(`<rss><channel><title>F</title><item><title>T</title><link>https://e.example/a</link></item></channel></rss>`));
    const entry = { ...feed.entries[0], contentHtml: MARKS };
    expect(longestCleaned(() => newsItemFromEntry(entry, feed, null))).toBeLessThan(BOUND);
    const video = { ...entry, video: { videoId: 'abcdefghijk', description: MARKS, thumbnail: null, channel: 'C' } };
    expect(longestCleaned(() => videoItemFromEntry(video, feed))).toBeLessThan(BOUND);
  });

  it('a Reddit text post, an HN story and an extracted article', async () => {
    const thread = [{ data: { children: [{ kind: 't3', data: { id: 'abc12', title: 'Post', selftext: MARKS, is_self: true } }] } }, { data: { children: [] } }];
    const reddit = new RedditComments({ base: 'http://reddit.test', fetchJson: async () => thread, commentLimit: 1, intervalMs: 0 });
    const discussion = await reddit.discussion('abc12');
    expect(longestCleaned(() => discussion.toItem(null))).toBeLessThan(BOUND);
    expect(longestCleaned(() => storyToItem({ id: 1, type: 'story', title: 'T' }, [], { text: MARKS }))).toBeLessThan(BOUND);
    expect(longestCleaned(() => newsItemFromArticle('https://e.example/a', { title: 'T', text: MARKS }))).toBeLessThan(BOUND);
  });

  it('a video of a JSON file', () => {
    expect(longestCleaned(() => videoEntriesFromJson([{ id: 'v1', title: 'T', description: MARKS }]))).toBeLessThan(BOUND);
  });

  it('and the item still starts its description with the text', () => {
    const feed = toPlainFeed(parseFeed(`<rss><channel><title>F</title><item><title>T</title><link>https://e.example/a</link></item></channel></rss>`));
    const long = 'The harbour greeted every ferry. '.repeat(FIELD_CAPS.content / 33);
    const item = validateItem(newsItemFromEntry({ ...feed.entries[0], contentHtml: long }, feed, null), { bodyMaxChars: 200_000 });
    expect(item.description).toBe('The harbour greeted every ferry. '.repeat(9).trim());
  });
});
