/**
 * What a source that refreshes is: `{kind: feed|youtube|hn, url?, list?, limit?, everyMinutes?}`,
 * checked here for the API, the CLI, the `SOURCES` variable and the `DATA_DIR/sources` file, and
 * named by a hash of its kind and target so the same source always gets the same id (two nodes
 * reading one configuration make one row, and adding a source twice is ERR_SOURCE_EXISTS).
 * Light on purpose: config.ts parses `SOURCES` with it.
 */
import { createHash } from 'node:crypto';
import { errors } from '../../errors.js';
import { hnStoryIdOf, normalizeUrl } from '../ids.js';
import type { SourceKind, SourceList } from '../../store/types.js';

export const SOURCE_KINDS: readonly SourceKind[] = ['feed', 'youtube', 'hn'];
export const SOURCE_LISTS: readonly SourceList[] = ['top', 'best', 'new'];
export const DEFAULT_EVERY_MINUTES = 60;
export const MAX_EVERY_MINUTES = 10_080;
export const MAX_SOURCE_LIMIT = 500;
/** Entries read per poll when the source sets no limit: a feed's first 50, an HN list's first 30. */
const DEFAULT_LIMITS = { feed: 50, youtube: 50, hnList: 30, hnStory: 1 } as const;

/** A checked source, before it is stored. */
export interface SourceSpec {
  kind: SourceKind;
  url: string | null;
  list: SourceList | null;
  limit: number;
  everyMinutes: number;
}

function bad(problem: string): never {
  throw new errors.ERR_BAD_REQUEST(problem);
}

function wholeIn(v: unknown, name: string, min: number, max: number): number {
  if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) bad(`${name} must be a whole number from ${min} to ${max}`);
  return v as number;
}

/**
 * Checks a source from the API or the CLI. A feed or YouTube source needs an http(s) `url`; an HN
 * source either a `list` (top, best, new) or the `url` of one story (`news.ycombinator.com/item?id=N`).
 * Throws ERR_BAD_REQUEST naming the problem.
 */
export function validateSourceSpec(raw: unknown): SourceSpec {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) bad('expected an object');
  const r = raw as Record<string, unknown>;
  const kind = r.kind as SourceKind;
  if (!SOURCE_KINDS.includes(kind)) bad(`kind must be one of ${SOURCE_KINDS.join(', ')}`);
  const everyMinutes = r.everyMinutes === undefined ? DEFAULT_EVERY_MINUTES : wholeIn(r.everyMinutes, 'everyMinutes', 1, MAX_EVERY_MINUTES);
  if (r.url !== undefined && typeof r.url !== 'string') bad('url must be a URL');
  const url = typeof r.url === 'string' ? normalizeUrl(r.url) : null;
  const list = r.list === undefined ? null : (r.list as SourceList);
  if (list !== null && !SOURCE_LISTS.includes(list)) bad(`list must be one of ${SOURCE_LISTS.join(', ')}`);
  if (kind === 'hn') {
    if ((url === null) === (list === null)) bad('an hn source takes either a list (top, best, new) or the url of one story');
    if (url !== null && hnStoryIdOf(url) === null) bad('an hn source url must be a news.ycombinator.com/item?id=N URL');
  } else {
    if (url === null) bad(`a ${kind} source needs a url`);
    if (list !== null) bad(`a ${kind} source takes no list`);
  }
  const fallback = kind === 'hn' ? (list ? DEFAULT_LIMITS.hnList : DEFAULT_LIMITS.hnStory) : DEFAULT_LIMITS[kind];
  const limit = r.limit === undefined ? fallback : wholeIn(r.limit, 'limit', 1, MAX_SOURCE_LIMIT);
  return { kind, url, list, limit, everyMinutes };
}

/** `src_` + 16 hex of sha256(kind and target): a source's id. */
export function sourceIdOf(spec: Pick<SourceSpec, 'kind' | 'url' | 'list'>): string {
  const target = spec.url ?? `list:${spec.list}`;
  return `src_${createHash('sha256').update(`${spec.kind}\n${target}`).digest('hex').slice(0, 16)}`;
}

/**
 * Parses a list of sources, one per line or `;`-separated: `kind target [everyMinutes]`, where the
 * target is a URL, or for `hn` a list name or a story URL (`feed https://example.com/rss 30`,
 * `hn top 15`). Blank lines and `#` comments are skipped. Throws Error naming `where` and the entry.
 */
export function parseSourceLines(text: string, where: string): SourceSpec[] {
  const specs: SourceSpec[] = [];
  const lines = text.split(/[\n;]/);
  lines.forEach((line, i) => {
    const entry = line.replace(/#.*$/, '').trim();
    if (!entry) return;
    const fields = entry.split(/\s+/);
    try {
      if (fields.length < 2 || fields.length > 3) throw new Error('expected "kind target [everyMinutes]"');
      const [kind, target, every] = fields;
      if (every !== undefined && !/^\d+$/.test(every)) throw new Error(`everyMinutes must be a whole number, got "${every}"`);
      const isList = kind === 'hn' && !/^https?:/i.test(target);
      specs.push(validateSourceSpec({ kind, ...(isList ? { list: target } : { url: target }), ...(every ? { everyMinutes: Number(every) } : {}) }));
    } catch (err) {
      throw new Error(`${where} entry ${i + 1} ("${entry.slice(0, 120)}"): ${(err as Error).message}`);
    }
  });
  return specs;
}
