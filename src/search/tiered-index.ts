/**
 * The VectorIndex app.ts uses: the exact flat index always holds every vector (it is also the
 * source for building the graph); above `threshold` vectors an HNSW graph (graph/hnsw-graph.ts), built off the event loop in workers from the flat rows or loaded from DATA_DIR
 * when the saved files match, then searched on the main thread, answers unselective searches. Selective filters (a room's or thread's own rows, < 10 % of the index) are answered by
 * an exact scan of that subset: a filtered graph search collapses when most neighbours are filtered out.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { FlatIndex } from './flat/flat-index.js';
import type { HnswFileFacts, HnswParams } from './graph/hnsw-protocol.js';
import { HnswGraph } from './graph/hnsw-graph.js';
import { DEFAULT_HNSW_PARAMS, GRAPH_ENCODING } from './graph/hnsw-worker-client.js';
import type { CopyEntry, RowHead, VectorEntry, VectorFilter, VectorHit, VectorIndex } from './types.js';
import { checkK, checkQuery } from './vectors.js';
import { CountedSet } from './counted-set.js';
import type { Logger } from '../logger.js';
import { required, wholeNumber } from '../options.js';

/** Filters passing fewer than this fraction of rows are answered by an exact subset scan. */
export const SELECTIVE_FRACTION = 0.1;
/**
 * A scope filter passing at most this many rows is answered by an exact scan of them (the flat
 * index lists a scope's rows) however large a share they are: at 2048 dimensions the native kernel
 * reads that many listed rows in about a millisecond on two threads, and the answer is exact.
 */
export const EXACT_SCAN_ROWS = 2048;
/** The graph is dropped when the count falls below threshold × this (hysteresis against flapping). */
export const DOWNSHIFT_FACTOR = 0.9;
/** Vectors sent per message while building: ~1.5 MB at 768 dims, about a millisecond of main-thread copying. */
export const BUILD_BATCH = 512;
/**
 * The buffer a graph's batches are copied into, one after another, shared with the graph's worker,
 * which reads it in place (HnswWorkerClient.add): a batch costs the event loop one copy into memory
 * it has touched before. A fresh 1.5 MB array per batch, copied again to be transferred, took page
 * faults on every batch: while a 100,000-vector graph was built the loop's delay p99 was ~10 ms on
 * a slow VM.
 */
function batchBuffer(rows: number, dimensions: number): Float32Array {
  return new Float32Array(new SharedArrayBuffer(Math.max(1, Math.min(BUILD_BATCH, rows)) * dimensions * 4));
}

/** Quiet time after the last change before the graph is saved. */
export const DEFAULT_SAVE_DELAY_MS = 30_000;
/**
 * A batch adding more rows than this to a graph on the main thread rebuilds the graph in its worker
 * instead (exact scans meanwhile): an add costs ~0.3–1 ms at 768 dimensions and more at 2048, so
 * a fused thread's 17,000 chunks would be many seconds of the event loop's time.
 */
export const MAIN_THREAD_ADD_LIMIT = 1_000;
/**
 * Rows sent to the graph and not linked yet that a graph search still scores exactly on the main
 * thread; with more waiting, searches are exact scans on the scan threads until the graph catches
 * up. A serving graph links a few hundred rows a second at 2048 dimensions while a bulk ingest
 * embeds ~2,000 chunks a second, each batch under MAIN_THREAD_ADD_LIMIT: 19,200 rows waiting held
 * the event loop 84–274 ms a search.
 */
export const MAX_UNLINKED_RESCORED = 1_000;
/**
 * A graph that fails (its worker dies, its build fails) is rebuilt at once the first time; failing
 * again, it waits this long before the next rebuild, doubling with each failure in a row up to
 * GRAPH_RETRY_MAX_MS, exact scans answering meanwhile: a worker that dies at every build must not
 * keep the cores building.
 */
export const GRAPH_RETRY_BASE_MS = 5_000;
export const GRAPH_RETRY_MAX_MS = 10 * 60_000;
/** A failure after a graph served this long (none failing meanwhile) starts the count of failures in a row again. */
export const GRAPH_STABLE_MS = GRAPH_RETRY_MAX_MS;

/** How long the rebuild after the `failures`-th failure in a row waits. */
export function graphRetryDelay(failures: number): number {
  return failures <= 1 ? 0 : Math.min(GRAPH_RETRY_MAX_MS, GRAPH_RETRY_BASE_MS * 2 ** (failures - 2));
}

/** Rebuild the graph once deleted elements outnumber this fraction of the live ones. */
export const TOMBSTONE_REBUILD_FRACTION = 0.5;
/** Candidates asked of the graph per expected survivor of a filter (the pass rate is an estimate). */
const OVERFETCH_MARGIN = 2;
/** Most candidates asked of the graph when a filter needs over-fetching. */
const MAX_OVERFETCH = 2000;
/**
 * Most candidates (queries × list size) a search asks of a graph on the main thread; a larger one
 * is an exact scan on the scan threads. The graph's search time grows with its list size and holds
 * the event loop, which every room shares: 1.4 ms at a list of 1,024 and 3.9 ms at 2,048 in 100,000
 * rows of 768 dimensions, where the scan threads took 6.2 ms but left the loop free
 * (docs/benchmarks.md, "Fifty-first session").
 */
export const MAIN_THREAD_MAX_CANDIDATES = 1024;
const FILE_NAME = 'vectors.hnsw';

/** The saved graph's path in `dir`; its sidecar is `<path>.json`. */
export const hnswFilePath = (dir: string): string => join(dir, FILE_NAME);

/** Deletes the saved graph and its sidecar (and any graph an older version saved in shards) from `dir`. */
export async function removeSavedGraph(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.filter((n) => n === FILE_NAME || n.startsWith(`${FILE_NAME}.`)).map((n) => rm(join(dir, n), { force: true })));
}

export type HnswMode = 'auto' | 'off';

export interface TieredIndexOptions {
  flat: FlatIndex;
  /** Vectors above which the graph is used (HNSW_THRESHOLD). */
  threshold: number;
  /** Where the graph is saved; unset: never saved or loaded. */
  dir?: string;
  /** Identifies where the vectors came from (embedder model and dimension). */
  fingerprint: string;
  /** `auto`: load a matching saved graph or build one when needed; `off`: exact scans only (one-shot CLI searches). */
  mode?: HnswMode;
  /** Native threads the graph is built with (default 1; the app uses SEARCH_WORKERS). */
  buildThreads?: number;
  params?: Partial<HnswParams>;
  saveDelayMs?: number;
  log?: Logger;
}

export class TieredIndex implements VectorIndex {
  readonly flat: FlatIndex;
  /** Searches answered by each structure (for tests and troubleshooting). */
  readonly searches = { flat: 0, hnsw: 0 };
  private readonly options: TieredIndexOptions;
  private graph: HnswGraph | null = null;
  /** A graph being built or loaded; mutations are forwarded to it in order. */
  private pendingGraph: HnswGraph | null = null;
  private starting: Promise<void> | null = null;
  private bulkDepth = 0;
  private tombstones = 0;
  /**
   * Rows sent to the graph (or the one being built) that it has not linked yet: an add runs beside
   * the serving graph's searches (salon-hnsw's LockedSearch), which score these exactly besides.
   * Counted: a row written again while its first add is in flight stays unlinked until its last
   * add is applied (the graph holds its old vector meanwhile). A new one for each graph, so adds
   * still settling into a dropped graph do not touch the next one's.
   */
  private unlinked = new CountedSet<number>();
  private saveTimer: NodeJS.Timeout | null = null;
  private dirty = false;
  /** Changes were forwarded to the pending graph, so a loaded graph differs from its file. */
  private changedWhilePending = false;
  private closed = false;
  /** The dropped graph a failed search was last logged for (its other searches under way are not). */
  private failedSearchGraph: HnswGraph | null = null;
  /** Failures of the graph in a row (a worker died, a build failed), for the rebuild's backoff. */
  private failures = 0;
  /** The last failure, kept until a graph serves again: said in /readyz's `search` detail and the `salon_search_graph_failed` gauge. */
  private failure: { reason: string; at: number } | null = null;
  /** No graph is started before this time (Date.now()) after a failure. */
  private retryAt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  /** When the last graph began to serve, if none failed since. */
  private healthySince: number | null = null;

  constructor(options: TieredIndexOptions) {
    wholeNumber('TieredIndex', 'threshold', options.threshold, 0);
    required('TieredIndex', 'fingerprint', options.fingerprint);
    this.options = { mode: 'auto', saveDelayMs: DEFAULT_SAVE_DELAY_MS, ...options };
    this.flat = options.flat;
  }

  get dimensions(): number {
    return this.flat.dimensions;
  }

  get size(): number {
    return this.flat.size;
  }

  /** Which structure answers unselective searches now. */
  get mode(): 'flat' | 'building' | 'hnsw' {
    return this.graph ? 'hnsw' : this.pendingGraph ? 'building' : 'flat';
  }

  /**
   * Whether the graph answers as it should (/readyz): not from a failure (its worker died, its build
   * failed) until a new graph serves, searches going to the exact scan meanwhile.
   */
  get graphHealth(): { ok: boolean; detail: string } {
    const failure = this.failure;
    if (!failure) return { ok: true, detail: this.mode };
    const times = this.failures > 1 ? `, ${this.failures} times in a row` : '';
    const wait = Math.max(0, this.retryAt - Date.now());
    const next = this.starting ? 'rebuilding it' : `rebuilding it in ${Math.ceil(wait / 1000)} s`;
    return { ok: false, detail: `the HNSW graph failed at ${new Date(failure.at).toISOString()} (${failure.reason})${times}; ${next}, exact scans meanwhile` };
  }

  /** Whether the graph in use is searched on the main thread (after its build or load), not in workers. */
  get graphOnMainThread(): boolean {
    return this.graph?.onMainThread ?? false;
  }

  /** The search list size (efSearch) the graph is searched with: its own, else the one a graph will be built with. */
  get efSearch(): number {
    return this.graph?.params.efSearch ?? this.options.params?.efSearch ?? DEFAULT_HNSW_PARAMS.efSearch;
  }

  /** Changes the graph's search list size (efSearch) from now on; a no-op without a graph. */
  setEfSearch(ef: number): void {
    this.graph?.setEfSearch(ef);
  }

  /** Resolves when a graph build or load in progress has finished and the graph has applied every change sent to it. */
  async settled(): Promise<void> {
    while (this.starting) await this.starting;
    await this.graph?.flush().catch(() => undefined);
  }

  /**
   * Defers switching flat ↔ HNSW until the returned release is called, so a bulk load crossing
   * the threshold builds (or loads) the graph once, at the end.
   */
  hold(): () => void {
    this.bulkDepth++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.bulkDepth--;
      this.checkSwitch();
    };
  }

  async upsert(entries: VectorEntry[]): Promise<void> {
    await this.flat.upsert(entries);
    this.added(entries.map((e) => e.rowId));
  }

  /** Rows taking the vectors of rows held already (FlatIndex.copyRows); the graph follows as for upsert. */
  async copyRows(entries: CopyEntry[]): Promise<CopyEntry[]> {
    const missing = await this.flat.copyRows(entries);
    const gone = new Set(missing.map((e) => e.rowId));
    this.added(entries.filter((e) => !gone.has(e.rowId)).map((e) => e.rowId));
    return missing;
  }

  /** The graph follows rows the flat index just took: added to it, or rebuilt in its worker when they are many. */
  private added(rowIds: number[]): void {
    if (rowIds.length === 0) return;
    if (this.graph?.onMainThread && rowIds.length > MAIN_THREAD_ADD_LIMIT) {
      this.options.log?.info({ vectors: rowIds.length }, `rebuilding the HNSW index in its worker: ${rowIds.length} vectors added at once`);
      this.dropGraph();
      return;
    }
    const target = this.graph ?? this.pendingGraph;
    if (target) {
      for (const id of rowIds) this.unlinked.add(id);
      void this.forwardUpsert(target, rowIds);
    }
    this.changed(target);
  }

  async remove(rowIds: number[]): Promise<void> {
    await this.flat.remove(rowIds);
    const target = this.graph ?? this.pendingGraph;
    if (target) {
      target.remove(rowIds).then(
        (n) => (this.tombstones += n),
        (err) => this.graphFailed(target, err),
      );
    }
    this.changed(target);
  }

  async search(query: Float32Array, k: number, filter?: VectorFilter): Promise<VectorHit[]> {
    return (await this.searchMany([query], k, filter))[0];
  }

  /** search for several queries at once (one message per graph worker for all of them). */
  async searchMany(queries: Float32Array[], k: number, filter?: VectorFilter): Promise<VectorHit[][]> {
    for (const q of queries) checkQuery(q, this.dimensions);
    checkK(k);
    const graph = this.graph;
    const exactAll = () => Promise.all(queries.map((q) => this.exact(q, k, filter)));
    // A graph taking a few rows on the main thread is searched as it is (the rows it has not
    // linked yet are scored exactly below); one being moved or rebuilt, or far behind, is not.
    if (!graph || (graph.busy && !graph.searchableWhileChanging) || this.unlinked.size > MAX_UNLINKED_RESCORED) return exactAll();
    const enc = this.flat.stats.encode(filter);
    const fraction = this.flat.stats.fraction(enc);
    // A scope (a room's or a thread's rows) is searched in the graph too when it holds most of the
    // index: conversation memory is often one long thread.
    if (fraction < SELECTIVE_FRACTION || (enc.scopes && fraction * this.flat.size <= EXACT_SCAN_ROWS)) return exactAll();
    const fetch = fraction >= 1 ? k : Math.min(MAX_OVERFETCH, Math.ceil((k / fraction) * OVERFETCH_MARGIN));
    // Too few candidates to expect k passing (a large k, a filter passing a fifth): the exact scan
    // below would answer after a graph search of efSearch `fetch` on the event loop (~10–30 ms).
    if (fetch * fraction < k) return exactAll();
    if (graph.onMainThread && queries.length * fetch > MAIN_THREAD_MAX_CANDIDATES) return exactAll();
    let found: VectorHit[][];
    try {
      found = await graph.searchMany(queries, fetch);
    } catch (err) {
      // A graph still in its worker (its move to the main thread failed) fails a search under way
      // when it is dropped or its worker dies: the exact scan answers instead, with the same filter.
      this.graphSearchFailed(graph, err);
      return exactAll();
    }
    // Encoded again: scopes that lost their last row during the graph's search are forgotten.
    const passes = this.flat.passing(this.flat.stats.encode(filter));
    const unlinked = [...this.unlinked.values()].filter(passes);
    return Promise.all(
      found.map((all, i) => {
        const linked = all.filter((h) => passes(h.rowId) && !this.unlinked.has(h.rowId));
        const hits = this.flat.rescore(queries[i], unlinked.length ? [...linked, ...unlinked.map((rowId) => ({ rowId, score: 0 }))] : linked);
        // Fewer than k survivors while more rows pass: the estimate was off; the exact scan is right.
        if (hits.length < k && hits.length < this.flat.size * fraction) return this.exact(queries[i], k, filter);
        this.searches.hnsw++;
        return hits.slice(0, k);
      }),
    );
  }

  heads(rowIds: number[]): (RowHead | undefined)[] {
    return this.flat.heads(rowIds);
  }

  private exact(query: Float32Array, k: number, filter?: VectorFilter): Promise<VectorHit[]> {
    this.searches.flat++;
    return this.flat.search(query, k, filter);
  }

  /**
   * Saves the graph now if it changed since the last save. The worker handles messages in order,
   * so the save follows every change already sent, and the facts describe exactly those rows.
   */
  async save(): Promise<void> {
    const graph = this.graph;
    if (!graph || !this.options.dir || !this.dirty) return;
    this.dirty = false;
    await graph.save(this.path(), this.facts(graph));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    // Terminating the pending graph's worker ends a build in progress (its next add rejects).
    await this.pendingGraph?.close();
    await this.settled().catch(() => undefined);
    await this.save().catch((err) => this.options.log?.warn({ err }, 'saving the HNSW index failed'));
    await this.graph?.close();
    this.graph = null;
    await this.flat.close();
  }

  private path(): string {
    return hnswFilePath(this.options.dir!);
  }

  private facts(graph: HnswGraph): HnswFileFacts {
    return {
      dimensions: this.dimensions,
      fingerprint: this.options.fingerprint,
      count: this.size,
      checksum: this.flat.stats.checksum(),
      m: graph.params.m,
      efConstruction: graph.params.efConstruction,
      encoding: GRAPH_ENCODING,
    };
  }

  private changed(target: HnswGraph | null): void {
    if (target && target === this.pendingGraph) this.changedWhilePending = true;
    if (this.graph) {
      this.dirty = true;
      if (this.tombstones > this.flat.size * TOMBSTONE_REBUILD_FRACTION) {
        this.options.log?.info({ deleted: this.tombstones }, `rebuilding the HNSW index: ${this.tombstones} deleted elements`);
        this.dropGraph();
      } else this.scheduleSave();
    }
    this.checkSwitch();
  }

  private scheduleSave(): void {
    if (!this.options.dir || this.closed) return;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      this.save().catch((err) => this.options.log?.warn({ err }, 'saving the HNSW index failed'));
    }, this.options.saveDelayMs);
    this.saveTimer.unref();
  }

  private checkSwitch(): void {
    if (this.bulkDepth > 0 || this.closed || this.options.mode === 'off') return;
    const { threshold } = this.options;
    if (this.size > threshold && !this.graph && !this.starting) {
      const wait = this.retryAt - Date.now();
      if (wait > 0) return this.retryLater(wait);
      this.starting = this.startGraph().finally(() => {
        this.starting = null;
        // A build that failed is tried again (after the backoff).
        if (this.failure && !this.graph) this.checkSwitch();
      });
    } else if (this.graph && this.size < threshold * DOWNSHIFT_FACTOR) {
      this.options.log?.info({ vectors: this.size }, `vector count ${this.size} fell below the HNSW threshold; searching by exact scan`);
      this.dropGraph();
    } else if (!this.graph && this.size <= threshold) {
      // No graph is wanted any more: none is missing.
      this.failure = null;
    }
  }

  /** Checks again in `ms` whether a graph should be started (once: a later failure moves retryAt on, and the check waits again). */
  private retryLater(ms: number): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.checkSwitch();
    }, ms);
    this.retryTimer.unref();
  }

  /** A graph failed: counted for the backoff, and reported by /readyz until a graph serves again. */
  private noteFailure(err: unknown): void {
    const now = Date.now();
    if (this.healthySince !== null && now - this.healthySince >= GRAPH_STABLE_MS) this.failures = 0;
    this.healthySince = null;
    this.failures++;
    this.retryAt = now + graphRetryDelay(this.failures);
    this.failure = { reason: err instanceof Error ? err.message : String(err), at: now };
  }

  private dropGraph(): void {
    const graph = this.graph;
    this.graph = null;
    this.tombstones = 0;
    this.unlinked = new CountedSet();
    void graph?.close();
    this.checkSwitch();
  }

  /**
   * Sends rows' vectors to the graph, BUILD_BATCH at a time, each batch copied from the flat index
   * once the previous one is applied: a large batch copied at once held the event loop (17,000 rows
   * at 2048 dimensions are 140 MB), and one long native call is what a closing worker must wait for.
   */
  private async forwardUpsert(target: HnswGraph, rowIds: number[]): Promise<void> {
    const unlinked = this.unlinked;
    let released = 0;
    const releaseTo = (end: number) => {
      for (; released < end; released++) unlinked.delete(rowIds[released]);
    };
    try {
      const vectors = batchBuffer(rowIds.length, this.dimensions);
      for (let from = 0; from < rowIds.length; from += BUILD_BATCH) {
        const batch = rowIds.slice(from, from + BUILD_BATCH);
        const found = this.flat.copyVectors(batch, vectors);
        await target.add(found, vectors.subarray(0, found.length * this.dimensions));
        releaseTo(from + batch.length);
        if (target !== this.graph && target !== this.pendingGraph) return;
      }
    } catch (err) {
      this.graphFailed(target, err);
    } finally {
      // Rows a failed or abandoned graph never took are no longer on their way to it.
      releaseTo(rowIds.length);
    }
  }

  /**
   * A graph search failed: logged once per graph (every search under way when a worker dies fails
   * with it), and a graph still in use is dropped, so later searches scan while it is rebuilt.
   */
  private graphSearchFailed(graph: HnswGraph, err: unknown): void {
    if (this.failedSearchGraph === graph) return;
    this.failedSearchGraph = graph;
    if (graph === this.graph) return this.graphFailed(graph, err);
    this.options.log?.warn({ err }, 'a search of the HNSW index failed as it was dropped; answered by exact scan');
  }

  private graphFailed(target: HnswGraph, err: unknown): void {
    if (target !== this.graph && target !== this.pendingGraph) return;
    this.options.log?.warn({ err }, 'the HNSW index failed; searching by exact scan until it is rebuilt');
    if (target === this.graph) {
      this.noteFailure(err);
      this.dropGraph();
    }
  }

  /**
   * The worker of the graph in use died (its `exit` or `error` event): dropped at once, so searches
   * go to the exact scan and /readyz says so until the rebuild (started now, or after the backoff)
   * serves. A graph being built needs nothing here: its call under way rejects, and the build fails.
   */
  private workerDied(graph: HnswGraph, err: Error): void {
    if (graph !== this.graph) return;
    // Searches under way in the worker fail with it: this warning says it for them.
    this.failedSearchGraph = graph;
    this.options.log?.warn({ err }, "the HNSW index's worker died; searching by exact scan until it is rebuilt");
    this.noteFailure(err);
    this.dropGraph();
  }

  /** Loads the saved graph when it matches the flat rows, else (mode `auto`) builds one. */
  private async startGraph(): Promise<void> {
    const graph = new HnswGraph(this.dimensions, this.options.params, this.options.buildThreads ?? 1);
    graph.onWorkerDeath = (err) => this.workerDied(graph, err);
    this.pendingGraph = graph;
    this.changedWhilePending = false;
    try {
      if (this.options.dir) {
        const r = await graph.load(this.path(), this.facts(graph));
        if (r.loaded && this.pendingGraph === graph) {
          this.tombstones = Math.max(0, graph.elements - this.size);
          this.options.log?.info({ vectors: this.size }, `loaded the HNSW index (${this.size} vectors)`);
          return this.promote(graph, false);
        }
        if (this.pendingGraph !== graph) return void (await graph.close());
        if (!r.loaded) this.options.log?.info({ reason: r.reason }, `building the HNSW index: ${r.reason}`);
      }
      await this.build(graph);
      await graph.moveToMainThread().catch((err) => this.options.log?.warn({ err }, 'the HNSW index stays in its worker'));
      // The worker died as the graph was moved out of it: nothing is left to serve.
      const died = graph.workerFailure;
      if (died) throw died;
      this.promote(graph, true);
    } catch (err) {
      if (!this.closed) {
        this.options.log?.warn({ err }, 'the HNSW index could not be built');
        if (this.pendingGraph === graph) this.noteFailure(err);
      }
      await this.abandon(graph);
    }
  }

  private async build(graph: HnswGraph): Promise<void> {
    const started = Date.now();
    const rowIds = this.flat.rowIds();
    await graph.init(Math.ceil(rowIds.length * 1.25));
    const vectors = batchBuffer(rowIds.length, this.dimensions);
    for (let i = 0; i < rowIds.length && !this.closed; i += BUILD_BATCH) {
      const found = this.flat.copyVectors(rowIds.subarray(i, i + BUILD_BATCH), vectors);
      // Awaited before the next copy: the worker has read the buffer once its add resolves.
      await graph.add(found, vectors.subarray(0, found.length * this.dimensions));
    }
    this.options.log?.info(
      { vectors: rowIds.length, ms: Date.now() - started },
      `built the HNSW index of ${rowIds.length} vectors in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }

  private promote(graph: HnswGraph, fresh: boolean): void {
    if (this.closed || this.pendingGraph !== graph) return void graph.close();
    this.pendingGraph = null;
    this.graph = graph;
    this.failure = null;
    this.healthySince = Date.now();
    if (fresh || this.changedWhilePending) {
      this.dirty = true;
      this.scheduleSave();
    }
  }

  private async abandon(graph: HnswGraph): Promise<void> {
    if (this.pendingGraph === graph) this.pendingGraph = null;
    await graph.close();
  }
}
