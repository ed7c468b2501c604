/**
 * Paragraph-aware text of a DOM subtree: each block element becomes its own paragraph (blank line
 * between paragraphs), `<br>` a line break, whitespace inside a paragraph collapsed to single
 * spaces. Entities are already decoded by the parser.
 */
import type { AnyNode } from 'domhandler';
import { isElement } from './dom.js';

/** Elements that start a new paragraph. */
export const BLOCK_TAGS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'center',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'thead',
  'tfoot',
  'tr',
  'ul',
  'caption',
  'body',
  'html',
  'menu',
  'legend',
  'option',
]);

/** Table cells are separated by a space-like gap, not a paragraph. */
const CELL_TAGS = new Set(['td', 'th']);

class Collector {
  readonly paragraphs: string[] = [];
  private line = '';
  private lines: string[] = [];

  text(data: string, preformatted: boolean): void {
    if (preformatted) {
      const parts = data.split('\n');
      this.line += parts[0];
      for (const part of parts.slice(1)) this.newline(part);
      return;
    }
    this.line += data.replace(/\s+/g, ' ');
  }

  space(): void {
    if (this.line && !this.line.endsWith(' ')) this.line += ' ';
  }

  newline(next = ''): void {
    this.lines.push(this.line);
    this.line = next;
  }

  breakParagraph(): void {
    this.lines.push(this.line);
    const paragraph = this.lines
      .map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim())
      .filter(Boolean)
      .join('\n');
    if (paragraph) this.paragraphs.push(paragraph);
    this.lines = [];
    this.line = '';
  }
}

function walk(node: AnyNode, out: Collector, preformatted: boolean): void {
  if (node.type === 'text') {
    out.text(node.data, preformatted);
    return;
  }
  if (!isElement(node)) return;
  const name = node.name;
  if (name === 'br') {
    out.newline();
    return;
  }
  const block = BLOCK_TAGS.has(name);
  const pre = preformatted || name === 'pre' || name === 'textarea';
  if (block) out.breakParagraph();
  else if (CELL_TAGS.has(name)) out.space();
  for (const child of node.children) walk(child, out, pre);
  if (block) out.breakParagraph();
  else if (CELL_TAGS.has(name)) out.space();
}

/** The paragraphs of the given nodes, in order. */
export function paragraphsOf(nodes: AnyNode[]): string[] {
  const out = new Collector();
  for (const node of nodes) walk(node, out, false);
  out.breakParagraph();
  return out.paragraphs;
}

/** Paragraph text of the given nodes: paragraphs joined by a blank line. */
export function textOf(nodes: AnyNode[]): string {
  return paragraphsOf(nodes).join('\n\n');
}

/** Cuts `text` to at most `maxChars`, at a word boundary when one is near. */
export function capText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const lastSpace = cut.search(/\s\S*$/);
  return (lastSpace > maxChars * 0.9 ? cut.slice(0, lastSpace) : cut).trimEnd();
}
