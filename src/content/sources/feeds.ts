/**
 * RSS 2.0, RSS 1.0 (RDF), Atom and YouTube channel feeds, parsed with cheerio's XML mode.
 * `parseFeed` keeps titles and links as the feed has them (after entity decoding), each text field
 * with the format to read it in; the item builders in feed-items.ts turn entries into news or
 * video items.
 */
import { isoDateOf } from '../dates.js';
import { load } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { errors } from '../../errors.js';
import { domToText, textContent as textOf } from '../extract/html-text.js';
import { NestingTooDeepError, parseXml } from '../extract/nesting.js';
import { truncate } from '../text.js';
import { FIELD_CAPS, capField } from '../limits.js';
import { decodeXml } from './xml-decode.js';

const DATE_CAP = 100;
/**
 * Entries read of one feed: no caller reads more (MAX_INGEST_LIMIT, MAX_SOURCE_LIMIT). A 4.5 MB
 * feed of 650,000 empty `<item/>`s took ~0.9 s of the event loop to come back from the worker.
 */
export const FEED_MAX_ENTRIES = 500;

export type FeedFormat = 'rss' | 'rdf' | 'atom';

/**
 * How a text field is read (feed-items.ts): `text` verbatim, `html` as markup, `unknown` (RSS
 * titles, plain text by the spec though some feeds put markup in them) as markup only when it
 * clearly holds some. Atom says which with its `type` attribute (RFC 4287 §3.1).
 */
export type TextFormat = 'text' | 'html' | 'unknown';

/** The formats of an entry's title, summary and content. */
export interface EntryFormats {
  title: TextFormat;
  summary: TextFormat;
  content: TextFormat;
}

/** A YouTube channel feed entry's video fields (`yt:videoId`, `media:group`). */
export interface FeedVideo {
  videoId: string;
  description: string;
  thumbnail: string | null;
  channel: string | null;
}

/** One item or entry of a feed. */
export interface FeedEntry {
  /** The title as the feed gives it ('' when absent). */
  title: string;
  /** The item's link (RSS `<link>`, Atom alternate `href`), or null. */
  link: string | null;
  guid: string | null;
  /** Where the entry is discussed: RSS `<comments>` (HN's and hnrss's feeds point it at the HN thread), or null. */
  comments: string | null;
  /** RSS `description` / Atom `summary`, usually HTML. */
  summaryHtml: string;
  /** RSS `content:encoded` / Atom `content`, usually HTML. */
  contentHtml: string;
  /** How `title`, `summaryHtml` and `contentHtml` are to be read. */
  formats: EntryFormats;
  /** ISO-8601, or null when absent or unparseable. */
  published: string | null;
  author: string | null;
  image: string | null;
  categories: string[];
  video: FeedVideo | null;
}

export interface ParsedFeed {
  format: FeedFormat;
  /** True for YouTube channel feeds: every entry with a `yt:videoId` has `video` set. */
  youtube: boolean;
  title: string;
  titleFormat: TextFormat;
  link: string | null;
  /** The first FEED_MAX_ENTRIES entries, in feed order. */
  entries: FeedEntry[];
  /** Set by toPlainFeed: the title, author, category and `…Html` fields already hold plain text. */
  plainText?: boolean;
}

function elements(node: AnyNode | undefined): Element[] {
  if (!node || !('children' in node)) return [];
  return (node.children as AnyNode[]).filter((c): c is Element => c.type === 'tag');
}

function lname(el: Element): string {
  return el.name.toLowerCase();
}

function child(el: Element, name: string): Element | undefined {
  return elements(el).find((c) => lname(c) === name);
}

/** The text of the first named child that has some, cut to `max` characters before it is trimmed. */
function childText(el: Element, max: number, ...names: string[]): string {
  for (const name of names) {
    const c = child(el, name);
    if (c) {
      const t = capField(textOf(c), max).trim();
      if (t) return t;
    }
  }
  return '';
}

/** An attribute's value (hrefs and image URLs among them), cut like a link before it is trimmed. */
function attr(el: Element | undefined, name: string): string | null {
  const raw = el?.attribs?.[name];
  const v = raw === undefined ? undefined : capField(raw, FIELD_CAPS.link).trim();
  return v ? v : null;
}

function isoDate(raw: string): string | null {
  return raw ? isoDateOf(raw) : null;
}

/** The entry's image: of its own elements, else of its `media:group`'s, and so on down. */
function imageOf(entry: Element): string | null {
  // A loop, not recursion: an entry of 5,000 nested groups overflowed the stack and failed the whole feed.
  for (let el: Element | undefined = entry; el; el = child(el, 'media:group')) {
    for (const c of elements(el)) {
      const n = lname(c);
      if (n === 'media:thumbnail') return attr(c, 'url');
      if (n === 'media:content' && (attr(c, 'medium') === 'image' || /^image\//.test(attr(c, 'type') ?? ''))) return attr(c, 'url');
      if (n === 'enclosure' && /^image\//.test(attr(c, 'type') ?? '')) return attr(c, 'url');
      if (n === 'itunes:image') return attr(c, 'href');
    }
  }
  return null;
}

function categoriesOf(el: Element): string[] {
  return elements(el)
    .filter((c) => lname(c) === 'category')
    .slice(0, FIELD_CAPS.categories)
    .map((c) => capField(attr(c, 'term') ?? textOf(c), FIELD_CAPS.category).trim())
    .filter(Boolean);
}

const RSS_FORMATS: EntryFormats = { title: 'unknown', summary: 'html', content: 'html' };

function rssEntry(item: Element): FeedEntry {
  return {
    title: childText(item, FIELD_CAPS.title, 'title'),
    link: childText(item, FIELD_CAPS.link, 'link') || null,
    guid: childText(item, FIELD_CAPS.link, 'guid') || null,
    comments: childText(item, FIELD_CAPS.link, 'comments') || null,
    summaryHtml: childText(item, FIELD_CAPS.summary, 'description'),
    contentHtml: childText(item, FIELD_CAPS.content, 'content:encoded'),
    formats: RSS_FORMATS,
    published: isoDate(childText(item, DATE_CAP, 'pubdate', 'dc:date')),
    author: childText(item, FIELD_CAPS.author, 'dc:creator', 'author', 'itunes:author') || null,
    image: imageOf(item),
    categories: categoriesOf(item),
    video: null,
  };
}

/** Atom link: the first `rel="alternate"` (or rel-less) link, else the first link. */
function atomLink(el: Element): string | null {
  const links = elements(el).filter((c) => lname(c) === 'link');
  const alternate = links.find((l) => (attr(l, 'rel') ?? 'alternate') === 'alternate');
  return attr(alternate ?? links[0], 'href');
}

/** An Atom entry's `rel="replies"` link (RFC 4685), where it is discussed. */
function atomReplies(el: Element): string | null {
  const replies = elements(el).find((c) => lname(c) === 'link' && attr(c, 'rel') === 'replies');
  return attr(replies, 'href');
}

function youtubeVideo(entry: Element, feedTitle: string): FeedVideo | null {
  const videoId = childText(entry, FIELD_CAPS.link, 'yt:videoid');
  if (!videoId) return null;
  const group = child(entry, 'media:group');
  const author = child(entry, 'author');
  return {
    videoId,
    description: group ? childText(group, FIELD_CAPS.summary, 'media:description') : '',
    thumbnail: group ? attr(child(group, 'media:thumbnail'), 'url') : null,
    channel: (author && childText(author, FIELD_CAPS.author, 'name')) || feedTitle || null,
  };
}

/**
 * An Atom text construct (title, summary, content) and its format: `type` is `text` when absent,
 * and `xhtml` content is the markup inside its `<div>`, laid out as text here, where its elements are.
 */
function atomText(el: Element, name: string, max: number): { text: string; format: TextFormat } {
  const c = child(el, name);
  if (!c) return { text: '', format: 'text' };
  const type = attr(c, 'type')?.toLowerCase() ?? 'text';
  if (type === 'xhtml') {
    const div = elements(c).find((e) => lname(e) === 'div' || lname(e).endsWith(':div'));
    return { text: capField(domToText(div ?? c), max).trim(), format: 'text' };
  }
  return { text: capField(textOf(c), max).trim(), format: type === 'html' || type === 'text/html' ? 'html' : 'text' };
}

function atomEntry(entry: Element, feedTitle: string): FeedEntry {
  const author = child(entry, 'author');
  const title = atomText(entry, 'title', FIELD_CAPS.title);
  const summary = atomText(entry, 'summary', FIELD_CAPS.summary);
  const content = atomText(entry, 'content', FIELD_CAPS.content);
  return {
    title: title.text,
    link: atomLink(entry),
    guid: childText(entry, FIELD_CAPS.link, 'id') || null,
    comments: atomReplies(entry),
    summaryHtml: summary.text,
    contentHtml: content.text,
    formats: { title: title.format, summary: summary.format, content: content.format },
    published: isoDate(childText(entry, DATE_CAP, 'published', 'updated')),
    author: (author && childText(author, FIELD_CAPS.author, 'name')) || null,
    image: imageOf(entry),
    categories: categoriesOf(entry),
    video: youtubeVideo(entry, feedTitle),
  };
}

/**
 * Parses a feed document (bytes are decoded by their declared or detected encoding, or the charset
 * of the `contentType` they came with: decodeXml). Throws ERR_FEED_PARSE naming `ref` when the
 * document is not an RSS, RDF or Atom feed.
 */
export function parseFeed(input: string | Uint8Array, ref = 'document', contentType?: string): ParsedFeed {
  const xml = typeof input === 'string' ? input : decodeXml(input, contentType);
  let document;
  try {
    document = parseXml(xml);
  } catch (err) {
    if (err instanceof NestingTooDeepError) throw new errors.ERR_FEED_PARSE(`${ref}: ${err.message}`);
    throw err;
  }
  const $ = load(document, { xml: true });
  const root = elements($.root()[0] as unknown as AnyNode)[0];
  if (!root) throw new errors.ERR_FEED_PARSE(`${ref} holds no XML elements`);
  const rootName = lname(root);
  if (rootName === 'rss') {
    const channel = child(root, 'channel') ?? root;
    const entries = elements(channel)
      .filter((c) => lname(c) === 'item')
      .slice(0, FEED_MAX_ENTRIES)
      .map(rssEntry);
    return {
      format: 'rss',
      youtube: false,
      title: childText(channel, FIELD_CAPS.title, 'title'),
      titleFormat: 'unknown',
      link: childText(channel, FIELD_CAPS.link, 'link') || null,
      entries,
    };
  }
  if (rootName === 'rdf:rdf' || rootName === 'rdf') {
    const channel = child(root, 'channel');
    const items = elements(root)
      .filter((c) => lname(c) === 'item')
      .slice(0, FEED_MAX_ENTRIES);
    return {
      format: 'rdf',
      youtube: false,
      title: channel ? childText(channel, FIELD_CAPS.title, 'title') : '',
      titleFormat: 'unknown',
      link: (channel && childText(channel, FIELD_CAPS.link, 'link')) || null,
      entries: items.map(rssEntry),
    };
  }
  if (rootName === 'feed') {
    const title = atomText(root, 'title', FIELD_CAPS.title);
    const entries = elements(root)
      .filter((c) => lname(c) === 'entry')
      .slice(0, FEED_MAX_ENTRIES)
      .map((e) => atomEntry(e, title.text));
    const youtube = entries.length > 0 ? entries.some((e) => e.video) : Boolean(attr(root, 'xmlns:yt'));
    return { format: 'atom', youtube, title: title.text, titleFormat: title.format, link: atomLink(root), entries };
  }
  throw new errors.ERR_FEED_PARSE(`${ref} has a <${truncate(root.name, 40)}> root element, not <rss>, <rdf:RDF> or <feed>`);
}
