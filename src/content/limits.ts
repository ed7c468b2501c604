/**
 * Caps on untrusted fields, applied before any processing: what a page or feed sends beyond them
 * is dropped first, so no later step (HTML to text, entity decoding, titles) ever sees more.
 * Generous for real content (the extraction corpus's longest title is ~300 characters), small
 * enough that a hostile field costs milliseconds.
 */
import { safeCut } from './text.js';

/** Longest raw value kept of each field, in characters. */
export const FIELD_CAPS = {
  /** A title from a page or a feed entry. */
  title: 2_000,
  /** A feed entry's description or summary (usually HTML). */
  summary: 65_536,
  /** A feed entry's full content (HTML); the body is cut to BODY_MAX_CHARS afterwards. */
  content: 2_000_000,
  /** An author or channel name. */
  author: 500,
  /** A site's name (`og:site_name`, a feed's title). */
  siteName: 500,
  /** A page's description (`<meta name="description">`); an item keeps 1,000 characters of it. */
  description: 2_000,
  /** A link, guid, id or image URL: longer than any real URL (browsers stop near 2 MB; servers near 8 KB). */
  link: 8_192,
  /** One category. */
  category: 200,
  /** Categories kept per entry. */
  categories: 20,
  /** A Hacker News comment or story text (HTML). */
  comment: 65_536,
  /** A markdown post's source. */
  post: 1_000_000,
} as const;

/** `text` cut to at most `max` characters (never inside a surrogate pair). */
export function capField(text: string, max: number): string {
  return text.length > max ? text.slice(0, safeCut(text, max)) : text;
}
