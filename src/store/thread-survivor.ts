/**
 * Where what was begun in a thread goes once that thread is merged: an answer being written, a
 * memory window closing. The merge moved the thread's messages and memory; what lands after it
 * must follow them, not settle in the archived thread where nobody reads or searches it.
 */
import type { Store, Thread } from './types.js';

/** Merges of merges followed at most: a chain longer than a room's threads would be a cycle. */
export const MAX_MERGE_HOPS = 100;

/** `threadId`'s thread, or the thread that absorbed it (through merges of merges); null when it is gone. */
export async function survivorOf(store: Pick<Store, 'getThread'>, threadId: string): Promise<Thread | null> {
  let thread = await store.getThread(threadId);
  for (let hops = 0; thread?.mergedInto && hops < MAX_MERGE_HOPS; hops++) thread = await store.getThread(thread.mergedInto);
  return thread;
}
