/**
 * Removal of what is never article text: scripts and other non-content elements, hidden nodes,
 * and page chrome (nav, footer, aside).
 */
import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element, ParentNode } from 'domhandler';
import { elementsWhere, hasText, isElement, removeNodes } from './dom.js';
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

/** Deeper than any real page (the corpus peaks near 50); pathological nesting is cut here. */
export const MAX_DEPTH = 400;

/**
 * Cuts away everything nested deeper than `maxDepth`, so no recursion over the tree can overflow
 * the stack. The parse already gives up past MAX_OPEN_ELEMENTS (nesting.ts); this bounds the tree
 * itself, whatever the tree builder made of the markup. Iterative on purpose.
 */
export function limitDepth($: CheerioAPI, maxDepth = MAX_DEPTH): void {
  // Two stacks, not one of [node, depth] pairs: a pair per node was 40 MB for a million elements.
  const nodes: AnyNode[] = [$.root()[0]];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (!('children' in node)) continue;
    if (depth >= maxDepth) {
      for (const child of node.children) child.parent = null;
      node.children = [];
      continue;
    }
    for (const child of node.children) {
      nodes.push(child);
      depths.push(depth + 1);
    }
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

/** Makes `children` the children of `parent`, with their parent and sibling links. */
function adopt(parent: ParentNode, children: AnyNode[]): void {
  children.forEach((c, i) => {
    c.parent = parent;
    c.prev = children[i - 1] ?? null;
    c.next = children[i + 1] ?? null;
  });
  parent.children = children;
}

/**
 * Wraps runs of text and inline elements that sit beside block elements into `<p>`s, so
 * `<div>text<br>more<div>..</div></div>` scores and lays out like real paragraphs. Each container's
 * children are rebuilt in one pass: cheerio's `wrapAll` per run spliced the container's children
 * array each time, quadratic in the runs (80,000 runs, 1.3 MB, took 13 s).
 */
export function wrapLooseText($: CheerioAPI): void {
  const emptyParagraph = $('<p></p>')[0] as Element;
  for (const el of elementsWhere($.root()[0], (e) => LOOSE_TEXT_PARENTS.has(e.name))) {
    if (!el.children.some(isBlock)) continue;
    const children: AnyNode[] = [];
    let run: AnyNode[] = [];
    const flush = () => {
      if (run.some(hasText)) {
        const p = emptyParagraph.cloneNode(false);
        adopt(p, run);
        children.push(p);
      } else {
        // Not push(...run): a run of 300,000 images is as many arguments, past the stack.
        for (const n of run) children.push(n);
      }
      run = [];
    };
    for (const child of el.children) {
      if (isBlock(child)) {
        flush();
        children.push(child);
      } else run.push(child);
    }
    flush();
    adopt(el, children);
  }
}
