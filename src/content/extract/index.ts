/**
 * Article extraction with cheerio: metadata first (JSON-LD lives in scripts), then the document
 * is cleaned, the body located (known selectors, else a scored fallback), its boilerplate removed
 * and its text laid out paragraph by paragraph.
 */
import { SalonError, errors } from '../../errors.js';
import { locateBody } from './body.js';
import { removeBoilerplate } from './boilerplate.js';
import { limitDepth, removeUnwanted, wrapLooseText } from './clean.js';
import { decodeDocument } from './decode.js';
import { readMetadata } from './metadata.js';
import { loadDocument } from './nesting.js';
import { TextStats } from './stats.js';
import { capText, textOf } from './text.js';

/** Default cap on the body text (BODY_MAX_CHARS). */
export const DEFAULT_MAX_CHARS = 200_000;
/** Length of an excerpt cut from the body when the page has no description. */
const EXCERPT_CHARS = 200;
/** Fewer characters than this is not an article body. */
const MIN_BODY_CHARS = 50;

/** What extraction yields for one page. */
export interface ExtractedArticle {
  title: string;
  byline: string | null;
  /** ISO-8601. */
  publishedTime: string | null;
  siteName: string | null;
  excerpt: string;
  /** Absolute URL of the lead image. */
  image: string | null;
  /** The body: paragraphs separated by a blank line, at most `maxChars` characters. */
  text: string;
  lang: string | null;
}

/** Options of {@link extractArticle}. */
export interface ExtractOptions {
  /** The page's address: absolutises the image, names the site when nothing else does. */
  url?: string;
  /** Cap on the body text; default {@link DEFAULT_MAX_CHARS}. */
  maxChars?: number;
  /** The Content-Type the page came with: its charset decodes bytes before any `<meta charset>`. */
  contentType?: string;
}

function validate(options: ExtractOptions): number {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new TypeError(`maxChars must be a positive integer, got ${maxChars}`);
  return maxChars;
}

function excerptOf(text: string): string {
  const firstParagraph = text.split('\n\n')[0] ?? '';
  if (firstParagraph.length <= EXCERPT_CHARS) return firstParagraph;
  const cut = firstParagraph.slice(0, EXCERPT_CHARS);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), EXCERPT_CHARS / 2)).trimEnd()}…`;
}

/**
 * Extracts the article of an HTML page. A Buffer is decoded by its BOM / `<meta charset>`.
 * Throws ERR_EXTRACTION_FAILED when the page has no usable body, or nests deeper than
 * MAX_OPEN_ELEMENTS (nesting.ts) and so is given up part-way through its parse.
 */
export function extractArticle(html: string | Buffer, options: ExtractOptions = {}): ExtractedArticle {
  const maxChars = validate(options);
  const label = options.url ?? 'the page';
  try {
    return extract(typeof html === 'string' ? html : decodeDocument(html, options.contentType), maxChars, label, options.url);
  } catch (err) {
    if (err instanceof SalonError) throw err;
    throw new errors.ERR_EXTRACTION_FAILED(label, (err as Error).message, err as Error);
  }
}

function extract(source: string, maxChars: number, label: string, url: string | undefined): ExtractedArticle {
  const $ = loadDocument(source);
  limitDepth($);
  const meta = readMetadata($, url);
  removeUnwanted($);
  wrapLooseText($);
  const stats = new TextStats();
  const body = locateBody($, stats);
  if (!body) throw new errors.ERR_EXTRACTION_FAILED(label, 'no article body found');
  removeBoilerplate(body.nodes, stats);
  const text = capText(textOf(body.nodes, maxChars), maxChars);
  if (text.length < MIN_BODY_CHARS) throw new errors.ERR_EXTRACTION_FAILED(label, 'the body text is too short');
  return {
    title: meta.title || text.split('\n')[0].slice(0, EXCERPT_CHARS),
    byline: meta.byline,
    publishedTime: meta.publishedTime,
    siteName: meta.siteName,
    excerpt: meta.description ?? excerptOf(text),
    image: meta.image,
    text,
    lang: meta.lang,
  };
}
