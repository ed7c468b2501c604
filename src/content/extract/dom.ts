/** Small helpers over the domhandler tree cheerio parses into. */
import type { AnyNode, Element, ParentNode } from 'domhandler';

/** True for element nodes (including `<script>` and `<style>`, which domhandler types apart). */
export function isElement(node: AnyNode): node is Element {
  return node.type === 'tag' || node.type === 'script' || node.type === 'style';
}

/** The element children of `el`. */
export function childElements(el: Element): Element[] {
  return el.children.filter(isElement);
}

/**
 * Calls `visit` on every element under `root` (not `root` itself) in reverse document order, each
 * element after everything that follows it, without gathering them: an array of a million elements
 * was 10 MB beside the tree at a page's peak. `visit` must not change the tree.
 */
export function forEachElementReversed(root: ParentNode, visit: (el: Element) => void): void {
  const children = root.children;
  for (let i = children.length - 1; i >= 0; i--) {
    const child = children[i];
    if (!isElement(child)) continue;
    forEachElementReversed(child, visit);
    visit(child);
  }
}

/** Calls `visit` on every element under `root` (not `root` itself) that `keep` accepts, in document order. */
export function forEachElementWhere(root: ParentNode, keep: (el: Element) => boolean, visit: (el: Element) => void): void {
  for (const child of root.children) {
    if (isElement(child)) {
      if (keep(child)) visit(child);
      forEachElementWhere(child, keep, visit);
    }
  }
}

/** The elements under `root` (not `root` itself) that `keep` accepts, in document order. */
export function elementsWhere(root: ParentNode, keep: (el: Element) => boolean): Element[] {
  const out: Element[] = [];
  forEachElementWhere(root, keep, (el) => out.push(el));
  return out;
}

/** Raw text under `node`, whitespace kept. */
export function rawText(node: AnyNode): string {
  if (node.type === 'text') return node.data;
  if (!('children' in node)) return '';
  let out = '';
  for (const child of node.children) out += rawText(child);
  return out;
}

/** Whether any text under `node` is more than whitespace; stops at the first text that is. */
export function hasText(node: AnyNode): boolean {
  if (node.type === 'text') return node.data.trim() !== '';
  return 'children' in node && node.children.some(hasText);
}

/** Text under `node` with runs of whitespace collapsed and the ends trimmed. */
export function innerText(node: AnyNode): string {
  return rawText(node).replace(/\s+/g, ' ').trim();
}

/** The class and id of an element, lower-cased and joined, for pattern tests. */
export function classAndId(el: Element): string {
  return `${el.attribs.class ?? ''} ${el.attribs.id ?? ''}`.toLowerCase();
}

/** Whether `ancestor` contains `node` (or is it). */
export function contains(ancestor: AnyNode, node: AnyNode | null): boolean {
  for (let n: AnyNode | null = node; n; n = n.parent) if (n === ancestor) return true;
  return false;
}

/** Detaches `node` from its parent. */
export function removeNode(node: AnyNode): void {
  const parent = node.parent;
  if (!parent) return;
  const i = parent.children.indexOf(node as never);
  if (i >= 0) parent.children.splice(i, 1);
  if (node.prev) node.prev.next = node.next;
  if (node.next) node.next.prev = node.prev;
  node.parent = node.prev = node.next = null;
}

/** Detaches many nodes at once: one pass over each affected parent instead of one per node. */
export function removeNodes(nodes: Iterable<AnyNode>): void {
  const byParent = new Map<ParentNode, Set<AnyNode>>();
  for (const node of nodes) {
    if (!node.parent) continue;
    let set = byParent.get(node.parent);
    if (!set) byParent.set(node.parent, (set = new Set()));
    set.add(node);
  }
  for (const [parent, doomed] of byParent) {
    const kept = parent.children.filter((c) => !doomed.has(c));
    kept.forEach((c, i) => {
      c.prev = kept[i - 1] ?? null;
      c.next = kept[i + 1] ?? null;
    });
    for (const node of doomed) node.parent = node.prev = node.next = null;
    parent.children = kept;
  }
}
