/**
 * Article metadata from `<meta>` tags, JSON-LD and common markup: title, byline, publication
 * time, site name, lead image, description and language. Read before the document is cleaned,
 * since cleaning removes the JSON-LD scripts.
 */
import { isoFromMs } from '../dates.js';
import type { Cheerio, CheerioAPI } from 'cheerio';
import type { Element } from 'domhandler';
import { elementsWhere, innerText } from './dom.js';
import { FIELD_CAPS, capField } from '../limits.js';
import { readJsonLd } from './jsonld.js';

/** Metadata of one page; `title` may be empty when the page names itself nowhere. */
export interface ArticleMetadata {
  title: string;
  byline: string | null;
  publishedTime: string | null;
  siteName: string | null;
  image: string | null;
  description: string | null;
  lang: string | null;
}

/** Separators between a page title and the site name (`Title | Site`, `Title - Site`, ...). */
const TITLE_SEPARATOR = /\s+[|\-–—·•:/»]{1,2}\s+/;
/** A separator next to a known site name, where `Site: Title` needs no space before the colon. */
const SEPARATOR_CHARS = '[|\\-–—·•:/»]{1,2}';
const BYLINE_SELECTORS = ['[rel="author"]', '[itemprop~="author"] [itemprop="name"]', '[itemprop~="author"]', '.byline', '.author', '.article-author'];
const TIME_META = [
  'property=article:published_time',
  'itemprop=datePublished',
  'name=pubdate',
  'name=publishdate',
  'name=publish-date',
  'name=date',
  'name=dc.date',
  'name=DC.date.issued',
  'name=sailthru.date',
  'name=parsely-pub-date',
  'property=og:published_time',
];
const MAX_BYLINE_CHARS = 120;

/** Tags the metadata selectors name. */
const METADATA_TAGS = new Set(['html', 'meta', 'link', 'title', 'h1', 'time', 'script']);
/** Class names the byline selectors name. */
const BYLINE_CLASS = /byline|author/i;

/**
 * The elements any metadata selector can match: the tags they name, and the elements with the
 * attributes they test. The selectors filter these rather than each walking the whole page: fifteen
 * walks were a third of a page of a million elements.
 */
export type MetadataCandidates = Cheerio<Element>;

function metadataCandidates($: CheerioAPI): MetadataCandidates {
  const keep = (el: Element) =>
    METADATA_TAGS.has(el.name) || el.attribs.rel !== undefined || el.attribs.itemprop !== undefined || BYLINE_CLASS.test(el.attribs.class ?? '');
  return $(elementsWhere($.root()[0], keep));
}

/** `<meta>` contents by `name=`, `property=`, `itemprop=` or `http-equiv=` key, read in one pass. */
type MetaTags = Map<string, string>;

function readMetaTags(found: MetadataCandidates): MetaTags {
  const tags: MetaTags = new Map();
  for (const el of found.filter('meta').toArray()) {
    const content = el.attribs.content?.trim();
    if (!content) continue;
    for (const attr of ['name', 'property', 'itemprop', 'http-equiv']) {
      const key = el.attribs[attr];
      if (key && !tags.has(`${attr}=${key.toLowerCase()}`)) tags.set(`${attr}=${key.toLowerCase()}`, content);
    }
  }
  return tags;
}

function meta(tags: MetaTags, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = tags.get(key.toLowerCase());
    if (value) return value;
  }
  return undefined;
}

/** `s` cut to `max` characters, then its whitespace folded. */
function clean(s: string | undefined | null, max: number): string | undefined {
  const t = s && capField(s, max).replace(/\s+/g, ' ').trim();
  return t || undefined;
}

function capUrl(url: string | undefined): string | undefined {
  return url && capField(url, FIELD_CAPS.link);
}

/** `value` resolved against `base`, or as-is when it does not parse; http(s) only. */
export function absoluteUrl(value: string | undefined, base: string | undefined): string | null {
  if (!value) return null;
  try {
    const u = new URL(value, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** An ISO-8601 timestamp for a date string, or null when it is not a date. */
export function isoDate(value: string | undefined): string | null {
  if (!value) return null;
  const v = value.trim();
  // Bare digits are epoch seconds or milliseconds.
  const ms = /^\d{10}$/.test(v) ? Number(v) * 1000 : /^\d{13}$/.test(v) ? Number(v) : Date.parse(v);
  return isoFromMs(ms);
}

const squash = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/**
 * Drops a site name from a page title: a segment equal to the site name, or else a short last
 * segment (`Title | Site`) when what remains is a real title.
 */
export function cleanTitle(title: string, siteName?: string | null): string {
  const t = capField(title, FIELD_CAPS.title).trim();
  if (siteName) {
    const site = siteName.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const stripped = t.replace(new RegExp(`^${site}\\s*${SEPARATOR_CHARS}\\s*`, 'iu'), '').replace(new RegExp(`\\s*${SEPARATOR_CHARS}\\s*${site}$`, 'iu'), '');
    if (stripped && stripped !== t) return stripped;
  }
  const parts = t.split(TITLE_SEPARATOR);
  if (parts.length < 2) return t;
  const site = siteName ? squash(siteName) : '';
  if (site) {
    const kept = parts.filter((p) => squash(p) !== site && !(squash(p).length > 3 && site.startsWith(squash(p))));
    if (kept.length > 0 && kept.length < parts.length) return rejoin(t, kept);
  }
  const last = parts[parts.length - 1];
  const rest = parts.slice(0, -1);
  if (parts.length === 2 && last.split(/\s+/).length <= 4 && rest.join(' ').split(/\s+/).length >= 3) return rejoin(t, rest);
  return t;
}

/** Rejoins kept segments with the separators they had in the original title. */
function rejoin(title: string, kept: string[]): string {
  const start = title.indexOf(kept[0]);
  const last = kept[kept.length - 1];
  const end = title.indexOf(last, start) + last.length;
  return title.slice(start, end).trim();
}

function cleanByline(raw: string | undefined): string | undefined {
  const s = clean(raw, FIELD_CAPS.author)
    ?.replace(/^by\s+/i, '')
    .trim();
  if (!s || s.length > MAX_BYLINE_CHARS || /^https?:\/\//.test(s)) return undefined;
  return s;
}

function byline(candidates: MetadataCandidates, tags: MetaTags, jsonLdAuthors: string[]): string | null {
  const fromMeta = cleanByline(meta(tags, 'name=author', 'property=article:author', 'name=byl', 'name=parsely-author'));
  if (fromMeta) return fromMeta;
  const fromLd = cleanByline(jsonLdAuthors.join(', '));
  if (fromLd) return fromLd;
  for (const sel of BYLINE_SELECTORS) {
    const el = candidates.filter(sel).first();
    if (!el.length) continue;
    const found = cleanByline(el.attr('content') ?? innerText(el[0]));
    if (found) return found;
  }
  return null;
}

/**
 * Longest language tag read (RFC 5646 asks for 35 characters at least). The tag's pattern holds a
 * backtrack entry per subtag, and a page's `lang` of megabytes (`en-ab-ab-…`) ran out of V8's
 * backtrack stack: the page was refused as having no article.
 */
const MAX_LANG_CHARS = 64;
const LANG_TAG = /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/i;

function lang(found: MetadataCandidates, tags: MetaTags): string | null {
  const raw = found.filter('html').attr('lang') ?? meta(tags, 'http-equiv=content-language', 'name=language', 'property=og:locale');
  const v = raw?.trim().replace(/_/g, '-');
  return v && v.length <= MAX_LANG_CHARS && LANG_TAG.test(v) ? v : null;
}

function hostName(url: string | undefined): string | null {
  try {
    return url ? new URL(url).hostname.replace(/^www\./, '') : null;
  } catch {
    return null;
  }
}

/** Reads the page's metadata; `url` (the page's address) absolutises the image and names the host. */
export function readMetadata($: CheerioAPI, url?: string): ArticleMetadata {
  const found = metadataCandidates($);
  const ld = readJsonLd(found);
  const tags = readMetaTags(found);
  const base = url ?? meta(tags, 'property=og:url') ?? found.filter('link[rel="canonical"]').attr('href');
  const siteName =
    clean(meta(tags, 'property=og:site_name', 'name=application-name'), FIELD_CAPS.siteName) ??
    clean(ld.publisher, FIELD_CAPS.siteName) ??
    hostName(base) ??
    null;
  const h1 = found.filter('h1').first();
  const rawTitle =
    clean(meta(tags, 'property=og:title', 'name=twitter:title'), FIELD_CAPS.title) ??
    clean(ld.headline, FIELD_CAPS.title) ??
    (h1.length ? clean(innerText(h1[0]), FIELD_CAPS.title) : undefined) ??
    clean(found.filter('title').first().text(), FIELD_CAPS.title) ??
    '';
  const published = isoDate(meta(tags, ...TIME_META)) ?? isoDate(ld.datePublished) ?? isoDate(found.filter('time[datetime]').first().attr('datetime'));
  return {
    title: cleanTitle(rawTitle, siteName),
    byline: byline(found, tags, ld.authors),
    publishedTime: published,
    siteName,
    image: absoluteUrl(capUrl(meta(tags, 'property=og:image', 'name=twitter:image', 'property=og:image:url') ?? ld.image), base),
    description: clean(meta(tags, 'name=description', 'property=og:description', 'name=twitter:description') ?? ld.description, FIELD_CAPS.description) ?? null,
    lang: lang(found, tags),
  };
}
