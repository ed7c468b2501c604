/**
 * Feed entries to items: YouTube entries become video items; other entries become news items
 * whose body is the linked article when it could be fetched, else the feed's own content.
 */
import { fetchedDateOf } from '../dates.js';
import { errors } from '../../errors.js';
import type { ArticleFields } from './article.js';
import type { EntryFormats, FeedEntry, ParsedFeed, TextFormat } from './feeds.js';
import { htmlToText, looksLikeHtml } from '../extract/html-text.js';
import { idForUrl, isIdSuffix, slugify } from '../ids.js';
import { decorationUrl } from '../items.js';
import { titleOf } from './comment-source.js';
import { DESCRIPTION_CHARS, excerpt, oneLine } from '../text.js';
import { hostOf } from '../../text.js';

const YOUTUBE_WATCH = 'https://www.youtube.com/watch?v=';

/** An end tag that closes an element opened before it: `<b>…</b>`, not a lone `</b>` or `<div>`. */
function holdsClosedElement(text: string): boolean {
  const lower = text.toLowerCase();
  for (const end of lower.matchAll(/<\/([a-z][a-z0-9]*)\s*>/g)) {
    for (let open = lower.lastIndexOf(`<${end[1]}`, end.index); open !== -1; open = lower.lastIndexOf(`<${end[1]}`, open - 1)) {
      if (/[\s/>]/.test(lower[open + end[1].length + 1] ?? '')) return true;
      if (open === 0) break;
    }
  }
  return false;
}

/**
 * A text field as plain text, read in its format (feeds.ts, TextFormat). Text that may or may not
 * be markup is read as markup only when an element in it is closed; otherwise its `<` stay text
 * and only its character references are decoded (`Why <div> soup &amp; more`).
 */
function readText(text: string, format: TextFormat): string {
  if (format === 'text' || !looksLikeHtml(text)) return text.trim();
  if (format === 'html' || holdsClosedElement(text)) return htmlToText(text);
  return htmlToText(text.replaceAll('<', '&lt;'));
}

const PLAIN: EntryFormats = { title: 'text', summary: 'text', content: 'text' };

/** The entry with every text field turned into plain text. */
function plainEntry(e: FeedEntry): FeedEntry {
  return {
    ...e,
    title: readText(e.title, e.formats.title),
    summaryHtml: readText(e.summaryHtml, e.formats.summary),
    contentHtml: readText(e.contentHtml, e.formats.content),
    formats: PLAIN,
    author: e.author ? readText(e.author, 'html') : null,
    categories: e.categories.map((c) => readText(c, 'html')),
  };
}

/**
 * The feed with every text field turned into plain text (markup and entities resolved), marked so
 * it is never decoded twice. The feed worker calls it, so this work never runs on the event loop.
 */
export function toPlainFeed(feed: ParsedFeed): ParsedFeed {
  if (feed.plainText) return feed;
  return { ...feed, plainText: true, title: readText(feed.title, feed.titleFormat), titleFormat: 'text', entries: feed.entries.map(plainEntry) };
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
  const e = feed.plainText ? entry : plainEntry(entry);
  const feedText = e.contentHtml.trim() || e.summaryHtml.trim();
  const body = article?.text?.trim() || feedText;
  const summary = e.summaryHtml.trim();
  const image = decorationUrl(entry.image, url) ?? decorationUrl(article?.image, url);
  return {
    id: idForUrl('news', url),
    kind: 'news',
    title: titleOf(e.title) || titleOf(article?.title) || url,
    // The page's final URL only when an item can keep it: one past ITEM_LIMITS.url failed the entry.
    url: decorationUrl(article?.url) ?? url,
    description: excerpt(summary || article?.excerpt || body, DESCRIPTION_CHARS),
    body,
    comments: [],
    category: e.categories[0]?.trim() || null,
    publishedAt: fetchedDateOf(entry.published) ?? fetchedDateOf(article?.publishedTime),
    image,
    author: e.author?.trim() || article?.byline || null,
    siteName: article?.siteName || plainTitle(feed) || hostOf(url),
    source: 'feed',
  };
}

/** The feed's own title as plain text. */
function plainTitle(feed: ParsedFeed): string {
  return feed.plainText ? feed.title.trim() : readText(feed.title, feed.titleFormat);
}

/** The video item (unvalidated) for a YouTube feed entry; throws ERR_INVALID_CONTENT for other entries. */
export function videoItemFromEntry(entry: FeedEntry, feed: ParsedFeed): Record<string, unknown> {
  const v = entry.video;
  if (!v) throw new errors.ERR_INVALID_CONTENT(`feed entry "${oneLine(entry.title) || '?'}" has no yt:videoId`);
  const suffix = isIdSuffix(v.videoId) ? v.videoId : slugify(v.videoId);
  if (!suffix) throw new errors.ERR_INVALID_CONTENT(`feed entry "${oneLine(entry.title)}" has an unusable video id`);
  const e = feed.plainText ? entry : plainEntry(entry);
  const description = v.description.trim() || e.summaryHtml.trim();
  return {
    id: `video_${suffix}`,
    kind: 'video',
    title: titleOf(e.title) || `YouTube video ${suffix}`,
    url: decorationUrl(entry.link) ?? `${YOUTUBE_WATCH}${encodeURIComponent(v.videoId)}`,
    description: excerpt(description, DESCRIPTION_CHARS),
    body: description,
    comments: [],
    category: entry.categories[0] ?? null,
    publishedAt: fetchedDateOf(entry.published),
    image: null,
    author: entry.author,
    channel: v.channel ?? (plainTitle(feed) || null),
    thumbnail: decorationUrl(v.thumbnail),
    siteName: 'YouTube',
    source: 'feed',
  };
}
