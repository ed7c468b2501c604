/**
 * Where what was begun in a thread goes once that thread is merged: an answer being written, a
 * memory window closing, a message naming it. The merge moved the thread's messages and memory;
 * what lands after it must follow them, not settle in the archived thread where nobody reads or
 * searches it.
 */
import { errors } from '../errors.js';
import type { Store, Thread } from './types.js';

/**
 * Merges of merges followed at most, by every walk along `merged_into` (this one, the stores'
 * appends and memory writes, the rooms' `threadTakingMessages`). A merge takes two active threads and archives one, so a
 * chain has no cycle and its length is how many merges were made one after another; it grows with
 * a room's history, not with its active threads. The bound only stops a walk over damaged rows
 * (a cycle), so it is far beyond a chain anyone merges by hand while small enough to walk: at most
 * 100 primary-key reads, which SQLite's append makes inside its write transaction.
 */
export const MAX_MERGE_HOPS = 100;

/** `threadId`'s thread, or the thread that absorbed it (through merges of merges); null when it is gone. */
export async function survivorOf(store: Pick<Store, 'getThread'>, threadId: string): Promise<Thread | null> {
  let thread = await store.getThread(threadId);
  for (let hops = 0; thread?.mergedInto && hops < MAX_MERGE_HOPS; hops++) thread = await store.getThread(thread.mergedInto);
  return thread;
}

/**
 * The refusal of a message for `requested` whose walk along `merged_into` ended on an archived
 * thread: one archived without a merge, or a shell still merged on after MAX_MERGE_HOPS (`mergedInto`
 * its next hop). Nothing is stored: in the archived shell nobody would read or search it.
 */
export function takesNoMessages(requested: string, mergedInto: string | null): Error {
  return new errors.ERR_THREAD_ARCHIVED(requested, mergedInto ? `more than ${MAX_MERGE_HOPS} merges from an active thread` : 'it takes no messages');
}
