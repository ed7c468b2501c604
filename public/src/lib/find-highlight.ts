/**
 * Highlights the words the room's find bar found in a message as shown, through the CSS Custom
 * Highlight API: ranges over the message's own text nodes, painted by `::highlight(salon-find)`
 * (salon-markdown's styles). Nothing is added to the message's DOM, so no user text is ever parsed
 * as HTML and lit's rendering of the message is untouched. Browsers without the API (Firefox
 * before 140) keep the message's outline only.
 */
import { locate } from './room-find.js';

/** The highlight's name in the page's registry (`::highlight(salon-find)`). */
export const FIND_HIGHLIGHT = 'salon-find';

interface Rendering extends Element {
  readonly updateComplete?: Promise<unknown>;
}

/** Calls that came after this one win: a late one must not paint over a newer match. */
let serial = 0;

function supported(): boolean {
  return typeof CSS !== 'undefined' && 'highlights' in CSS && typeof Highlight === 'function';
}

/** Highlights `query` in `item` (a `<salon-message-item>`) once it has rendered; resolves with how many places were marked. */
export async function highlightFound(item: Rendering, query: string): Promise<number> {
  const mine = ++serial;
  if (!supported()) return 0;
  await item.updateComplete;
  const shown = Array.from(item.shadowRoot?.querySelectorAll<Rendering>('salon-markdown') ?? []);
  await Promise.all(shown.map((el) => el.updateComplete));
  if (mine !== serial) return 0;
  const ranges: Range[] = [];
  for (const el of shown) {
    const root = el.shadowRoot;
    if (!root) continue;
    const nodes: Text[] = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.parentElement?.tagName !== 'STYLE') nodes.push(node as Text);
    for (const { start, end } of locate(
      nodes.map((n) => n.data),
      query,
    )) {
      const range = new Range();
      range.setStart(nodes[start.piece], start.offset);
      range.setEnd(nodes[end.piece], end.offset);
      ranges.push(range);
    }
  }
  CSS.highlights.set(FIND_HIGHLIGHT, new Highlight(...ranges));
  return ranges.length;
}

/** Removes the highlight (the find bar closed, or its match is gone). */
export function clearFoundHighlight(): void {
  serial++;
  if (supported()) CSS.highlights.delete(FIND_HIGHLIGHT);
}
