/**
 * The scored fallback when no article selector matches (after Readability): paragraphs give
 * points to their ancestors for their length and commas; candidates keep the points scaled by
 * how little of their text is links; the best candidate is taken with those of its siblings
 * that score nearly as well or read like prose.
 */
import type { AnyNode, Element, ParentNode } from 'domhandler';
import { childElements, classAndId, elementsWhere, forEachElementWhere, innerText, isElement } from './dom.js';
import type { TextStats } from './stats.js';
import { BLOCK_TAGS } from './text.js';

const UNLIKELY =
  /-ad-|ai2html|banner|breadcrumb|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|popup|yom-remote|newsletter|subscribe|recirc|most-?popular|trending|cookie/;
const MAYBE_CANDIDATE = /and|article|body|column|content|main|shadow|story|post/;
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story/;
const NEGATIVE =
  /-ad-|(?:^|\s)hidden(?:\s|$)|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget|newsletter|recirc|taboola/;

const MIN_PARAGRAPH_CHARS = 25;
const ANCESTOR_LEVELS = 5;

/** -25, 0 or +25 per class/id (Readability's class weight). */
export function classWeight(el: Element): number {
  const names = classAndId(el);
  if (!names.trim()) return 0;
  let w = 0;
  if (NEGATIVE.test(names)) w -= 25;
  if (POSITIVE.test(names)) w += 25;
  return w;
}

/** Whether the element's class/id says it is probably not part of an article. */
export function isUnlikely(el: Element): boolean {
  if (el.name === 'html' || el.name === 'body' || el.name === 'a' || el.name === 'article' || el.name === 'main') return false;
  const names = classAndId(el);
  const role = el.attribs.role;
  if (role === 'complementary' || role === 'navigation' || role === 'banner' || role === 'contentinfo' || role === 'dialog') return true;
  return UNLIKELY.test(names) && !MAYBE_CANDIDATE.test(names);
}

function tagBase(el: Element): number {
  switch (el.name) {
    case 'div':
      return 5;
    case 'pre':
    case 'td':
    case 'blockquote':
      return 3;
    case 'address':
    case 'ol':
    case 'ul':
    case 'dl':
    case 'dd':
    case 'dt':
    case 'li':
    case 'form':
      return -3;
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6':
    case 'th':
      return -5;
    default:
      return 0;
  }
}

function hasBlockChild(el: Element): boolean {
  return el.children.some((c) => isElement(c) && BLOCK_TAGS.has(c.name));
}

function hasDirectText(el: Element): boolean {
  return el.children.some((c) => c.type === 'text' && c.data.trim().length >= MIN_PARAGRAPH_CHARS);
}

/** Whether an element reads as a paragraph: `<p>`, `<pre>`, and divs holding text without blocks. */
function isParagraph(el: Element): boolean {
  return (
    el.name === 'p' || el.name === 'pre' || ((el.name === 'div' || el.name === 'section' || el.name === 'td') && (!hasBlockChild(el) || hasDirectText(el)))
  );
}

/** Memoised "this element or an ancestor (below `root`) is unlikely to be content". */
function unlikelyPath(root: AnyNode): (el: Element) => boolean {
  const memo = new Map<Element, boolean>();
  const check = (el: Element): boolean => {
    let known = memo.get(el);
    if (known === undefined) {
      const parent = el.parent;
      known = isUnlikely(el) || (!!parent && parent !== root && isElement(parent) && check(parent));
      memo.set(el, known);
    }
    return known;
  };
  return check;
}

/** Points a paragraph earns for its length and commas. */
export function paragraphScore(chars: number, commas: number): number {
  return 1 + commas + Math.min(Math.floor(chars / 100), 3);
}

/** Scores every container of paragraphs under `root`; final scores account for link density. */
export function scoreCandidates(root: ParentNode, stats: TextStats): Map<Element, number> {
  const scores = new Map<Element, number>();
  const unlikely = unlikelyPath(root as AnyNode);
  // Paragraphs are visited as found, not gathered: a million of them were 10 MB at the page's peak.
  forEachElementWhere(root, isParagraph, (p) => {
    const { chars, commas } = stats.of(p);
    if (chars < MIN_PARAGRAPH_CHARS || unlikely(p)) return;
    const points = paragraphScore(chars, commas);
    let level = 0;
    for (let a = p.parent; a && isElement(a) && level < ANCESTOR_LEVELS; a = a.parent, level++) {
      if (!scores.has(a)) scores.set(a, tagBase(a) + classWeight(a));
      const divider = level === 0 ? 1 : level === 1 ? 2 : level * 3;
      scores.set(a, scores.get(a)! + points / divider);
    }
  });
  for (const [el, s] of scores) scores.set(el, s * (1 - stats.linkDensity(el)));
  return scores;
}

/** Whether a sibling paragraph reads like article prose. */
function isProse(el: Element, stats: TextStats): boolean {
  if (el.name !== 'p') return false;
  const { chars } = stats.of(el);
  const density = stats.linkDensity(el);
  if (chars > 80) return density < 0.25;
  return chars > 0 && density === 0 && /\.( |$)/.test(innerText(el));
}

/**
 * Containers elsewhere in the document with the same tag and class as `top` that score well:
 * bodies split into sections (`<div class="body">` after each figure) come back together. A
 * candidate nested in a taken container, or holding one, is skipped; both are told by sets (the
 * taken containers, and every ancestor of one) rather than by comparing it with each container
 * taken so far, which was quadratic in the peers (100,000 same-class sections).
 */
function samePeers(top: Element, chosen: Element[], scores: Map<Element, number>, threshold: number): Element[] {
  const cls = top.attribs.class;
  if (!cls) return [];
  const taken = new Set<AnyNode>();
  const aboveTaken = new Set<AnyNode>();
  const take = (el: Element) => {
    taken.add(el);
    for (let a = el.parent; a && !aboveTaken.has(a); a = a.parent) aboveTaken.add(a);
  };
  const insideTaken = (el: Element) => {
    for (let n: AnyNode | null = el; n; n = n.parent) if (taken.has(n)) return true;
    return false;
  };
  chosen.forEach(take);
  const peers: Element[] = [];
  for (const [el, s] of scores) {
    if (el.name !== top.name || el.attribs.class !== cls || s < threshold) continue;
    if (aboveTaken.has(el) || insideTaken(el)) continue;
    peers.push(el);
    take(el);
  }
  return peers;
}

/** `nodes` (distinct, all under `root`) in document order, found in one walk rather than by numbering every element. */
function documentOrder(nodes: Element[], root: ParentNode): Element[] {
  const wanted = new Set(nodes);
  return elementsWhere(root, (el) => wanted.has(el));
}

/**
 * The best-scoring container under `root` and its qualifying siblings and same-class peers, in
 * document order, or null when no paragraph scored.
 */
export function bestContent(root: ParentNode, stats: TextStats): Element[] | null {
  const scores = scoreCandidates(root, stats);
  let top: Element | null = null;
  let topScore = -Infinity;
  for (const [el, s] of scores) if (s > topScore) [top, topScore] = [el, s];
  if (!top) return null;
  const threshold = Math.max(10, topScore * 0.2);
  const parent = top.parent;
  const chosen = [top];
  if (parent && isElement(parent)) {
    const topClass = top.attribs.class ?? '';
    chosen.splice(
      0,
      1,
      ...childElements(parent).filter((sib) => {
        if (sib === top) return true;
        const bonus = topClass && sib.attribs.class === topClass ? topScore * 0.2 : 0;
        const s = scores.get(sib);
        return (s !== undefined && s + bonus >= threshold) || isProse(sib, stats);
      }),
    );
  }
  const peers = samePeers(top, chosen, scores, threshold);
  return peers.length ? documentOrder([...chosen, ...peers], root) : chosen;
}
