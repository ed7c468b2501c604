/** Shapes shared by the stages of the RAG pipeline (docs/architecture.md). */
import type { ChunkRow, ContentKind } from '../content/types.js';
import type { ItemDetails } from '../content/item-details.js';

/** What the pipeline needs to know about the room it answers in. */
export interface RoomView {
  id: string;
  title: string;
  /** Title + summary (≤ 2000 chars): the prompt's primary topic. */
  context: string;
  /** A topic room's category: its answers come from that category's items. */
  category?: string;
  /** An item room's item: who made it, where and when it was published. */
  details?: ItemDetails;
}

/** One stage-1 result: an item (or one commenter of an item) found through its best chunk. */
export interface Candidate {
  /** Deduplication key: the item id, or `itemId#comment:by` for a commenter's words. */
  key: string;
  itemId: string;
  kind: ContentKind | 'comment';
  /** The chunk the snippet shows: the best-matching one that is not just the title. */
  chunk: ChunkRow;
  /** Best chunk's cosine plus a little of the second's, the better of the two searches. */
  score: number;
  /** 1: room title + question, 2: question alone (the search that scored it best). */
  search: 1 | 2;
  /** Item title, or a comment's label (`HN comment by X`, see commentLabel). */
  label: string;
  itemTitle: string;
  url: string | null;
  /** ~150 chars around the chunk's best-matching sentence (shown with the answer's sources). */
  excerpt: string;
  /** `label: excerpt`: all the reranker sees of this candidate. */
  snippet: string;
  /** The most distinct content terms of the question one sentence of the chunk holds (0 when unknown). */
  held?: number;
}
