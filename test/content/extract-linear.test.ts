/**
 * Extraction's passes visit a page's nodes a bounded number of times each, whatever its shape: a
 * page of a million elements is within the fetch limit. The nodes are made to count the reads of
 * their `parent` and `children` (every walk up or down the tree goes through them), and the count
 * for a page four times as large must be about four times as large: a quadratic pass makes it
 * sixteen. No figure depends on the machine's speed.
 */
import type { AnyNode } from 'domhandler';
import { describe, expect, it } from 'vitest';
import { locateBody } from '../../src/content/extract/body.js';
import { extractArticle } from '../../src/content/extract/index.js';
import { wrapLooseText } from '../../src/content/extract/clean.js';
import { readMetadata } from '../../src/content/extract/metadata.js';
import { loadDocument } from '../../src/content/extract/nesting.js';
import { TextStats } from '../../src/content/extract/stats.js';
import { capText, textOf } from '../../src/content/extract/text.js';

const PROSE = 'The council met on Tuesday, and the vote, after a long debate, passed at last.';

/** Makes every node under `root` count the reads of its `parent` and `children`. */
function countVisits(root: AnyNode): { visits: number } {
  const counter = { visits: 0 };
  const stack: AnyNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    let parent = node.parent;
    Object.defineProperty(node, 'parent', {
      get: () => (counter.visits++, parent),
      set: (value: typeof parent) => (parent = value),
      configurable: true,
    });
    if (!('children' in node)) continue;
    let children = node.children;
    for (const child of children) stack.push(child);
    Object.defineProperty(node, 'children', {
      get: () => (counter.visits++, children),
      set: (value: typeof children) => (children = value),
      configurable: true,
    });
  }
  return counter;
}

/** Elements and text nodes under `root`. */
function nodeCount(root: AnyNode): number {
  return 'children' in root ? root.children.reduce((n, c) => n + 1 + nodeCount(c), 0) : 0;
}

/** Visits of locating the body of `html`, and the number of body nodes found. */
function locating(html: string): { visits: number; nodes: number } {
  const $ = loadDocument(html);
  const counter = countVisits($.root()[0]);
  const body = locateBody($, new TextStats());
  return { visits: counter.visits, nodes: body?.nodes.length ?? 0 };
}

describe('extraction visits each node a bounded number of times', () => {
  it('gathers a body of many same-class sections without comparing each with every one taken before', () => {
    // Five levels apart, so no common ancestor outscores them: the first is the top, the rest its peers.
    const section = `${'<div>'.repeat(4)}<div class="story"><p>${PROSE}</p><p>${PROSE}</p></div>${'</div>'.repeat(4)}`;
    const sections = (n: number) => `<html><body>${section.repeat(n)}</body></html>`;
    const small = locating(sections(1_000));
    const large = locating(sections(4_000));
    expect(small.nodes).toBe(1_000);
    expect(large.nodes).toBe(4_000);
    expect(large.visits).toBeLessThan(5 * small.visits);
  });

  it('reads a page’s metadata in a walk or two, not one for each selector', () => {
    // No <meta> byline, so every byline selector is asked too.
    const $ = loadDocument(`<html><head><title>A page</title></head><body>${`<div><p>${PROSE}</p></div>`.repeat(5_000)}</body></html>`);
    const nodes = nodeCount($.root()[0]);
    const counter = countVisits($.root()[0]);
    expect(readMetadata($).title).toBe('A page');
    expect(counter.visits).toBeLessThan(4 * nodes);
  });

  it('lays out no more of a body than the text cap keeps', () => {
    const visitsOf = (n: number) => {
      const $ = loadDocument(`<html><body><article>${`<p>${PROSE}</p>`.repeat(n)}</article></body></html>`);
      const article = $('article').toArray();
      const counter = countVisits($.root()[0]);
      const text = capText(textOf(article, 10_000), 10_000);
      return { visits: counter.visits, text };
    };
    const small = visitsOf(1_000);
    const large = visitsOf(4_000);
    expect(large.text).toBe(small.text);
    expect(small.text.length).toBeGreaterThan(9_000);
    expect(large.visits).toBe(small.visits);
  });

  it('wraps loose text beside blocks without reading all of the text under each run', () => {
    // Each <span> holds text, a paragraph and the next <span>: its last run is the rest of the chain.
    const chain = (depth: number) => `<div>${'<span>x<p>A paragraph.</p>'.repeat(depth)}</div>`;
    const perNode = (depth: number) => {
      const $ = loadDocument(`<html><body>${chain(depth).repeat(20)}</body></html>`);
      const nodes = nodeCount($.root()[0]);
      const counter = countVisits($.root()[0]);
      wrapLooseText($);
      return counter.visits / nodes;
    };
    expect(perNode(200)).toBeLessThan(2 * perNode(50));
  });

  it('lays out a table row of many cells without rereading the line so far at each cell', () => {
    // Asking a string being built for its end copies all of it into one piece first.
    const cells = 8_000;
    const $ = loadDocument(`<html><body><table><tr>${'<td>x'.repeat(cells)}</tr></table></body></html>`);
    const endsWith = Object.getOwnPropertyDescriptor(String.prototype, 'endsWith')!;
    let reread = 0;
    Object.defineProperty(String.prototype, 'endsWith', {
      ...endsWith,
      value(this: string, ...args: Parameters<string['endsWith']>) {
        reread += this.length;
        return (endsWith.value as string['endsWith']).apply(this, args);
      },
    });
    let text: string;
    try {
      text = textOf($('table').toArray());
    } finally {
      Object.defineProperty(String.prototype, 'endsWith', endsWith);
    }
    expect(text).toBe(Array(cells).fill('x').join(' '));
    expect(reread).toBeLessThan(10 * cells);
  });
});

/**
 * Runs `work` with Array's indexOf, lastIndexOf and splice counting the elements they scan or
 * shift: a sibling list searched or spliced once per sibling shows up here, where the tree's own
 * reads (countVisits) do not.
 */
function arrayWork<T>(work: () => T): { result: T; elements: number } {
  const proto = Array.prototype as unknown as Record<'indexOf' | 'lastIndexOf' | 'splice', (...args: unknown[]) => unknown>;
  const saved = { indexOf: proto.indexOf, lastIndexOf: proto.lastIndexOf, splice: proto.splice };
  let elements = 0;
  proto.indexOf = function (this: unknown[], ...args: unknown[]) {
    const at = saved.indexOf.apply(this, args) as number;
    elements += at < 0 ? this.length : at + 1;
    return at;
  };
  proto.lastIndexOf = function (this: unknown[], ...args: unknown[]) {
    const at = saved.lastIndexOf.apply(this, args) as number;
    elements += at < 0 ? this.length : this.length - at;
    return at;
  };
  proto.splice = function (this: unknown[], ...args: unknown[]) {
    const length = this.length;
    const start = Math.min(length, Math.max(0, Number(args[0] ?? 0) < 0 ? length + Number(args[0]) : Number(args[0] ?? 0)));
    elements += Math.max(0, length - start);
    return saved.splice.apply(this, args);
  };
  try {
    return { result: work(), elements };
  } finally {
    Object.assign(proto, saved);
  }
}

describe('hostile pages cost array work linear in their siblings', () => {
  const text = 'Real article text goes here. '.repeat(30).trim();
  // hostile-input.test.ts extracts these shapes at 400,000; here the work at two sizes says it is linear.
  const grows = (page: (n: number) => string, expected: (article: string) => void) => {
    const at = (n: number) => arrayWork(() => extractArticle(page(n)).text);
    const small = at(5_000);
    const large = at(20_000);
    expected(small.result);
    expected(large.result);
    // Four times the siblings: about four times the work; a pass per sibling over its siblings makes it sixteen.
    expect(large.elements).toBeLessThan(6 * small.elements);
  };

  it('drops an article’s boilerplate blocks without splicing their parent once per block', () => {
    grows(
      (n) =>
        `<html><body><article><p>${text}</p>${'<header>x</header>'.repeat(n)}<div>Advertisement<span class="share">Share</span></div></article></body></html>`,
      (article) => expect(article).toBe(text),
    );
  });

  it('fosters the text of open tables out of them without searching their parent for each', () => {
    grows(
      (n) => `<html><body><article><p>${text}</p>${'<table>x'.repeat(n)}</article></body></html>`,
      (article) => expect(article).toContain(text),
    );
  });

  it('wraps runs of loose text beside blocks without splicing the container once per run', () => {
    grows(
      (n) => `<html><body><article><p>${text}</p></article><div>${'Fish and chips.<hr>'.repeat(n)}</div></body></html>`,
      (article) => expect(article).toContain(text),
    );
  });
});
