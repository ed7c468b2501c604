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
  /** Length of the paragraphs joined by blank lines. */
  private joined = 0;
  private line = '';
  /**
   * The line's last character ('' when it is empty), kept beside it: asking the line itself
   * (`endsWith`) flattens the string being built, so a row of 1,000,000 cells copied it per cell.
   */
  private last = '';
  private lines: string[] = [];

  /** `limit`: the collector is {@link done} once the joined paragraphs are longer. */
  constructor(private readonly limit: number) {}

  /** Whether the paragraphs so far are longer than the limit: what follows them cannot be kept. */
  get done(): boolean {
    return this.joined > this.limit;
  }

  private append(s: string): void {
    this.line += s;
    if (s) this.last = s[s.length - 1];
  }

  text(data: string, preformatted: boolean): void {
    if (preformatted) {
      const parts = data.split('\n');
      this.append(parts[0]);
      for (const part of parts.slice(1)) this.newline(part);
      return;
    }
    this.append(data.replace(/\s+/g, ' '));
  }

  space(): void {
    if (this.last && this.last !== ' ') this.append(' ');
  }

  newline(next = ''): void {
    this.lines.push(this.line);
    this.line = '';
    this.last = '';
    this.append(next);
  }

  breakParagraph(): void {
    this.lines.push(this.line);
    const paragraph = this.lines
      .map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim())
      .filter(Boolean)
      .join('\n');
    if (paragraph) {
      this.joined += (this.paragraphs.length > 0 ? 2 : 0) + paragraph.length;
      this.paragraphs.push(paragraph);
    }
    this.lines = [];
    this.line = '';
    this.last = '';
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
  for (const child of node.children) {
    if (out.done) return;
    walk(child, out, pre);
  }
  if (block) out.breakParagraph();
  else if (CELL_TAGS.has(name)) out.space();
}

/**
 * The paragraphs of the given nodes, in order; the walk stops at the first paragraph that takes
 * their joined text past `limit` characters.
 */
export function paragraphsOf(nodes: AnyNode[], limit = Infinity): string[] {
  const out = new Collector(limit);
  for (const node of nodes) {
    if (out.done) break;
    walk(node, out, false);
  }
  out.breakParagraph();
  return out.paragraphs;
}

/**
 * Paragraph text of the given nodes: paragraphs joined by a blank line. With a `limit`, only its
 * beginning, past `limit` characters when the whole is longer: {@link capText} to that limit cuts
 * it as it cuts the whole, and a page of a million paragraphs is not laid out to keep 200,000
 * characters of it.
 */
export function textOf(nodes: AnyNode[], limit = Infinity): string {
  return paragraphsOf(nodes, limit).join('\n\n');
}

/** Cuts `text` to at most `maxChars`, at a word boundary when one is near. */
export function capText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const lastSpace = cut.search(/\s\S*$/);
  return (lastSpace > maxChars * 0.9 ? cut.slice(0, lastSpace) : cut).trimEnd();
}
