/**
 * Reddit threads as a CommentSource: a `reddit.com/r/<sub>/comments/<id>/…` (or `redd.it/<id>`)
 * URL is read from `${base}/comments/<id>.json` (the thread's JSON: a listing with the post, then
 * one with its comments, best first). First-level comments only, deleted, removed and stickied
 * ones skipped, at most `commentLimit` (and no more than redditRequestLimit asked for), requests
 * paced `intervalMs` apart.
 */
import { errors } from '../../errors.js';
import { fetchedDateOf } from '../dates.js';
import { hostOf } from '../../text.js';
import type { ArticleFields } from './article.js';
import { commentOf, httpUrl, pacedApi, titleOf, unixSeconds, type CommentApiOptions, type CommentSource, type Discussion } from './comment-source.js';
import { FIELD_CAPS, capField } from '../limits.js';
import { decorationUrl } from '../items.js';
import { excerpt } from '../text.js';
import type { Comment } from '../types.js';
import type { Pacer } from './pacer.js';

/**
 * REDDIT_API_BASE (e.g. https://www.reddit.com), REDDIT_COMMENT_LIMIT, REDDIT_REQUEST_INTERVAL_MS
 * (a pacer of its own, shared with nothing else: Reddit counts per client).
 */
export type RedditOptions = CommentApiOptions;

const THREAD_ID = /^[a-z0-9]{1,16}$/i;
const REDDIT_HOST = /^((www|old|new|np)\.)?reddit\.com$/i;
const DESCRIPTION_CHARS = 300;
/**
 * First-level comments asked of Reddit, at most (its `limit`; it serves up to 500): twice those
 * kept and a few more, for the deleted, removed and stickied ones skipped. Unlimited, a busy
 * thread's JSON runs to megabytes, all of it parsed on the event loop for the few comments kept.
 */
export function redditRequestLimit(commentLimit: number): number {
  return Math.min(500, 2 * commentLimit + 5);
}
const GONE = new Set(['[deleted]', '[removed]']);
const REDDIT_WEB = 'https://www.reddit.com';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The `data.children[].{kind, data}` of a listing. */
function children(listing: unknown): { kind: string; data: Json }[] {
  const list = obj(obj(listing)?.data)?.children;
  if (!Array.isArray(list)) return [];
  return list.flatMap((c) => {
    const o = obj(c);
    const data = obj(o?.data);
    return o && data && typeof o.kind === 'string' ? [{ kind: o.kind, data }] : [];
  });
}

/** The thread id of a Reddit thread URL, or null. */
export function redditThreadOf(url: string): string | null {
  const u = httpUrl(url);
  if (!u) return null;
  if (/^redd\.it$/i.test(u.hostname)) {
    const id = u.pathname.slice(1);
    return THREAD_ID.test(id) ? id.toLowerCase() : null;
  }
  if (!REDDIT_HOST.test(u.hostname)) return null;
  const m = /^\/(?:r\/[^/]+\/)?comments\/([^/]+)/i.exec(u.pathname);
  return m && THREAD_ID.test(m[1]) ? m[1].toLowerCase() : null;
}

/** A live first-level comment, or null. */
function toComment(data: Json): Comment | null {
  const by = str(data.author);
  const body = str(data.body);
  if (!by || !body || GONE.has(by) || GONE.has(body.trim()) || data.stickied === true) return null;
  return commentOf(by, capField(body, FIELD_CAPS.comment), data.created_utc);
}

/** Reddit through its thread JSON (see the module comment). */
export class RedditComments implements CommentSource {
  readonly name = 'reddit';
  private readonly pacer: Pacer;

  constructor(private readonly options: RedditOptions) {
    this.pacer = pacedApi('RedditComments', options);
  }

  threadOf(url: string): string | null {
    return redditThreadOf(url);
  }

  async discussion(thread: string, signal?: AbortSignal): Promise<Discussion> {
    if (!THREAD_ID.test(thread)) throw new errors.ERR_BAD_REQUEST(`not a Reddit thread id: ${thread}`);
    const url = `${this.options.base.replace(/\/+$/, '')}/comments/${thread}.json?raw_json=1&depth=1&sort=top&limit=${redditRequestLimit(this.options.commentLimit)}`;
    await this.pacer.turn(signal);
    const raw = await this.options.fetchJson(url, signal);
    const [postListing, commentListing] = Array.isArray(raw) ? raw : [];
    const post = children(postListing).find((c) => c.kind === 't3')?.data;
    if (!post || str(post.id)?.toLowerCase() !== thread.toLowerCase())
      throw new errors.ERR_CONTENT_NOT_FOUND(`reddit:${thread} (no Reddit thread with that id)`);
    const comments: Comment[] = [];
    for (const c of children(commentListing)) {
      if (comments.length >= this.options.commentLimit) break;
      const comment = c.kind === 't1' ? toComment(c.data) : null;
      if (comment) comments.push(comment);
    }
    // A path, so the link stays on reddit.com: `.evil.example/…` or `@evil.example` after the host made it another site's.
    // Links an item cannot keep (malformed, or past ITEM_LIMITS.url) give way, or they failed the whole thread.
    const path = str(post.permalink);
    const permalink = (path?.startsWith('/') && decorationUrl(`${REDDIT_WEB}${path}`)) || `${REDDIT_WEB}/comments/${thread}/`;
    const linked = decorationUrl(str(post.url));
    const link = post.is_self !== true && linked && redditThreadOf(linked) === null ? linked : null;
    return {
      label: `Reddit thread ${thread}`,
      link,
      commentCount: comments.length,
      toItem: (article) => threadToItem(thread, post, permalink, link, comments, article),
    };
  }
}

function threadToItem(
  thread: string,
  post: Json,
  permalink: string,
  link: string | null,
  comments: Comment[],
  article: ArticleFields | null,
): Record<string, unknown> {
  const own = capField(str(post.selftext) ?? '', FIELD_CAPS.content).trim();
  const body = article?.text?.trim() || own;
  const seconds = unixSeconds(post.created_utc);
  const created = seconds === null ? null : fetchedDateOf(new Date(seconds * 1000).toISOString());
  return {
    id: `news_reddit${thread.toLowerCase()}`,
    kind: 'news',
    title: titleOf(str(post.title)) || titleOf(article?.title) || `Reddit thread ${thread}`,
    url: decorationUrl(article?.url) ?? link ?? permalink,
    description: article?.excerpt?.trim() || excerpt(body, DESCRIPTION_CHARS),
    body,
    comments,
    category: null,
    // A linked page's own date and byline: the post's time is when it was submitted, and its
    // submitter wrote the page only when there is no link (a self post's text is theirs).
    publishedAt: fetchedDateOf(article?.publishedTime) ?? created,
    image: null,
    author: article?.byline || (link ? null : str(post.author)) || null,
    siteName: article?.siteName || (link ? hostOf(link) : 'Reddit'),
    source: 'reddit',
  };
}
