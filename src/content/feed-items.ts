/**
 * Feed entries to items: YouTube entries become video items; other entries become news items
 * whose body is the linked article when it could be fetched, else the feed's own content.
 */
import { errors } from '../errors.js';
import type { ArticleFields } from './article.js';
import type { FeedEntry, ParsedFeed } from './feeds.js';
import { htmlToText, looksLikeHtml } from './html-text.js';
import { idForUrl, isIdSuffix, slugify } from './ids.js';
import { excerpt, oneLine } from './text.js';

export const DESCRIPTION_CHARS = 300;
const YOUTUBE_WATCH = 'https://www.youtube.com/watch?v=';

function plain(text: string): string {
  return looksLikeHtml(text) ? htmlToText(text) : text.trim();
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

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return null;
  }
}

/** The news item (unvalidated) for a feed entry and, when it was fetched, its linked article. */
export function newsItemFromEntry(entry: FeedEntry, feed: ParsedFeed, article: ArticleFields | null, feedUrl?: string): Record<string, unknown> {
  const url = entryUrl(entry, feedUrl);
  if (!url) throw new errors.ERR_INVALID_CONTENT(`feed entry "${oneLine(entry.title) || entry.guid || '?'}" has no http(s) link`);
  const feedText = plain(entry.contentHtml || entry.summaryHtml);
  const body = article?.text?.trim() || feedText;
  const summary = plain(entry.summaryHtml);
  const image = absolute(entry.image, url) ?? absolute(article?.image ?? null, url);
  return {
    id: idForUrl('news', url),
    kind: 'news',
    title: plain(entry.title) || article?.title || url,
    url: article?.url || url,
    description: excerpt(summary || article?.excerpt || body, DESCRIPTION_CHARS),
    body,
    comments: [],
    category: entry.categories[0] ? plain(entry.categories[0]) : null,
    publishedAt: entry.published ?? validDate(article?.publishedTime),
    image,
    author: entry.author ? plain(entry.author) : article?.byline || null,
    siteName: article?.siteName || plain(feed.title) || hostOf(url),
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
  const description = v.description.trim() || plain(entry.summaryHtml);
  return {
    id: `video_${suffix}`,
    kind: 'video',
    title: plain(entry.title),
    url: absolute(entry.link, undefined) ?? `${YOUTUBE_WATCH}${encodeURIComponent(v.videoId)}`,
    description: excerpt(description, DESCRIPTION_CHARS),
    body: description,
    comments: [],
    category: entry.categories[0] ?? null,
    publishedAt: entry.published,
    image: null,
    author: entry.author,
    channel: v.channel ?? (plain(feed.title) || null),
    thumbnail: absolute(v.thumbnail, undefined),
    siteName: 'YouTube',
    source: 'feed',
  };
}
