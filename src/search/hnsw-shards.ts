/**
 * An HNSW graph split into shards, one worker each (row id modulo the shard count). hnswlib builds
 * on one thread per index, so one graph of 100K×768 keeps one core busy for minutes; shards build
 * side by side on every core. A search asks every shard in parallel and merges their top k — each
 * shard is a smaller graph, so recall is at least that of one big graph at the same ef.
 */
import { HnswIndex } from './hnsw-index.js';
import type { HnswFileFacts, HnswParams } from './hnsw-protocol.js';
import { TopK } from './top-k.js';
import type { VectorHit } from './types.js';

/** The file of shard `i` next to `path` (its sidecar is `<file>.json`). */
export const shardFile = (path: string, i: number): string => `${path}.${i}`;

export class ShardedGraph {
  readonly shards: HnswIndex[];
  readonly dimensions: number;

  constructor(dimensions: number, shards: number, params: Partial<HnswParams> = {}) {
    if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`ShardedGraph: shards must be a positive integer, got ${shards}`);
    this.dimensions = dimensions;
    this.shards = Array.from({ length: shards }, () => new HnswIndex(dimensions, params));
  }

  get params(): HnswParams {
    return this.shards[0].params;
  }

  /** Changes the search list size of every shard (recall against speed). */
  setEfSearch(ef: number): void {
    if (!Number.isInteger(ef) || ef < 1) throw new RangeError(`efSearch must be a positive integer, got ${ef}`);
    for (const s of this.shards) s.params.efSearch = ef;
  }

  get busy(): boolean {
    return this.shards.some((s) => s.busy);
  }

  /** Elements in all shards, deleted ones included. */
  get elements(): number {
    return this.shards.reduce((n, s) => n + s.elements, 0);
  }

  async init(capacity: number): Promise<void> {
    const each = Math.ceil(capacity / this.shards.length);
    await Promise.all(this.shards.map((s) => s.init(each)));
  }

  /** Adds or replaces `ids` (vectors packed in the same order), each in its shard. */
  async add(ids: number[], vectors: Float32Array): Promise<void> {
    const d = this.dimensions;
    const parts = this.split(ids);
    await Promise.all(
      parts.map((positions, s) => {
        if (positions.length === 0) return undefined;
        const packed = new Float32Array(positions.length * d);
        positions.forEach((p, j) => packed.set(vectors.subarray(p * d, (p + 1) * d), j * d));
        return this.shards[s].add(
          positions.map((p) => ids[p]),
          packed,
        );
      }),
    );
  }

  /** Marks rows deleted; resolves to how many were in the graph. */
  async remove(ids: number[]): Promise<number> {
    const parts = this.split(ids);
    const counts = await Promise.all(parts.map((positions, s) => this.shards[s].remove(positions.map((p) => ids[p]))));
    return counts.reduce((a, b) => a + b, 0);
  }

  async search(query: Float32Array, k: number): Promise<VectorHit[]> {
    if (this.shards.length === 1) return this.shards[0].search(query, k);
    const results = await Promise.all(this.shards.map((s) => s.search(query, k)));
    const top = new TopK(k);
    for (const hits of results) for (const h of hits) top.push(h.rowId, h.score);
    const { ids, scores } = top.sorted();
    return Array.from(ids, (rowId, i) => ({ rowId, score: scores[i] }));
  }

  /** Saves every shard (each atomically, with its own sidecar). */
  async save(path: string, facts: HnswFileFacts): Promise<void> {
    await Promise.all(this.shards.map((s, i) => s.save(shardFile(path, i), { ...facts, shard: i, shards: this.shards.length })));
  }

  /** Loads every shard, or reports why one could not be used (then none is). */
  async load(path: string, expect: HnswFileFacts): Promise<{ loaded: true } | { loaded: false; reason: string }> {
    const results = await Promise.all(this.shards.map((s, i) => s.load(shardFile(path, i), { ...expect, shard: i, shards: this.shards.length })));
    const failed = results.find((r) => !r.loaded);
    return failed && !failed.loaded ? { loaded: false, reason: failed.reason } : { loaded: true };
  }

  async flush(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.flush()));
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.close()));
  }

  /** Positions of `ids` per shard. */
  private split(ids: number[]): number[][] {
    const parts: number[][] = this.shards.map(() => []);
    ids.forEach((id, p) => parts[id % this.shards.length].push(p));
    return parts;
  }
}
