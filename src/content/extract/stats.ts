/**
 * Text statistics per element (characters, characters inside links, commas, paragraphs, list
 * items), computed once bottom-up and kept current when nodes are removed. Asking an element's
 * text again and again is quadratic on deep or long pages; these sums are not.
 */
import type { AnyNode, Element } from 'domhandler';
import { isElement, removeNodes } from './dom.js';

/** Sums over an element's subtree. `chars` counts text with whitespace runs collapsed. */
export interface NodeStats {
  chars: number;
  linkChars: number;
  commas: number;
  paragraphs: number;
  listItems: number;
}

/** Whether `code` is a character `\s` matches (white space or a line terminator). */
function isSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Whether `code` is a comma: `,`, `，`, `、` or `،`. */
function isComma(code: number): boolean {
  return code === 0x2c || code === 0xff0c || code === 0x3001 || code === 0x060c;
}

/**
 * Adds a text's characters (whitespace runs counted as one, none for whitespace only) and commas
 * to `into`, in one scan of it: collapsing it with a regular expression and matching its commas
 * made two strings and an array per text node, most of the statistics' time on a large page.
 */
function addText(into: NodeStats, data: string, sign = 1): void {
  let chars = 0;
  let commas = 0;
  let inSpace = false;
  let text = false;
  for (let i = 0; i < data.length; i++) {
    const code = data.charCodeAt(i);
    if (isSpace(code)) {
      if (!inSpace) chars++;
      inSpace = true;
      continue;
    }
    inSpace = false;
    text = true;
    chars++;
    if (isComma(code)) commas++;
  }
  if (!text) return;
  into.chars += sign * chars;
  into.commas += sign * commas;
}

function textStats(data: string): NodeStats {
  const s: NodeStats = { chars: 0, linkChars: 0, commas: 0, paragraphs: 0, listItems: 0 };
  addText(s, data);
  return s;
}

function add(into: NodeStats, s: NodeStats, sign = 1): void {
  into.chars += sign * s.chars;
  into.linkChars += sign * s.linkChars;
  into.commas += sign * s.commas;
  into.paragraphs += sign * s.paragraphs;
  into.listItems += sign * s.listItems;
}

/**
 * Memoised statistics over a DOM that may only change through {@link TextStats.remove}. Removed
 * nodes leave the tree together, at {@link TextStats.detachRemoved}: detaching each at once spliced
 * its parent's children, quadratic in the siblings removed (160,000 `<header>`s in an article, 2.9
 * MB, took 9 s). Until then {@link TextStats.text} reads an element's text without them.
 */
export class TextStats {
  /**
   * The key each element's statistics are kept under, on the element itself: a Map of a million
   * elements cost a cache miss per look-up, and look-ups were most of the statistics' time.
   */
  private readonly key = Symbol('text statistics');
  private readonly removed = new Set<AnyNode>();

  private cached(el: Element): NodeStats | undefined {
    return (el as Element & Record<symbol, NodeStats | undefined>)[this.key];
  }

  /**
   * The element's statistics. Only an element with element children keeps them: a leaf's are its
   * own texts', counted again at each ask in a scan of those texts (the page's text is bounded, and
   * a leaf is asked a handful of times), where keeping them cost ~100 bytes a leaf (the sums and
   * the element's property store), 130 MB of a page of 1.25 million `<p>x` and its heap's peak.
   */
  of(el: Element): NodeStats {
    const cached = this.cached(el);
    if (cached) return cached;
    const s: NodeStats = { chars: 0, linkChars: 0, commas: 0, paragraphs: el.name === 'p' ? 1 : 0, listItems: el.name === 'li' ? 1 : 0 };
    const skipRemoved = this.removed.size > 0;
    let leaf = true;
    for (const child of el.children) {
      if (skipRemoved && this.removed.has(child)) continue;
      if (child.type === 'text') addText(s, child.data);
      else if (isElement(child)) {
        leaf = false;
        add(s, this.of(child));
      }
    }
    if (el.name === 'a') s.linkChars = s.chars;
    if (!leaf) (el as Element & Record<symbol, NodeStats>)[this.key] = s;
    return s;
  }

  /** Share of the element's text inside links (0 when it has no text). */
  linkDensity(el: Element): number {
    const s = this.of(el);
    return s.chars === 0 ? 0 : Math.min(1, s.linkChars / s.chars);
  }

  /** Marks `node` removed and takes its statistics from its ancestors'; a node already removed, or inside one, is left alone. */
  remove(node: AnyNode): void {
    for (let n: AnyNode | null = node; n; n = n.parent) if (this.removed.has(n)) return;
    const s = isElement(node) ? this.of(node) : node.type === 'text' ? textStats(node.data) : null;
    let delta = s;
    for (let a = node.parent; delta && a && isElement(a); a = a.parent) {
      // Above a link, all of the removed text was link text.
      if (a.name === 'a') delta = { ...delta, linkChars: delta.chars };
      const cached = this.cached(a);
      if (cached) add(cached, delta, -1);
    }
    this.removed.add(node);
  }

  /** Whether `node` itself was removed (and is not yet detached). */
  isRemoved(node: AnyNode): boolean {
    return this.removed.has(node);
  }

  /** Text under `el`, removed nodes left out, whitespace runs collapsed and the ends trimmed. */
  text(el: Element): string {
    const raw = (node: AnyNode): string => {
      if (this.removed.has(node)) return '';
      if (node.type === 'text') return node.data;
      if (!('children' in node)) return '';
      let out = '';
      for (const child of node.children) out += raw(child);
      return out;
    };
    return raw(el).replace(/\s+/g, ' ').trim();
  }

  /** Detaches every node removed so far from the tree, one pass over each parent. */
  detachRemoved(): void {
    removeNodes(this.removed);
    this.removed.clear();
  }
}
