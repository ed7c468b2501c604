/** Shapes of the content that rooms are about, and the server's helpers around them. */
import type { ContentItem, ContentKind } from '../protocol/content.js';
import { CONTENT_KINDS } from '../protocol/content.js';

export { CONTENT_KINDS };
export type { Comment, ContentItem, ContentKind, ItemSummary, ItemWithoutComments, StoredItem } from '../protocol/content.js';

/** Pattern of the part of a content id after its kind prefix. */
export const CONTENT_ID_SUFFIX = /^[A-Za-z0-9_-]{1,128}$/;

/** The kind a content id names, or null if it is not a content id. */
export function kindOfId(id: string): ContentKind | null {
  const m = /^(news|post|video)_(.+)$/.exec(id);
  if (!m || !CONTENT_ID_SUFFIX.test(m[2])) return null;
  return m[1] as ContentKind;
}

export const SOURCE_TYPES = ['document', 'conversation'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** A chunk before it is stored. */
export interface NewChunk {
  /** Position of the chunk within its item. */
  ord: number;
  /** `title`, `body` or `comment`. */
  part: 'title' | 'body' | 'comment';
  text: string;
  /** For comment chunks, the commenter. */
  commentBy?: string | null;
}

/** A stored chunk with its item's head (read together). `rowId` is the integer label used by the vector index. */
export interface ChunkRow extends NewChunk {
  rowId: number;
  itemId: string;
  itemKind: ContentKind;
  itemTitle: string;
  itemUrl: string | null;
  /** The item's publishedAt (ISO-8601): search filters by it without reading the item. */
  itemPublishedAt: string | null;
  /** The item's `source` (`hn`, `reddit`, `feed`, …): a comment's label names the site it was written on. */
  itemSource: string;
  category: string | null;
  sourceType: SourceType;
  /** sha256 of `text`, the key of the embedding cache. */
  textHash: string;
}

/** Told when an item's chunks change, so the vector index can follow (the search area's Indexer). */
export interface ChunkSink {
  chunksChanged(change: { added: ChunkRow[]; removed: number[] }): Promise<void>;
}

/**
 * A ContentItem whose optional fields are empty, completed by `fields`; its kind comes from the
 * id's prefix. For importers, evaluations, benchmarks and tests that build items by hand.
 */
export function blankItem(id: string, fields: Partial<ContentItem> = {}): ContentItem {
  const kind = kindOfId(id);
  if (!kind) throw new TypeError(`blankItem: "${id}" is not a content id`);
  return {
    id,
    kind,
    title: id,
    url: null,
    description: '',
    body: '',
    comments: [],
    category: null,
    publishedAt: null,
    image: null,
    author: null,
    channel: null,
    thumbnail: null,
    siteName: null,
    source: 'api',
    ...fields,
  };
}
