/** The vector index seam (docs/search.md). */
import type { ContentKind, SourceType } from '../content/types.js';
import type { SearchHit } from '../protocol/search.js';

/** Per-row metadata kept in memory so filters need no store round trip. */
export interface VectorMeta {
  kind: ContentKind | 'thread';
  sourceType: SourceType;
  /** Room or thread the row belongs to (conversation memory); null for documents. */
  scope: string | null;
  privileged: boolean;
  /** The chunk's group (chunkGroup: its item, or one commenter's words on it), so hits can be grouped before any row is read. */
  group?: string | null;
  /** Whether the chunk is its item's title. */
  title?: boolean;
}

/** What the index remembers of a row for grouping hits: its group and whether it is a title chunk. */
export interface RowHead {
  group: string | null;
  title: boolean;
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

/** A row that takes the vector of a row the index holds already (`from`), with metadata of its own. */
export interface CopyEntry {
  rowId: number;
  from: number;
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
  /** The row ids the index holds (a snapshot), for the check after a store restore (src/sync). */
  rowIds?(): ArrayLike<number>;
  /** The heads of rows, from memory (undefined for a row not in the index). */
  heads?(rowIds: number[]): (RowHead | undefined)[];
  /** Exact cosines of `query` with the rows of `hits` it holds (the others are dropped), best first. */
  rescore?(query: Float32Array, hits: VectorHit[]): VectorHit[];
  /** rescore with the vector of the row `rowId` as the query; null when that row is not held. */
  rescoreByRow?(rowId: number, hits: VectorHit[]): VectorHit[] | null;
  /**
   * Exact cosines of stored rows with stored rows, many queries at once: for each of `queries`,
   * one score per row of `candidates[i]` (undefined where either row is not held). Null when the
   * index cannot do better than rescoreByRow once per query.
   */
  cosinesOfRows?(queries: number[], candidates: number[][]): (number | undefined)[][] | null;
  /** Copies the (normalised) vectors of the rows of `rowIds` it holds into `out`, packed in that order; returns their ids. */
  copyVectors?(rowIds: number[], out: Float32Array): number[];
  /**
   * Calls `visit(i, vector)` for each row of `rowIds` it holds (`i`: the position in `rowIds`), with
   * the normalised vector where the index keeps it: a view valid only during the call, which is
   * synchronous (nothing can move or grow the rows meanwhile). Returns how many it visited.
   */
  visitVectors?(rowIds: number[], visit: (i: number, vector: Float32Array) => void): number;
  /**
   * Makes room for `rows` more rows ahead of writing them, and gets their memory ready off the
   * calling thread (FlatIndex: its pages mapped by the scan pool), so that the write itself is a
   * copy. Resolves when that is done.
   */
  reserve?(rows: number): Promise<void>;
  /**
   * Adds or replaces rows whose vector is that of a row held already (no vector crosses the API);
   * resolves to the entries whose `from` it does not hold, which the caller upserts with a vector.
   */
  copyRows?(entries: CopyEntry[]): Promise<CopyEntry[]>;
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

/**
 * A chunk hit before its row is read: enough to group hits by item (or commenter) and to tell
 * title chunks apart, so a caller keeping a few of them reads only those rows (Store.getChunks).
 */
export interface ChunkRef {
  rowId: number;
  score: number;
  /** chunkGroup of the chunk. */
  group: string;
  title: boolean;
  match?: ChunkHit['match'];
}

/** An item found for a query (chunks grouped back to items), as `GET /api/v1/search` returns. */
export type ItemHit = SearchHit;

export interface ChunkSearchOptions {
  k: number;
  filter?: VectorFilter;
  /** Drop hits under the embedder's similarity threshold (default true). */
  useThreshold?: boolean;
  /**
   * Told the queries' vectors (in query order; null for a blank query) as soon as they are made,
   * before the index is searched, or null when embedding failed: so a caller can reuse them.
   */
  onVectors?(vectors: (Float32Array | null)[] | null): void;
  /** Aborts the queries' embedding (an answer cancelled or past its time); the search then rejects with its reason. */
  signal?: AbortSignal;
}

export interface ItemSearchOptions {
  k: number;
  kind?: ContentKind;
  /** Only items of this category, its ASCII letters in any case (as the content list matches it). */
  category?: string;
  /** ISO date: only items published at or after it. */
  since?: string;
  /** A site (host name): only items whose url is on it or on one of its subdomains (src/protocol/search.ts). */
  source?: string;
}

/**
 * Query-level search: embeds the query (falling back to the store's text search when embedding
 * fails, so search degrades rather than errors) and searches the vector index.
 */
export interface SearchService {
  searchChunks(query: string, options: ChunkSearchOptions): Promise<ChunkHit[]>;
  /** searchChunks for several queries at once: one embedder call and one store read for all (results in query order). */
  searchChunksMany(queries: string[], options: ChunkSearchOptions): Promise<ChunkHit[][]>;
  /** searchChunksMany without reading rows where the index remembers each row's group (ChunkRef). */
  searchChunkRefsMany(queries: string[], options: ChunkSearchOptions): Promise<ChunkRef[][]>;
  searchItems(query: string, options: ItemSearchOptions): Promise<ItemHit[]>;
}
