/**
 * Content as the HTTP API shows it: the shapes the server stores and serves and the browser
 * client reads. Server-side helpers around them live in src/content/types.ts.
 */

export const CONTENT_KINDS = ['news', 'post', 'video'] as const;
export type ContentKind = (typeof CONTENT_KINDS)[number];

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

/** A stored item read without its comments (Store.getItemsWithoutComments). */
export type ItemWithoutComments = Omit<StoredItem, 'comments'>;

/** What the list API shows of an item (`GET /api/v1/content`): everything but the body, the comments and the source. */
export type ItemSummary = Omit<ContentItem, 'body' | 'comments' | 'source'> & {
  commentCount: number;
};

/** An item's page in the browser client: a post's page, a video's watch page, a story's room. */
export function itemPagePath(item: { id: string; kind: ContentKind }): string {
  const id = encodeURIComponent(item.id);
  if (item.kind === 'post') return `/post?id=${id}`;
  if (item.kind === 'video') return `/watch?id=${id}`;
  return `/chat?id=${id}`;
}
