/**
 * Search as the HTTP API shows it (`GET /api/v1/search`): the hit shape and what a site is, shared
 * by the server's search service and the browser's search box.
 */
import type { ContentKind } from './content.js';

/** An item found for a query (its chunks grouped back to it), best first in a result. */
export interface SearchHit {
  id: string;
  kind: ContentKind;
  title: string;
  url: string | null;
  score: number;
  snippet: string;
  /** ISO-8601, or null when the item has no date. */
  publishedAt: string | null;
  category: string | null;
  /** The host of `url` without `www.` (what `source=` filters by), or null without a web address. */
  site: string | null;
}

/** Longest host name (RFC 1035). */
export const MAX_SITE_CHARS = 253;
/** A host name as `source=` takes it: letters, digits, hyphens and dots (IDN hosts in their xn-- form). */
export const SITE_PATTERN = '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\\.?$';
const SITE = new RegExp(SITE_PATTERN);

/** `https://www.Example.com/a` → `example.com`; null for no URL or one that is not http(s). */
export function siteOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return normalizeSite(u.hostname);
  } catch {
    return null;
  }
}

/** A site as it is compared: lowercased, without a trailing dot or a leading `www.`; null when it is not a host name. */
export function normalizeSite(site: string): string | null {
  if (site.length === 0 || site.length > MAX_SITE_CHARS || !SITE.test(site)) return null;
  return site
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^www\./, '');
}

/** True when `site` is `wanted` or one of its subdomains (`news.example.com` is on `example.com`). */
export function onSite(site: string | null, wanted: string): boolean {
  return site !== null && (site === wanted || site.endsWith(`.${wanted}`));
}
