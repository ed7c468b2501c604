/**
 * Whether the HNSW graph of each vector index answers as it should, for `/readyz`'s search line and
 * the `salon_search_graph_failed` gauge. A graph that failed (its worker died, its build failed)
 * stays failed until a new one serves; searches meanwhile go to the exact scan
 * (TieredIndex.graphHealth). An index below its threshold needs no graph and is fine.
 */
import { SearchIndex } from './search-index.js';
import type { VectorIndex } from './types.js';

/** The graph of one index: `ok` false from its failure until a new graph serves. */
export function indexGraphHealth(index: VectorIndex): { ok: boolean; detail: string } {
  return index instanceof SearchIndex ? index.graphHealth : { ok: true, detail: 'custom index' };
}

/** The named indexes' graphs (documents, memory): ok when every one is; the detail names each. */
export function graphHealth(indexes: Record<string, VectorIndex>): { ok: boolean; detail: string } {
  const each = Object.entries(indexes).map(([name, index]) => {
    const health = indexGraphHealth(index);
    return { ok: health.ok, line: `${name}: ${health.detail}` };
  });
  return { ok: each.every((e) => e.ok), detail: each.map((e) => e.line).join('; ') };
}
