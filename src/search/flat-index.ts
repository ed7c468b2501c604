/**
 * The exact vector index: L2-normalised float32 rows in one shared WebAssembly memory (see
 * layout.ts), scanned by the worker pool with the SIMD kernel. Each search splits the rows
 * between the pool's threads; each returns its top k, merged here. Rows are kept dense (a
 * removed row is replaced by the last one), so a scan is one contiguous sweep.
 */
import { randomUUID } from 'node:crypto';
import { errors } from '../errors.js';
import {
  MAX_PAGES,
  META_FLAGS,
  META_ROW_ID,
  META_SCOPE,
  WASM_PAGE_BYTES,
  makeLayout,
  makePass,
  packFlags,
  pagesForRows,
  queryOffset,
  rowOffset,
  rowsInPages,
  unpackFlags,
  type EncodedFilter,
  type Layout,
} from './layout.js';
import { MetaStats } from './meta-stats.js';
import { RwLock } from './rw-lock.js';
import type { ScanPool } from './scan-pool.js';
import { TopK } from './top-k.js';
import type { VectorEntry, VectorFilter, VectorHit, VectorIndex, VectorMeta } from './types.js';
import { checkEntries, checkK, checkQuery, normalized, normalizeInto } from './vectors.js';

export const DEFAULT_INITIAL_CAPACITY = 1024;
/** Below this many rows per thread, splitting a scan costs more in messages than it saves. */
export const DEFAULT_MIN_ROWS_PER_TASK = 2048;
/** Scratch slots (concurrent searches) at most; beyond, searches get ERR_SEARCH_BUSY. */
const MAX_SLOTS = 256;

export interface FlatIndexOptions {
  dimensions: number;
  /** The scan pool; shared by indexes of one process, closed by its owner. */
  pool: ScanPool;
  initialCapacity?: number;
  minRowsPerTask?: number;
}

export class FlatIndex implements VectorIndex {
  readonly dimensions: number;
  readonly layout: Layout;
  readonly stats = new MetaStats();
  private readonly pool: ScanPool;
  private readonly memory: WebAssembly.Memory;
  private readonly storeId = randomUUID();
  private readonly minRowsPerTask: number;
  private readonly lock = new RwLock();
  private readonly rowToSlot = new Map<number, number>();
  private readonly freeSlots: number[];
  private capacity: number;
  private f32!: Float32Array;
  private i32!: Int32Array;
  private count = 0;

  constructor(options: FlatIndexOptions) {
    const { dimensions, pool } = options;
    if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError(`FlatIndex: options.dimensions must be a positive integer, got ${dimensions}`);
    if (!pool) throw new TypeError('FlatIndex: options.pool is required');
    const initial = options.initialCapacity ?? DEFAULT_INITIAL_CAPACITY;
    if (!Number.isInteger(initial) || initial < 1) throw new RangeError(`FlatIndex: options.initialCapacity must be a positive integer, got ${initial}`);
    this.minRowsPerTask = options.minRowsPerTask ?? DEFAULT_MIN_ROWS_PER_TASK;
    if (!Number.isInteger(this.minRowsPerTask) || this.minRowsPerTask < 1) throw new RangeError(`FlatIndex: options.minRowsPerTask must be a positive integer, got ${this.minRowsPerTask}`);
    this.dimensions = dimensions;
    this.pool = pool;
    const slots = Math.min(MAX_SLOTS, pool.maxQueue + pool.threads);
    this.layout = makeLayout(dimensions, pool.threads, slots);
    this.freeSlots = Array.from({ length: slots }, (_, i) => slots - 1 - i);
    const pages = pagesForRows(this.layout, initial);
    if (pages > MAX_PAGES) throw new RangeError(`FlatIndex: options.initialCapacity ${initial} does not fit in 4 GiB at dimension ${dimensions}`);
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: MAX_PAGES, shared: true });
    this.capacity = rowsInPages(this.layout, pages);
    this.refreshViews();
  }

  get size(): number {
    return this.count;
  }

  has(rowId: number): boolean {
    return this.rowToSlot.has(rowId);
  }

  /** Bytes of vector data a full scan reads. */
  get scanBytes(): number {
    return this.count * this.dimensions * 4;
  }

  async upsert(entries: VectorEntry[]): Promise<void> {
    checkEntries(entries, this.dimensions);
    if (entries.length === 0) return;
    await this.lock.write(() => {
      const fresh = new Set(entries.filter((e) => !this.rowToSlot.has(e.rowId)).map((e) => e.rowId)).size;
      this.ensureCapacity(this.count + fresh);
      for (const e of entries) {
        let slot = this.rowToSlot.get(e.rowId);
        if (slot === undefined) {
          slot = this.count++;
          this.rowToSlot.set(e.rowId, slot);
        } else {
          this.forget(slot);
        }
        this.writeRow(slot, e);
      }
    });
  }

  async remove(rowIds: number[]): Promise<void> {
    if (rowIds.length === 0) return;
    await this.lock.write(() => {
      const words = this.layout.stride >> 2;
      for (const rowId of rowIds) {
        const slot = this.rowToSlot.get(rowId);
        if (slot === undefined) continue;
        this.forget(slot);
        this.rowToSlot.delete(rowId);
        const last = --this.count;
        if (slot !== last) {
          const from = rowOffset(this.layout, last) >> 2;
          this.i32.copyWithin(rowOffset(this.layout, slot) >> 2, from, from + words);
          this.rowToSlot.set(this.i32[this.metaWord(slot) + META_ROW_ID], slot);
        }
      }
    });
  }

  /** Exact top k by cosine similarity among rows passing `filter`, best first. */
  async search(query: Float32Array, k: number, filter?: VectorFilter): Promise<VectorHit[]> {
    checkQuery(query, this.dimensions);
    checkK(k);
    const enc = this.stats.encode(filter);
    return this.lock.read(async () => {
      const candidates = this.stats.candidates(enc);
      const rows = candidates ? this.slotsOf(candidates) : undefined;
      const total = rows ? rows.length : this.count;
      if (total === 0) return [];
      return this.scan(query, Math.min(k, total), enc, total, rows);
    });
  }

  private async scan(query: Float32Array, k: number, filter: EncodedFilter, total: number, rows?: Int32Array): Promise<VectorHit[]> {
    const slot = this.freeSlots.pop();
    if (slot === undefined) throw new errors.ERR_SEARCH_BUSY(`${this.layout.slots} searches in flight`);
    try {
      const q = queryOffset(this.layout, slot) >> 2;
      normalizeInto(query, this.f32, q);
      this.f32.fill(0, q + this.dimensions, q + this.layout.padded);
      const tasks = Math.max(1, Math.min(this.pool.threads, Math.floor(total / this.minRowsPerTask)));
      const parts = Array.from({ length: tasks }, (_, t) => {
        const start = Math.floor((total * t) / tasks);
        const end = Math.floor((total * (t + 1)) / tasks);
        const range = rows ? { start: 0, end: 0, rows: rows.subarray(start, end) } : { start, end };
        return this.pool.scan({ storeId: this.storeId, memory: this.memory, layout: this.layout, slot, task: t, k, filter, ...range });
      });
      const merged = new TopK(k);
      for (const r of await Promise.all(parts)) for (let i = 0; i < r.rowIds.length; i++) merged.push(r.rowIds[i], r.scores[i]);
      const { ids, scores } = merged.sorted();
      return Array.from(ids, (rowId, i) => ({ rowId, score: scores[i] }));
    } finally {
      this.freeSlots.push(slot);
    }
  }

  /** Whether a row passes a filter (main-thread check, e.g. of HNSW candidates), compiled once for many rows. */
  passing(filter: EncodedFilter): (rowId: number) => boolean {
    const pass = makePass(filter);
    return (rowId) => {
      const slot = this.rowToSlot.get(rowId);
      if (slot === undefined) return false;
      const m = this.metaWord(slot);
      return pass(this.i32[m + META_FLAGS], this.i32[m + META_SCOPE]);
    };
  }

  /**
   * Exact cosine similarity of `query` with each of `hits`' rows, best first; rows no longer in the
   * index are dropped. For approximate hits (the graph stores vectors in half precision).
   */
  rescore(query: Float32Array, hits: VectorHit[]): VectorHit[] {
    const q = normalized(query);
    // Hashed-feature queries (the local embedder's) are mostly zeros: visiting only the nonzero
    // elements reads a tenth of each row. Dense queries take the plain loop.
    const nonzero = nonzeroIndices(q);
    const out: VectorHit[] = [];
    for (const h of hits) {
      const slot = this.rowToSlot.get(h.rowId);
      if (slot === undefined) continue;
      const base = rowOffset(this.layout, slot) >> 2;
      const dot = nonzero ? sparseDot(q, nonzero, this.f32, base) : denseDot(q, this.f32, base);
      out.push({ rowId: h.rowId, score: Math.min(1, dot) });
    }
    return out.sort((a, b) => b.score - a.score || a.rowId - b.rowId);
  }

  /** Row ids in slot order (a snapshot). */
  rowIds(): number[] {
    return Array.from({ length: this.count }, (_, s) => this.i32[this.metaWord(s) + META_ROW_ID]);
  }

  /** Copies the (normalised) vectors of `rowIds` that still exist into `out`, packed; returns those ids. */
  copyVectors(rowIds: number[], out: Float32Array): number[] {
    const found: number[] = [];
    for (const rowId of rowIds) {
      const slot = this.rowToSlot.get(rowId);
      if (slot === undefined) continue;
      const from = rowOffset(this.layout, slot) >> 2;
      out.set(this.f32.subarray(from, from + this.dimensions), found.length * this.dimensions);
      found.push(rowId);
    }
    return found;
  }

  /** Resolves once no scan is in flight; the pool belongs to the caller. */
  async close(): Promise<void> {
    await this.lock.write(() => undefined);
  }

  private slotsOf(rowIds: number[]): Int32Array {
    const out = new Int32Array(rowIds.length);
    rowIds.forEach((r, i) => (out[i] = this.rowToSlot.get(r)!));
    return out.sort();
  }

  private metaWord(slot: number): number {
    return (rowOffset(this.layout, slot) >> 2) + this.layout.padded;
  }

  private writeRow(slot: number, e: VectorEntry): void {
    const base = rowOffset(this.layout, slot) >> 2;
    normalizeInto(e.vector, this.f32, base);
    this.f32.fill(0, base + this.dimensions, base + this.layout.padded);
    const scopeId = this.stats.internScope(e.meta.scope);
    const m = base + this.layout.padded;
    this.i32[m + META_FLAGS] = packFlags(e.meta);
    this.i32[m + META_SCOPE] = scopeId;
    this.i32[m + META_ROW_ID] = e.rowId;
    this.stats.add(e.rowId, e.meta, scopeId);
  }

  /** Takes the row in `slot` out of the statistics. */
  private forget(slot: number): void {
    const m = this.metaWord(slot);
    const meta: VectorMeta = { ...unpackFlags(this.i32[m + META_FLAGS]), scope: null };
    this.stats.delete(this.i32[m + META_ROW_ID], meta, this.i32[m + META_SCOPE]);
  }

  private ensureCapacity(rows: number): void {
    if (rows <= this.capacity) return;
    const maxRows = rowsInPages(this.layout, MAX_PAGES);
    if (rows > maxRows) throw new errors.ERR_INDEX_FULL(`${rows} vectors of dimension ${this.dimensions} exceed the 4 GiB WebAssembly memory (at most ${maxRows})`);
    const target = Math.min(maxRows, Math.max(rows, this.capacity * 2));
    const pages = pagesForRows(this.layout, target);
    this.memory.grow(pages - this.memory.buffer.byteLength / WASM_PAGE_BYTES);
    this.capacity = rowsInPages(this.layout, pages);
    this.refreshViews();
  }

  private refreshViews(): void {
    const buffer = this.memory.buffer as unknown as SharedArrayBuffer;
    this.f32 = new Float32Array(buffer);
    this.i32 = new Int32Array(buffer);
  }
}

/** Positions of `q`'s nonzero elements, or null when more than half are nonzero (a dense loop is then faster). */
function nonzeroIndices(q: Float32Array): Int32Array | null {
  let count = 0;
  for (let i = 0; i < q.length; i++) if (q[i] !== 0) count++;
  if (count * 2 > q.length) return null;
  const out = new Int32Array(count);
  for (let i = 0, j = 0; i < q.length; i++) if (q[i] !== 0) out[j++] = i;
  return out;
}

function sparseDot(q: Float32Array, nonzero: Int32Array, rows: Float32Array, base: number): number {
  let dot = 0;
  for (let j = 0; j < nonzero.length; j++) {
    const i = nonzero[j];
    dot += q[i] * rows[base + i];
  }
  return dot;
}

function denseDot(q: Float32Array, rows: Float32Array, base: number): number {
  let dot = 0;
  for (let i = 0; i < q.length; i++) dot += q[i] * rows[base + i];
  return dot;
}
