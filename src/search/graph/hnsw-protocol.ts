/** Messages between HnswWorkerClient (main thread) and the worker that owns the hnswlib index. */

/** Graph parameters, chosen in hnsw-worker-client.ts (see DEFAULT_HNSW_PARAMS there for the why). */
export interface HnswParams {
  m: number;
  efConstruction: number;
  efSearch: number;
  seed: number;
}

/** What a saved index file is checked against before it is loaded (the sidecar `<file>.json`). */
export interface HnswFileFacts {
  dimensions: number;
  /** The embedder model (and anything else) the vectors came from. */
  fingerprint: string;
  /** Live vectors and the checksum of their row ids (MetaStats.checksum). */
  count: number;
  checksum: string;
  m: number;
  efConstruction: number;
  /** How the graph stores vectors (GRAPH_ENCODING in hnsw-worker-client.ts). */
  encoding?: string;
}

export interface HnswSidecar extends HnswFileFacts {
  version: 1;
  /** sha256 of the index file, so a truncated or corrupt file is never handed to hnswlib. */
  sha256: string;
  savedAt: string;
}

export type HnswRequest =
  /** `threads`: native threads each batch of adds runs on. */
  | { op: 'init'; dimensions: number; capacity: number; params: HnswParams; threads: number }
  | { op: 'add'; labels: Int32Array; vectors: Float32Array }
  | { op: 'remove'; labels: number[] }
  /** Several queries in one message: one round trip for all. */
  | { op: 'search'; queries: Float32Array[]; k: number; ef: number }
  | { op: 'save'; path: string; facts: HnswFileFacts }
  | { op: 'load'; path: string; expect: HnswFileFacts; efSearch: number }
  /** Writes the graph as it is to `path` (no sidecar): how a finished graph moves to the main thread. */
  | { op: 'export'; path: string }
  | { op: 'flush' };

export interface HnswReplies {
  init: null;
  add: { count: number; capacity: number };
  /** How many labels were live and are now marked deleted. */
  remove: { deleted: number };
  /** Per query, best first. */
  search: { labels: Int32Array; distances: Float32Array }[];
  save: { bytes: number };
  /** Loaded, or the reason the file was not usable (the caller rebuilds). */
  load: { loaded: true; count: number } | { loaded: false; reason: string };
  /** Answered once every earlier message has been handled. */
  flush: null;
  export: null;
}

export type HnswMessage = HnswRequest & { id: number };
export type HnswResponse = { id: number; result: unknown } | { id: number; error: string };
