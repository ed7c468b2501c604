/**
 * The seams ingestion uses to reach the web (H1's fetcher and extractor, or test doubles), and
 * the news item made from one fetched article.
 */
import { errors } from '../../errors.js';
import { fetchedDateOf } from '../dates.js';
import type { ParsedFeed } from './feeds.js';
import { idForUrl } from '../ids.js';
import { decorationUrl } from '../items.js';
import { FIELD_CAPS, capField } from '../limits.js';
import { DESCRIPTION_CHARS, excerpt, oneLine } from '../text.js';
import { hostOf } from '../../text.js';

/** A fetched page, as the fetcher returns it. */
export interface FetchedPage {
  requestedUrl: string;
  /** Where the page was finally fetched from, after redirects. */
  url: string;
  status: number;
  contentType: string;
  /** Empty when `status` is 304 (the validators given still hold). */
  body: Buffer;
  /** The answer's ETag and Last-Modified, for the next conditional request (feed sources). */
  etag?: string | null;
  lastModified?: string | null;
}

/** Validators of a page fetched before: a conditional request answered 304 costs no body and no parse. */
export interface Validators {
  etag?: string | null;
  lastModified?: string | null;
}

/** What extraction yields for a page (the fields Salon uses). */
export interface ArticleFields {
  title?: string | null;
  text?: string | null;
  excerpt?: string | null;
  byline?: string | null;
  siteName?: string | null;
  image?: string | null;
  publishedTime?: string | null;
  /** Set by Salon to the page's final URL. */
  url?: string | null;
}

/** The network and parsing capabilities ingestion needs; app.ts and the CLI pass the real ones. */
export interface IngestDeps {
  /**
   * Fetches an HTML or XML page (SSRF-guarded, size-capped). With `validators` the request is
   * conditional (If-None-Match, If-Modified-Since) and a 304 answer resolves with status 304 and
   * an empty body.
   */
  fetchPage(url: string, signal?: AbortSignal, validators?: Validators): Promise<FetchedPage>;
  /** Fetches and parses a JSON document (the HN API). */
  fetchJson(url: string, signal?: AbortSignal): Promise<unknown>;
  /** Extracts the article of a fetched page (decoding it by its charset), preferably off the main thread. */
  extract(page: FetchedPage, maxChars: number, signal?: AbortSignal): Promise<ArticleFields>;
  /**
   * Parses a feed document, off the main thread when large; default: parseFeed in-process.
   * `contentType`: the Content-Type it was fetched with, whose charset decodes an undeclared feed.
   */
  parseFeed?(bytes: Buffer, ref: string, signal?: AbortSignal, contentType?: string): Promise<ParsedFeed>;
  /** Releases connection pools and workers; called when ingestion shuts down. */
  close?(): Promise<void>;
}

/** Fetches and extracts the article at `url`; throws the fetch or extraction error. */
export async function fetchArticle(deps: IngestDeps, url: string, maxChars: number, signal?: AbortSignal): Promise<ArticleFields> {
  const page = await deps.fetchPage(url, signal);
  return articleOfPage(deps, page, maxChars, signal);
}

/** Extracts the article of an already fetched page. */
export async function articleOfPage(deps: IngestDeps, page: FetchedPage, maxChars: number, signal?: AbortSignal): Promise<ArticleFields> {
  const article = await deps.extract(page, maxChars, signal);
  if (!article.text?.trim()) throw new errors.ERR_EXTRACTION_FAILED(page.url, 'no article text');
  return { ...article, url: page.url };
}

/**
 * The news item (unvalidated) for an article fetched from `requestedUrl`; its id comes from the
 * requested URL, so ingesting the same URL again updates it. The description and site name are
 * cut before they are cleaned: this runs on the event loop, whatever extractor made the article.
 */
export function newsItemFromArticle(requestedUrl: string, article: ArticleFields): Record<string, unknown> {
  // The page's final URL only when an item can keep it: a redirect past ITEM_LIMITS.url failed the item.
  const url = decorationUrl(article.url) ?? requestedUrl;
  const body = article.text?.trim() ?? '';
  return {
    id: idForUrl('news', requestedUrl),
    kind: 'news',
    // Cleaned here, as validateItem will: a title of control or bidi characters only failed the item.
    title: oneLine(capField(article.title ?? '', FIELD_CAPS.title)) || url,
    url,
    description: excerpt(capField(article.excerpt ?? '', FIELD_CAPS.description).trim() || body, DESCRIPTION_CHARS),
    body,
    comments: [],
    category: null,
    publishedAt: fetchedDateOf(article.publishedTime),
    image: decorationUrl(article.image),
    author: article.byline?.trim() || null,
    siteName: capField(article.siteName ?? '', FIELD_CAPS.siteName).trim() || hostOf(url),
    source: 'url',
  };
}
