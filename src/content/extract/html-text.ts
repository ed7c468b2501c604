/**
 * HTML fragments (HN comments, feed descriptions, rendered markdown) to plain text: entities
 * decoded, blocks separated by blank lines, `<br>` and list items on their own lines, `<pre>`
 * kept verbatim, scripts and styles dropped.
 */
import type { AnyNode, Document, Element } from 'domhandler';
import { cleanText, trimSpacesEnd } from '../text.js';
import { NestingTooDeepError, parseFragment } from './nesting.js';

/** How links are written: just their text, or their text followed by the target when it adds something. */
export type LinkStyle = 'text' | 'text+href';

export interface HtmlToTextOptions {
  links?: LinkStyle;
}

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'iframe', 'svg', 'head', 'object', 'embed', 'canvas']);
const PARAGRAPHS = new Set([
  'p',
  'div',
  'section',
  'article',
  'header',
  'footer',
  'aside',
  'main',
  'blockquote',
  'pre',
  'table',
  'ul',
  'ol',
  'dl',
  'figure',
  'figcaption',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'form',
  'fieldset',
  'address',
  'details',
]);
const LINES = new Set(['li', 'tr', 'dt', 'dd', 'summary', 'caption']);

/** Collects text with pending line breaks so that breaks never pile up or lead the output. */
class TextBuilder {
  private readonly parts: string[] = [];
  private pendingBreak = 0;
  private atLineStart = true;

  breakLine(count: 1 | 2): void {
    this.pendingBreak = Math.max(this.pendingBreak, count);
  }

  /** Flowing text: whitespace runs fold to one space. */
  flow(text: string): void {
    let t = text.replace(/\s+/g, ' ');
    if (this.pendingBreak || this.atLineStart) t = t.replace(/^ /, '');
    if (!t) return;
    this.emit(t);
  }

  /** Preformatted text, kept as it is. */
  verbatim(text: string): void {
    if (text) this.emit(text);
  }

  private emit(t: string): void {
    if (this.pendingBreak && this.parts.length) {
      this.parts[this.parts.length - 1] = trimSpacesEnd(this.parts[this.parts.length - 1]);
      this.parts.push('\n'.repeat(this.pendingBreak));
    }
    this.pendingBreak = 0;
    this.parts.push(t);
    this.atLineStart = t.endsWith('\n') || t.endsWith(' ');
  }

  toString(): string {
    const lines = this.parts.join('').split('\n').map(trimSpacesEnd);
    return lines
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  }
}

function linkTarget(el: Element, text: string, style: LinkStyle): string {
  const href = el.attribs?.href?.trim() ?? '';
  if (style === 'text' || !/^https?:\/\//i.test(href)) return text;
  const shown = text.trim();
  if (!shown || shown === href) return href;
  // HN shortens long link texts to "https://example.com/a/long/pa..."
  if (/(\.\.\.|…)$/.test(shown) && href.startsWith(shown.replace(/(\.\.\.|…)$/, ''))) return href;
  return `${shown} (${href})`;
}

/** All text under `node`. Iterative: a hostile fragment may nest tens of thousands of elements. */
export function textContent(node: AnyNode): string {
  let out = '';
  const stack: AnyNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'text') out += (n as unknown as { data: string }).data;
    else if ('children' in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as AnyNode);
  }
  return out;
}

/** A node to visit, or the end of an element whose closing break is still due. */
type Step = { node: AnyNode; inPre: boolean } | { closeBlock: 1 | 2 };

/** Depth-first over the tree with an explicit stack, so no nesting can overflow the call stack. */
function walk(root: AnyNode, out: TextBuilder, style: LinkStyle): void {
  const stack: Step[] = [{ node: root, inPre: false }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    if ('closeBlock' in step) {
      out.breakLine(step.closeBlock);
      continue;
    }
    const { node, inPre } = step;
    if (node.type === 'text' || node.type === 'cdata') {
      const data = node.type === 'text' ? (node as unknown as { data: string }).data : textContent(node);
      if (inPre) out.verbatim(data);
      else out.flow(data);
      continue;
    }
    if (node.type !== 'tag' && node.type !== 'root') continue;
    const el = node as Element;
    const name = node.type === 'root' ? '' : el.name.toLowerCase();
    if (SKIPPED.has(name)) continue;
    if (name === 'br') {
      out.breakLine(1);
      continue;
    }
    if (name === 'a' && !inPre) {
      out.flow(linkTarget(el, textContent(el), style));
      continue;
    }
    const block = PARAGRAPHS.has(name) ? 2 : LINES.has(name) ? 1 : 0;
    if (block) {
      out.breakLine(block as 1 | 2);
      stack.push({ closeBlock: block as 1 | 2 });
    }
    const pre = inPre || name === 'pre';
    const children = el.children as AnyNode[];
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i], inPre: pre });
  }
}

const TAG_NAME_START = /[a-zA-Z/!?]/;

/**
 * The fragment with each tag replaced by a space and each other `<` escaped: its text and
 * character references, nothing left to nest. One forward scan: the `>` ending a tag is searched
 * for again only once the scan has passed the last one found.
 */
function withoutTags(html: string): string {
  let out = '';
  let from = 0;
  let gt = html.indexOf('>');
  for (let lt = html.indexOf('<'); lt !== -1; lt = html.indexOf('<', from)) {
    out += html.slice(from, lt);
    if (gt !== -1 && gt < lt) gt = html.indexOf('>', lt);
    if (gt !== -1 && TAG_NAME_START.test(html[lt + 1] ?? '')) {
      out += ' ';
      from = gt + 1;
    } else {
      out += '&lt;';
      from = lt + 1;
    }
  }
  return out + html.slice(from);
}

/** The parsed fragment; markup nested too deep to parse cheaply keeps its text, without its structure. */
function fragmentOf(html: string): Document {
  try {
    return parseFragment(html);
  } catch (err) {
    if (!(err instanceof NestingTooDeepError)) throw err;
    return parseFragment(withoutTags(html));
  }
}

/** Plain text of an HTML fragment. */
export function htmlToText(html: string, options: HtmlToTextOptions = {}): string {
  if (!html) return '';
  // htmlparser2 (not parse5): several times faster on fragments, and lenient with HN's unclosed <p>.
  return domToText(fragmentOf(html), options);
}

/** Plain text of an already parsed node and what it holds (an Atom feed's inline XHTML), laid out as by htmlToText. */
export function domToText(node: AnyNode, options: HtmlToTextOptions = {}): string {
  const out = new TextBuilder();
  walk(node, out, options.links ?? 'text');
  return cleanText(out.toString());
}

const TAG_START = /<\/?[a-z]/i;
const CHARACTER_REFERENCE = /&(?:#\d{1,8}|#x[0-9a-f]{1,8}|[a-z][a-z0-9]{0,31});/i;

/**
 * Whether a string holds markup or character references worth decoding. In linear time: a tag
 * needs a `>` somewhere after its `<`, and the first tag start has the most text after it, so one
 * search for each suffices (`<[a-z][^>]*>` rescanned to the end from every `<a ` of a hostile
 * feed: quadratic).
 */
export function looksLikeHtml(text: string): boolean {
  const tag = TAG_START.exec(text);
  if (tag && text.indexOf('>', tag.index) !== -1) return true;
  return CHARACTER_REFERENCE.test(text);
}
