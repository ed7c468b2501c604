/**
 * Client of the HNSW worker (workers/search-hnsw.ts): adds, deletes (markDelete), searches, saves
 * and loads an hnswlib graph whose labels are chunk row ids, without blocking the event loop.
 * Metadata is not in the graph: the tiered index filters candidates with the flat index's meta.
 */
import { Worker } from 'node:worker_threads';
import type { GraphEncoding } from 'salon-hnsw';
import type { HnswFileFacts, HnswMessage, HnswParams, HnswReplies, HnswRequest, HnswResponse } from './hnsw-protocol.js';
import type { VectorHit } from '../types.js';
import { builtWorkerFile } from '../../worker-files.js';
import { wholeNumber } from '../../options.js';

/**
 * Chosen with bench:search at 100,000 × 768 (clustered data, one graph built on 2 threads, AVX2
 * distances, 2 cores shared with other work): M=16 (32 links per node at layer 0) is hnswlib's usual
 * balance of recall and memory (M=24 gained recall but searched ~40 % slower). A graph built on
 * several threads differs from build to build, and at efConstruction 128 its recall@10 at
 * efSearch 48 ranged 0.93–0.98 over six builds (half-precision and eight-bit alike); at 200 it was
 * 0.97–0.99 over three, for a build of 19–25 s instead of ~15 s (eight-bit vectors). Searching is
 * unchanged: efSearch=48 costs ~0.23 ms (64: +0.05 ms).
 */
export const DEFAULT_HNSW_PARAMS: HnswParams = { m: 16, efConstruction: 200, efSearch: 48, seed: 100 };

/**
 * Vectors are stored as eight-bit integers with a scale per vector: a graph search is bound by the
 * memory it reads (~2 KB a visited node at 768 dimensions in float32). Measured with bench:search at
 * 100,000 × 768 against half precision: p50 0.25 against 0.36 ms, build 15–17 against 22–29 s, the
 * same recall; at 28,600 × 2048 (bench:rag's chunks) 0.24 against 0.34 ms. Hits are rescored
 * exactly from the flat index's float32 rows.
 */
export const GRAPH_ENCODING: GraphEncoding = 'i8';

/** The defaults completed with `params`, each checked by name. */
export function hnswParams(params: Partial<HnswParams>, owner: string): HnswParams {
  const all = { ...DEFAULT_HNSW_PARAMS, ...params };
  for (const [k, v] of Object.entries(all)) {
    // A graph of one link a node cannot be built: the binding refuses m = 1.
    wholeNumber(owner, `params.${k}`, v, k === 'seed' ? 0 : k === 'm' ? 2 : 1);
  }
  return all;
}

/** How long close waits for a native call under way before it terminates the worker anyway. */
const CLOSE_WAIT_MS = 10_000;

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; mutation: boolean };

export class HnswWorkerClient {
  readonly dimensions: number;
  readonly params: HnswParams;
  /** Native threads the worker builds with. */
  readonly buildThreads: number;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private mutationsInFlight = 0;
  private failure: Error | null = null;
  /** Set on close: the worker answers what is still queued without touching the graph. */
  private readonly closing = new Int32Array(new SharedArrayBuffer(4));
  private exited = false;
  /** Elements in the graph, deleted ones included (hnswlib never frees them). */
  elements = 0;
  /**
   * Told, once, when the worker dies without being closed (its `exit` or `error` event), so the
   * owner hears of it at once rather than at its next call.
   */
  onDeath: ((err: Error) => void) | null = null;

  constructor(dimensions: number, params: Partial<HnswParams> = {}, buildThreads = 1) {
    wholeNumber('HnswWorkerClient', 'dimensions', dimensions, 1);
    wholeNumber('HnswWorkerClient', 'buildThreads', buildThreads, 1);
    this.params = hnswParams(params, 'HnswWorkerClient');
    this.buildThreads = buildThreads;
    this.dimensions = dimensions;
    this.worker = new Worker(builtWorkerFile('search-hnsw.js'), { name: 'salon-hnsw', workerData: { closing: this.closing.buffer } });
    this.worker.on('message', (msg: HnswResponse) => this.settle(msg));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => {
      this.exited = true;
      this.fail(new Error(`the HNSW worker exited with code ${code}`));
    });
  }

  /** True while adds or deletes are still being applied; searches then see a lagging graph. */
  get busy(): boolean {
    return this.mutationsInFlight > 0;
  }

  /** Why the worker stopped answering (it died, or was closed); null while it serves. */
  get failed(): Error | null {
    return this.failure;
  }

  /** Creates an empty graph with room for `capacity` elements (it grows with resizeIndex). */
  init(capacity: number): Promise<null> {
    return this.call({ op: 'init', dimensions: this.dimensions, capacity, params: this.params, threads: this.buildThreads });
  }

  /**
   * Adds or replaces vectors (packed `ids.length × dimensions`). An ArrayBuffer's vectors are
   * transferred to the worker (the caller's array is emptied); a SharedArrayBuffer's are read in
   * place, and must stay as they are until the add resolves.
   */
  async add(ids: number[], vectors: Float32Array): Promise<void> {
    if (ids.length === 0) return;
    const transfer = vectors.buffer instanceof ArrayBuffer ? [vectors.buffer] : [];
    const r = await this.call({ op: 'add', labels: Int32Array.from(ids), vectors }, transfer, true);
    this.elements = r.count;
  }

  async remove(ids: number[]): Promise<number> {
    if (ids.length === 0) return 0;
    return (await this.call({ op: 'remove', labels: ids }, [], true)).deleted;
  }

  /** Approximate k nearest rows; score = cosine similarity. */
  async search(query: Float32Array, k: number, ef = this.params.efSearch): Promise<VectorHit[]> {
    return (await this.searchMany([query], k, ef))[0];
  }

  /** search for several queries in one round trip to the worker. */
  async searchMany(queries: Float32Array[], k: number, ef = this.params.efSearch): Promise<VectorHit[][]> {
    const replies = await this.call({ op: 'search', queries, k, ef });
    // hnswlib's cosine distance is 1 − cos; float rounding can push an identical vector past 1.
    return replies.map((r) => Array.from(r.labels, (rowId, i) => ({ rowId, score: Math.min(1, 1 - r.distances[i]) })));
  }

  /** Saves atomically to `path` with a sidecar describing what it holds. */
  async save(path: string, facts: HnswFileFacts): Promise<number> {
    return (await this.call({ op: 'save', path, facts })).bytes;
  }

  /** Loads `path` if its sidecar matches `expect` and its checksum is intact. */
  async load(path: string, expect: HnswFileFacts): Promise<HnswReplies['load']> {
    const r = await this.call({ op: 'load', path, expect, efSearch: this.params.efSearch });
    if (r.loaded) this.elements = r.count;
    return r;
  }

  /** Writes the graph, with every change sent so far, to `path` for LocalGraph.read. */
  async export(path: string): Promise<void> {
    await this.call({ op: 'export', path });
  }

  /** Resolves once every change sent so far has been applied. */
  async flush(): Promise<void> {
    await this.call({ op: 'flush' });
  }

  /**
   * Stops the worker. A native call under way is let finish first (at most CLOSE_WAIT_MS):
   * terminating the thread inside salon-hnsw's addPoints aborts the whole process. What is queued
   * behind it is skipped (the closing flag).
   */
  async close(): Promise<void> {
    this.failure ??= new Error('the HNSW index is closed');
    Atomics.store(this.closing, 0, 1);
    if (!this.exited) {
      const id = this.nextId++;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise((resolve) => {
          this.pending.set(id, { resolve, reject: resolve, mutation: false });
          this.worker.postMessage({ op: 'flush', id } satisfies HnswMessage);
        }),
        new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS))),
      ]);
      clearTimeout(timer);
    }
    await this.worker.terminate();
  }

  private call<O extends HnswRequest['op']>(req: Extract<HnswRequest, { op: O }>, transfer: ArrayBuffer[] = [], mutation = false): Promise<HnswReplies[O]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    if (mutation) this.mutationsInFlight++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, mutation });
      this.worker.postMessage({ ...req, id } as HnswMessage, transfer);
    });
  }

  private settle(msg: HnswResponse): void {
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (p.mutation) this.mutationsInFlight--;
    if ('error' in msg) p.reject(new Error(`HNSW worker: ${msg.error}`));
    else p.resolve(msg.result);
  }

  private fail(err: Error): void {
    // Closing sets the failure first: only a worker that was not closed died.
    const died = this.failure === null;
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
    this.mutationsInFlight = 0;
    if (died) this.onDeath?.(err);
  }
}
