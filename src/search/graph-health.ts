/**
 * /readyz's `hnsw` check: whether the HNSW graph of each vector index answers as it should. A graph
 * that failed (its worker died, its build failed) is not ready until a new one serves; searches
 * meanwhile go to the exact scan (TieredIndex.graphHealth). An index below its threshold needs no
 * graph and is ready.
 */
import type { ProviderHealth } from '../ai/types.js';
import { SearchIndex } from './search-index.js';
import type { VectorIndex } from './types.js';

/** One check over the named indexes (documents, memory): ready when every graph is. */
export function graphReadiness(indexes: Record<string, VectorIndex>): ProviderHealth {
  const each = Object.entries(indexes).map(([name, index]) => {
    const health = index instanceof SearchIndex ? index.graphHealth : { ok: true, detail: 'custom index' };
    return { ok: health.ok, line: `${name}: ${health.detail}` };
  });
  return { ok: each.every((e) => e.ok), provider: 'hnsw', detail: each.map((e) => e.line).join('; ') };
}
