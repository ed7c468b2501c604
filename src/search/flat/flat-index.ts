/**
 * The exact vector index: L2-normalised float32 rows in one shared WebAssembly memory (see
 * layout.ts), scanned by the worker pool with the SIMD kernel. Each search splits the rows
 * between the pool's threads; each returns its top k, merged here. Rows are kept dense (a
 * removed row is replaced by the last one), so a scan is one contiguous sweep.
 */
import { randomUUID } from 'node:crypto';
import { errors } from '../../errors.js';
import { sliceTurn } from '../../slice-turns.js';
import { instantiateKernel, type Kernel } from './kernel.js';
import { adviseHugePages, filterSpec, layoutSpec, requireNativeScan, scanTopNative } from './native-kernel.js';
import {
  BLOCK_ROWS,
  MAX_PAGES,
  META_FLAGS,
  META_GROUP,
  META_ROW_ID,
  META_SCOPE,
  WASM_PAGE_BYTES,
  flagTitle,
  makeLayout,
  makePass,
  packFlags,
  indicesOffset,
  pagesForRows,
  queryOffset,
  rowOffset,
  rowWord,
  rowsInPages,
  scoresOffset,
  unpackFlags,
  type EncodedFilter,
  type ScanResult,
  type Layout,
} from './layout.js';
import { Interner } from '../interner.js';
import { MetaStats } from '../meta-stats.js';
import { RwLock } from './rw-lock.js';
import type { ScanPool } from './scan-pool.js';
import { TopK } from './top-k.js';
import type { CopyEntry, RowHead, VectorEntry, VectorFilter, VectorHit, VectorIndex, VectorMeta } from '../types.js';
import { checkEntries, checkK, checkQuery, normalizeInto } from '../vectors.js';
import { required, wholeNumber } from '../../options.js';

export const DEFAULT_INITIAL_CAPACITY = 1024;
/** Below this many rows per thread, splitting a scan costs more in messages than it saves. */
export const DEFAULT_MIN_ROWS_PER_TASK = 2048;
/**
 * With the native kernel, a scan reading at most this many floats (2 MB: 256 rows at 2048
 * dimensions, ~680 at 768) runs on the calling thread: some tens of µs, less than a round trip to
 * a pool thread, which on a busy machine also waits for a core. A small thread's memory, a room's
 * own chunks.
 */
export const DEFAULT_INLINE_SCAN_FLOATS = 524_288;
/** Rows copyRows copies between two turns of the event loop (8 MB at 2048 dimensions). */
const COPY_SLICE = 1024;
/**
 * Rows upsert writes between two turns of the event loop (4 MB at 2048 dimensions): a fusion's
 * 3,000 new rows with their vectors held it 20–50 ms at once (docs/benchmarks.md, "Forty-ninth
 * session"). Searches wait for the write lock meanwhile, as for copyRows and remove.
 */
export const UPSERT_STEP_ROWS = 512;
/**
 * Rows remove takes out between two turns of the event loop (sliceTurn). Each moves the last row
 * into its gap and takes the row out of the metadata counts: 1,024 took 10–14 ms of the main
 * thread on the project VM, and that step ran in the caller's turn (with a deleted thread's hiding
 * transaction) and the next ones beside a deletion slice (docs/benchmarks.md, "Thirty-eighth
 * session").
 */
export const REMOVE_STEP_ROWS = 512;
/**
 * Bytes past the last row kept mapped ahead of the writes, on a scan thread (ScanPool.touch): a
 * row written into memory never touched before faults its pages on the event loop (a chat's memory
 * windows, 8 KB each, were a third of a busy server's page faults; docs/benchmarks.md).
 */
export const TOUCH_AHEAD_BYTES = 1 << 20;
/** Scratch slots (concurrent searches) at most; beyond, searches get ERR_SEARCH_BUSY. */
const MAX_SLOTS = 256;
/** The native kernel's filter fields that let every row pass. */
const ANY_ROW = { kindMask: 0, source: -1, includePrivileged: true, scopes: null } as const;

export interface FlatIndexOptions {
  dimensions: number;
  /** The scan pool; shared by indexes of one process, closed by its owner. */
  pool: ScanPool;
  initialCapacity?: number;
  minRowsPerTask?: number;
  /** Scans of at most this many floats run on the calling thread (native kernel only; 0: never). */
  inlineScanFloats?: number;
}

export class FlatIndex implements VectorIndex {
  readonly dimensions: number;
  readonly layout: Layout;
  readonly stats = new MetaStats();
  private readonly groups = new Interner();
  private readonly pool: ScanPool;
  private readonly memory: WebAssembly.Memory;
  private readonly storeId = randomUUID();
  private readonly minRowsPerTask: number;
  private readonly inlineScanFloats: number;
  private readonly lock = new RwLock();
  private readonly rowToSlot = new Map<number, number>();
  private readonly freeSlots: number[];
  /** The scratch slot of rescore, on the main thread only (no scan ever takes it). */
  private readonly rescoreSlot: number;
  /** The SIMD kernel instantiated on the main thread, for rescore. */
  private kernel?: Kernel;
  private capacity: number;
  private f32!: Float32Array;
  private i32!: Int32Array;
  private count = 0;
  /** Bytes from the start of memory known to be mapped: rows written, or touched ahead. */
  private mappedTo = 0;
  private touchingAhead = false;

  constructor(options: FlatIndexOptions) {
    const { dimensions, pool } = options;
    wholeNumber('FlatIndex', 'dimensions', dimensions, 1);
    required('FlatIndex', 'pool', pool);
    const initial = options.initialCapacity ?? DEFAULT_INITIAL_CAPACITY;
    wholeNumber('FlatIndex', 'initialCapacity', initial, 1);
    this.minRowsPerTask = options.minRowsPerTask ?? DEFAULT_MIN_ROWS_PER_TASK;
    wholeNumber('FlatIndex', 'minRowsPerTask', this.minRowsPerTask, 1);
    this.inlineScanFloats = options.inlineScanFloats ?? DEFAULT_INLINE_SCAN_FLOATS;
    wholeNumber('FlatIndex', 'inlineScanFloats', this.inlineScanFloats, 0);
    this.dimensions = dimensions;
    this.pool = pool;
    const slots = Math.min(MAX_SLOTS, pool.maxQueue + pool.threads);
    this.layout = makeLayout(dimensions, pool.threads, slots + 1);
    this.freeSlots = Array.from({ length: slots }, (_, i) => slots - 1 - i);
    this.rescoreSlot = slots;
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
    await this.lock.write(async () => {
      this.reserveFor(entries);
      for (let i = 0; i < entries.length; i++) {
        if (i > 0 && i % UPSERT_STEP_ROWS === 0) await sliceTurn();
        this.writeRow(this.slotFor(entries[i].rowId), entries[i]);
      }
    });
    this.touchAhead();
  }

  /** Keeps TOUCH_AHEAD_BYTES past the last row mapped, asking a scan thread once half of it is used. */
  private touchAhead(): void {
    const end = rowOffset(this.layout, this.count);
    this.mappedTo = Math.max(this.mappedTo, end);
    const size = this.memory.buffer.byteLength;
    const want = Math.min(end + TOUCH_AHEAD_BYTES, size);
    // Half a window at a time, or the rest of a memory smaller than that.
    if (this.touchingAhead || want <= this.mappedTo || (want - this.mappedTo < TOUCH_AHEAD_BYTES / 2 && want < size)) return;
    this.touchingAhead = true;
    void this.pool.touch(this.memory, this.mappedTo, want).finally(() => {
      this.touchingAhead = false;
      this.mappedTo = Math.max(this.mappedTo, want);
      // Rows written meanwhile may have used up what was just mapped.
      this.touchAhead();
    });
  }

  /** Room for the rows of `entries` not held yet (a row given twice takes one slot). */
  private reserveFor(entries: { rowId: number }[]): void {
    const fresh = new Set(entries.filter((e) => !this.rowToSlot.has(e.rowId)).map((e) => e.rowId)).size;
    this.ensureCapacity(this.count + fresh);
  }

  /** The slot a row is (re)written in: its own, its old contents forgotten, or the next free one. */
  private slotFor(rowId: number): number {
    let slot = this.rowToSlot.get(rowId);
    if (slot === undefined) {
      slot = this.count++;
      this.rowToSlot.set(rowId, slot);
    } else {
      this.forget(slot);
    }
    return slot;
  }

  /**
   * Rows taking the vector of rows held already: the stored row (normalised and padded) is copied
   * word for word, with no vector passed in or normalised again. Resolves to the entries whose
   * `from` is not held.
   */
  async copyRows(entries: CopyEntry[]): Promise<CopyEntry[]> {
    if (entries.length === 0) return [];
    return this.lock.write(async () => {
      this.reserveFor(entries);
      const missing: CopyEntry[] = [];
      for (let i = 0; i < entries.length; i++) {
        // Searches wait for the lock, but the event loop runs between slices: a fusion copies
        // 14,000 rows into memory never touched before (its page faults took 0.2–0.5 s at once).
        if (i > 0 && i % COPY_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
        const e = entries[i];
        const from = this.rowToSlot.get(e.from);
        if (from === undefined) {
          missing.push(e);
          continue;
        }
        const slot = this.slotFor(e.rowId);
        if (slot !== from) {
          const source = rowWord(this.layout, from);
          this.f32.copyWithin(rowWord(this.layout, slot), source, source + this.layout.padded);
        }
        this.writeMeta(slot, e.rowId, e.meta);
      }
      return missing;
    });
  }

  async remove(rowIds: number[]): Promise<void> {
    if (rowIds.length === 0) return;
    // More than a step: each in a turn of its own, the first too. A deleted thread's rows come
    // straight after the transaction that hid them, and its 10,000 held the event loop ~50 ms at once.
    const stepped = rowIds.length > REMOVE_STEP_ROWS;
    await this.lock.write(async () => {
      const words = this.layout.stride >> 2;
      for (let i = 0; i < rowIds.length; i++) {
        if (stepped && i % REMOVE_STEP_ROWS === 0) await sliceTurn();
        const rowId = rowIds[i];
        const slot = this.rowToSlot.get(rowId);
        if (slot === undefined) continue;
        this.forget(slot);
        this.rowToSlot.delete(rowId);
        const last = --this.count;
        if (slot !== last) {
          const from = rowWord(this.layout, last);
          this.i32.copyWithin(rowWord(this.layout, slot), from, from + words);
          this.rowToSlot.set(this.i32[this.metaWord(slot) + META_ROW_ID], slot);
        }
      }
    });
  }

  /** Exact top k by cosine similarity among rows passing `filter`, best first. */
  async search(query: Float32Array, k: number, filter?: VectorFilter): Promise<VectorHit[]> {
    checkQuery(query, this.dimensions);
    checkK(k);
    return this.lock.read(async () => {
      // Encoded under the lock: a scope's id is only good while the rows holding it are.
      const enc = this.stats.encode(filter);
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
      const q = queryOffset(this.layout, slot);
      this.writeVector(query, q);
      if (this.pool.kernel === 'native' && total * this.layout.padded <= this.inlineScanFloats) {
        const range = rows ? { rows } : { start: 0, end: total };
        const { rowIds, scores } = scanTopNative(this.i32, { ...layoutSpec(this.layout, q), k, ...filterSpec(filter), ...range });
        return Array.from(rowIds, (rowId, i) => ({ rowId, score: scores[i] }));
      }
      const tasks = Math.max(1, Math.min(this.pool.threads, Math.floor(total / this.minRowsPerTask)));
      // Refused whole, before any part is queued: parts of a refused search would only take
      // places in the queue from searches that can still be answered.
      if (this.pool.queueSize + tasks > this.pool.maxQueue) throw new errors.ERR_SEARCH_BUSY(`${this.pool.queueSize} scans queued`);
      const parts = Array.from({ length: tasks }, (_, t) => {
        const start = Math.floor((total * t) / tasks);
        const end = Math.floor((total * (t + 1)) / tasks);
        const range = rows ? { start: 0, end: 0, rows: rows.subarray(start, end) } : { start, end };
        return this.pool.scan({
          storeId: this.storeId,
          kernel: this.pool.kernel,
          memory: this.memory,
          layout: this.layout,
          slot,
          task: t,
          k,
          filter,
          ...range,
        });
      });
      // Every part settles before the slot and the read lock are given back: a part refused
      // ERR_SEARCH_BUSY must not free them while its siblings still write the slot's scores.
      const settled = await Promise.allSettled(parts);
      const refused = settled.find((r) => r.status === 'rejected');
      if (refused) throw refused.reason;
      const merged = new TopK(k);
      for (const r of settled as PromiseFulfilledResult<ScanResult>[])
        for (let i = 0; i < r.value.rowIds.length; i++) merged.push(r.value.rowIds[i], r.value.scores[i]);
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
   * index are dropped. For approximate hits (the graph stores vectors in eight bits). Scored on the
   * main thread with the pool's kernel, which reads each row in one sweep (the WebAssembly one is
   * about twice as fast as a scalar loop inside an ask here).
   */
  rescore(query: Float32Array, hits: VectorHit[]): VectorHit[] {
    checkQuery(query, this.dimensions);
    const q = queryOffset(this.layout, this.rescoreSlot);
    this.writeVector(query, q);
    return this.rescoreAt(q, hits);
  }

  /**
   * rescore with the vector of a row it holds as the query, copied inside the memory as it is
   * stored (already normalised and padded: nothing is checked or normalised again); null when the
   * row is not held.
   */
  rescoreByRow(rowId: number, hits: VectorHit[]): VectorHit[] | null {
    const slot = this.rowToSlot.get(rowId);
    if (slot === undefined) return null;
    const q = queryOffset(this.layout, this.rescoreSlot);
    const from = rowWord(this.layout, slot);
    this.f32.copyWithin(q >>> 2, from, from + this.layout.padded);
    return this.rescoreAt(q, hits);
  }

  /** rescore of the query written at byte offset `q`. */
  private rescoreAt(q: number, hits: VectorHit[]): VectorHit[] {
    const { layout } = this;
    if (this.pool.kernel === 'native') return this.rescoreNative(q, hits);
    const kernel = (this.kernel ??= instantiateKernel(this.memory));
    const indices = indicesOffset(layout, this.rescoreSlot, 0);
    const scores = scoresOffset(layout, this.rescoreSlot, 0);
    const out: VectorHit[] = [];
    for (let from = 0; from < hits.length; from += BLOCK_ROWS) {
      const block: number[] = [];
      for (const h of hits.slice(from, from + BLOCK_ROWS)) {
        const row = this.rowToSlot.get(h.rowId);
        if (row === undefined) continue;
        this.i32[(indices >>> 2) + block.length] = row;
        block.push(h.rowId);
      }
      kernel.gather(q, layout.rowsBase, indices, block.length, layout.stride, layout.d16, scores);
      block.forEach((rowId, i) => out.push({ rowId, score: Math.min(1, this.f32[(scores >>> 2) + i]) }));
    }
    return out.sort((a, b) => b.score - a.score || a.rowId - b.rowId);
  }

  /**
   * The benchmark floor over this index's rows (bench:search): salon-hnsw's plain AVX2 loop on
   * `threads` native threads, no pool, filter or top k. Not a search path.
   */
  floorScan(query: Float32Array, threads: number): { ms: number; best: number } {
    checkQuery(query, this.dimensions);
    const binding = requireNativeScan();
    const q = queryOffset(this.layout, this.rescoreSlot);
    this.writeVector(query, q);
    return binding.scanFloor(this.i32, { ...layoutSpec(this.layout, q), n: this.count }, threads);
  }

  /** rescore through the native kernel: every listed row, unfiltered, as one top-k of them all. */
  private rescoreNative(q: number, hits: VectorHit[]): VectorHit[] {
    const slots: number[] = [];
    for (const h of hits) {
      const slot = this.rowToSlot.get(h.rowId);
      if (slot !== undefined) slots.push(slot);
    }
    if (slots.length === 0) return [];
    const rows = Int32Array.from(new Set(slots));
    const { rowIds, scores } = scanTopNative(this.i32, { ...layoutSpec(this.layout, q), k: rows.length, ...ANY_ROW, rows });
    return Array.from(rowIds, (rowId, i) => ({ rowId, score: Math.min(1, scores[i]) }));
  }

  /** The heads of rows (their group and title flag), undefined for rows not held. */
  heads(rowIds: number[]): (RowHead | undefined)[] {
    return rowIds.map((rowId) => {
      const slot = this.rowToSlot.get(rowId);
      if (slot === undefined) return undefined;
      const m = this.metaWord(slot);
      return { group: this.groups.valueOf(this.i32[m + META_GROUP]), title: flagTitle(this.i32[m + META_FLAGS]) };
    });
  }

  /** Row ids in slot order (a snapshot; a plain loop: 100K rows through Array.from held the event loop ~6 ms). */
  rowIds(): Int32Array {
    const out = new Int32Array(this.count);
    const words = this.layout.stride >> 2;
    for (let s = 0, m = this.metaWord(0) + META_ROW_ID; s < out.length; s++, m += words) out[s] = this.i32[m];
    return out;
  }

  /** Copies the (normalised) vectors of `rowIds` that still exist into `out`, packed; returns those ids. */
  copyVectors(rowIds: ArrayLike<number>, out: Float32Array): number[] {
    const found: number[] = [];
    for (let i = 0; i < rowIds.length; i++) {
      const rowId = rowIds[i];
      const slot = this.rowToSlot.get(rowId);
      if (slot === undefined) continue;
      const from = rowWord(this.layout, slot);
      out.set(this.f32.subarray(from, from + this.dimensions), found.length * this.dimensions);
      found.push(rowId);
    }
    return found;
  }

  /**
   * VectorIndex.reserve: room for `rows` more rows, whose memory the pool's threads map meanwhile
   * (ScanPool.touch). Only an optimisation: rows added or removed in between change nothing.
   */
  async reserve(rows: number): Promise<void> {
    if (rows <= 0) return;
    const range = await this.lock.write(() => {
      this.ensureCapacity(this.count + rows);
      return [rowOffset(this.layout, this.count), Math.min(rowOffset(this.layout, this.count + rows), this.memory.buffer.byteLength)];
    });
    await this.pool.touch(this.memory, range[0], range[1]);
    this.mappedTo = Math.max(this.mappedTo, range[1]);
  }

  /** VectorIndex.visitVectors: each held row's vector as a view of the index's memory. */
  visitVectors(rowIds: number[], visit: (i: number, vector: Float32Array) => void): number {
    let visited = 0;
    for (let i = 0; i < rowIds.length; i++) {
      const slot = this.rowToSlot.get(rowIds[i]);
      if (slot === undefined) continue;
      const from = rowWord(this.layout, slot);
      visit(i, this.f32.subarray(from, from + this.dimensions));
      visited++;
    }
    return visited;
  }

  /**
   * VectorIndex.cosinesOfRows: the exact cosine of each query row with each of its candidate rows,
   * read where they are stored, in one native call (undefined for a row not held); null where the
   * pool scans with the WebAssembly kernel (the caller rescores one query at a time instead).
   */
  cosinesOfRows(queries: number[], candidates: number[][]): (number | undefined)[][] | null {
    if (this.pool.kernel !== 'native') return null;
    const held: number[] = [];
    const offsets = [0];
    const slots: number[] = [];
    /** Per query, per candidate: its place in `slots`, or -1 where a row is not held. */
    const places = queries.map((rowId, i) => {
      const q = this.rowToSlot.get(rowId);
      if (q === undefined) return candidates[i].map(() => -1);
      held.push(q);
      const at = candidates[i].map((c) => {
        const slot = this.rowToSlot.get(c);
        return slot === undefined ? -1 : slots.push(slot) - 1;
      });
      offsets.push(slots.length);
      return at;
    });
    const out = new Float32Array(slots.length);
    requireNativeScan().dotRows(new Int32Array(this.memory.buffer), this.layout, Int32Array.from(held), Int32Array.from(offsets), Int32Array.from(slots), out);
    return places.map((at) => at.map((j) => (j < 0 ? undefined : out[j])));
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
    return rowWord(this.layout, slot) + this.layout.padded;
  }

  /** Writes `vector` normalised at byte offset `at`, zeros up to the padded length (the kernels read whole steps). */
  private writeVector(vector: Float32Array, at: number): void {
    const base = at >>> 2;
    normalizeInto(vector, this.f32, base);
    this.f32.fill(0, base + this.dimensions, base + this.layout.padded);
  }

  private writeRow(slot: number, e: VectorEntry): void {
    this.writeVector(e.vector, rowOffset(this.layout, slot));
    this.writeMeta(slot, e.rowId, e.meta);
  }

  private writeMeta(slot: number, rowId: number, meta: VectorMeta): void {
    const scopeId = this.stats.internScope(meta.scope);
    const m = this.metaWord(slot);
    this.i32[m + META_FLAGS] = packFlags(meta);
    this.i32[m + META_SCOPE] = scopeId;
    this.i32[m + META_ROW_ID] = rowId;
    this.i32[m + META_GROUP] = this.groups.acquire(meta.group);
    this.stats.add(rowId, meta, scopeId);
  }

  /** Takes the row in `slot` out of the statistics and releases its group. */
  private forget(slot: number): void {
    const m = this.metaWord(slot);
    const meta: VectorMeta = { ...unpackFlags(this.i32[m + META_FLAGS]), scope: null };
    this.stats.delete(this.i32[m + META_ROW_ID], meta, this.i32[m + META_SCOPE]);
    this.groups.release(this.i32[m + META_GROUP]);
    this.i32[m + META_GROUP] = -1;
  }

  private ensureCapacity(rows: number): void {
    if (rows <= this.capacity) return;
    const maxRows = rowsInPages(this.layout, MAX_PAGES);
    if (rows > maxRows)
      throw new errors.ERR_INDEX_FULL(`${rows} vectors of dimension ${this.dimensions} exceed the 4 GiB WebAssembly memory (at most ${maxRows})`);
    const target = Math.min(maxRows, Math.max(rows, this.capacity * 2));
    const pages = pagesForRows(this.layout, target);
    this.memory.grow(pages - this.memory.buffer.byteLength / WASM_PAGE_BYTES);
    this.capacity = rowsInPages(this.layout, pages);
    this.refreshViews();
  }

  /** New views of the memory, after it was made or grown; the pages it grew by are advised too. */
  private refreshViews(): void {
    const buffer = this.memory.buffer as unknown as SharedArrayBuffer;
    this.f32 = new Float32Array(buffer);
    this.i32 = new Int32Array(buffer);
    // A row written into memory never touched costs a page fault every 4 KB, ~12 µs each on the
    // virtual machines measured (docs/benchmarks.md, "Thirtieth session"); a huge page, one per 2 MB.
    adviseHugePages(this.i32);
  }
}
