/**
 * Bridges between threads (docs/architecture.md, "Threads: merge, split, fusion and bridges"): each
 * thread's centroid is the mean of its public memory vectors; two active threads of a room whose
 * centroids are close are bridged, weighted by that cosine. Bridges are refreshed a little after a
 * thread's memory changes (a debounce per room), and strong ones become merge suggestions, except
 * between a fused thread and the threads it was made from. Nothing ever merges by itself.
 */
import { cosine } from '../../ai/vectors.js';
import { errors } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { silentLogger } from '../../logger.js';
import { survivorOf } from '../../store/thread-survivor.js';
import type { Store, Thread, ThreadBridge } from '../../store/types.js';
import type { MemoryService } from '../memory-service.js';
import { RecentMap } from '../recent-map.js';
import { Turns } from './turns.js';

/** The running sum of a thread's public memory vectors, and its room when known (to drop it with the thread). */
interface ThreadSum {
  sum: Float64Array;
  n: number;
  roomId: string | null;
}

/**
 * Centroid cosine from which two threads are bridged. Memory windows carry their speakers' names
 * and dates, which two threads of one room share whatever they discuss: with the local embedder,
 * windows of the same people on unrelated subjects score 0.48–0.54 and on one subject 0.62 and up.
 */
export const BRIDGE_MIN = 0.6;
/** Bridge weight from which a pair of threads is suggested for a merge. */
export const SUGGEST_MIN = 0.8;
/** Quiet time after a memory change before a room's bridges are recomputed. */
export const BRIDGE_REFRESH_MS = 10_000;
/** Chunks read per page while a centroid is computed (with their vectors: ~1 MB, a few ms). */
const PAGE = 128;
/**
 * Threads whose running sums are kept, at most: 16 KB each at 2,048 dimensions, so 16 MB. A thread
 * past it is summed from the store again when its room's bridges are next refreshed.
 */
export const DEFAULT_MAX_THREAD_SUMS = 1_024;
/** A fused thread's history events read for the fusion that made it (a thread's history is short). */
const HISTORY_READ = 1_000;

/** A suggested merge (survivor: the main thread, else the heavier, else the older). */
export type { MergeSuggestion } from '../../protocol/threads.js';
import type { MergeSuggestion } from '../../protocol/threads.js';

export class ThreadBridges {
  /**
   * Running sums of recently bridged threads' public memory vectors: dropped when a thread
   * operation changes a thread's memory, when it is deleted or archived (here or on another node),
   * and past `maxThreadSums` the least recently used.
   */
  private readonly sums: RecentMap<string, ThreadSum>;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly log: Logger;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly memory: MemoryService,
    options: { log?: Logger; refreshMs?: number; maxThreadSums?: number } = {},
  ) {
    this.log = options.log ?? silentLogger;
    this.refreshMs = options.refreshMs ?? BRIDGE_REFRESH_MS;
    this.sums = new RecentMap(options.maxThreadSums ?? DEFAULT_MAX_THREAD_SUMS);
  }

  /** Threads whose running sums are held now. */
  get heldSums(): number {
    return this.sums.size;
  }

  private readonly refreshMs: number;

  /** A new public chunk of `threadId` was stored with `vector`: its centroid moves, its room's bridges are refreshed soon. */
  chunkAdded(threadId: string, roomId: string, vector: Float32Array): void {
    const s = this.sums.get(threadId);
    if (s) {
      for (let i = 0; i < vector.length; i++) s.sum[i] += vector[i];
      s.n++;
    }
    this.schedule(roomId);
  }

  /**
   * A thread operation changed these threads' memory, or they were deleted or archived: their
   * centroids are recomputed from the store if asked for again.
   */
  invalidate(threadIds: string[]): void {
    if (threadIds.length) this.invalidations++;
    for (const id of threadIds) this.sums.delete(id);
  }

  /** Counts invalidate() calls: a sum read from the store across one of them may be stale, and is not kept. */
  private invalidations = 0;

  /**
   * The mean of the thread's public memory vectors (L2-normalised), or null when it remembers nothing.
   * A thread not summed yet is read from the store with turns of the event loop (`turns`, shared by
   * a refresh's threads): SQLite answers every page at once, and a room's threads of thousands of
   * chunks each held every room for seconds.
   */
  async centroid(threadId: string, roomId: string | null = null, turns = new Turns()): Promise<Float32Array | null> {
    let s = this.sums.get(threadId);
    if (!s) {
      const since = this.invalidations;
      s = { sum: new Float64Array(0), n: 0, roomId };
      for (let after = 0; ;) {
        if (turns.due()) await turns.next();
        const page = await this.store.scanThreadMemory(threadId, after, PAGE);
        if (!page.length) break;
        after = page[page.length - 1].id;
        const pub = page.filter((c) => !c.privileged);
        const vectors = await this.memory.vectorsOf(pub);
        for (const v of vectors) {
          if (turns.due()) await turns.next();
          if (s.sum.length !== v.length) s.sum = new Float64Array(v.length);
          for (let i = 0; i < v.length; i++) s.sum[i] += v[i];
          s.n++;
        }
      }
      if (since === this.invalidations) this.sums.set(threadId, s);
    }
    if (!s.n) return null;
    const out = new Float32Array(s.sum.length);
    let norm = 0;
    for (let i = 0; i < out.length; i++) norm += s.sum[i] * s.sum[i];
    norm = Math.sqrt(norm) || 1;
    for (let i = 0; i < out.length; i++) out[i] = s.sum[i] / norm;
    return out;
  }

  /**
   * Recomputes the bridges among the room's active threads now: a bridge for every pair whose
   * centroids reach BRIDGE_MIN, and always one between a split thread and its parent. A thread
   * operation (here or on another node) that changed or removed one of the threads while this
   * computed wins: nothing is written (its own bridges stand), null comes back, and the room is
   * refreshed again later, from the memory as it is now.
   */
  async refresh(roomId: string): Promise<ThreadBridge[] | null> {
    const threads = await this.store.listThreads(roomId, 0); // active threads only: no archived one asked for
    this.dropGone(roomId, new Set(threads.map((t) => t.id)));
    // A room with one active thread (most rooms) has no pair to bridge: nothing to compute, and
    // nothing to write unless a bridge of that thread is left from before.
    if (threads.length < 2) {
      const stale = threads.length ? await this.store.threadBridges(threads[0].id) : [];
      if (stale.length && !(await this.write(roomId, threads, []))) return null;
      return [];
    }
    const centroids = new Map<string, Float32Array | null>();
    const turns = new Turns();
    for (const t of threads) centroids.set(t.id, await this.centroid(t.id, roomId, turns));
    const bridges: ThreadBridge[] = [];
    for (let i = 0; i < threads.length; i++) {
      for (let j = i + 1; j < threads.length; j++) {
        const [a, b] = [threads[i], threads[j]];
        const ca = centroids.get(a.id);
        const cb = centroids.get(b.id);
        const related = a.parentId === b.id || b.parentId === a.id;
        const weight = ca && cb && ca.length === cb.length ? round(cosine(ca, cb)) : 0;
        if (weight >= BRIDGE_MIN || related) bridges.push({ threadId: a.id, otherId: b.id, weight });
      }
    }
    return (await this.write(roomId, threads, bridges)) ? bridges : null;
  }

  /** Replaces the bridges of `threads` with `bridges`; false when a thread operation changed one of them since it was listed. */
  private async write(roomId: string, threads: Thread[], bridges: ThreadBridge[]): Promise<boolean> {
    try {
      await this.store.applyThreadChange({
        at: new Date().toISOString(),
        expect: [],
        bridgesRead: threads.map(({ id, version }) => ({ id, version })),
        dropBridgesOf: threads.map((t) => t.id),
        setBridges: bridges,
      });
      return true;
    } catch (err) {
      if (!(err instanceof errors.ERR_THREAD_CHANGED || err instanceof errors.ERR_THREAD_NOT_FOUND)) throw err;
      this.log.debug({ roomId, err: (err as Error).message }, 'thread bridges not refreshed: a thread changed meanwhile; refreshing again later');
      this.schedule(roomId);
      return false;
    }
  }

  /**
   * Strong bridges of the thread to active threads, neither split-locked nor a fusion made from the
   * other: what the room is told it could merge.
   */
  async suggestions(thread: Thread): Promise<MergeSuggestion[]> {
    if (thread.status !== 'active' || thread.splitLockedUntil) return [];
    const out: MergeSuggestion[] = [];
    const madeFrom = await this.fusedFrom(thread);
    for (const b of await this.store.threadBridges(thread.id)) {
      if (b.weight < SUGGEST_MIN || madeFrom.has(b.otherId)) continue;
      const other = await this.store.getThread(b.otherId);
      if (!other || other.status !== 'active' || other.splitLockedUntil) continue;
      if ((await this.fusedFrom(other)).has(thread.id)) continue;
      const thisSurvives =
        thread.main || (!other.main && (thread.weight > other.weight || (thread.weight === other.weight && thread.createdAt <= other.createdAt)));
      out.push(
        thisSurvives ? { survivorId: thread.id, absorbedId: other.id, weight: b.weight } : { survivorId: other.id, absorbedId: thread.id, weight: b.weight },
      );
    }
    return out;
  }

  /**
   * The threads a fused thread was made from, and those that absorbed them since (through merges
   * of merges); empty for a thread that is not a fusion. A fusion holds copies of its sources'
   * memory, so it is as alike to them as threads get, and merging it into one of them (or one into
   * it) would only undo the fusion: such a pair is bridged, never suggested.
   */
  private async fusedFrom(thread: Thread): Promise<Set<string>> {
    const out = new Set<string>();
    if (!thread.isMerged) return out;
    for (const event of await this.store.threadHistory(thread.id, HISTORY_READ)) {
      // The fusion's own event names its sources; the sources' events name the fusion (fusedInto).
      const { sourceIds, fusedInto } = event.details;
      if (event.action !== 'fuse' || fusedInto !== undefined || !Array.isArray(sourceIds)) continue;
      for (const id of sourceIds) {
        if (typeof id !== 'string') continue;
        out.add(id);
        const survivor = await survivorOf(this.store, id);
        if (survivor) out.add(survivor.id);
      }
    }
    return out;
  }

  /** Stops pending refreshes. */
  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** Drops the sums of the room's threads that are no longer active: deleted or archived on a node whose word did not reach this one. */
  private dropGone(roomId: string, active: ReadonlySet<string>): void {
    const gone: string[] = [];
    for (const [id, s] of this.sums) if (s.roomId === roomId && !active.has(id)) gone.push(id);
    this.invalidate(gone);
  }

  private schedule(roomId: string): void {
    if (this.closed || this.timers.has(roomId)) return;
    const timer = setTimeout(() => {
      this.timers.delete(roomId);
      this.refresh(roomId).catch((err: unknown) => this.log.warn({ roomId, err: (err as Error)?.message }, 'refreshing thread bridges failed'));
    }, this.refreshMs);
    timer.unref?.();
    this.timers.set(roomId, timer);
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;
