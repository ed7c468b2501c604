/**
 * Where a split sends the memory filed in its thread after it read it (ThreadChange.memoryRead),
 * decided inside the split's transaction by both stores as ThreadService.split decides for the
 * chunks it read: a chunk goes with its messages.
 */
import type { MemoryChunkKind } from '../memory/types.js';
import type { ThreadChange } from './types.js';

/** A chunk of the split thread that the split did not read: filed while it planned. */
export interface LateChunk {
  id: number;
  kind: MemoryChunkKind;
  messageIds: string[];
}

/** What the split's transaction does with its late chunks. */
export interface LatePlacement {
  /** Chunks whose messages all went to one thread (an exchange: its question), by that thread. */
  moves: Map<string, number[]>;
  /** Chunks whose messages are parted between threads now: deleted, to be windowed again where each message is. */
  parted: LateChunk[];
}

/**
 * Places the chunks of `threadId` filed after `read` was taken that cite a message `moveMessages`
 * moves; the others stay. An exchange goes whole with its question, as the split's plan sends it.
 */
export function placeLateMemory(change: Pick<ThreadChange, 'moveMessages'>, threadId: string, late: LateChunk[]): LatePlacement {
  const movedTo = new Map<string, string>();
  for (const { ids, threadId: to } of change.moveMessages ?? []) for (const id of ids) movedTo.set(id, to);
  const placement: LatePlacement = { moves: new Map(), parted: [] };
  for (const chunk of late) {
    const cited = chunk.kind === 'exchange' ? chunk.messageIds.slice(0, 1) : chunk.messageIds;
    const where = new Set(cited.map((m) => movedTo.get(m) ?? threadId));
    if (!where.size || (where.size === 1 && where.has(threadId))) continue;
    if (where.size > 1) {
      placement.parted.push(chunk);
      continue;
    }
    const [to] = where;
    const ids = placement.moves.get(to);
    if (ids) ids.push(chunk.id);
    else placement.moves.set(to, [chunk.id]);
  }
  return placement;
}

/** A stored chunk's message ids (a JSON array in both stores); none when the row holds something else. */
export function messageIdsOf(json: unknown): string[] {
  if (typeof json !== 'string') return [];
  try {
    const ids: unknown = JSON.parse(json);
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}
