/**
 * Cleaning inside the chosen article container: the headline block (it is metadata, not body)
 * and blocks that read as boilerplate (share bars, related-link lists, promos, bylines, photo
 * captions and galleries) go, judged by tag, class/id, link density and how much prose they hold
 * (after Readability's conditional cleaning).
 */
import type { Element } from 'domhandler';
import { classAndId, forEachElementReversed, isElement } from './dom.js';
import { classWeight, isUnlikely } from './score.js';
import type { TextStats } from './stats.js';

const CONDITIONAL_TAGS = new Set(['div', 'section', 'ul', 'ol', 'table', 'form', 'figure', 'span', 'p', 'dl', 'header', 'a']);
/** Tags that never hold body text inside an article. */
const DROP_TAGS = new Set(['header', 'figcaption', 'picture']);
/** A paragraph this long marks the start of the body: an `<h1>` before it is the headline. */
const BODY_START_CHARS = 25;
/** Tags dropped unless they sit inside a sentence (`on <time>June 1</time>, the council...` stays). */
const DROP_STANDALONE_TAGS = new Set(['time', 'address']);
/** Author credits: `<a rel="author">`, schema.org author markup. */
const AUTHOR_MARKUP = (el: Element) => el.attribs.rel === 'author' || /\bauthor\b/.test(el.attribs.itemprop ?? '');
/** A figure keeps its content (a table, a quote) when that holds this much text besides the caption. */
const FIGURE_TEXT_CHARS = 200;
/** Whole-block labels of ads and promos. */
const LABEL =
  /^(?:advertisements?|advertising|ad|sponsored(?: content)?|(?:story|article) continues below(?: advertisement)?|continue reading(?: below)?(?: the main story)?|scroll to continue(?: with content)?|related(?: articles| stories| content)?|read more|share this(?: article| story)?)$/i;
/** Class/id fragments of blocks that are never body text. */
const JUNK =
  /byline|caption|credit|gallery|slideshow|carousel|share|sharing|social|related|newsletter|promo|subscri|paywall|advert|sponsor|breadcrumb|toolbar|author-?(?:bio|box|info|card)|timestamp|print-header|read-?more|more-?stories|recommend|signup|sign-up|comment|disclaimer|copyright|byl\b|dateline-?(?:time|stamp)/;
/** A block holding at least this share of the container's text is the body, whatever its class. */
const BODY_SHARE = 0.5;
/** Longer than any LABEL phrase: longer blocks skip that test. */
const LABEL_MAX_CHARS = 60;
/** Readability's list test: more list items than paragraphs (after this allowance) is a link list. */
const LIST_ITEM_ALLOWANCE = 100;

function looksLikeBoilerplate(el: Element, stats: TextStats): boolean {
  const weight = classWeight(el);
  const names = classAndId(el);
  if (JUNK.test(names)) return true;
  if (weight < 0 && !/article|body|content|story/.test(names)) return true;
  if (el.name === 'p' || el.name === 'span' || el.name === 'a') return false;
  const { chars, commas, paragraphs, listItems } = stats.of(el);
  if (commas >= 10) return false;
  const density = stats.linkDensity(el);
  const isList = el.name === 'ul' || el.name === 'ol';
  if (!isList && listItems - LIST_ITEM_ALLOWANCE > paragraphs) return true;
  if (!isList && weight < 25 && density > 0.2 && chars < 400) return true;
  if (weight >= 25 && density > 0.5) return true;
  if (isList && density > 0.5) return true;
  return false;
}

/** Whether the element's parent holds text besides it (it sits inside a sentence). */
function inSentence(el: Element, stats: TextStats): boolean {
  const parent = el.parent;
  return !!parent && isElement(parent) && stats.of(parent).chars > stats.of(el).chars;
}

function isLabel(el: Element, stats: TextStats): boolean {
  const { chars } = stats.of(el);
  return chars > 0 && chars <= LABEL_MAX_CHARS && LABEL.test(stats.text(el));
}

/** Drops headers, captions and author credits, and an `<h1>` that comes before the first paragraph. */
function dropHeadlineAndCredits(container: Element, stats: TextStats): void {
  let bodyStarted = false;
  const visit = (el: Element) => {
    for (const child of [...el.children]) {
      if (!isElement(child)) continue;
      if ((child.name === 'h1' && !bodyStarted) || DROP_TAGS.has(child.name) || AUTHOR_MARKUP(child)) {
        stats.remove(child);
        continue;
      }
      if (child.name === 'p' && stats.of(child).chars >= BODY_START_CHARS) bodyStarted = true;
      visit(child);
    }
  };
  visit(container);
}

/** Removes the headline block and boilerplate under each container, in place (innermost first). */
export function removeBoilerplate(containers: Element[], stats: TextStats): void {
  for (const container of containers) {
    const total = stats.of(container).chars;
    dropHeadlineAndCredits(container, stats);
    stats.detachRemoved();
    // Removals only mark nodes until detachRemoved, so the walk sees a tree that does not change.
    forEachElementReversed(container, (el) => {
      if (stats.isRemoved(el)) return;
      const { chars } = stats.of(el);
      if ((DROP_STANDALONE_TAGS.has(el.name) && !inSentence(el, stats)) || isLabel(el, stats) || (el.name === 'figure' && chars < FIGURE_TEXT_CHARS)) {
        stats.remove(el);
        return;
      }
      if (!CONDITIONAL_TAGS.has(el.name) || chars > total * BODY_SHARE) return;
      if (isUnlikely(el) || looksLikeBoilerplate(el, stats)) stats.remove(el);
    });
    stats.detachRemoved();
  }
}
