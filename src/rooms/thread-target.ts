/**
 * Where a message or question naming a thread goes: that thread when it is an active thread of the
 * room, or, when it was merged, the survivor that took its messages (followed through later merges).
 * A socket's `say` and `ask` and the HTTP ask resolve a requested thread the same way.
 */
import type { Store, Thread } from '../store/types.js';

/** Merges followed from an archived thread to the one that took its messages, at most. */
const MAX_MERGE_HOPS = 8;

/** The active thread of `roomId` that `requested` leads to, or null when it leads to none. */
export async function activeThreadFor(store: Pick<Store, 'getThread'>, roomId: string, requested: string): Promise<Thread | null> {
  let thread = await store.getThread(requested);
  for (let hops = 0; thread?.mergedInto && hops < MAX_MERGE_HOPS; hops++) thread = await store.getThread(thread.mergedInto);
  return thread && thread.roomId === roomId && thread.status === 'active' ? thread : null;
}
