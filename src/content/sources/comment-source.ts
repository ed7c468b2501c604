/**
 * The CommentSource seam: a site whose discussion threads Salon reads through an API rather than
 * by scraping pages. A URL that names one of its threads (an HN `item?id=N`, a Reddit
 * `/comments/<id>/…`), whether given to ingest, found in a feed or polled as a source, becomes one
 * item: the post's linked article as the body (the post's own text when it links nowhere) and its
 * top comments attached. Hacker News (hn.ts) and Reddit (reddit.ts) implement it.
 */
import { numberWithin, required, wholeNumber } from '../../options.js';
import { FIELD_CAPS, capField } from '../limits.js';
import { cleanText, oneLine } from '../text.js';
import type { Comment } from '../types.js';
import type { ArticleFields } from './article.js';
import { Pacer } from './pacer.js';

/** Fetches and parses a JSON document (the fetcher's `fetchJson`, or a test double). */
export type JsonFetcher = (url: string, signal?: AbortSignal) => Promise<unknown>;

/** What a client of a discussion site's API is configured with. */
export interface CommentApiOptions {
  /** The API's base URL, without a trailing slash (a loopback fake in tests). */
  base: string;
  fetchJson: JsonFetcher;
  /** First-level comments kept per thread. */
  commentLimit: number;
  /** Pause between request starts. */
  intervalMs: number;
}

/** Checks `options` by name for `owner` and returns the pacer its requests take turns on. */
export function pacedApi(owner: string, options: CommentApiOptions): Pacer {
  if (!/^https?:\/\//.test(options.base ?? '')) throw new TypeError(`${owner}: options.base must be an http(s) URL, got ${options.base}`);
  required(owner, 'fetchJson', options.fetchJson);
  wholeNumber(owner, 'commentLimit', options.commentLimit, 0);
  numberWithin(owner, 'intervalMs', options.intervalMs, 0);
  return new Pacer(options.intervalMs);
}

/** A comment left out of its thread because the API's answer for it was refused for good. */
export interface UnreadComment {
  /** The comment as a job's failures name it, e.g. `hn:8863`. */
  ref: string;
  err: unknown;
}

/** A thread's post and top comments, ready to become an item once its linked article is fetched. */
export interface Discussion {
  /** How logs and job failures name the thread, e.g. `HN story 8863`, `Reddit thread abc12`. */
  label: string;
  /** The page the post links to (fetched and extracted as the body), or null for a text post. */
  link: string | null;
  /** Comments attached (at most the source's limit). */
  commentCount: number;
  /** Comments left out because their answers were refused (noted on the job); none when absent. */
  unread?: UnreadComment[];
  /** The news item (unvalidated pipeline input) with the linked article, when it was extracted. */
  toItem(article: ArticleFields | null): Record<string, unknown>;
}

/** A site whose threads are read through its API (see the module comment). */
export interface CommentSource {
  /** `hn`, `reddit`: the item's `source`. */
  readonly name: string;
  /** The thread a URL names on this site, or null when it names none. Never fetches. */
  threadOf(url: string): string | null;
  /**
   * The thread's post and its top comments, requests paced as the source requires. Throws a typed
   * error (ERR_CONTENT_NOT_FOUND for a missing or dead thread, ERR_FETCH_* when the API fails).
   */
  discussion(thread: string, signal?: AbortSignal): Promise<Discussion>;
}

/** The first source that knows `url` as one of its threads, with the thread's key. */
export function findThread(sources: readonly CommentSource[], url: string | null | undefined): { source: CommentSource; thread: string } | null {
  if (!url) return null;
  for (const source of sources) {
    const thread = source.threadOf(url);
    if (thread !== null) return { source, thread };
  }
  return null;
}

/** Latest instant an item's date may be, in Unix seconds: the end of the year 9999 (content/dates.ts). */
const MAX_UNIX_SECONDS = 253_402_300_799;

/**
 * An API's timestamp as whole Unix seconds a Date can hold, or null: a negative, fractional past
 * the second, or far-future `time` made `toISOString()` throw, or failed the whole item's
 * validation for one comment's time.
 */
export function unixSeconds(value: unknown): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_UNIX_SECONDS) return null;
  return Math.floor(value);
}

/**
 * A comment as validateItem keeps it (author on one line, text cleaned), or null when its author
 * or text cleans to nothing (spaces, control or bidi characters only): validateItem refuses such a
 * comment, and with it the whole thread's item.
 */
export function commentOf(by: string, text: string, time: unknown): Comment | null {
  const author = oneLine(capField(by, FIELD_CAPS.author));
  const body = cleanText(text).trim();
  return author && body ? { by: author, text: body, time: unixSeconds(time) ?? 0 } : null;
}

/**
 * A title as one clean line, or '' when nothing is left of it (a caller falls back on another):
 * validateItem refuses a title that cleans to nothing (control or bidi characters only), and with
 * it the item.
 */
export function titleOf(raw: string | null | undefined): string {
  return raw ? oneLine(capField(raw, FIELD_CAPS.title)) : '';
}

/** The URL parsed, or null when it is not an absolute http(s) URL. */
export function httpUrl(raw: string): URL | null {
  try {
    const u = new URL(raw.trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : null;
  } catch {
    return null;
  }
}
