/**
 * HTML parsing with a ceiling on nesting. Both parsers slow down with the depth of their stack of
 * open elements on every tag: parse5 walks the stack for its scope checks, htmlparser2 shifts it
 * on every push. 350 KB of nested elements held the extraction worker for its whole timeout.
 *
 * The ceiling is counted on the parsers' own stacks, through their push and pop callbacks, rather
 * than estimated from the markup beforehand: the HTML tree builder's rules (void elements, `/>`
 * only in SVG and MathML, end tags ignored across a `<div>`, misnested formatting elements) are
 * too many to mirror, and each rule left out was a way to nest 40,000 deep past an estimate of 0.
 */
import { type CheerioAPI, load } from 'cheerio';
import { type ChildNode, type Document, Element, type ParentNode } from 'domhandler';
import { DomHandler, Parser } from 'htmlparser2';
import { Parser as Html5Parser, Tokenizer } from 'parse5';
import { adapter as domAdapter, type Htmlparser2TreeAdapterMap } from 'parse5-htmlparser2-tree-adapter';

/**
 * Open elements a parse may hold at once. Real pages nest 50 deep at most in the extraction
 * corpus. At 256, 5 MB of the most expensive markup costs parse5 about twice what 5 MB of small
 * shallow elements costs; at the 4,000 allowed before, 5 MB of `<li>` under deep `<div>`s would
 * outlast the worker's timeout.
 */
export const MAX_OPEN_ELEMENTS = 256;

/**
 * Open elements a feed's XML parse may hold at once: real feeds nest a few dozen at most, but
 * htmlparser2 shifts its whole stack on every push, so 2.5 MB of nested `<b>` in an Atom entry's
 * xhtml content (830,000 deep) took 367 s; at this ceiling a feed costs under a second.
 */
export const MAX_OPEN_XML_ELEMENTS = 100_000;

/**
 * Attributes an element keeps, its first ones: parse5's tokenizer looks for a duplicate of each
 * new attribute among those before it in the tag, so one tag of 100,000 attributes (690 KB) took
 * 27 s to parse, past the extraction worker's time limit. The extraction corpus has 64 at most.
 */
export const MAX_ATTRIBUTES = 256;

/** parse5's tokenizer, dropping a tag's attributes past {@link MAX_ATTRIBUTES} as it drops duplicates. */
class AttributeCappedTokenizer extends Tokenizer {
  protected override _leaveAttrName(): void {
    const token = this.currentToken;
    if (token && 'attrs' in token && token.attrs.length >= MAX_ATTRIBUTES) return;
    super._leaveAttrName();
  }
}

/** Thrown when a parse would hold more open elements than its ceiling. */
export class NestingTooDeepError extends Error {
  constructor(ceiling = MAX_OPEN_ELEMENTS) {
    super(`the markup nests deeper than ${ceiling} elements`);
    this.name = 'NestingTooDeepError';
  }
}

/**
 * The tree adapter's insertBefore, with the reference found from the end of its parent's children.
 * parse5 inserts before an element only to foster-parent content out of an open table, which is its
 * parent's last child; the adapter's `indexOf` scanned all the children before it, so 5 MB of
 * `<table>x` (700,000 tables side by side, each fostering its text) took 195 s.
 */
function insertBeforeFromEnd(parent: ParentNode, node: ChildNode, reference: ChildNode): void {
  const at = parent.children.lastIndexOf(reference);
  const before = reference.prev;
  if (before) before.next = node;
  node.prev = before;
  node.next = reference;
  reference.prev = node;
  parent.children.splice(at, 0, node);
  node.parent = parent;
}

type Attribute = Parameters<typeof domAdapter.createElement>[2][number];

/**
 * The `attribs` of every element without attributes: one object, frozen, since the extraction
 * tree is only read (a write to it throws rather than reach every element).
 */
const NO_ATTRIBUTES: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);

/** Whether any attribute has a namespace or prefix (`xlink:href` in SVG). */
function namespaced(attrs: Attribute[]): boolean {
  return attrs.some((a) => a.namespace !== undefined || a.prefix !== undefined);
}

/**
 * The tree adapter's createElement, lighter: an element without attributes shares
 * {@link NO_ATTRIBUTES}, and the maps of attribute namespaces and prefixes, which only parse5's
 * serialiser reads (domhandler's `attributes` reads them optionally), are kept only where an
 * attribute has one. The adapter gave every element three null-prototype objects.
 */
function createElement(tagName: string, namespaceURI: Element['namespace'], attrs: Attribute[]): Element {
  if (namespaced(attrs)) return domAdapter.createElement(tagName, namespaceURI as never, attrs);
  let attribs = NO_ATTRIBUTES;
  if (attrs.length > 0) {
    attribs = Object.create(null) as Record<string, string>;
    for (const a of attrs) attribs[a.name] = a.value;
  }
  const node = new Element(tagName, attribs, []);
  node.namespace = namespaceURI;
  return node;
}

/** The adapter's adoptAttributes (`<html>` or `<body>` seen again), for elements that may share {@link NO_ATTRIBUTES} or lack the maps. */
function adoptAttributes(recipient: Element, attrs: Attribute[]): void {
  for (const a of attrs) {
    if (recipient.attribs[a.name] !== undefined) continue;
    if (recipient.attribs === NO_ATTRIBUTES) recipient.attribs = Object.create(null) as Record<string, string>;
    recipient.attribs[a.name] = a.value;
    if (a.namespace === undefined && a.prefix === undefined) continue;
    (recipient['x-attribsNamespace'] ??= Object.create(null) as Record<string, string>)[a.name] = a.namespace!;
    (recipient['x-attribsPrefix'] ??= Object.create(null) as Record<string, string>)[a.name] = a.prefix!;
  }
}

/**
 * The adapter's appendChild, giving a first child an array of its own size: a push onto an empty
 * array reserves seventeen slots, and most elements hold one child (their text).
 */
function appendChild(parent: ParentNode, node: ChildNode): void {
  const children = parent.children;
  const prev = children[children.length - 1];
  if (prev) {
    prev.next = node;
    node.prev = prev;
  }
  if (children.length === 0) parent.children = [node];
  else children.push(node);
  node.parent = parent;
}

/** The adapter's insertText, through {@link appendChild}. */
function insertText(parent: ParentNode, text: string): void {
  const last = parent.children[parent.children.length - 1];
  if (last && domAdapter.isTextNode(last)) last.data += text;
  else appendChild(parent, domAdapter.createTextNode(text));
}

/**
 * Loads a whole HTML document (parse5, as cheerio does by default), refusing it with
 * NestingTooDeepError as soon as its stack of open elements outgrows {@link MAX_OPEN_ELEMENTS},
 * and keeping each element's first {@link MAX_ATTRIBUTES} attributes. Only the document's own
 * parse counts: the CheerioAPI keeps the tree adapter for the fragments cleaning parses later
 * (`wrapAll('<p></p>')`), and a fragment's parse ends without popping the elements it opened, so
 * counting those refused a page after ~250 wrapped runs of loose text.
 */
export function loadDocument(html: string): CheerioAPI {
  let open = 0;
  let parsing = true;
  const treeAdapter: typeof domAdapter = {
    ...domAdapter,
    createElement,
    adoptAttributes,
    appendChild,
    insertText,
    insertBefore: insertBeforeFromEnd,
    insertTextBefore(parent, text, reference) {
      const before = reference.prev;
      if (before && domAdapter.isTextNode(before)) before.data += text;
      else insertBeforeFromEnd(parent, domAdapter.createTextNode(text), reference);
    },
    onItemPush() {
      if (parsing && ++open > MAX_OPEN_ELEMENTS) throw new NestingTooDeepError();
    },
    onItemPop() {
      open--;
    },
  };
  const parser = new Html5Parser<Htmlparser2TreeAdapterMap>({ treeAdapter });
  parser.tokenizer = new AttributeCappedTokenizer(parser.options, parser);
  try {
    parser.tokenizer.write(html, true);
  } finally {
    parsing = false;
  }
  return load(parser.document, { treeAdapter });
}

/** A DomHandler that counts the elements open at once and gives up past the ceiling. */
class NestingLimitedHandler extends DomHandler {
  private open = 0;

  constructor(
    private readonly ceiling = MAX_OPEN_ELEMENTS,
    options?: { xmlMode?: boolean },
  ) {
    super(undefined, options);
  }

  override onopentag(name: string, attribs: Record<string, string>): void {
    if (++this.open > this.ceiling) throw new NestingTooDeepError(this.ceiling);
    super.onopentag(name, attribs);
  }

  override onclosetag(): void {
    this.open--;
    super.onclosetag();
  }
}

/**
 * Parses an HTML fragment with htmlparser2, entities decoded. Throws NestingTooDeepError as soon
 * as more than {@link MAX_OPEN_ELEMENTS} elements are open at once.
 */
export function parseFragment(html: string): Document {
  const handler = new NestingLimitedHandler();
  new Parser(handler, { decodeEntities: true }).end(html);
  return handler.root;
}

/**
 * Parses an XML document (a feed) with htmlparser2 as cheerio's `xml` mode does. Throws
 * NestingTooDeepError as soon as more than {@link MAX_OPEN_XML_ELEMENTS} elements are open at once.
 */
export function parseXml(xml: string): Document {
  const handler = new NestingLimitedHandler(MAX_OPEN_XML_ELEMENTS, { xmlMode: true });
  new Parser(handler, { xmlMode: true, decodeEntities: true }).end(xml);
  return handler.root;
}
