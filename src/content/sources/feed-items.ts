/**
 * Feed entries to items: YouTube entries become video items; other entries become news items
 * whose body is the linked article when it could be fetched, else the feed's own content.
 */
import { errors } from '../../errors.js';
import type { ArticleFields } from './article.js';
import type { FeedEntry, ParsedFeed } from './feeds.js';
import { htmlToText, looksLikeHtml } from '../extract/html-text.js';
import { idForUrl, isIdSuffix, slugify } from '../ids.js';
import { DESCRIPTION_CHARS, excerpt, oneLine } from '../text.js';
import { hostOf } from '../../text.js';

const YOUTUBE_WATCH = 'https://www.youtube.com/watch?v=';

function plain(text: string): string {
  return looksLikeHtml(text) ? htmlToText(text) : text.trim();
}

/** A field of `feed` as plain text: decoded here, unless toPlainFeed already did it. */
function textOf(feed: ParsedFeed, field: string): string {
  return feed.plainText ? field.trim() : plain(field);
}

/**
 * The feed with every text field turned into plain text (markup and entities resolved), marked so
 * it is never decoded twice. The feed worker calls it, so this work never runs on the event loop.
 */
export function toPlainFeed(feed: ParsedFeed): ParsedFeed {
  if (feed.plainText) return feed;
  return {
    ...feed,
    plainText: true,
    title: plain(feed.title),
    entries: feed.entries.map((e) => ({
      ...e,
      title: plain(e.title),
      summaryHtml: plain(e.summaryHtml),
      contentHtml: plain(e.contentHtml),
      author: e.author ? plain(e.author) : null,
      categories: e.categories.map(plain),
    })),
  };
}

function absolute(link: string | null, base: string | undefined): string | null {
  if (!link) return null;
  try {
    const u = new URL(link, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : null;
  } catch {
    return null;
  }
}

/** The URL an entry points at: its link resolved against the feed's URL, else an http(s) guid. */
export function entryUrl(entry: FeedEntry, feedUrl?: string): string | null {
  return absolute(entry.link, feedUrl) ?? (entry.guid && /^https?:\/\//.test(entry.guid) ? absolute(entry.guid, undefined) : null);
}

/** What a feed entry is called in job failures: its URL, else its title. */
export function entryRef(entry: FeedEntry, feedUrl?: string): string {
  return entryUrl(entry, feedUrl) ?? (oneLine(entry.title) || entry.guid || 'feed entry without link or title');
}

/** The news item (unvalidated) for a feed entry and, when it was fetched, its linked article. */
export function newsItemFromEntry(entry: FeedEntry, feed: ParsedFeed, article: ArticleFields | null, feedUrl?: string): Record<string, unknown> {
  const url = entryUrl(entry, feedUrl);
  if (!url) throw new errors.ERR_INVALID_CONTENT(`feed entry "${oneLine(entry.title) || entry.guid || '?'}" has no http(s) link`);
  const feedText = textOf(feed, entry.contentHtml || entry.summaryHtml);
  const body = article?.text?.trim() || feedText;
  const summary = textOf(feed, entry.summaryHtml);
  const image = absolute(entry.image, url) ?? absolute(article?.image ?? null, url);
  return {
    id: idForUrl('news', url),
    kind: 'news',
    title: textOf(feed, entry.title) || article?.title || url,
    url: article?.url || url,
    description: excerpt(summary || article?.excerpt || body, DESCRIPTION_CHARS),
    body,
    comments: [],
    category: entry.categories[0] ? textOf(feed, entry.categories[0]) : null,
    publishedAt: entry.published ?? validDate(article?.publishedTime),
    image,
    author: entry.author ? textOf(feed, entry.author) : article?.byline || null,
    siteName: article?.siteName || textOf(feed, feed.title) || hostOf(url),
    source: 'feed',
  };
}

function validDate(raw: string | null | undefined): string | null {
  if (!raw) return null;
  return Number.isNaN(Date.parse(raw)) ? null : raw;
}

/** The video item (unvalidated) for a YouTube feed entry; throws ERR_INVALID_CONTENT for other entries. */
export function videoItemFromEntry(entry: FeedEntry, feed: ParsedFeed): Record<string, unknown> {
  const v = entry.video;
  if (!v) throw new errors.ERR_INVALID_CONTENT(`feed entry "${oneLine(entry.title) || '?'}" has no yt:videoId`);
  const suffix = isIdSuffix(v.videoId) ? v.videoId : slugify(v.videoId);
  if (!suffix) throw new errors.ERR_INVALID_CONTENT(`feed entry "${oneLine(entry.title)}" has an unusable video id`);
  const description = v.description.trim() || textOf(feed, entry.summaryHtml);
  return {
    id: `video_${suffix}`,
    kind: 'video',
    title: textOf(feed, entry.title),
    url: absolute(entry.link, undefined) ?? `${YOUTUBE_WATCH}${encodeURIComponent(v.videoId)}`,
    description: excerpt(description, DESCRIPTION_CHARS),
    body: description,
    comments: [],
    category: entry.categories[0] ?? null,
    publishedAt: entry.published,
    image: null,
    author: entry.author,
    channel: v.channel ?? (textOf(feed, feed.title) || null),
    thumbnail: absolute(v.thumbnail, undefined),
    siteName: 'YouTube',
    source: 'feed',
  };
}
