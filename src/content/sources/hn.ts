/**
 * Hacker News through its Firebase API (`${base}/item/${id}.json`, `${base}/topstories.json`):
 * a story with its first-level comments in `kids` order, skipping deleted, dead and null items,
 * requests paced `intervalMs` apart. Comment HTML becomes plain text.
 */
import { SalonError, errors } from '../../errors.js';
import { fetchedDateOf } from '../dates.js';
import type { ArticleFields } from './article.js';
import type { Pacer } from './pacer.js';
import {
  commentOf,
  pacedApi,
  titleOf,
  unixSeconds,
  type CommentApiOptions,
  type CommentSource,
  type Discussion,
  type UnreadComment,
} from './comment-source.js';
import { htmlToText } from '../extract/html-text.js';
import { FIELD_CAPS, capField } from '../limits.js';
import { hnItemId, hnStoryIdOf } from '../ids.js';
import { decorationUrl } from '../items.js';

export { hnStoryIdOf };
import type { Comment } from '../types.js';
import { excerpt } from '../text.js';
import { hostOf } from '../../text.js';

/** The fields of an HN API item Salon uses. */
export interface HnItem {
  id: number;
  type?: string;
  by?: string;
  time?: number;
  text?: string;
  title?: string;
  url?: string;
  kids?: number[];
  deleted?: boolean;
  dead?: boolean;
}

/** HN_API_BASE, HN_COMMENT_LIMIT (first-level comments kept per story), HN_REQUEST_INTERVAL_MS. */
export type HnClientOptions = CommentApiOptions;

/** The story lists of the API: `topstories`, `beststories`, `newstories`. */
export const HN_LISTS = ['top', 'best', 'new'] as const;
export type HnList = (typeof HN_LISTS)[number];

export const HN_DEFAULT_TOP_LIMIT = 10;
export const HN_MAX_TOP_LIMIT = 500;
/** Extra kids looked at beyond the limit, to make up for deleted and dead ones. */
const EXTRA_KIDS = 20;
const HN_DISCUSSION = 'https://news.ycombinator.com/item?id=';
const STORY_TYPES = new Set(['story', 'job', 'poll']);
const DESCRIPTION_CHARS = 300;

function asItem(raw: unknown): HnItem | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  if (typeof r.id !== 'number') return null;
  return {
    id: r.id,
    type: typeof r.type === 'string' ? r.type : undefined,
    by: typeof r.by === 'string' ? r.by : undefined,
    time: unixSeconds(r.time) ?? undefined,
    text: typeof r.text === 'string' ? r.text : undefined,
    title: typeof r.title === 'string' ? r.title : undefined,
    url: typeof r.url === 'string' ? r.url : undefined,
    kids: Array.isArray(r.kids) ? r.kids.filter((k): k is number => Number.isInteger(k)) : undefined,
    deleted: r.deleted === true,
    dead: r.dead === true,
  };
}

/** A paced client for the HN Firebase API. */
export class HnClient {
  private readonly pacer: Pacer;

  constructor(private readonly options: HnClientOptions) {
    this.pacer = pacedApi('HnClient', options);
  }

  private async get(path: string, signal?: AbortSignal): Promise<unknown> {
    await this.pacer.turn(signal);
    return this.options.fetchJson(`${this.options.base.replace(/\/+$/, '')}/${path}`, signal);
  }

  /** One item, or null when the API has none (or it is not an item). */
  async item(id: number, signal?: AbortSignal): Promise<HnItem | null> {
    return asItem(await this.get(`item/${id}.json`, signal));
  }

  /** The ids of the first `limit` top stories. */
  topStoryIds(limit: number, signal?: AbortSignal): Promise<number[]> {
    return this.storyIds('top', limit, signal);
  }

  /** The ids of the first `limit` stories of a list (top, best or new). */
  async storyIds(list: HnList, limit: number, signal?: AbortSignal): Promise<number[]> {
    const raw = await this.get(`${list}stories.json`, signal);
    if (!Array.isArray(raw)) throw new errors.ERR_FETCH_FAILED(`${this.options.base}/${list}stories.json`, 'expected a JSON array of ids');
    // Each story once: a list naming one twice had a poll fetch and store it twice.
    return [...new Set(raw.filter((id): id is number => Number.isInteger(id) && id > 0))].slice(0, limit);
  }

  /**
   * A story and its first `commentLimit` live first-level comments as plain text. `read`: the
   * story's item as the caller just read it (a poll compares it with what it stored before), so it
   * is not asked for twice. A comment whose answer is refused for good (SalonError.permanent: not
   * JSON, too large, a 404) is left out and listed in `unread`, its slot given to the next kid;
   * any other failure of a comment fails the story, which a later poll tries again whole.
   */
  async story(id: number, signal?: AbortSignal, read?: HnItem): Promise<{ story: HnItem; comments: Comment[]; unread: UnreadComment[] }> {
    const story = read ?? (await this.item(id, signal));
    // The item's id names the stored item (news_hn<id>): an answer about another item must not overwrite it.
    if (!story || story.id !== id || story.deleted || story.dead) throw new errors.ERR_CONTENT_NOT_FOUND(`hn:${id} (no live Hacker News item with that id)`);
    if (!STORY_TYPES.has(story.type ?? '')) throw new errors.ERR_INVALID_CONTENT(`Hacker News item ${id} is a ${story.type ?? 'thing'}, not a story`);
    const comments: Comment[] = [];
    const unread: UnreadComment[] = [];
    const limit = this.options.commentLimit;
    // Each kid asked once: a kids list naming one comment twice would attach it twice.
    for (const kid of new Set((story.kids ?? []).slice(0, limit + EXTRA_KIDS))) {
      if (comments.length >= limit) break;
      let c: HnItem | null;
      try {
        c = await this.item(kid, signal);
      } catch (err) {
        if (signal?.aborted || !(err instanceof SalonError && err.permanent)) throw err;
        unread.push({ ref: `hn:${kid}`, err });
        continue;
      }
      const comment = c && toComment(c);
      if (comment) comments.push(comment);
    }
    return { story, comments, unread };
  }
}

/** A live comment as stored, or null for deleted, dead, empty or author-less ones. */
export function toComment(item: HnItem): Comment | null {
  if (item.deleted || item.dead || item.type !== 'comment' || !item.by || !item.text) return null;
  return commentOf(item.by, htmlToText(capField(item.text, FIELD_CAPS.comment), { links: 'text+href' }), item.time);
}

export const HN_DEFAULT_CATEGORY = 'Tech';

/** The news item (unvalidated pipeline input) for a story, with its linked article when one was extracted. */
export function storyToItem(story: HnItem, comments: Comment[], article: ArticleFields | null): Record<string, unknown> {
  const seconds = unixSeconds(story.time);
  const ownText = story.text ? htmlToText(capField(story.text, FIELD_CAPS.comment), { links: 'text+href' }) : '';
  const body = article?.text?.trim() || ownText;
  const image = decorationUrl(article?.image);
  const link = storyLink(story);
  // The API's strings are capped like a feed's before anything reads them (a story may carry megabytes).
  const by = story.by ? capField(story.by, FIELD_CAPS.author) : null;
  return {
    id: hnItemId(story.id),
    kind: 'news',
    title: titleOf(story.title) || titleOf(article?.title) || `Hacker News item ${story.id}`,
    url: decorationUrl(article?.url) ?? link ?? `${HN_DISCUSSION}${story.id}`,
    description: article?.excerpt?.trim() || excerpt(body, DESCRIPTION_CHARS),
    body,
    comments,
    category: HN_DEFAULT_CATEGORY,
    // A linked page's own date and byline: the story's time is when it was submitted, and its
    // submitter wrote the page only when there is no link (an Ask HN's text is theirs).
    publishedAt: fetchedDateOf(article?.publishedTime) ?? (seconds ? fetchedDateOf(new Date(seconds * 1000).toISOString()) : null),
    image,
    author: article?.byline || (link ? null : by),
    siteName: article?.siteName || (link ? hostOf(link) : 'Hacker News'),
    source: 'hn',
  };
}

function isHttp(url: string): boolean {
  // Two plain searches: `^https?:\/\/[^\s]+$` over a URL of megabytes ran out of the regex engine's
  // backtrack stack (RangeError: Maximum call stack size exceeded), depending on the stack left.
  return /^https?:\/\/\S/i.test(url) && !/\s/.test(url);
}

/**
 * The story's link as an item keeps it, or null: one validateItem refuses (it does not parse, or
 * percent-encodes past ITEM_LIMITS.url) failed the whole story, comments and all.
 */
function storyLink(story: HnItem): string | null {
  return story.url && isHttp(story.url) ? decorationUrl(story.url) : null;
}

/** Hacker News as a CommentSource: an `item?id=N` URL is story N, read through the paced client. */
export class HnComments implements CommentSource {
  readonly name = 'hn';

  /** `read`: stories already read, by id, taken instead of asking the API for them again. */
  constructor(
    private readonly client: HnClient,
    private readonly read: ReadonlyMap<number, HnItem> = new Map(),
  ) {}

  threadOf(url: string): string | null {
    const id = hnStoryIdOf(url);
    return id === null ? null : String(id);
  }

  async discussion(thread: string, signal?: AbortSignal): Promise<Discussion> {
    const id = Number(thread);
    const { story, comments, unread } = await this.client.story(id, signal, this.read.get(id));
    return {
      label: `HN story ${id}`,
      link: storyLink(story),
      commentCount: comments.length,
      unread,
      toItem: (article) => storyToItem(story, comments, article),
    };
  }
}
