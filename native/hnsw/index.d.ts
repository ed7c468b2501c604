/**
 * How the graph stores vectors: `f16` (half precision, the default) halves the memory a search
 * reads, at a cost to distances of about 1e-3; `i8` (a scale and one signed byte per element)
 * quarters it, at about 1e-2; `f32` stores them as given.
 */
export type GraphEncoding = 'f16' | 'f32' | 'i8';

/**
 * One hnswlib graph over float32 vectors (normalised on the way in), cosine distance (1 − cos).
 * Labels are unsigned 32-bit integers. Files are hnswlib's own format; an `f32` graph's files are
 * the same as hnswlib-node's `cosine` space, an `f16` graph's elements hold half floats, an `i8` graph's a float scale and then bytes.
 */
export declare class Graph {
  /** An empty graph with room for `capacity` elements (it grows when adds need more). */
  constructor(dimensions: number, capacity: number, m: number, efConstruction: number, seed: number, encoding?: GraphEncoding);
  /** Reads a graph file on the libuv thread pool; `encoding` must be the one it was written with. */
  static read(path: string, dimensions: number, encoding?: GraphEncoding): Promise<Graph>;
  readonly dimensions: number;
  readonly encoding: GraphEncoding;
  /** Elements in the graph, deleted ones included. */
  readonly count: number;
  readonly capacity: number;
  /**
   * Adds or replaces rows (`labels.length × dimensions` packed) on `threads` threads; blocks until
   * done. With `idle`, the threads it starts (two or more) run in Linux's SCHED_IDLE class, and the
   * calling thread stays in its own: a build of many seconds yields every core at once to a waking
   * event loop, and outweighs no helper thread a garbage collection waits for.
   */
  addPoints(vectors: Float32Array, labels: Uint32Array | Int32Array, threads?: number, idle?: boolean): void;
  /**
   * addPoints run from a thread of the libuv pool, on `threads` threads (default 1; the rows are
   * copied first and the graph grown before it starts): the event loop goes on meanwhile. Until the
   * promise settles, searches read the graph under the insert's locks (they may not find the rows
   * being added yet) and every change throws.
   */
  addPointsAsync(vectors: Float32Array, labels: Uint32Array | Int32Array, threads?: number): Promise<void>;
  /** Writes up to `k` hits into the out arrays, nearest first, and returns how many. */
  search(query: Float32Array, k: number, labels: Uint32Array, distances: Float32Array): number;
  /**
   * search() for each row of `queries` (packed n × dimensions), on `threads` native threads; query i's hits fill labels/distances [i × k, i × k + counts[i]),
   * nearest first. Blocks until all are done.
   */
  searchMany(queries: Float32Array, k: number, labels: Uint32Array, distances: Float32Array, counts: Uint32Array, threads?: number): void;
  /** True if the label was in the graph (and is now deleted). */
  markDelete(label: number): boolean;
  resize(capacity: number): void;
  /** The search list size (recall against speed). */
  setEf(ef: number): void;
  /** Writes the graph on the thread pool; changes are refused until it is done, searches go on. */
  write(path: string): Promise<void>;
  writeSync(path: string): void;
}

/** Where the flat index's rows are in its shared memory (src/search/flat/layout.ts); byte offsets. */
export interface ScanLayout {
  /** Byte offset of the query (padded to d16 × 16 floats, zeros after the dimensions). */
  q: number;
  /** Byte offset of row 0. */
  rowsBase: number;
  /** Bytes per row: the padded vector, then four int32 of metadata (flags, scope, row id, group). */
  stride: number;
  /** Padded floats per vector / 16. */
  d16: number;
}

/** What one scan call scores and keeps. */
export interface ScanSpec extends ScanLayout {
  k: number;
  /** Bit i set: kind code i passes; 0: any kind. */
  kindMask: number;
  /** Source code, or −1 for any. */
  source: number;
  includePrivileged: boolean;
  /** Interned scope ids that pass; null: any scope. */
  scopes: Int32Array | null;
  /** Rows [start, end) … */
  start?: number;
  end?: number;
  /** … or only these row slots. */
  rows?: Int32Array;
}

/**
 * Scores the rows against the query, keeps the top k of those passing the filter, and writes
 * their row ids (from the rows' metadata) and scores into the out arrays, best first (ties: the
 * smaller id). Returns how many were written. `memory` is any typed array over the index's whole
 * shared memory; offsets are checked against its length. `portable` forces the portable loop.
 */
export declare function scanTop(memory: ArrayBufferView, spec: ScanSpec, outIds: Int32Array, outScores: Float32Array, portable?: boolean): number;

/**
 * The benchmark floor (bench:search): a plain AVX2/FMA loop, one row at a time, no filter and no
 * top k, over rows [0, n) on `threads` native threads. Returns its own wall time (thread start
 * included) and the best score.
 */
export declare function scanFloor(memory: ArrayBufferView, spec: ScanLayout & { n: number }, threads: number): { ms: number; best: number };

/**
 * Signed count sketches of `vectors` (packed n × buckets.length): row r of `out` (packed n × m)
 * gets each element i of vector r times `signs[i]` added into its element `buckets[i]` (< m).
 */
export declare function countSketch(vectors: Float32Array, buckets: Uint16Array, signs: Float32Array, out: Float32Array): void;

/**
 * Dot products of stored rows with stored rows, in the index memory (rows are normalised, so these
 * are cosines): for each query slot `queries[i]`, `out[j]` = its row · the row of slot
 * `candidates[j]`, for j in [offsets[i], offsets[i + 1]). `offsets` has one more element than
 * `queries`, from 0 to `candidates.length`. Both sides are rows, so their padding must be zeros
 * (the flat index writes it so; scanTop's query padding is what cancels a row's).
 */
export declare function dotRows(
  memory: ArrayBufferView,
  spec: Pick<ScanLayout, 'rowsBase' | 'stride' | 'd16'>,
  queries: Int32Array,
  offsets: Int32Array,
  candidates: Int32Array,
  out: Float32Array,
): void;

/** The loop scanTop runs on this CPU: 'avx2' (AVX2 + FMA) or 'portable'. */
export declare const scanKernel: 'avx2' | 'portable';

/**
 * Puts the calling thread in Linux's SCHED_IDLE class: any normal thread waking on its core (the
 * event loop) preempts it at once, where a nice-19 thread keeps the core for the rest of its
 * slice. For threads whose work can always wait (checkpoints). False where it is not possible.
 */
export declare function backgroundThread(): boolean;

/**
 * backgroundThread() for other threads of this process, by thread id (Linux's ids, as listed in
 * /proc/self/task): e.g. Node's own helper threads. Ids that are not threads of this process are
 * skipped. Returns how many threads it changed; 0 where it is not possible.
 */
export declare function backgroundThreads(threadIds: number[]): number;

/**
 * Asks Linux to back the whole pages of `view`'s memory with transparent huge pages (madvise
 * MADV_HUGEPAGE): one page fault per 2 MB instead of one per 4 KB when it is first written. True
 * where the advice was taken; false where it is not possible (another OS, THP not in the kernel).
 * Memory added to the buffer later (a grown WebAssembly.Memory) needs asking again.
 */
export declare function hugePages(view: ArrayBufferView): boolean;
