/**
 * Telling a feed from a page by its first bytes, for a URL given without saying which it is.
 */

/** How much of a document is looked at: a prolog longer than this is not taken for a feed's. */
export const FEED_HEAD_BYTES = 1024;
/** The feeds' root elements: RSS 2, Atom, RSS 1 (RDF). */
const FEED_ROOT = /^<(rss|feed|rdf:RDF)[\s>/]/i;
/** UTF-8's byte-order mark, as its bytes read as latin1 (how the head is read). */
const UTF8_BOM = '\u00ef\u00bb\u00bf';

/**
 * Whether a fetched document looks like a feed: a feed media type, or a root element of a feed
 * after whatever an XML prolog may hold (a BOM, the declaration and other processing instructions
 * such as FeedBurner's `<?xml-stylesheet?>`, comments, a DOCTYPE, whitespace).
 *
 * The prolog is walked by hand: a regular expression with a lazy comment body inside a repeated
 * group split 27 comments 2^26 ways before failing (12 s of the event loop for a 229-byte page).
 */
export function looksLikeFeed(contentType: string, body: Buffer): boolean {
  if (/(rss|atom|rdf)\+xml/i.test(contentType)) return true;
  const head = body.subarray(0, FEED_HEAD_BYTES).toString('latin1');
  let at = head.startsWith(UTF8_BOM) ? UTF8_BOM.length : 0;
  for (;;) {
    at = skipSpace(head, at);
    const next = prologPartEnd(head, at);
    if (next === null) break;
    if (next < 0) return false;
    at = next;
  }
  return FEED_ROOT.test(head.slice(at, at + 9));
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at])) at++;
  return at;
}

/**
 * Where the prolog part starting at `at` ends; null when none starts there, -1 when one starts but
 * does not end within the text read.
 */
function prologPartEnd(text: string, at: number): number | null {
  const past = (close: string, from: number) => {
    const end = text.indexOf(close, from);
    return end < 0 ? -1 : end + close.length;
  };
  if (text.startsWith('<?', at)) return past('?>', at + 2);
  if (text.startsWith('<!--', at)) return past('-->', at + 4);
  if (text.slice(at, at + 9).toUpperCase() === '<!DOCTYPE') {
    // An internal subset ([…]) may hold '>' of its own declarations.
    const close = text.indexOf('>', at);
    const subset = text.indexOf('[', at);
    if (subset >= 0 && (close < 0 || subset < close)) {
      const subsetEnd = text.indexOf(']', subset);
      return subsetEnd < 0 ? -1 : past('>', subsetEnd);
    }
    return close < 0 ? -1 : close + 1;
  }
  return null;
}
