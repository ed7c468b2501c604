/**
 * Stable content ids (docs/architecture.md): `news_<id>`, `post_<id>`, `video_<id>`. The same source always
 * maps to the same id, so re-ingesting updates the stored item instead of adding a second one.
 *
 * - URL-ingested articles: `news_u<first 16 hex of sha256(normalized requested URL)>`. The requested
 *   URL (not the one reached after redirects) is used so the id is known before fetching and stays
 *   the same whether or not the fetch succeeds.
 * - Hacker News stories: `news_hn<id>`. YouTube videos: `video_<videoId>`.
 * - Posts: their front matter id, else a slug of the file name.
 */
import { createHash } from 'node:crypto';
import { CONTENT_ID_SUFFIX, type ContentKind, kindOfId } from './types.js';
import { errors } from '../errors.js';

const URL_HASH_CHARS = 16;
const MAX_SUFFIX = 128;
const TRACKING_PARAM = /^(utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid|igshid|ref_src)$/i;

/**
 * A URL in the form used for ids: lower-case scheme and host, no default port, no userinfo, no
 * fragment, no tracking parameters, the remaining query parameters sorted.
 */
export function normalizeUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new errors.ERR_FETCH_BAD_URL(raw);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new errors.ERR_FETCH_BAD_URL(raw);
  u.hash = '';
  u.username = '';
  u.password = '';
  const params = [...u.searchParams].filter(([k]) => !TRACKING_PARAM.test(k));
  params.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  u.search = new URLSearchParams(params).toString();
  return u.toString();
}

function urlHash(url: string): string {
  return createHash('sha256').update(normalizeUrl(url)).digest('hex').slice(0, URL_HASH_CHARS);
}

/** The id of the item made from `url`, e.g. `news_u3f2a…`. */
export function idForUrl(kind: ContentKind, url: string): string {
  return `${kind}_u${urlHash(url)}`;
}

/** `news_hn<id>` for a Hacker News story. */
export function hnItemId(hnId: number): string {
  return `news_hn${hnId}`;
}

/** The story id of a `news.ycombinator.com/item?id=N` URL, or null (never fetches). */
export function hnStoryIdOf(url: string): number | null {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return null;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !/^(www\.)?news\.ycombinator\.com$/i.test(u.hostname) || u.pathname !== '/item') return null;
  const id = u.searchParams.get('id');
  return id && /^\d{1,15}$/.test(id) && Number(id) > 0 ? Number(id) : null;
}

/** Turns any string into an id suffix: letters, digits, `-` and `_`, at most 128 characters; '' if nothing is left. */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SUFFIX)
    .replace(/-+$/, '');
}

/**
 * The full id for `kind` from a given id: `n01` → `news_n01`; `news_n01` stays as it is.
 * Throws ERR_INVALID_CONTENT when it is not a valid id of that kind.
 */
export function qualifyId(kind: ContentKind, id: string): string {
  const full = id.startsWith(`${kind}_`) ? id : `${kind}_${id}`;
  if (kindOfId(full) !== kind) {
    throw new errors.ERR_INVALID_CONTENT(`id "${id}" must be ${kind}_ followed by 1-128 of A-Z a-z 0-9 _ -`);
  }
  return full;
}

/** Whether a string is a valid suffix for a content id. */
export function isIdSuffix(s: string): boolean {
  return CONTENT_ID_SUFFIX.test(s);
}
