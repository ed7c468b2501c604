/**
 * What became of the threads the member's private questions and answers are filed under, where the
 * room's list cannot say: a busy room's list is cut (every active thread, the newest archived
 * ones), so a thread merged while the page was away, or long ago, may be missing from it, and so
 * may its survivor. Those threads are asked of the store (unlisted-thread.ts) and what it said is
 * kept beside the list (RoomThreads.noteUnlisted), so the entries follow merges of merges as those
 * of listed threads do (MessageLog.followMergesPrivately); a thread the store no longer has is
 * reported gone, so its entries can be forgotten. No answer (network, rate limit) leaves the
 * entries where they are, for the next refresh to ask again.
 */
import type { RoomThreads, ThreadMerge } from './room-threads.js';
import type { ThreadView } from './threads-api.js';
import { lookUpUnlisted, MAX_MERGE_HOPS, type FetchThread, type UnlistedThread } from './unlisted-thread.js';

/** Threads one check asks the store about at most (private entries are rarely spread over more). */
export const MAX_THREAD_CHECKS = 10;

/** What one check found. */
export interface PrivateThreadsFound {
  /** Of the threads checked, those that are gone: missing from a complete list, or not found by the store. */
  gone: Set<string>;
  /** Threads the page knew active, from the store, that the store now says were merged: news, as a list's `merged` is. */
  merged: ThreadMerge[];
}

/** A thread to ask the store about, and how many threads its walk may still take (MAX_MERGE_HOPS in all from the entries' thread). */
interface ToAsk {
  id: string;
  hops: number;
  /** The store was asked about it before (it is active, and may have been merged since). */
  again: boolean;
}

/**
 * The thread to ask about for entries filed under `id`: the first thread along its merges that
 * the page does not know, or the last one when the page knows it active only from what the store
 * said before the latest list (fetched, perhaps, on news of a merge the list cannot show: it leaves
 * the thread out). None when the page's word holds (a listed thread, an archived one, the store's
 * since the latest list), the walk meets a thread the store said is gone, or it is MAX_MERGE_HOPS
 * long.
 */
function toAsk(threads: RoomThreads, id: string, gone: ReadonlySet<string>): ToAsk | undefined {
  const seen = new Set<string>();
  for (let at = id; seen.size < MAX_MERGE_HOPS && !seen.has(at) && !gone.has(at);) {
    const thread = threads.byId(at);
    const hops = MAX_MERGE_HOPS - seen.size;
    if (!thread) return { id: at, hops, again: false };
    if (!thread.mergedInto) return thread.status === 'active' && threads.notedBeforeList(at) ? { id: at, hops, again: true } : undefined;
    seen.add(at);
    at = thread.mergedInto;
  }
  return undefined;
}

/** The page's word on a thread, where it still holds: the list's, a merged or archived thread's (it stays so), the store's since the latest list. */
function settled(threads: RoomThreads): (id: string) => ThreadView | undefined {
  return (id) => {
    const thread = threads.byId(id);
    return thread && (thread.status !== 'active' || !threads.notedBeforeList(id)) ? thread : undefined;
  };
}

/** Checks the threads of a page's private entries; one per page, shared by its rooms (thread ids are unique). */
export class PrivateThreads {
  /** Lookups under way, by the thread asked about: refreshes close together share one instead of asking again. */
  private readonly asking = new Map<string, Promise<UnlistedThread>>();
  /** Threads the store said it does not have: never asked about again (a thread id is never reused). */
  private readonly goneIds = new Set<string>();

  constructor(private readonly fetch?: FetchThread) {}

  /**
   * What became of `threadIds` (the threads private entries are filed under) beyond what `threads`
   * knows. A complete list settles it without a request: a thread missing from it is gone. From a
   * cut one, the store is asked, one thread at a time, about at most MAX_THREAD_CHECKS threads, each
   * once however many entries it holds: a thread the page does not know, or the end of its merges
   * as far as known; what it says is noted in `threads`.
   */
  async check(threads: RoomThreads, threadIds: Iterable<string>): Promise<PrivateThreadsFound> {
    const ids = new Set(threadIds);
    if (threads.complete) return { gone: new Set([...ids].filter((id) => !threads.inList(id))), merged: [] };
    const asks = new Map<string, number>();
    // Threads never asked about first: those asked again cannot keep them waiting past the bound.
    const wanted = [...ids].flatMap((id) => toAsk(threads, id, this.goneIds) ?? []).sort((a, b) => Number(a.again) - Number(b.again));
    for (const ask of wanted) {
      if (asks.has(ask.id) || asks.size < MAX_THREAD_CHECKS) asks.set(ask.id, Math.max(ask.hops, asks.get(ask.id) ?? 0));
    }
    const merged: ThreadMerge[] = [];
    for (const [id, hops] of asks) {
      const before = threads.byId(id);
      const found = await this.lookUp(threads, id, hops);
      if (found.kind === 'gone') this.goneIds.add(id);
      if (found.kind !== 'found') continue;
      threads.noteUnlisted(found.chain);
      const mergedInto = found.chain[0].mergedInto;
      if (before && !before.mergedInto && mergedInto) merged.push({ absorbedId: id, survivorId: mergedInto });
    }
    return { gone: new Set([...ids].filter((id) => this.goneIds.has(id))), merged };
  }

  /** The store said `id` is gone (asked by another walk): it is not asked again. */
  noteGone(id: string): void {
    this.goneIds.add(id);
  }

  private lookUp(threads: RoomThreads, id: string, hops: number): Promise<UnlistedThread> {
    let asked = this.asking.get(id);
    if (!asked) {
      asked = lookUpUnlisted(id, settled(threads), this.fetch, hops).finally(() => this.asking.delete(id));
      this.asking.set(id, asked);
    }
    return asked;
  }
}
