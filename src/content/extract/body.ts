/**
 * Finding the article body: the first of the known article selectors that holds enough text,
 * else the scored fallback over paragraph blocks.
 */
import type { CheerioAPI } from 'cheerio';
import type { Element } from 'domhandler';
import { classAndId, contains, isElement } from './dom.js';
import { bestContent } from './score.js';
import type { TextStats } from './stats.js';

/** Selectors that mark an article body, most specific first. */
export const BODY_SELECTORS = [
  '.ArticleBody-articleBody',
  'article',
  '.article-body',
  '.post-content',
  '.entry-content',
  "[itemprop='articleBody']",
  '.story-body',
  'main article',
];

/** A selector match needs this much text to count as the body. */
const MIN_SELECTOR_CHARS = 250;

/** Where the body was found: the selector that matched, or `scored` for the fallback. */
export interface BodyLocation {
  nodes: Element[];
  via: string;
}

/** Class/id of discussion blocks, whose `<article>`s are comments, not the article. */
const DISCUSSION = /comment|reply|replies|disqus|discussion/;
/** The scored fallback wins over a selector match it is disjoint from and this much longer than. */
const SCORED_OVERRIDE_RATIO = 2;

function inDiscussion(el: Element): boolean {
  for (let n: Element | null = el; n && isElement(n); n = n.parent as Element | null) if (DISCUSSION.test(classAndId(n))) return true;
  return false;
}

/**
 * Each match's text outside the matches nested in it (a listing of teasers has little of its
 * own), found by walking up from each match to the nearest enclosing match.
 */
function ownTextLengths(matches: Element[], stats: TextStats): Map<Element, number> {
  const own = new Map(matches.map((el) => [el, stats.of(el).chars]));
  for (const el of matches) {
    for (let a = el.parent; a && isElement(a); a = a.parent) {
      if (!own.has(a)) continue;
      own.set(a, own.get(a)! - stats.of(el).chars);
      break;
    }
  }
  return own;
}

function fromSelector($: CheerioAPI, selector: string, stats: TextStats): Element | null {
  const matches = ($(selector).toArray() as Element[]).filter((el) => !inDiscussion(el));
  let best: Element | null = null;
  let bestLength = 0;
  for (const [el, length] of ownTextLengths(matches, stats)) if (length > bestLength) [best, bestLength] = [el, length];
  return best && bestLength >= MIN_SELECTOR_CHARS ? best : null;
}

function overlaps(a: Element, nodes: Element[]): boolean {
  return nodes.some((n) => contains(a, n) || contains(n, a));
}

/** Locates the article body in a cleaned document; null when nothing looks like one. */
export function locateBody($: CheerioAPI, stats: TextStats): BodyLocation | null {
  const scored = bestContent($.root()[0], stats);
  const scoredLength = scored ? scored.reduce((n, el) => n + stats.of(el).chars, 0) : 0;
  for (const selector of BODY_SELECTORS) {
    const match = fromSelector($, selector, stats);
    if (!match) continue;
    if (scored && !overlaps(match, scored) && scoredLength > SCORED_OVERRIDE_RATIO * stats.of(match).chars) continue;
    return { nodes: [match], via: selector };
  }
  return scored ? { nodes: scored, via: 'scored' } : null;
}
