/**
 * Finding the article body: the first of the known article selectors that holds enough text,
 * else the scored fallback over paragraph blocks.
 */
import type { Cheerio, CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { classAndId, contains, elementsWhere, isElement } from './dom.js';
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

/** Class names the selectors name, in any case: a superset of their matches' classes. */
const SELECTOR_CLASS = /article|post-content|entry-content|story-body/i;

/**
 * The elements any body selector can match (`<article>`, the classes they name, `itemprop`): the
 * selectors filter these rather than each walking the whole page.
 */
function selectorCandidates($: CheerioAPI): Cheerio<Element> {
  const keep = (el: Element) => el.name === 'article' || el.attribs.itemprop !== undefined || SELECTOR_CLASS.test(el.attribs.class ?? '');
  return $(elementsWhere($.root()[0], keep));
}

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

/**
 * "This element or an ancestor is a discussion block", memoised over the selectors' matches: each
 * match walked to the root, testing every ancestor's class, so 260,000 `<article>`s under 240
 * `<div>`s took as many tests times the depth.
 */
function discussionTest(): (el: Element) => boolean {
  const memo = new Map<Element, boolean>();
  const inDiscussion = (el: Element): boolean => {
    let known = memo.get(el);
    if (known === undefined) {
      const parent = el.parent;
      known = DISCUSSION.test(classAndId(el)) || (!!parent && isElement(parent) && inDiscussion(parent));
      memo.set(el, known);
    }
    return known;
  };
  return inDiscussion;
}

/**
 * Each match's text outside the matches nested in it (a listing of teasers has little of its
 * own): its text less that of the matches whose nearest enclosing match it is. The nearest
 * enclosing match of every element on the way up is remembered, so no stretch of ancestors is
 * walked twice.
 */
function ownTextLengths(matches: Element[], stats: TextStats): Map<Element, number> {
  const own = new Map(matches.map((el) => [el, stats.of(el).chars]));
  const nearest = new Map<Element, Element | null>();
  const nearestAtOrAbove = (start: Element | null): Element | null => {
    const path: Element[] = [];
    let found: Element | null = null;
    for (let a: AnyNode | null = start; a && isElement(a); a = a.parent) {
      if (own.has(a)) {
        found = a;
        break;
      }
      const known = nearest.get(a);
      if (known !== undefined) {
        found = known;
        break;
      }
      path.push(a);
    }
    for (const a of path) nearest.set(a, found);
    return found;
  };
  for (const el of matches) {
    const parent = el.parent;
    const enclosing = parent && isElement(parent) ? nearestAtOrAbove(parent) : null;
    if (enclosing) own.set(enclosing, own.get(enclosing)! - stats.of(el).chars);
  }
  return own;
}

function fromSelector(candidates: Cheerio<Element>, selector: string, stats: TextStats, inDiscussion: (el: Element) => boolean): Element | null {
  const matches = candidates
    .filter(selector)
    .toArray()
    .filter((el) => !inDiscussion(el));
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
  const inDiscussion = discussionTest();
  const candidates = selectorCandidates($);
  for (const selector of BODY_SELECTORS) {
    const match = fromSelector(candidates, selector, stats, inDiscussion);
    if (!match) continue;
    if (scored && !overlaps(match, scored) && scoredLength > SCORED_OVERRIDE_RATIO * stats.of(match).chars) continue;
    return { nodes: [match], via: selector };
  }
  return scored ? { nodes: scored, via: 'scored' } : null;
}
