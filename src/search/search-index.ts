/**
 * The VectorIndex services.index holds: a TieredIndex created once the vectors' dimension is known
 * (a remote embedder learns it from its first answer), replaceable wholesale by `reset` for
 * `salon reindex`. Its scans run on a scan pool it shares with the process's other indexes
 * (`pool`), or on one of its own.
 */
import { FlatIndex } from './flat/flat-index.js';
import type { HnswParams } from './graph/hnsw-protocol.js';
import { SharedScanPool, type ScanPoolUser } from './flat/shared-scan-pool.js';
import type { ScanPool } from './flat/scan-pool.js';
import { TieredIndex, removeSavedGraph, type HnswMode, type TieredIndexOptions } from './tiered-index.js';
import type { ScanKernelChoice } from './flat/native-kernel.js';
import type { CopyEntry, RowHead, VectorEntry, VectorFilter, VectorHit, VectorIndex } from './types.js';
import { required, wholeNumber } from '../options.js';

export interface SearchIndexOptions {
  /** Embedder model; with the dimension it fingerprints a saved HNSW graph. */
  model: string;
  /** The dimension if known, else 0 (learnt from the first vectors). */
  dimensions: number;
  /** Scan worker threads (SEARCH_WORKERS), for a pool of its own. */
  threads: number;
  /** The scan pool shared with the process's other indexes (default: a pool of its own). */
  pool?: SharedScanPool;
  /** The exact scan's kernel (SEARCH_KERNEL; default auto). */
  kernel?: ScanKernelChoice;
  /** HNSW_THRESHOLD. */
  threshold: number;
  /** DATA_DIR: where the graph is saved. */
  dir?: string;
  hnswMode?: HnswMode;
  hnswParams?: Partial<HnswParams>;
  log?: TieredIndexOptions['log'];
}

export class SearchIndex implements VectorIndex {
  /** Started with the first vectors (by whichever index sharing it gets some first), so an app without content starts no threads. */
  private readonly pool: ScanPoolUser;
  private tiered: TieredIndex | null = null;
  private bulkDepth = 0;
  /** Releases of the holds taken for the bulk in progress. */
  private readonly releases: (() => void)[] = [];

  constructor(private readonly options: SearchIndexOptions) {
    required('SearchIndex', 'model', options.model);
    wholeNumber('SearchIndex', 'dimensions', options.dimensions, 0);
    wholeNumber('SearchIndex', 'threads', options.threads, 1);
    this.pool = (options.pool ?? new SharedScanPool({ threads: options.threads, kernel: options.kernel })).user();
  }

  /** The scan pool, once started (by this index or another sharing it); null before. */
  get scanPool(): ScanPool | null {
    return this.pool.started;
  }

  get dimensions(): number {
    return this.tiered?.dimensions ?? this.options.dimensions;
  }

  get size(): number {
    return this.tiered?.size ?? 0;
  }

  rowIds(): Int32Array {
    return this.tiered?.flat.rowIds() ?? new Int32Array(0);
  }

  /** The tiered index, once created (null before the first vector). */
  get current(): TieredIndex | null {
    return this.tiered;
  }

  /** Whether the HNSW graph answers as it should (TieredIndex.graphHealth); no graph needed is healthy. */
  get graphHealth(): TieredIndex['graphHealth'] {
    return this.tiered?.graphHealth ?? { ok: true, detail: 'flat' };
  }

  /** `flat`, `building` or `hnsw` (see TieredIndex.mode). */
  get mode(): TieredIndex['mode'] {
    return this.tiered?.mode ?? 'flat';
  }

  async upsert(entries: VectorEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.ensure(entries[0].vector.length).upsert(entries);
  }

  async copyRows(entries: CopyEntry[]): Promise<CopyEntry[]> {
    return this.tiered ? this.tiered.copyRows(entries) : entries;
  }

  async remove(rowIds: number[]): Promise<void> {
    await this.tiered?.remove(rowIds);
  }

  async search(query: Float32Array, k: number, filter?: VectorFilter): Promise<VectorHit[]> {
    return this.tiered ? this.tiered.search(query, k, filter) : [];
  }

  async searchMany(queries: Float32Array[], k: number, filter?: VectorFilter): Promise<VectorHit[][]> {
    return this.tiered ? this.tiered.searchMany(queries, k, filter) : queries.map(() => []);
  }

  heads(rowIds: number[]): (RowHead | undefined)[] {
    return this.tiered ? this.tiered.heads(rowIds) : rowIds.map(() => undefined);
  }

  rescore(query: Float32Array, hits: VectorHit[]): VectorHit[] {
    return this.tiered ? this.tiered.flat.rescore(query, hits) : [];
  }

  rescoreByRow(rowId: number, hits: VectorHit[]): VectorHit[] | null {
    return this.tiered ? this.tiered.flat.rescoreByRow(rowId, hits) : null;
  }

  cosinesOfRows(queries: number[], candidates: number[][]): (number | undefined)[][] | null {
    return this.tiered ? this.tiered.flat.cosinesOfRows(queries, candidates) : null;
  }

  copyVectors(rowIds: number[], out: Float32Array): number[] {
    return this.tiered ? this.tiered.flat.copyVectors(rowIds, out) : [];
  }

  async reserve(rows: number): Promise<void> {
    await this.tiered?.flat.reserve(rows);
  }

  visitVectors(rowIds: number[], visit: (i: number, vector: Float32Array) => void): number {
    return this.tiered ? this.tiered.flat.visitVectors(rowIds, visit) : 0;
  }

  /** Runs `fn` without switching flat ↔ HNSW midway (see TieredIndex.hold). */
  async bulk<T>(fn: () => Promise<T>): Promise<T> {
    if (this.bulkDepth++ === 0 && this.tiered) this.releases.push(this.tiered.hold());
    try {
      return await fn();
    } finally {
      if (--this.bulkDepth === 0) for (const release of this.releases.splice(0)) release();
    }
  }

  /**
   * Drops every vector and the graph, and deletes the saved graph so the next one is built from
   * the new vectors; the next upsert may bring another dimension.
   */
  async reset(): Promise<void> {
    const old = this.tiered;
    this.tiered = null;
    await old?.close();
    if (this.options.dir) await removeSavedGraph(this.options.dir);
  }

  /** Resolves when a graph build or load in progress has finished. */
  async settled(): Promise<void> {
    await this.tiered?.settled();
  }

  /** Saves the graph if it changed. */
  async save(): Promise<void> {
    await this.tiered?.save();
  }

  async close(): Promise<void> {
    const old = this.tiered;
    this.tiered = null;
    await old?.close();
    await this.pool.release();
  }

  private ensure(dimensions: number): TieredIndex {
    if (this.tiered) {
      if (this.tiered.dimensions !== dimensions) throw new RangeError(`vectors have ${dimensions} dimensions; the index holds ${this.tiered.dimensions}`);
      return this.tiered;
    }
    const pool = this.pool.pool();
    const tiered = new TieredIndex({
      flat: new FlatIndex({ dimensions, pool }),
      threshold: this.options.threshold,
      dir: this.options.dir,
      fingerprint: `${this.options.model}@${dimensions}`,
      mode: this.options.hnswMode,
      // One graph, built on every search thread at once: a search then asks one graph, not several.
      buildThreads: pool.threads,
      params: this.options.hnswParams,
      log: this.options.log,
    });
    this.tiered = tiered;
    if (this.bulkDepth > 0) this.releases.push(tiered.hold());
    return tiered;
  }
}
