/**
 * Where a message or question naming a thread goes: that thread when it is an active thread of the
 * room, or, when it was merged, the survivor that took its messages (followed through later merges).
 * A socket's `say` and `ask` and the HTTP ask resolve a requested thread the same way.
 */
import { survivorOf } from '../store/thread-survivor.js';
import type { Store, Thread } from '../store/types.js';

/** The active thread of `roomId` that `requested` leads to, or null when it leads to none. */
export async function activeThreadFor(store: Pick<Store, 'getThread'>, roomId: string, requested: string): Promise<Thread | null> {
  const thread = await survivorOf(store, requested);
  return thread && thread.roomId === roomId && thread.status === 'active' ? thread : null;
}
