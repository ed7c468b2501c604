/**
 * HTML fragments (HN comments, feed descriptions, rendered markdown) to plain text: entities
 * decoded, blocks separated by blank lines, `<br>` and list items on their own lines, `<pre>`
 * kept verbatim, scripts and styles dropped.
 */
import { load } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { cleanText } from './text.js';

/** How links are written: just their text, or their text followed by the target when it adds something. */
export type LinkStyle = 'text' | 'text+href';

export interface HtmlToTextOptions {
  links?: LinkStyle;
}

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'iframe', 'svg', 'head', 'object', 'embed', 'canvas']);
const PARAGRAPHS = new Set([
  'p', 'div', 'section', 'article', 'header', 'footer', 'aside', 'main', 'blockquote', 'pre', 'table', 'ul', 'ol', 'dl',
  'figure', 'figcaption', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'form', 'fieldset', 'address', 'details',
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
      this.parts[this.parts.length - 1] = this.parts[this.parts.length - 1].replace(/[ \t]+$/, '');
      this.parts.push('\n'.repeat(this.pendingBreak));
    }
    this.pendingBreak = 0;
    this.parts.push(t);
    this.atLineStart = /\n$/.test(t) || (/ $/.test(t));
  }

  toString(): string {
    return this.parts.join('').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
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

function textOf(node: AnyNode): string {
  if (node.type === 'text') return (node as unknown as { data: string }).data;
  if ('children' in node) return (node.children as AnyNode[]).map(textOf).join('');
  return '';
}

function walk(node: AnyNode, out: TextBuilder, style: LinkStyle, inPre: boolean): void {
  if (node.type === 'text' || node.type === 'cdata') {
    const data = node.type === 'text' ? (node as unknown as { data: string }).data : textOf(node);
    if (inPre) out.verbatim(data);
    else out.flow(data);
    return;
  }
  if (node.type !== 'tag' && node.type !== 'root' && node.type !== 'script' && node.type !== 'style') return;
  if (node.type === 'script' || node.type === 'style') return;
  const el = node as Element;
  const name = node.type === 'root' ? '' : el.name.toLowerCase();
  if (SKIPPED.has(name)) return;
  if (name === 'br') {
    out.breakLine(1);
    return;
  }
  if (name === 'a' && !inPre) {
    out.flow(linkTarget(el, textOf(el), style));
    return;
  }
  const block = PARAGRAPHS.has(name) ? 2 : LINES.has(name) ? 1 : 0;
  if (block) out.breakLine(block as 1 | 2);
  const pre = inPre || name === 'pre';
  for (const child of el.children as AnyNode[]) walk(child, out, style, pre);
  if (block) out.breakLine(block as 1 | 2);
}

/** Plain text of an HTML fragment. */
export function htmlToText(html: string, options: HtmlToTextOptions = {}): string {
  if (!html) return '';
  // htmlparser2 (not parse5): several times faster on fragments, and lenient with HN's unclosed <p>.
  const $ = load(html, { xml: { xmlMode: false, decodeEntities: true } }, false);
  const out = new TextBuilder();
  walk($.root()[0] as unknown as AnyNode, out, options.links ?? 'text', false);
  return cleanText(out.toString());
}

/** Whether a string holds markup or character references worth decoding. */
export function looksLikeHtml(text: string): boolean {
  return /<\/?[a-z][^>]*>|&(#\d+|#x[0-9a-f]+|[a-z]+);/i.test(text);
}
