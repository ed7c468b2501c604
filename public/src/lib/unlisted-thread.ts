/**
 * Threads the room's cut list leaves out (it holds every active thread but only the newest archived
 * ones), asked of the store one at a time (`GET /api/v1/threads/:id`): whether they are gone, and
 * where their merges lead.
 */
import { ApiError } from './api.js';
import { threadDetail, type ThreadView } from './threads-api.js';

/** Threads asked about at most for one thread: merges of merges are followed this far. */
export const MAX_MERGE_HOPS = 10;

/** What the store said of an unlisted thread. */
export type UnlistedThread =
  /** The store has no such thread (ERR_THREAD_NOT_FOUND). */
  | { kind: 'gone' }
  /** No answer that proves anything (network, rate limit, server failure): ask again later. */
  | { kind: 'unknown' }
  /**
   * The thread, then each thread its merges lead to, as far as the walk went: it ends on a thread
   * not merged, on one whose survivor is gone, or after MAX_MERGE_HOPS.
   */
  | { kind: 'found'; chain: ThreadView[] };

/** How a thread is fetched (threadDetail's thread, by default). */
export type FetchThread = (id: string) => Promise<ThreadView>;

const fetchThread: FetchThread = async (id) => (await threadDetail(id)).thread;

const notFound = (err: unknown) => err instanceof ApiError && err.code === 'ERR_THREAD_NOT_FOUND';

/**
 * Asks the store about `id`, and follows its `mergedInto` through merges of merges: a thread the
 * list names (`listed`) is taken from it, any other is fetched. `maxHops`: threads the chain holds
 * at most (fewer where the walk to `id` already took some). Never throws.
 */
export async function lookUpUnlisted(
  id: string,
  listed: (id: string) => ThreadView | undefined,
  fetch: FetchThread = fetchThread,
  maxHops = MAX_MERGE_HOPS,
): Promise<UnlistedThread> {
  let at: ThreadView;
  try {
    at = await fetch(id);
  } catch (err) {
    return notFound(err) ? { kind: 'gone' } : { kind: 'unknown' };
  }
  const chain = [at];
  while (at.mergedInto && chain.length < maxHops) {
    const next = at.mergedInto;
    // Each thread once: a cycle (which merges cannot make) ends the walk.
    if (chain.some((t) => t.id === next)) break;
    try {
      at = listed(next) ?? (await fetch(next));
    } catch (err) {
      // A survivor deleted since: the walk ends on the merged thread, which leads nowhere.
      if (notFound(err)) break;
      return { kind: 'unknown' };
    }
    chain.push(at);
  }
  return { kind: 'found', chain };
}
