/** What an article's JSON-LD (`<script type="application/ld+json">`) says about it. */
import type { Cheerio } from 'cheerio';
import type { Element } from 'domhandler';
import { nestsDeeperThan } from '../../json-depth.js';
import { rawText } from './dom.js';

/** Article fields read from JSON-LD; each is undefined when no article node gives it. */
export interface JsonLdArticle {
  headline?: string;
  authors: string[];
  datePublished?: string;
  publisher?: string;
  image?: string;
  description?: string;
}

const ARTICLE_TYPE = /Article|BlogPosting|NewsArticle|Report|WebPage|Posting|Story/i;
/**
 * Deepest JSON-LD block read; real ones nest a handful of levels. The fields are read recursively,
 * so an `author` nested 10,000 arrays deep overflowed the stack and failed the whole page.
 */
const MAX_DEPTH = 64;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function nodesOf(value: Json, out: Record<string, Json>[] = []): Record<string, Json>[] {
  if (Array.isArray(value)) for (const v of value) nodesOf(v, out);
  else if (value && typeof value === 'object') {
    out.push(value);
    if (value['@graph']) nodesOf(value['@graph'], out);
  }
  return out;
}

function types(node: Record<string, Json>): string[] {
  const t = node['@type'];
  return (Array.isArray(t) ? t : [t]).filter((x): x is string => typeof x === 'string');
}

function str(value: Json | undefined): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (Array.isArray(value)) return str(value[0]);
  return undefined;
}

function names(value: Json | undefined): string[] {
  if (typeof value === 'string') return value.trim() ? [value.trim()] : [];
  if (Array.isArray(value)) return value.flatMap((v) => names(v));
  if (value && typeof value === 'object') return names(value.name);
  return [];
}

function imageUrl(value: Json | undefined): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined;
  if (Array.isArray(value)) return imageUrl(value[0]);
  if (value && typeof value === 'object') return str(value.url) ?? str(value.contentUrl);
  return undefined;
}

/**
 * Parses every JSON-LD block among `scripts` (a selection holding at least the page's `<script>`s)
 * and reads the first article-like node; malformed or too deep blocks are skipped.
 */
export function readJsonLd(scripts: Cheerio<Element>): JsonLdArticle {
  const nodes: Record<string, Json>[] = [];
  scripts.filter('script[type="application/ld+json"]').each((_, el) => {
    const text = rawText(el);
    if (nestsDeeperThan(Buffer.from(text), MAX_DEPTH)) return;
    try {
      nodesOf(JSON.parse(text) as Json, nodes);
    } catch {
      // Hand-written JSON-LD is often malformed; metadata then comes from elsewhere.
    }
  });
  const ranked = [...nodes].sort((a, b) => rank(b) - rank(a));
  const article = ranked.find((n) => rank(n) > 0);
  if (!article) return { authors: [] };
  return {
    headline: str(article.headline) ?? str(article.name),
    authors: names(article.author),
    datePublished: str(article.datePublished) ?? str(article.dateCreated),
    publisher: names(article.publisher)[0],
    image: imageUrl(article.image) ?? imageUrl(article.thumbnailUrl),
    description: str(article.description),
  };
}

function rank(node: Record<string, Json>): number {
  const t = types(node).join(' ');
  if (/NewsArticle|ReportageNewsArticle|BlogPosting|^Article$|\bArticle\b/.test(t)) return 2;
  return ARTICLE_TYPE.test(t) ? 1 : 0;
}
