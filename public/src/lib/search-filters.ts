/** The search box's filters and where a hit leads: pure helpers, no DOM. */
import { itemPagePath } from '../../../src/protocol/content.js';
import type { SearchHit, SearchQuery } from './api.js';

/** The date filter's choices: how far back, in days (0: any time). */
export const DATE_RANGES = [
  { value: '', label: 'Any time', days: 0 },
  { value: 'day', label: 'Past day', days: 1 },
  { value: 'week', label: 'Past week', days: 7 },
  { value: 'month', label: 'Past month', days: 31 },
  { value: 'year', label: 'Past year', days: 366 },
] as const;

export const KIND_LABELS: Record<string, string> = { news: 'News', post: 'Post', video: 'Video' };

/** The filters as the box holds them ('' for none). */
export interface SearchFilters {
  kind: string;
  category: string;
  /** A DATE_RANGES value. */
  date: string;
  /** A site's host name. */
  source: string;
}

export const NO_FILTERS: SearchFilters = { kind: '', category: '', date: '', source: '' };

/** The API query for `q` under `filters`, dates counted back from `now`. */
export function searchQuery(q: string, filters: SearchFilters, k: number, now = Date.now()): SearchQuery {
  const days = DATE_RANGES.find((r) => r.value === filters.date)?.days ?? 0;
  return {
    q,
    k,
    kind: filters.kind || undefined,
    category: filters.category || undefined,
    since: days ? new Date(now - days * 86_400_000).toISOString() : undefined,
    source: filters.source || undefined,
  };
}

/** A hit's page in Salon: a post's page, a video's watch page, a story's room. */
export function hitHref(hit: Pick<SearchHit, 'id' | 'kind'>): string {
  return itemPagePath(hit);
}

/** `values` and `more` together, without blanks or repeats, sorted. */
export function mergeChoices(values: Iterable<string>, more: Iterable<string | null>): string[] {
  const all = new Set(values);
  for (const v of more) if (v) all.add(v);
  return [...all].sort((a, b) => a.localeCompare(b));
}
