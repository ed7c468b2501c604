/** Shared material for the search tests: seeded clustered vectors and an exact oracle. */
import { prng as rng } from '../../bench/synthetic-text.js';
import type { VectorEntry, VectorFilter, VectorHit, VectorMeta } from '../../src/search/types.js';

/** The seeded PRNG of the synthetic benchmarks, so failures reproduce. */
export { rng };

export function gaussian(rand: () => number): number {
  let u = 0;
  while (u === 0) u = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** n vectors from a mixture of `clusters` Gaussians (not uniform noise: real embeddings cluster). */
export function clustered(n: number, dim: number, clusters: number, seed: number, spread = 0.5): Float32Array[] {
  const rand = rng(seed);
  const centers = Array.from({ length: clusters }, () => Float32Array.from({ length: dim }, () => gaussian(rand)));
  return Array.from({ length: n }, () => {
    const c = centers[Math.floor(rand() * clusters) % clusters];
    return Float32Array.from({ length: dim }, (_, j) => c[j] + spread * gaussian(rand));
  });
}

/** A query near vector `v` (a small perturbation). */
export function near(v: Float32Array, seed: number, noise = 0.05): Float32Array {
  const rand = rng(seed);
  return Float32Array.from(v, (x) => x + noise * gaussian(rand));
}

const KINDS: VectorMeta['kind'][] = ['news', 'post', 'video', 'thread'];

/** Metadata that varies with the row, so every filter has something to keep and to drop. */
export function metaFor(i: number): VectorMeta {
  const conversation = i % 4 === 3;
  return {
    kind: conversation ? 'thread' : KINDS[i % 3],
    sourceType: conversation ? 'conversation' : 'document',
    scope: conversation ? `room_${i % 5}` : null,
    privileged: conversation && i % 8 === 7,
  };
}

export function entries(vectors: Float32Array[], firstRowId = 1): VectorEntry[] {
  return vectors.map((vector, i) => ({ rowId: firstRowId + i, vector, meta: metaFor(i) }));
}

function passes(meta: VectorMeta, f: VectorFilter = {}): boolean {
  if (f.kinds && !f.kinds.includes(meta.kind)) return false;
  if (f.sourceType && meta.sourceType !== f.sourceType) return false;
  if (f.scopes && (meta.scope === null || !f.scopes.includes(meta.scope))) return false;
  if (meta.privileged && !f.includePrivileged) return false;
  return true;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/** Exact brute force in plain JS doubles: the oracle. */
export function exact(rows: VectorEntry[], query: Float32Array, k: number, filter?: VectorFilter): VectorHit[] {
  return rows
    .filter((r) => passes(r.meta, filter))
    .map((r) => ({ rowId: r.rowId, score: cosine(r.vector, query) }))
    .sort((a, b) => b.score - a.score || a.rowId - b.rowId)
    .slice(0, k);
}

/** Share of the oracle's ids found in `got`. */
export function recall(got: VectorHit[], truth: VectorHit[]): number {
  if (truth.length === 0) return got.length === 0 ? 1 : 0;
  const ids = new Set(got.map((h) => h.rowId));
  return truth.filter((t) => ids.has(t.rowId)).length / truth.length;
}
