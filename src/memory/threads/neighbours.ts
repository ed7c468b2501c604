/**
 * Nearest-neighbour candidates for fusion (fusion.ts): for each chunk of B, the chunks of A of the
 * same audience that are nearest to it. A scratch HNSW graph per audience is built over a short
 * sketch of A's vectors, not the vectors themselves: each input dimension is added, with a random
 * sign, into one of SKETCH_DIMS buckets (a count sketch, which keeps inner products in expectation).
 * At 2,048 dimensions that makes every distance the graph computes eight times cheaper, building and
 * searching alike; the sketch only proposes candidates, and each candidate is scored exactly on the
 * full vectors by the caller, so a sketch error can only cost a missed pair (a chunk kept instead
 * of fused), never a wrong one. Vectors of SKETCH_DIMS dimensions or fewer are used as they are.
 */
import { availableParallelism } from 'node:os';
import { countSketch } from 'salon-hnsw';
import { LocalGraph } from '../../search/graph/local-graph.js';
import { Turns } from './turns.js';

/** Dimensions of the sketch the graphs are built over. */
export const SKETCH_DIMS = 256;
/**
 * The scratch graphs trade build time for recall they do not need: candidates are rescored exactly,
 * and a missed neighbour only means a chunk kept rather than fused.
 */
const GRAPH_PARAMS = { m: 12, efConstruction: 48, efSearch: 32, seed: 7 };
/** Seed of the sketch's buckets and signs (fixed: a plan is reproducible). */
const SKETCH_SEED = 0x5a1;
/**
 * From this many vectors an audience's graph is built on BUILD_THREADS native threads, off the
 * event loop (LocalGraph.add), about twice as fast on two free cores. Such a graph differs from run
 * to run, so which pair a near tie goes to may too; a smaller one (every test, eval:fusion's
 * threads) is built on the calling thread alone and a plan stays reproducible.
 */
export const THREADED_BUILD_MIN = 2_048;
const BUILD_THREADS = Math.max(1, Math.min(2, availableParallelism()));
/** Queries nearestEach searches per native call (~5 ms on two threads at 256 dimensions). */
const SEARCH_SLICE = 256;
/**
 * From this many queries a slice is searched on BUILD_THREADS threads. HNSW search reads the
 * graph only, so the answers are the same either way; threads only pay off on a batch.
 */
const THREADED_SEARCH_MIN = 64;

/** A labelled vector: the label is the caller's (an index into A). */
export interface Labelled {
  label: number;
  vector: Float32Array;
}

/**
 * Reads the full vectors of `items`: calls `visit(j, vector)` for each item j, synchronously
 * (`vector` may be a view that is valid during the call only). By default each item's own
 * `vector`; fusion reads them in place in the memory index instead (fusion.ts).
 */
export type ReadVectors = (items: VectorItem[], visit: (j: number, vector: Float32Array) => void) => void;

/** An item whose vector is read: `id` names the stored chunk it is, for readers that read vectors in place. */
export interface VectorItem {
  vector: Float32Array;
  id?: number;
}

const ownVectors: ReadVectors = (items, visit) => items.forEach((it, j) => visit(j, it.vector));
/** Vectors sketched between two event-loop turns (each ~5 µs at 2,048 dimensions). */
const SKETCH_SLICE = 512;

/** Per-audience scratch graphs over sketches of A's vectors. */
export class Neighbours {
  private readonly graphs = new Map<string, { graph: LocalGraph; size: number }>();
  private readonly sketch: CountSketch | null;

  private constructor(private readonly dimensions: number) {
    this.sketch = dimensions > SKETCH_DIMS ? new CountSketch(dimensions, SKETCH_DIMS) : null;
  }

  /** Graphs over `items` (of `dimensions`), one per audience, built between event-loop turns. */
  static async of(items: (Labelled & { audience: string })[], dimensions: number, read: ReadVectors = ownVectors): Promise<Neighbours> {
    const n = new Neighbours(dimensions);
    const turns = new Turns();
    for (const [audience, group] of byAudience(items)) {
      const d = n.sketch ? SKETCH_DIMS : dimensions;
      const packed = new Float32Array(group.length * d);
      for (let from = 0; from < group.length; from += SKETCH_SLICE) {
        if (turns.due()) await turns.next();
        read(group.slice(from, from + SKETCH_SLICE), (j, v) => n.project(v, packed.subarray((from + j) * d, (from + j + 1) * d)));
      }
      const graph = LocalGraph.empty(d, GRAPH_PARAMS);
      await graph.add(
        group.map((g) => g.label),
        packed,
        group.length >= THREADED_BUILD_MIN ? BUILD_THREADS : 1,
      );
      n.graphs.set(audience, { graph, size: group.length });
    }
    return n;
  }

  /** The sketch of `vector` (the vector itself when it is short already). */
  query(vector: Float32Array): Float32Array {
    if (!this.sketch) return vector;
    const out = new Float32Array(SKETCH_DIMS);
    this.sketch.into(vector, out);
    return out;
  }

  /** Up to `k` labels of `audience`, nearest to the sketched `query` first. */
  nearest(query: Float32Array, audience: string, k: number): number[] {
    const g = this.graphs.get(audience);
    if (!g) return [];
    return g.graph.search(query, Math.min(k, g.size)).map((h) => h.rowId);
  }

  /**
   * For each of `queries` (full vectors), up to `k` labels of its audience, nearest to its sketch
   * first: what `nearest` gives, for a whole batch at once, searched on BUILD_THREADS native
   * threads a slice at a time between event-loop turns.
   */
  async nearestEach<T extends { vector: Float32Array; audience: string }>(queries: T[], k: number, read: ReadVectors = ownVectors): Promise<number[][]> {
    const out: number[][] = queries.map(() => []);
    const turns = new Turns();
    const d = this.sketch ? SKETCH_DIMS : this.dimensions;
    for (const [audience, indices] of byAudience(queries.map((q, i) => ({ audience: q.audience, i })))) {
      const g = this.graphs.get(audience);
      if (!g) continue;
      const { graph, size } = g;
      const n = Math.min(k, size);
      for (let from = 0; from < indices.length; from += SEARCH_SLICE) {
        if (turns.due()) await turns.next();
        const slice = indices.slice(from, from + SEARCH_SLICE).map((q) => q.i);
        const packed = new Float32Array(slice.length * d);
        read(
          slice.map((i) => queries[i]),
          (j, v) => this.project(v, packed.subarray(j * d, (j + 1) * d)),
        );
        const found = graph.searchMany(packed, n, slice.length >= THREADED_SEARCH_MIN ? BUILD_THREADS : 1);
        slice.forEach((i, j) => (out[i] = Array.from(found.labels.subarray(j * n, j * n + found.counts[j]))));
      }
    }
    return out;
  }

  /** How many labels `audience` has. */
  size(audience: string): number {
    return this.graphs.get(audience)?.size ?? 0;
  }

  close(): void {
    this.graphs.clear();
  }

  private project(vector: Float32Array, out: Float32Array): void {
    if (this.sketch) this.sketch.into(vector, out);
    else out.set(vector);
  }
}

/** `items` grouped by audience, in their order. */
function byAudience<T extends { audience: string }>(items: T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const it of items) {
    const group = groups.get(it.audience);
    if (group) group.push(it);
    else groups.set(it.audience, [it]);
  }
  return groups;
}

/**
 * A signed count sketch from `dimensions` to `buckets` dimensions: each input dimension is added,
 * with a random sign, into one bucket (fixed by SKETCH_SEED, so the same vector always has the same
 * sketch). Inner products are kept in expectation. eval:graph measures what it costs a serving
 * graph's recall (docs/benchmarks.md).
 */
export class CountSketch {
  private readonly bucket: Uint16Array;
  private readonly sign: Float32Array;

  constructor(
    dimensions: number,
    readonly buckets: number,
  ) {
    if (!Number.isInteger(buckets) || buckets < 1 || buckets > 0x10000)
      throw new RangeError(`CountSketch: buckets must be a whole number in [1, 65536], got ${buckets}`);
    this.bucket = new Uint16Array(dimensions);
    this.sign = new Float32Array(dimensions);
    let state = SKETCH_SEED;
    const random = () => {
      // mulberry32
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return (t ^ (t >>> 14)) >>> 0;
    };
    for (let i = 0; i < dimensions; i++) {
      const r = random();
      this.bucket[i] = r % buckets;
      this.sign[i] = r & 0x80000000 ? -1 : 1;
    }
  }

  /** `out` (`buckets` long) = the sketch of `vector` (in native code: a scattered add per element is 5–8 µs a vector in JS at 2,048 dimensions). */
  into(vector: Float32Array, out: Float32Array): void {
    countSketch(vector, this.bucket, this.sign, out);
  }
}
