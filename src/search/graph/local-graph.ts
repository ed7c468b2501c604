/**
 * One HNSW graph shard owned by the main thread. A search on it costs a fraction of a millisecond,
 * less than the two thread hops of asking a worker (which, on a loaded machine, waits for a core
 * as well). Building stays in the worker (hnsw-worker-client.ts); the finished graph is handed over
 * through a file that hnswlib reads on the libuv thread pool, so the event loop never builds.
 * Later changes are incremental and small; large batches are applied in slices between which the
 * event loop runs.
 */
import { Graph } from 'salon-hnsw';
import { GRAPH_ENCODING } from './hnsw-worker-client.js';
import type { VectorHit } from '../types.js';

/**
 * The event loop gets a turn once adds have run this long: one add is ~0.3–1 ms on a large graph
 * (more at 2048 dimensions), so a fixed count of adds per slice could hold the loop for many ms.
 */
const ADD_SLICE_MS = 2;

/** The labels LocalGraph.searchMany found: query i's are `labels[i × k, i × k + counts[i])`, nearest first. */
export interface NeighbourLists {
  k: number;
  labels: Uint32Array;
  counts: Uint32Array;
}

export class LocalGraph {
  private readonly index: Graph;
  private readonly dimensions: number;
  /** Reused result buffers (grown for larger k): the binding writes hits into them. */
  private labels = new Uint32Array(16);
  private distances = new Float32Array(16);
  /** Mutations and saves, strictly in order (a save must not read while a vector is being linked). */
  private tail: Promise<unknown> = Promise.resolve();
  /** Operations queued or running, and how many of them are changes. */
  private pending = 0;
  private queued = 0;
  private ef: number;
  /**
   * Whether single-threaded adds run on the libuv pool (Graph.addPointsAsync) instead of here: a
   * serving graph's insert at 2,048 dimensions takes 2–6 ms, which every room sharing the event
   * loop would wait for, a dozen times a second while a busy thread's memory is indexed. Searches
   * go on meanwhile (the binding reads the graph under the insert's locks then) and do not yet find
   * the rows being added, which the tiered index scores exactly. Scratch graphs (fusion) add on the
   * calling thread.
   */
  private readonly addOffLoop: boolean;

  private constructor(index: Graph, dimensions: number, ef: number, addOffLoop: boolean) {
    this.index = index;
    this.dimensions = dimensions;
    this.ef = ef;
    this.addOffLoop = addOffLoop;
    index.setEf(ef);
  }

  /** An empty graph built here, a few vectors at a time (a scratch index, e.g. fusion's working set). */
  static empty(dimensions: number, params: { m: number; efConstruction: number; efSearch: number; seed: number }): LocalGraph {
    return new LocalGraph(new Graph(dimensions, 1024, params.m, params.efConstruction, params.seed, GRAPH_ENCODING), dimensions, params.efSearch, false);
  }

  /** Reads a graph file written by hnswlib (off the event loop): a serving graph, whose adds run off it too. */
  static async read(path: string, dimensions: number, efSearch: number): Promise<LocalGraph> {
    return new LocalGraph(await Graph.read(path, dimensions, GRAPH_ENCODING), dimensions, efSearch, true);
  }

  /** True while changes wait to be applied: searches would miss them. */
  get busy(): boolean {
    return this.queued > 0;
  }

  /** Elements in the graph, deleted ones included. */
  get elements(): number {
    return this.index.count;
  }

  setEfSearch(ef: number): void {
    this.ef = ef;
  }

  search(query: Float32Array, k: number): VectorHit[] {
    const n = Math.min(k, this.index.count);
    if (n === 0) return [];
    if (this.labels.length < n) {
      this.labels = new Uint32Array(n);
      this.distances = new Float32Array(n);
    }
    this.index.setEf(Math.max(this.ef, n));
    const found = this.index.search(query, n, this.labels, this.distances);
    const hits: VectorHit[] = new Array(found);
    // The cosine distance is 1 − cos; float rounding can push an identical vector past 1.
    for (let i = 0; i < found; i++) hits[i] = { rowId: this.labels[i], score: Math.min(1, 1 - this.distances[i]) };
    return hits;
  }

  /**
   * search() for each row of `queries` (packed n × dimensions), on `threads` native threads in one
   * call: query i's labels are `labels[i × k, i × k + counts[i])`, nearest first. Blocks until all
   * are done (the caller keeps batches small enough for the event loop).
   */
  searchMany(queries: Float32Array, k: number, threads = 1): NeighbourLists {
    const n = Math.floor(queries.length / this.dimensions);
    const lists = { k, labels: new Uint32Array(n * k), counts: new Uint32Array(n) };
    if (n === 0 || k === 0) return lists;
    this.index.setEf(Math.max(this.ef, k));
    this.index.searchMany(queries, k, lists.labels, new Float32Array(n * k), lists.counts, threads);
    return lists;
  }

  /**
   * Adds or replaces vectors (packed `ids.length × dimensions`); applied at once when nothing is
   * queued. With `threads` > 1 the adds run off the event loop, on that many native threads started
   * from the libuv pool, in one call (the order in which they are linked then varies from run to
   * run, and so does the graph); searches go on meanwhile, other changes wait their turn here.
   */
  add(ids: number[], vectors: Float32Array, threads = 1): Promise<void> {
    return this.enqueue(async () => {
      const d = this.dimensions;
      const labels = Uint32Array.from(ids);
      if (threads > 1 || this.addOffLoop) return this.index.addPointsAsync(vectors.subarray(0, ids.length * d), labels, threads);
      let sliceStart = performance.now();
      for (let i = 0; i < ids.length; i++) {
        if (performance.now() - sliceStart >= ADD_SLICE_MS) {
          await new Promise((r) => setImmediate(r));
          sliceStart = performance.now();
        }
        // A label added again simply overwrites its element (hnswlib updates it in place).
        this.index.addPoints(vectors.subarray(i * d, (i + 1) * d), labels.subarray(i, i + 1), 1);
      }
    });
  }

  /** Marks rows deleted; resolves to how many were in the graph. */
  remove(ids: number[]): Promise<number> {
    return this.enqueue(async () => {
      let deleted = 0;
      // false: not in the graph (never added, or already deleted).
      for (const id of ids) if (this.index.markDelete(id)) deleted++;
      return deleted;
    });
  }

  /** Writes the graph to `path` (on the thread pool; changes wait until it is written). */
  write(path: string): Promise<void> {
    return this.enqueue(async () => {
      await this.index.write(path);
    }, false);
  }

  /** Resolves once every queued change is applied. */
  async flush(): Promise<void> {
    await this.enqueue(async () => undefined, false);
  }

  private enqueue<T>(fn: () => Promise<T>, mutation = true): Promise<T> {
    // When nothing is queued the work starts synchronously (an async function runs to its first await).
    const run = this.pending === 0 ? fn() : this.tail.then(fn);
    this.pending++;
    if (mutation) this.queued++;
    const settled = run.finally(() => {
      this.pending--;
      if (mutation) this.queued--;
    });
    this.tail = settled.catch(() => undefined);
    return settled;
  }
}
