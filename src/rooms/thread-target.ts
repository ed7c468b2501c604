/**
 * Where a message or question naming a thread goes: that thread when it is an active thread of the
 * room, or, when it was merged, the survivor that took its messages (followed through later merges).
 * A socket's `say` and `ask`, the HTTP ask and an import resolve a requested thread the same way.
 */
import { errors } from '../errors.js';
import { survivorOf, takesNoMessages } from '../store/thread-survivor.js';
import type { Store, Thread } from '../store/types.js';

/**
 * The active thread of `roomId` that takes a message naming `requested`, refused as the store's
 * append refuses it: ERR_THREAD_NOT_FOUND when the room has no such thread (gone, or another
 * room's), ERR_THREAD_ARCHIVED when it leads to no active thread (archived without a merge, or
 * merged on past MAX_MERGE_HOPS). A client then hears the same code whether the room or the store
 * found the thread archived.
 */
export async function threadTakingMessages(store: Pick<Store, 'getThread'>, roomId: string, requested: string): Promise<Thread> {
  const thread = await survivorOf(store, requested);
  if (!thread || thread.roomId !== roomId) throw new errors.ERR_THREAD_NOT_FOUND(`${requested} in this room`);
  if (thread.status !== 'active') throw takesNoMessages(requested, thread.mergedInto);
  return thread;
}

/**
 * `threadTakingMessages` for an HTTP request that names both a room and a thread (the ask, an
 * import): a thread of another room is ERR_BAD_REQUEST there, the two ids not going together,
 * where a socket, which names no room per message, hears ERR_THREAD_NOT_FOUND.
 */
export async function requestedThread(store: Pick<Store, 'getThread'>, roomId: string, requested: string): Promise<Thread> {
  const given = await store.getThread(requested);
  if (given && given.roomId !== roomId) throw new errors.ERR_BAD_REQUEST(`threadId ${requested} is not a thread of room ${roomId}`);
  return threadTakingMessages(store, roomId, requested);
}
