/** The vector index seam (DESIGN §2, search/). */
import type { ContentKind, SourceType } from '../content/types.js';

/** Per-row metadata kept in memory so filters need no store round trip. */
export interface VectorMeta {
  kind: ContentKind | 'thread';
  sourceType: SourceType;
  /** Room or thread the row belongs to (conversation memory); null for documents. */
  scope: string | null;
  privileged: boolean;
}

export interface VectorFilter {
  kinds?: VectorMeta['kind'][];
  sourceType?: SourceType;
  /** Only rows whose scope is one of these. */
  scopes?: string[];
  /** Privileged rows are excluded unless this is true. */
  includePrivileged?: boolean;
}

export interface VectorHit {
  rowId: number;
  /** Cosine similarity. */
  score: number;
}

export interface VectorEntry {
  rowId: number;
  vector: Float32Array;
  meta: VectorMeta;
}

/** Nearest-neighbour search over chunk vectors, labelled by integer row ids. */
export interface VectorIndex {
  readonly dimensions: number;
  readonly size: number;
  /** Adds or replaces rows. */
  upsert(entries: VectorEntry[]): Promise<void>;
  remove(rowIds: number[]): Promise<void>;
  /** The k best rows passing `filter`, best first. */
  search(query: Float32Array, k: number, filter?: VectorFilter): Promise<VectorHit[]>;
  close(): Promise<void>;
}
