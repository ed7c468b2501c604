/** Chunk groups and references (ChunkRef): how hits are grouped before their rows are read. */
import type { ChunkRow } from '../content/types.js';
import type { ChunkHit, ChunkRef } from './types.js';

/** A chunk's group: its item, or for a comment the item and commenter (a commenter's words are a source of their own). */
export function chunkGroup(c: Pick<ChunkRow, 'itemId' | 'part' | 'commentBy'>): string {
  return c.part === 'comment' && c.commentBy ? `${c.itemId}#comment:${c.commentBy}` : c.itemId;
}

/** The reference of a hit whose row is at hand. */
export function refOf(hit: ChunkHit): ChunkRef {
  return {
    rowId: hit.chunk.rowId,
    score: hit.score,
    group: chunkGroup(hit.chunk),
    title: hit.chunk.part === 'title',
    ...(hit.match ? { match: hit.match } : {}),
  };
}
