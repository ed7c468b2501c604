/**
 * Validation of ContentItems from any source (feeds, HN, JSON, markdown, the HTTP API, demo
 * files): every field is type-checked, cleaned of control characters and capped, and a bad field
 * fails with ERR_INVALID_CONTENT naming it. Also the summary shape the list API returns.
 */
import { isoDateOf } from './dates.js';
import { errors } from '../errors.js';
import { CONTENT_KINDS, type Comment, type ContentItem, type ContentKind, type ItemSummary, type StoredItem, kindOfId } from './types.js';
import { idForUrl, qualifyId, slugify } from './ids.js';
import { cleanText, excerpt, oneLine, trimSpacesEnd, truncate } from './text.js';
import { capField } from './limits.js';

export type { ItemSummary };

/** Caps on field lengths (characters) and counts. The body cap comes from BODY_MAX_CHARS. */
export const ITEM_LIMITS = {
  title: 500,
  description: 1000,
  url: 2048,
  name: 200,
  category: 64,
  comments: 500,
  commentText: 20_000,
  source: 32,
} as const;

/** Length of a description made from the body when an item has none. */
const DERIVED_DESCRIPTION_CHARS = 300;

export interface ValidateOptions {
  /** Longest body kept; longer bodies are cut (BODY_MAX_CHARS). */
  bodyMaxChars: number;
}

type Fields = Record<string, unknown>;

class FieldError extends Error {}

function fail(field: string, problem: string): never {
  throw new FieldError(`${field} ${problem}`);
}

function optionalString(v: unknown, field: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') fail(field, 'must be a string or null');
  return v;
}

/**
 * `s` as one line of at most `max` characters. Cut before it is cleaned, to twice `max` after its
 * leading whitespace so that folded whitespace rarely leaves it short: cleaning all of a 4.6 MB
 * site name and description held the event loop 430 ms.
 */
function line(s: string, max: number): string {
  return truncate(oneLine(capField(s.trimStart(), 2 * max)), max);
}

function name(v: unknown, field: string, max: number): string | null {
  const s = optionalString(v, field);
  if (s === null) return null;
  const t = line(s, max);
  return t || null;
}

/**
 * A site-relative path: one leading slash, then no whitespace or backslash. Browsers read `//host`
 * and `/\host` as links to another site, so neither counts as a path.
 */
const SITE_PATH = /^\/(?![/\\])[^\s\\]*$/;

/** An absolute http(s) URL, or a site-relative path such as `/demo/img/n01.svg`. */
function link(v: unknown, field: string): string | null {
  const s = optionalString(v, field);
  if (s === null || s.trim() === '') return null;
  const t = s.trim();
  if (t.length > ITEM_LIMITS.url) fail(field, `is longer than ${ITEM_LIMITS.url} characters`);
  if (SITE_PATH.test(t)) return t;
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    return fail(field, `must be an http(s) URL or a path starting with /, got "${truncate(t, 80)}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') fail(field, `must be an http(s) URL, got "${u.protocol}"`);
  // Credentials in a URL are never stored: every member sees an item's links.
  u.username = '';
  u.password = '';
  // Checked again as it is stored: percent-encoding makes a character of a path up to nine.
  const href = u.toString();
  if (href.length > ITEM_LIMITS.url) fail(field, `is longer than ${ITEM_LIMITS.url} characters once percent-encoded`);
  return href;
}

/**
 * An image or thumbnail URL a source builder found (a page's og:image, a feed's media:thumbnail),
 * resolved against `base`: the http(s) URL validateItem accepts, or null. Such a decoration is
 * optional, so one that is malformed or longer than ITEM_LIMITS.url drops itself, not its item.
 */
export function decorationUrl(raw: string | null | undefined, base?: string): string | null {
  if (!raw?.trim()) return null;
  let u: URL;
  try {
    u = new URL(raw.trim(), base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  return u.href.length <= ITEM_LIMITS.url ? u.href : null;
}

function date(v: unknown, field: string): string | null {
  const s = optionalString(v, field);
  if (s === null || s.trim() === '') return null;
  const iso = isoDateOf(s.trim());
  if (iso === null) fail(field, `is not a date in the years 0000–9999: "${truncate(s, 60)}"`);
  return iso;
}

function body(v: unknown, max: number): string {
  // Cut before cleaning: a fetched body may hold megabytes, and only `max` characters are kept.
  const s = truncate(optionalString(v, 'body') ?? '', max);
  // Each line trimmed by a loop: `/[ \t]+\n/` restarted at every space of a long run with no
  // newline after it (a hostile feed entry of 120,000 characters held the event loop 6.8 s).
  const cleaned = cleanText(s)
    .split('\n')
    .map(trimSpacesEnd)
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return truncate(cleaned, max);
}

function comments(v: unknown): Comment[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail('comments', 'must be an array');
  if (v.length > ITEM_LIMITS.comments) fail('comments', `has more than ${ITEM_LIMITS.comments} entries`);
  return v.map((c, i) => {
    const at = `comments[${i}]`;
    if (!c || typeof c !== 'object' || Array.isArray(c)) fail(at, 'must be an object {by, text, time}');
    const { by, text, time } = c as Fields;
    const author = name(by, `${at}.by`, ITEM_LIMITS.name);
    if (!author) fail(`${at}.by`, 'must be a non-empty string');
    if (typeof text !== 'string') fail(`${at}.text`, 'must be a string');
    const t = truncate(
      cleanText(text)
        .replace(/\n{3,}/g, '\n\n')
        .trim(),
      ITEM_LIMITS.commentText,
    );
    if (!t) fail(`${at}.text`, 'is empty');
    if (typeof time !== 'number' || !Number.isSafeInteger(time) || time < 0) fail(`${at}.time`, 'must be Unix seconds (a whole number ≥ 0)');
    return { by: author, text: t, time };
  });
}

function identity(f: Fields): { id: string; kind: ContentKind } {
  if (typeof f.id !== 'string') fail('id', 'must be a string like news_42');
  const kind = kindOfId(f.id);
  if (!kind) fail('id', `"${truncate(f.id, 80)}" must be news_, post_ or video_ followed by 1-128 of A-Z a-z 0-9 _ -`);
  if (f.kind !== undefined && f.kind !== kind) {
    fail('kind', `must be one of ${CONTENT_KINDS.join(', ')} and match the id prefix (${kind})`);
  }
  return { id: f.id, kind };
}

function validateFields(f: Fields, options: ValidateOptions): ContentItem {
  const { id, kind } = identity(f);
  if (typeof f.title !== 'string') fail('title', 'must be a string');
  const title = line(f.title, ITEM_LIMITS.title);
  if (!title) fail('title', 'is empty');
  const description = optionalString(f.description, 'description');
  const source = optionalString(f.source, 'source');
  if (!source || !/^[a-z][a-z0-9-]*$/.test(source) || source.length > ITEM_LIMITS.source) {
    fail('source', 'must name where the item came from, e.g. "url" or "demo"');
  }
  const text = body(f.body, options.bodyMaxChars);
  const summary = description ? line(description, ITEM_LIMITS.description) : '';
  return {
    id,
    kind,
    title,
    url: link(f.url, 'url'),
    // Lists show the description; an item without one gets the start of its body.
    description: summary || excerpt(text, DERIVED_DESCRIPTION_CHARS),
    body: text,
    comments: comments(f.comments),
    category: name(f.category, 'category', ITEM_LIMITS.category),
    publishedAt: date(f.publishedAt, 'publishedAt'),
    image: link(f.image, 'image'),
    author: name(f.author, 'author', ITEM_LIMITS.name),
    channel: name(f.channel, 'channel', ITEM_LIMITS.name),
    thumbnail: link(f.thumbnail, 'thumbnail'),
    siteName: name(f.siteName, 'siteName', ITEM_LIMITS.name),
    source,
  };
}

/**
 * Checks and cleans an item from any source. Throws ERR_INVALID_CONTENT naming the item and the
 * first bad field; never returns a partly valid item.
 */
export function validateItem(input: unknown, options: ValidateOptions): ContentItem {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new errors.ERR_INVALID_CONTENT('expected an object');
  const f = input as Fields;
  try {
    return validateFields(f, options);
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    const who = typeof f.id === 'string' ? `${truncate(f.id, 80)}: ` : '';
    throw new errors.ERR_INVALID_CONTENT(`${who}${err.message}`);
  }
}

/** The summary of a stored item for `GET /api/v1/content`. */
export function summarizeItem(item: StoredItem | ContentItem): ItemSummary {
  return {
    id: item.id,
    kind: item.kind,
    title: item.title,
    url: item.url,
    description: item.description,
    category: item.category,
    publishedAt: item.publishedAt,
    image: item.image,
    author: item.author,
    channel: item.channel,
    thumbnail: item.thumbnail,
    siteName: item.siteName,
    commentCount: item.comments.length,
  };
}

/**
 * An item from the HTTP API with its id made whole: `n1` → `news_n1`; no id → derived from the
 * url (`news_u<hash>`), else from a slug of the title. The result still goes through validateItem.
 */
export function withDerivedId(input: Record<string, unknown>, source: string): Record<string, unknown> {
  const kind = input.kind as ContentKind;
  const given = typeof input.id === 'string' && input.id ? input.id : null;
  let id: string;
  const prefix = given && /^(news|post|video)_/.exec(given)?.[1];
  if (prefix && prefix !== kind) throw new errors.ERR_INVALID_CONTENT(`id ${given} does not match kind ${kind}`);
  if (given) id = qualifyId(kind, given);
  else if (typeof input.url === 'string' && /^https?:\/\//i.test(input.url)) id = idForUrl(kind, input.url);
  else {
    const slug = typeof input.title === 'string' ? slugify(input.title) : '';
    if (!slug) throw new errors.ERR_INVALID_CONTENT('give an id, an http(s) url, or a title with letters or digits');
    id = `${kind}_${slug}`;
  }
  return { ...input, id, kind, source };
}
