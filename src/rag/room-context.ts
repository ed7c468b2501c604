/** What the pipeline needs of a room (title and ≤ 2,000-char context), read through a RoomResolver. */
import type { RoomResolver } from '../rooms/types.js';
import type { RoomView } from './types.js';

export const ROOM_CONTEXT_MAX_CHARS = 2000;

/** Adapts a RoomResolver (the rooms core's, src/rooms/resolver.ts) to what the pipeline reads. */
export function roomViews(resolve: RoomResolver): (roomId: string) => Promise<RoomView | null> {
  return async (roomId) => {
    const info = await resolve(roomId);
    return info ? { id: info.id, title: info.title, context: info.context.slice(0, ROOM_CONTEXT_MAX_CHARS) } : null;
  };
}
