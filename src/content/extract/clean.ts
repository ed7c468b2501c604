/**
 * Removal of what is never article text: scripts and other non-content elements, hidden nodes,
 * and page chrome (nav, footer, aside).
 */
import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { descendants, isElement, rawText, removeNodes } from './dom.js';
import { BLOCK_TAGS } from './text.js';

/** Elements whose content is never readable text. */
const NON_CONTENT_TAGS = [
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'svg',
  'canvas',
  'object',
  'embed',
  'video',
  'audio',
  'map',
  'button',
  'input',
  'select',
  'textarea',
  'link',
  'meta',
  'head',
  'dialog',
  'math',
];

/** Page chrome around the article. */
const CHROME_TAGS = ['nav', 'footer', 'aside'];
const UNWANTED_TAGS = new Set([...NON_CONTENT_TAGS, ...CHROME_TAGS]);

const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i;

/** Whether the element is hidden by an attribute or an inline style. */
export function isHidden(el: Element): boolean {
  const a = el.attribs;
  if (a.hidden !== undefined) return true;
  if (a['aria-hidden'] === 'true') return true;
  return a.style !== undefined && HIDDEN_STYLE.test(a.style);
}

/** Tags that close themselves or are closed implicitly, so they never deepen the tree for long. */
const SHALLOW_TAGS = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
  'p',
  'li',
  'dt',
  'dd',
  'tr',
  'td',
  'th',
  'option',
  'optgroup',
  'thead',
  'tbody',
  'tfoot',
  'colgroup',
  'caption',
  'rb',
  'rt',
  'rp',
  'html',
  'head',
  'body',
  '!doctype',
]);

const TAG_NAME_START = /[a-zA-Z!]/;
const TAG_NAME_CHAR = /[a-zA-Z0-9-]/;

/**
 * An estimate (from the tags alone) of how deep the parsed tree would nest. The HTML parser slows
 * quadratically with nesting, so hostile markup is refused before parsing.
 *
 * A hand-written scan, linear in the page's length: every search moves forward and none restarts.
 * (The regex it replaces, `<!--[\s\S]*?-->|<(\w+)[^>]*?>`, rescanned to the end of the page from
 * every `<!--` or `<a ` that is never closed: quadratic on 2 MB of either.) Comments and
 * script/style bodies are skipped: tags inside them are not elements. Once no `>` follows, no tag
 * can follow either, and once a comment or script is left open it runs to the end.
 */
export function markupDepth(html: string): number {
  let lower: string | null = null;
  let depth = 0;
  let max = 0;
  let i = html.indexOf('<');
  while (i !== -1) {
    if (html.startsWith('<!--', i)) {
      const end = html.indexOf('-->', i + 4);
      if (end === -1) break;
      i = html.indexOf('<', end + 3);
      continue;
    }
    let j = i + 1;
    const closing = html[j] === '/';
    if (closing) j++;
    if (j >= html.length || !TAG_NAME_START.test(html[j])) {
      i = html.indexOf('<', i + 1);
      continue;
    }
    let k = j + 1;
    while (k < html.length && TAG_NAME_CHAR.test(html[k])) k++;
    const gt = html.indexOf('>', k);
    if (gt === -1) break;
    const name = html.slice(j, k).toLowerCase();
    let next = gt + 1;
    if (!closing && (name === 'script' || name === 'style')) {
      lower ??= html.toLowerCase();
      const close = lower.indexOf(`</${name}`, next);
      if (close === -1) break;
      const closeEnd = html.indexOf('>', close);
      if (closeEnd === -1) break;
      next = closeEnd + 1;
    } else if (!SHALLOW_TAGS.has(name) && html[gt - 1] !== '/') {
      depth = closing ? Math.max(0, depth - 1) : depth + 1;
      if (depth > max) max = depth;
    }
    i = html.indexOf('<', next);
  }
  return max;
}

/** Deeper than any real page (the corpus peaks near 50); pathological nesting is cut here. */
export const MAX_DEPTH = 400;

/**
 * Cuts away everything nested deeper than `maxDepth`, so a hostile page of 100,000 nested divs
 * costs linear time and no recursion can overflow the stack. Iterative on purpose.
 */
export function limitDepth($: CheerioAPI, maxDepth = MAX_DEPTH): void {
  const stack: [AnyNode, number][] = [[$.root()[0], 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (!('children' in node)) continue;
    if (depth >= maxDepth) {
      for (const child of node.children) child.parent = null;
      node.children = [];
      continue;
    }
    for (const child of node.children) stack.push([child, depth + 1]);
  }
}

/** Removes comments, non-content elements, hidden elements and page chrome, in one pass. */
export function removeUnwanted($: CheerioAPI): void {
  const doomed: AnyNode[] = [];
  const stack: AnyNode[] = [...$.root()[0].children];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'comment' || node.type === 'directive') {
      doomed.push(node);
    } else if (isElement(node)) {
      if (UNWANTED_TAGS.has(node.name) || isHidden(node)) doomed.push(node);
      else for (const child of node.children) stack.push(child);
    }
  }
  removeNodes(doomed);
}

/** Containers whose loose text (text beside block children) is wrapped into paragraphs. */
const LOOSE_TEXT_PARENTS = new Set(['div', 'section', 'article', 'main', 'td', 'body', 'form', 'center', 'blockquote', 'font', 'span']);

function isBlock(node: AnyNode): boolean {
  return isElement(node) && BLOCK_TAGS.has(node.name);
}

/**
 * Wraps runs of text and inline elements that sit beside block elements into `<p>`s, so
 * `<div>text<br>more<div>..</div></div>` scores and lays out like real paragraphs.
 */
export function wrapLooseText($: CheerioAPI): void {
  for (const el of descendants($.root()[0])) {
    if (!LOOSE_TEXT_PARENTS.has(el.name) || !el.children.some(isBlock)) continue;
    let run: AnyNode[] = [];
    const flush = () => {
      if (run.some((n) => rawText(n).trim() !== '')) $(run).wrapAll('<p></p>');
      run = [];
    };
    for (const child of [...el.children]) {
      if (isBlock(child)) flush();
      else run.push(child);
    }
    flush();
  }
}
