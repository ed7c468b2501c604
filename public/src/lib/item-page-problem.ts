/**
 * What an item's own page (`/post`, `/watch`) shows instead of the item: why it cannot show it, and
 * where to go — the item's own page when it is another kind, and the page's listing.
 */
import { html, nothing, type TemplateResult } from 'lit';
import { itemPagePath } from '../../../src/protocol/content.js';
import type { ContentKind } from '../../../src/protocol/content.js';
import type { ApiError, ContentDetail } from './api.js';

/** The kind of item a page shows, and its listing. */
export interface ItemPageKind {
  kind: ContentKind;
  /** "post", "video": in "No such post", "Not a video". */
  noun: string;
  listHref: string;
  listLabel: string;
}

function problem(page: ItemPageKind, heading: string, message: string, elsewhere?: string): TemplateResult {
  return html`<div role="alert">
    <h1>${heading}</h1>
    <p class="error">${message}</p>
    <p>${elsewhere ? html`<a href=${elsewhere}>Open it</a> · ` : nothing}<a href=${page.listHref}>${page.listLabel}</a></p>
  </div>`;
}

/** The page's problem for the load's `error` or an `item` of another kind; null when the item (or its loading) is to be shown. */
export function itemPageProblem(page: ItemPageKind, error: ApiError | null, item: ContentDetail | null): TemplateResult | null {
  // The server's 404 repeats the id it was asked for, the address's text: anyone's words, so not shown.
  if (error?.status === 404) return problem(page, `No such ${page.noun}`, `Nothing is stored under this address: the ${page.noun} may have been removed.`);
  if (error) return problem(page, error.status === 400 ? `No such ${page.noun}` : `Could not load this ${page.noun}`, error.message);
  if (item && item.kind !== page.kind) return problem(page, `Not a ${page.noun}`, `“${item.title}” is not a ${page.noun}.`, itemPagePath(item));
  return null;
}
