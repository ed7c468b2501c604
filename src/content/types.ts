/** Shapes of the content that rooms are about (DESIGN §1). */

export const CONTENT_KINDS = ['news', 'post', 'video'] as const;
export type ContentKind = (typeof CONTENT_KINDS)[number];

/** Pattern of the part of a content id after its kind prefix. */
export const CONTENT_ID_SUFFIX = /^[A-Za-z0-9_-]{1,128}$/;

/** A Hacker News comment kept with the story it belongs to. */
export interface Comment {
  by: string;
  text: string;
  /** Unix seconds, as the HN API gives it. */
  time: number;
}

/** One article, post or video. `id` is `<kind>_<suffix>`. */
export interface ContentItem {
  id: string;
  kind: ContentKind;
  title: string;
  url: string | null;
  description: string;
  body: string;
  comments: Comment[];
  category: string | null;
  /** ISO-8601. */
  publishedAt: string | null;
  image: string | null;
  author: string | null;
  channel: string | null;
  thumbnail: string | null;
  siteName: string | null;
  /** Where it came from: `demo`, `url`, `feed`, `hn`, `video-json`, `markdown`, `api`. */
  source: string;
}

/** A stored item: the item plus what the store adds. */
export interface StoredItem extends ContentItem {
  /** sha256 of the item's meaningful fields; re-ingesting identical content changes nothing. */
  hash: string;
  createdAt: string;
  updatedAt: string;
}

/** What the list API shows of an item (`GET /api/v1/content`): everything but the body, the comments and the source. */
export type ItemSummary = Omit<ContentItem, 'body' | 'comments' | 'source'> & {
  commentCount: number;
};

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
