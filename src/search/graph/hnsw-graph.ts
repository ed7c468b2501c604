/**
 * The HNSW graph: one graph, built on several native threads in its worker (salon-hnsw), then
 * moved to the main thread (LocalGraph) and the worker closed. A search then walks one graph on a
 * thread that is running anyway: on a busy machine, a search waiting for a worker waits for a core
 * as well (measured at 30K×768 with 2 cores shared at load 4: search p99 1.3–1.7 ms on the main
 * thread against 5.9 ms through the worker). Until the move succeeds, the worker answers.
 * (Graphs were once split into shards searched in parallel; one graph was faster, 0.3 ms against
 * 1.2 ms at 100K×768, so the split is gone. A graph saved in shards is not found and is rebuilt.)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VectorHit } from '../types.js';
import { checkGraphFile, saveGraphFile } from './hnsw-files.js';
import type { HnswFileFacts, HnswParams } from './hnsw-protocol.js';
import { HnswWorkerClient, hnswParams } from './hnsw-worker-client.js';
import { LocalGraph } from './local-graph.js';
import { wholeNumber } from '../../options.js';

type Loaded = { loaded: true } | { loaded: false; reason: string };

export class HnswGraph {
  readonly dimensions: number;
  readonly params: HnswParams;
  /** Native threads the worker builds with. */
  readonly buildThreads: number;
  /** In its worker until moved, then on the main thread; null before init or load. */
  private graph: HnswWorkerClient | LocalGraph | null = null;
  /** A load or a move to the main thread in progress: changes wait for it, in order. */
  private moving: Promise<unknown> | null = null;
  private closed = false;
  /** Told when the graph's worker dies unclosed (HnswWorkerClient.onDeath); a graph on the main thread has none. */
  onWorkerDeath: ((err: Error) => void) | null = null;

  constructor(dimensions: number, params: Partial<HnswParams> = {}, buildThreads = 1) {
    this.dimensions = wholeNumber('HnswGraph', 'dimensions', dimensions, 1);
    this.buildThreads = buildThreads;
    this.params = hnswParams(params, 'HnswGraph');
  }

  /** Changes the search list size (recall against speed). */
  setEfSearch(ef: number): void {
    wholeNumber('HnswGraph', 'efSearch', ef, 1);
    this.params.efSearch = ef;
    if (this.graph instanceof LocalGraph) this.graph.setEfSearch(ef);
    else if (this.graph) this.graph.params.efSearch = ef;
  }

  /** True while changes are still being applied (or moved with the graph); searches then see a lagging graph. */
  get busy(): boolean {
    return this.moving !== null || (this.graph?.busy ?? false);
  }

  /**
   * Whether searches may go on while changes are applied: a graph on the main thread searches
   * beside an add running on other threads (salon-hnsw's LockedSearch) and does not yet find the
   * rows being added; one in its worker, or being moved, answers for a lagging graph.
   */
  get searchableWhileChanging(): boolean {
    return this.moving === null && this.graph instanceof LocalGraph;
  }

  /** Why the worker holding the graph stopped answering (it died); null on the main thread or while it serves. */
  get workerFailure(): Error | null {
    return !this.closed && this.graph instanceof HnswWorkerClient ? this.graph.failed : null;
  }

  /** Whether the graph is searched on the main thread. */
  get onMainThread(): boolean {
    return this.graph instanceof LocalGraph;
  }

  /** Elements in the graph, deleted ones included. */
  get elements(): number {
    return this.graph?.elements ?? 0;
  }

  /** Starts an empty graph in its worker, with room for `capacity` elements. */
  async init(capacity: number): Promise<void> {
    const worker = new HnswWorkerClient(this.dimensions, this.params, this.buildThreads);
    worker.onDeath = (err) => {
      if (this.graph === worker) this.onWorkerDeath?.(err);
    };
    this.graph = worker;
    await worker.init(capacity);
  }

  /** Adds or replaces `ids` (vectors packed in the same order; HnswWorkerClient.add says who may reuse them). */
  async add(ids: number[], vectors: Float32Array): Promise<void> {
    if (this.moving) await this.moving.catch(() => undefined);
    await this.graph?.add(ids, vectors);
  }

  /** Marks rows deleted; resolves to how many were in the graph. */
  async remove(ids: number[]): Promise<number> {
    if (this.moving) await this.moving.catch(() => undefined);
    return (await this.graph?.remove(ids)) ?? 0;
  }

  async search(query: Float32Array, k: number): Promise<VectorHit[]> {
    return (await this.searchMany([query], k))[0];
  }

  /** The k best rows for each query: one message to the worker for all of them, or none on the main thread. */
  async searchMany(queries: Float32Array[], k: number): Promise<VectorHit[][]> {
    const graph = this.graph;
    if (!graph) return queries.map(() => []);
    if (graph instanceof LocalGraph) return queries.map((q) => graph.search(q, k));
    return graph.searchMany(queries, k);
  }

  /**
   * Moves the graph from its worker to the main thread (through a file hnswlib writes and reads
   * off the event loop) and closes the worker. On failure the worker keeps serving.
   */
  async moveToMainThread(): Promise<void> {
    const worker = this.graph;
    if (!(worker instanceof HnswWorkerClient)) return;
    const move = (async () => {
      const dir = await mkdtemp(join(tmpdir(), 'salon-hnsw-'));
      try {
        const file = join(dir, 'graph');
        await worker.export(file);
        const local = await LocalGraph.read(file, this.dimensions, this.params.efSearch);
        if (this.closed || this.graph !== worker) return;
        this.graph = local;
        await worker.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    })();
    this.moving = move;
    try {
      await move;
    } finally {
      this.moving = null;
    }
  }

  /** Saves the graph atomically, with its sidecar. */
  async save(path: string, facts: HnswFileFacts): Promise<void> {
    const graph = this.graph;
    if (!graph) return;
    if (graph instanceof LocalGraph) await saveGraphFile(path, facts, (tmp) => graph.write(tmp));
    else await graph.save(path, facts);
  }

  /** Loads the graph onto the main thread, or reports why the saved one could not be used. */
  async load(path: string, expect: HnswFileFacts): Promise<Loaded> {
    const load = (async (): Promise<Loaded> => {
      const check = await checkGraphFile(path, expect);
      if (!check.ok) return { loaded: false, reason: check.reason };
      try {
        const graph = await LocalGraph.read(path, this.dimensions, this.params.efSearch);
        if (!this.closed) this.graph = graph;
        return { loaded: true };
      } catch (err) {
        return { loaded: false, reason: `hnswlib could not read it: ${(err as Error).message}` };
      }
    })();
    this.moving = load;
    try {
      return await load;
    } finally {
      this.moving = null;
    }
  }

  async flush(): Promise<void> {
    if (this.moving) await this.moving.catch(() => undefined);
    await this.graph?.flush();
  }

  async close(): Promise<void> {
    this.closed = true;
    const graph = this.graph;
    this.graph = null;
    if (graph instanceof HnswWorkerClient) await graph.close();
  }
}
