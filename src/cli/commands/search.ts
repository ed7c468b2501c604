/** `salon search "query" [--k N] [--kind K] [--source SITE] [--json]`: the items GET /api/v1/search would return. */
import { loadConfig } from '../../config.js';
import { CONTENT_KINDS, type ContentKind } from '../../content/types.js';
import { normalizeSite } from '../../protocol/search.js';
import { DEFAULT_SEARCH_K, MAX_QUERY_CHARS, MAX_SEARCH_K } from '../../routes/search.js';
import { openCliSearch } from '../../search/cli-stack.js';
import type { ItemHit } from '../../search/types.js';
import { parseArgs, UsageError, wholeNumberOption, type Command } from '../command.js';
import { printable } from '../printable.js';

const USAGE = 'search "query" [--k N] [--kind K] [--source SITE] [--json] [--verbose]';

function usageError(message: string): number {
  console.error(`salon search: ${printable(message)}\nusage: salon ${USAGE}`);
  return 2;
}

function printHit(hit: ItemHit, n: number): void {
  // A stored title or body may hold terminal escapes or bidi controls: shown as escapes, as every CLI path does.
  console.log(`${String(n).padStart(2)}. ${hit.score.toFixed(3)}  ${printable(hit.id)}  ${printable(hit.title)}`);
  if (hit.url) console.log(`    ${printable(hit.url)}`);
  if (hit.snippet) console.log(`    ${printable(hit.snippet)}`);
}

const search: Command = {
  summary: 'search the indexed content (by meaning; by text when the embedder is down)',
  usage: USAGE,
  flags: ['k', 'kind', 'source', 'json', 'verbose'],
  async run(args) {
    const { positionals, options } = parseArgs(args, ['json', 'verbose']);
    const query = positionals.join(' ').trim();
    if (!query) return usageError('give a query, e.g. salon search "solar power"');
    if (query.length > MAX_QUERY_CHARS) return usageError(`the query is longer than ${MAX_QUERY_CHARS} characters`);
    let k: number;
    try {
      k = wholeNumberOption(options, 'k', 1, MAX_SEARCH_K) ?? DEFAULT_SEARCH_K;
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      return usageError(err.message);
    }
    const kind = options.get('kind');
    if (kind !== undefined && !CONTENT_KINDS.includes(kind as ContentKind)) return usageError(`--kind must be one of ${CONTENT_KINDS.join(', ')}`);
    const source = options.get('source');
    if (source !== undefined && (typeof source !== 'string' || normalizeSite(source) === null))
      return usageError(`--source must be a site's host name (example.com), got ${String(source)}`);

    const opened = openCliSearch(loadConfig(), 'off', options.has('verbose'));
    try {
      await opened.stack.indexer.load();
      const hits = await opened.stack.search.searchItems(query, { k, kind: kind as ContentKind | undefined, source });
      if (options.has('json')) for (const h of hits) console.log(JSON.stringify(h));
      else if (hits.length === 0) console.error('no matches');
      else hits.forEach((h, i) => printHit(h, i + 1));
      return 0;
    } finally {
      await opened.close();
    }
  },
};
export default search;
