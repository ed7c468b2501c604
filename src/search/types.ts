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
  /** search for several queries at once, where the index can do better than one call each. */
  searchMany?(queries: Float32Array[], k: number, filter?: VectorFilter): Promise<VectorHit[][]>;
  close(): Promise<void>;
}

/** A chunk found for a query. */
export interface ChunkHit {
  chunk: import('../content/types.js').ChunkRow;
  /** Cosine similarity; for text matches, the text score scaled so the best hit is 1. */
  score: number;
  /** How it was found: by vector (the norm) or by text (the fallback when embedding fails). */
  match?: 'vector' | 'text';
}

/** An item found for a query (chunks grouped back to items), as `GET /api/v1/search` returns. */
export interface ItemHit {
  id: string;
  kind: ContentKind;
  title: string;
  url: string | null;
  score: number;
  snippet: string;
}

export interface ChunkSearchOptions {
  k: number;
  filter?: VectorFilter;
  /** Drop hits under the embedder's similarity threshold (default true). */
  useThreshold?: boolean;
}

export interface ItemSearchOptions {
  k: number;
  kind?: ContentKind;
  category?: string;
  /** ISO date: only items published at or after it. */
  since?: string;
}

/**
 * Query-level search: embeds the query (falling back to the store's text search when embedding
 * fails, so search degrades rather than errors) and searches the vector index.
 */
export interface SearchService {
  searchChunks(query: string, options: ChunkSearchOptions): Promise<ChunkHit[]>;
  /** searchChunks for several queries at once: one embedder call and one store read for all (results in query order). */
  searchChunksMany(queries: string[], options: ChunkSearchOptions): Promise<ChunkHit[][]>;
  searchItems(query: string, options: ItemSearchOptions): Promise<ItemHit[]>;
}
