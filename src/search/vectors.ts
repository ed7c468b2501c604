/** Validation and normalisation shared by the index implementations. */
import { CONTENT_KINDS, SOURCE_TYPES } from '../content/types.js';
import type { VectorEntry } from './types.js';

/** Largest k a search accepts; asking for more is a programming error, not a big search. */
export const MAX_K = 10_000;
const MAX_ROW_ID = 2 ** 31 - 1;
const KINDS = new Set<string>([...CONTENT_KINDS, 'thread']);
const SOURCES = new Set<string>(SOURCE_TYPES);

function checkVector(v: Float32Array, dimensions: number, what: string): void {
  if (!(v instanceof Float32Array)) throw new TypeError(`${what} must be a Float32Array`);
  if (v.length !== dimensions) throw new RangeError(`${what} has ${v.length} dimensions; the index has ${dimensions}`);
  for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i])) throw new RangeError(`${what} holds a non-finite value at ${i}`);
}

/** Throws on the first bad entry, before anything is written. */
export function checkEntries(entries: VectorEntry[], dimensions: number): void {
  for (const e of entries) {
    if (!Number.isInteger(e.rowId) || e.rowId < 0 || e.rowId > MAX_ROW_ID)
      throw new RangeError(`rowId must be an integer from 0 to ${MAX_ROW_ID}, got ${e.rowId}`);
    checkVector(e.vector, dimensions, `vector of row ${e.rowId}`);
    const m = e.meta;
    if (!m || !KINDS.has(m.kind) || !SOURCES.has(m.sourceType) || typeof m.privileged !== 'boolean' || (m.scope !== null && typeof m.scope !== 'string')) {
      throw new TypeError(`row ${e.rowId} has invalid meta ${JSON.stringify(m)}`);
    }
  }
}

export function checkQuery(query: Float32Array, dimensions: number): void {
  checkVector(query, dimensions, 'query');
}

export function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) throw new RangeError(`k must be an integer from 1 to ${MAX_K}, got ${k}`);
}

/** Writes `v / |v|` into `out` at `offset` (a zero vector stays zero). */
export function normalizeInto(v: Float32Array, out: Float32Array, offset: number): void {
  let sq = 0;
  for (let i = 0; i < v.length; i++) sq += v[i] * v[i];
  const scale = sq > 0 ? 1 / Math.sqrt(sq) : 0;
  for (let i = 0; i < v.length; i++) out[offset + i] = v[i] * scale;
}
