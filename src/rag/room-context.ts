/** What the pipeline needs of a room (title and ≤ 2,000-char context), read through a RoomResolver. */
import type { RoomResolver } from '../rooms/types.js';
import { categoryOfTopicTitle, TOPIC_ROOM_PREFIX } from '../protocol/room-ids.js';
import type { RoomView } from './types.js';
import { safeCut } from '../content/text.js';

export const ROOM_CONTEXT_MAX_CHARS = 2000;
/**
 * How long a topic room's view is reused. Resolving one counts the store's categories (half a
 * millisecond at 10,000 items, on every ask); its context only changes when the hourly summary
 * is regenerated, so a new summary reaches the prompt within this time.
 */
export const TOPIC_VIEW_TTL_MS = 30_000;

export interface RoomViewOptions {
  topicTtlMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

/**
 * Adapts a RoomResolver (the rooms core's, src/rooms/resolver.ts) to what the pipeline reads.
 * Content rooms are resolved on every ask (one row read, so a re-ingested item's new title shows at
 * once); topic rooms are reused for `topicTtlMs`.
 */
export function roomViews(resolve: RoomResolver, options: RoomViewOptions = {}): (roomId: string) => Promise<RoomView | null> {
  const ttlMs = options.topicTtlMs ?? TOPIC_VIEW_TTL_MS;
  const now = options.now ?? Date.now;
  const topics = new Map<string, { view: RoomView | null; at: number }>();
  const view = async (roomId: string): Promise<RoomView | null> => {
    const info = await resolve(roomId);
    if (!info) return null;
    // Cut between characters: an emoji across the limit left half of itself in the prompt.
    const view: RoomView = { id: info.id, title: info.title, context: info.context.slice(0, safeCut(info.context, ROOM_CONTEXT_MAX_CHARS)) };
    const category = info.kind === 'topic' ? categoryOfTopicTitle(info.title) : null;
    if (category !== null) view.category = category;
    if (info.details) view.details = info.details;
    return view;
  };
  return async (roomId) => {
    if (!roomId.startsWith(TOPIC_ROOM_PREFIX)) return view(roomId);
    const hit = topics.get(roomId);
    if (hit && now() - hit.at < ttlMs) return hit.view;
    const fresh = await view(roomId);
    // Only a few topics exist, but room ids come from askers: unknown ones are not kept.
    if (fresh) topics.set(roomId, { view: fresh, at: now() });
    else topics.delete(roomId);
    return fresh;
  };
}
