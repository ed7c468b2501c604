/**
 * One HNSW graph shard owned by the main thread. A search on it costs a fraction of a millisecond,
 * less than the two thread hops of asking a worker (which, on a loaded machine, waits for a core
 * as well). Building stays in the worker (hnsw-index.ts); the finished graph is handed over
 * through a file that hnswlib reads on the libuv thread pool, so the event loop never builds.
 * Later changes are incremental and small; large batches are applied in slices between which the
 * event loop runs.
 */
import hnswlib from 'hnswlib-node';
import type { VectorHit } from './types.js';

type Native = InstanceType<typeof hnswlib.HierarchicalNSW>;

/** Vectors added per slice before the event loop gets a turn (one add is ~0.3–1 ms on a large graph). */
const ADD_SLICE = 8;

export class LocalGraph {
  private readonly index: Native;
  private readonly dimensions: number;
  /** Reused plain array: hnswlib-node takes number[] and copies the values before returning. */
  private scratch: number[];
  /** Mutations and saves, strictly in order (a save must not read while a vector is being linked). */
  private tail: Promise<unknown> = Promise.resolve();
  /** Operations queued or running, and how many of them are changes. */
  private pending = 0;
  private queued = 0;
  private ef: number;

  private constructor(index: Native, dimensions: number, ef: number) {
    this.index = index;
    this.dimensions = dimensions;
    this.scratch = new Array<number>(dimensions).fill(0);
    this.ef = ef;
    index.setEf(ef);
  }

  /** Reads a graph file written by hnswlib (off the event loop). */
  static async read(path: string, dimensions: number, efSearch: number): Promise<LocalGraph> {
    const index = new hnswlib.HierarchicalNSW('cosine', dimensions);
    await index.readIndex(path);
    return new LocalGraph(index, dimensions, efSearch);
  }

  /** True while changes wait to be applied: searches would miss them. */
  get busy(): boolean {
    return this.queued > 0;
  }

  /** Elements in the graph, deleted ones included. */
  get elements(): number {
    return this.index.getCurrentCount();
  }

  setEfSearch(ef: number): void {
    this.ef = ef;
  }

  search(query: Float32Array, k: number): VectorHit[] {
    const n = Math.min(k, this.index.getCurrentCount());
    if (n === 0) return [];
    this.index.setEf(Math.max(this.ef, n));
    const r = this.index.searchKnn(this.asArray(query), n);
    // hnswlib's cosine distance is 1 − cos; float rounding can push an identical vector past 1.
    return r.neighbors.map((rowId, i) => ({ rowId, score: Math.min(1, 1 - r.distances[i]) }));
  }

  /** Adds or replaces vectors (packed `ids.length × dimensions`); applied at once when nothing is queued. */
  add(ids: number[], vectors: Float32Array): Promise<void> {
    return this.enqueue(async () => {
      const d = this.dimensions;
      this.reserve(ids.length);
      for (let i = 0; i < ids.length; i++) {
        if (i > 0 && i % ADD_SLICE === 0) await new Promise((r) => setImmediate(r));
        // replaceDeleted is off: a label added again simply overwrites its element (hnswlib updates it).
        this.index.addPoint(this.asArray(vectors.subarray(i * d, (i + 1) * d)), ids[i]);
      }
    });
  }

  /** Marks rows deleted; resolves to how many were in the graph. */
  remove(ids: number[]): Promise<number> {
    return this.enqueue(async () => {
      let deleted = 0;
      for (const id of ids) {
        try {
          this.index.markDelete(id);
          deleted++;
        } catch {
          // Not in the graph (never added, or already deleted): nothing to do.
        }
      }
      return deleted;
    });
  }

  /** Writes the graph to `path` (on the thread pool; changes wait until it is written). */
  write(path: string): Promise<void> {
    return this.enqueue(async () => {
      await this.index.writeIndex(path);
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

  private reserve(extra: number): void {
    const needed = this.index.getCurrentCount() + extra;
    const max = this.index.getMaxElements();
    if (needed > max) this.index.resizeIndex(Math.max(needed, Math.ceil(max * 1.5)));
  }

  private asArray(v: Float32Array): number[] {
    const s = this.scratch;
    for (let i = 0; i < v.length; i++) s[i] = v[i];
    return s;
  }
}
