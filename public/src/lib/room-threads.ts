/**
 * What the page knows of a room's threads: the list (`GET /api/v1/rooms/:id/threads`), each
 * thread's message count and merge suggestions (`GET /api/v1/threads/:id`, fetched once per thread
 * and again only when the thread changed), kept per room while the page lives.
 *
 * Counts then follow the room's live messages. The list is fetched again on events: a thread
 * command's reply, a message in a thread the page does not know, a warning, a switch of thread.
 * A refresh reports which threads may now hold messages the page filed under another thread
 * (new threads split off, survivors of a merge), so the room can file them again.
 */
import { plural } from './format.js';
import { listThreads, threadDetail, type MergeSuggestion, type ThreadDetail, type ThreadView } from './threads-api.js';

/** Where a room's threads are read from: the server's API, or a test's stand-in. */
export interface ThreadsSource {
  listThreads: typeof listThreads;
  threadDetail: typeof threadDetail;
}

const serverThreads: ThreadsSource = { listThreads, threadDetail };

/** Thread details fetched at once at most. */
const DETAIL_CONCURRENCY = 4;
/** Active threads the server lists at most (GET /api/v1/rooms/:id/threads). */
const ACTIVE_LISTED = 100;

/** A merge a refresh found: `absorbedId` was listed unmerged before, and is merged into `survivorId` now. */
export interface ThreadMerge {
  absorbedId: string;
  survivorId: string;
}

/** What a refresh found. */
export interface ThreadsChange {
  /** Threads whose messages may have come from other threads (split children, merge survivors). */
  regrouped: string[];
  /**
   * Threads the previous list named unmerged that this one names merged (none on the first fetch),
   * and the open thread the list leaves out when its detail names it merged and the store had not.
   */
  merged: ThreadMerge[];
  /** This was the room's first list in this page: the open thread, if any, is the one the page restored, not one picked from a list. */
  first: boolean;
}

/** The fields whose change means the thread's messages or count may have changed. */
function shapeOf(t: ThreadView): string {
  return JSON.stringify([t.status, t.childIds, t.mergedInto, t.splitLockedUntil, t.weight, t.title]);
}

export class RoomThreads {
  list: ThreadView[] = [];
  /** Archived threads of the room in all (the list holds the newest of them only). */
  archivedTotal = 0;
  /** The list has been fetched at least once. */
  loaded = false;
  /** Called after every change, so the page re-renders. */
  onChange: () => void = () => {};
  /** Messages per thread id, as far as known (a new object after each change). */
  counts: Readonly<Record<string, number>> = {};
  /** The room's seq each count was read at (the detail's `seq`): a live message at or below it is counted already. */
  private readonly countedAt = new Map<string, number>();
  /**
   * Threads whose count leaves out an import the store had not made readable (the detail's
   * `unsettledImports`) and whose messages have not begun to arrive: the count says so (a new
   * object after each change).
   */
  importing: Readonly<Record<string, boolean>> = {};
  /**
   * Per thread, the seq ranges its count left out (unsettled imports), the seqs of them counted
   * since, and those not heard of yet: an import is delivered late, below the seq the count was read
   * at, and its messages were taken for counted, the count short until the next detail.
   */
  private readonly uncounted = new Map<string, { ranges: [number, number][]; counted: Set<number>; waiting: [number, number][] }>();
  /** Seqs of the live messages of a thread noted while its detail is being fetched, one list per fetch. */
  private readonly arriving = new Map<string, Set<number[]>>();
  /** Merge suggestions per thread id (a new object after each change). */
  suggestions: Readonly<Record<string, readonly MergeSuggestion[]>> = {};
  private readonly shapes = new Map<string, string>();
  /** Threads the cut list leaves out that the store was asked about (a restored open thread, what it was merged into), until a list names them. */
  private readonly unlisted = new Map<string, { thread: ThreadView; afterList: number }>();
  /** Lists fetched so far: what the store said of a thread is as new as the list it was asked after. */
  private lists = 0;
  /** Threads whose count a catch-up changed (outdated): the next list fetches their details, whatever their shape. */
  private outdatedIds = new Set<string>();
  private running: Promise<ThreadsChange> | null = null;
  private queued: Promise<ThreadsChange> | null = null;
  private queuedCurrent = '';

  constructor(
    readonly roomId: string,
    private readonly source: ThreadsSource = serverThreads,
  ) {}

  /** The list names every thread of the room (none left out by the server's caps), so a thread missing from it was deleted. */
  get complete(): boolean {
    if (!this.loaded) return false;
    const archived = this.list.filter((t) => t.status !== 'active').length;
    return archived >= this.archivedTotal && this.list.length - archived < ACTIVE_LISTED;
  }

  /** The thread as the list names it, or as the store described it when the list leaves it out (noteUnlisted). */
  byId(id: string): ThreadView | undefined {
    return this.list.find((t) => t.id === id) ?? this.unlisted.get(id)?.thread;
  }

  /** The list names `id` (a thread known only from the store, noteUnlisted, is not named). */
  inList(id: string): boolean {
    return this.list.some((t) => t.id === id);
  }

  /**
   * What the store said of `id` (noteUnlisted) was said before the latest list was fetched, which
   * may have been on news of a merge: of an active thread, it may no longer be true.
   */
  notedBeforeList(id: string): boolean {
    const noted = this.unlisted.get(id);
    return !!noted && noted.afterList < this.lists;
  }

  /** Takes the store's word on threads the list leaves out, so byId and survivorOf know them until a list names them. */
  noteUnlisted(threads: readonly ThreadView[]): void {
    for (const t of threads) if (!this.inList(t.id)) this.unlisted.set(t.id, { thread: t, afterList: this.lists });
    this.onChange();
  }

  /**
   * The active thread `id` was merged into, through merges of merges, as far as the list names
   * them; undefined when the walk ends on a thread that is not listed or not active (the server
   * then refuses a message for it, ERR_THREAD_ARCHIVED).
   */
  survivorOf(id: string): ThreadView | undefined {
    let thread = this.byId(id);
    // Each thread once: a cycle (which merges cannot make) ends the walk.
    for (const seen = new Set<string>(); thread?.mergedInto && !seen.has(thread.id); thread = this.byId(thread.mergedInto)) seen.add(thread.id);
    return thread?.status === 'active' ? thread : undefined;
  }

  /** The active thread `id` was merged into (through merges of merges, see survivorOf); undefined when `id` is not merged, or leads to no active thread. */
  mergedSurvivorOf(id: string): string | undefined {
    return this.byId(id)?.mergedInto ? this.survivorOf(id)?.id : undefined;
  }

  /**
   * A live message (`seq`) arrived: count it unless the thread's count was read after it was
   * stored, or fetch the list when its thread is new to the page.
   */
  noteMessage(threadId: string, isNew: boolean, seq = 0): void {
    if (!threadId) return;
    if (isNew) for (const arrived of this.arriving.get(threadId) ?? []) arrived.push(seq);
    if (this.uncounted.size) this.importArrived(seq);
    if (!this.byId(threadId)) {
      if (this.loaded) void this.refresh().catch(() => {});
      return;
    }
    const n = this.counts[threadId];
    const left = this.uncounted.get(threadId);
    const leftOut = !!left && within(left.ranges, seq) && !left.counted.has(seq);
    if (isNew && n !== undefined && (seq > (this.countedAt.get(threadId) ?? 0) || leftOut)) {
      if (leftOut) left.counted.add(seq);
      this.counts = { ...this.counts, [threadId]: n + 1 };
      this.onChange();
    }
  }

  /**
   * A message of `seq` arrived: an import whose range holds it was made readable, all of it at
   * once, and is being delivered; no thread's count waits for it any longer.
   */
  private importArrived(seq: number): void {
    let changed = false;
    for (const [id, left] of this.uncounted) {
      if (!within(left.waiting, seq)) continue;
      left.waiting = left.waiting.filter(([from, to]) => seq < from || seq > to);
      if (!left.waiting.length && this.importing[id]) {
        const { [id]: _, ...rest } = this.importing;
        this.importing = rest;
        changed = true;
      }
    }
    if (changed) this.onChange();
  }

  /**
   * `ids` gained messages the page never counted (a rejoin's catch-up): the next list fetches their
   * details. Kept apart from the shapes, which a list under way sets when it comes.
   */
  outdated(ids: Iterable<string>): void {
    for (const id of ids) if (id) this.outdatedIds.add(id);
  }

  /**
   * Fetches the list again (calls made while one runs share a second run after it) and the
   * details of threads that are new or changed, plus `current`'s for its suggestions.
   */
  refresh(current = ''): Promise<ThreadsChange> {
    // The queued run fetches the details of the thread open at the latest call that named one.
    if (current) this.queuedCurrent = current;
    if (this.queued) return this.queued;
    if (this.running) {
      this.queuedCurrent = current;
      this.queued = this.running
        .catch(() => undefined)
        .then(() => {
          this.queued = null;
          return this.refresh(this.queuedCurrent);
        });
      return this.queued;
    }
    this.running = this.fetch(current).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Fetches one thread's count and suggestions; of a thread the list leaves out, takes the store's word on it as well. */
  async refreshDetail(id: string): Promise<void> {
    const d = await this.detailNoting(id);
    if (!this.inList(id)) this.unlisted.set(id, { thread: d.thread, afterList: this.lists });
    this.counts = { ...this.counts, [id]: d.messages + d.arrivedAfter };
    this.countedAt.set(id, d.seq);
    const waiting = d.ranges.filter(([from, to]) => !d.arrivedLeftOut.some((s) => from <= s && s <= to));
    if (d.ranges.length) this.uncounted.set(id, { ranges: d.ranges, counted: new Set(d.arrivedLeftOut), waiting });
    else this.uncounted.delete(id);
    const { [id]: _, ...importing } = this.importing;
    this.importing = waiting.length ? { ...importing, [id]: true } : importing;
    this.suggestions = { ...this.suggestions, [id]: d.suggestions };
    this.onChange();
  }

  /**
   * Fetches `id`'s detail, noting the live messages that arrive meanwhile: those the count was read
   * before (above its seq) are added to it, the others are in it already. A detail without a seq
   * stands at 0: every message arriving later is added, as before counts carried one.
   */
  private async detailNoting(id: string): Promise<ThreadDetail & { seq: number; arrivedAfter: number; ranges: [number, number][]; arrivedLeftOut: number[] }> {
    const arrived: number[] = [];
    const lists = this.arriving.get(id) ?? new Set<number[]>();
    this.arriving.set(id, lists.add(arrived));
    try {
      const d = await this.source.threadDetail(id);
      const seq = typeof d.seq === 'number' ? d.seq : 0;
      const ranges: [number, number][] = seq ? (d.unsettledImports ?? []).map((r) => [r.fromSeq, r.toSeq]) : [];
      // Arrived meanwhile inside a range the count left out: made readable after it, not in it.
      const arrivedLeftOut = [...new Set(arrived.filter((s) => s <= seq && within(ranges, s)))];
      return { ...d, seq, ranges, arrivedLeftOut, arrivedAfter: seq ? arrived.filter((s) => s > seq).length + arrivedLeftOut.length : 0 };
    } finally {
      lists.delete(arrived);
      if (!lists.size) this.arriving.delete(id);
    }
  }

  private async fetch(current: string): Promise<ThreadsChange> {
    const { threads: list, archivedTotal } = await this.source.listThreads(this.roomId);
    this.archivedTotal = archivedTotal;
    const hadList = this.loaded;
    const known = new Set(this.list.map((t) => t.id));
    // Marked before now: the details fetched below are asked after the catch-up that marked them.
    const outdated = this.outdatedIds;
    this.outdatedIds = new Set();
    const changed = list.filter((t) => this.shapes.get(t.id) !== shapeOf(t) || !(t.id in this.counts) || outdated.has(t.id)).map((t) => t.id);
    const regrouped = new Set<string>();
    const merged: ThreadMerge[] = [];
    for (const t of list) {
      if (!hadList) break;
      if (!known.has(t.id)) regrouped.add(t.id);
      const before = this.byId(t.id);
      if (t.mergedInto && before && before.mergedInto !== t.mergedInto) {
        regrouped.add(t.mergedInto);
        merged.push({ absorbedId: t.id, survivorId: t.mergedInto });
      }
    }
    this.list = list;
    this.lists++;
    for (const t of list) this.unlisted.delete(t.id);
    this.loaded = true;
    for (const t of list) this.shapes.set(t.id, shapeOf(t));
    this.onChange();
    const details = new Set(changed);
    if (current && this.byId(current)) details.add(current);
    // The open thread known only from the store: its detail is the store's word on it again, and may be news of a merge the list cannot show.
    const unlistedBefore = [...details].flatMap((id) => this.unlisted.get(id)?.thread ?? []);
    await this.detailsOf([...details]);
    for (const before of unlistedBefore) {
      const survivorId = this.unlisted.get(before.id)?.thread.mergedInto;
      if (!survivorId || before.mergedInto) continue;
      regrouped.add(survivorId);
      merged.push({ absorbedId: before.id, survivorId });
    }
    return { regrouped: [...regrouped], merged, first: !hadList };
  }

  private async detailsOf(ids: string[]): Promise<void> {
    const queue = [...ids];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        // One missing detail leaves that count blank; the next refresh tries again.
        await this.refreshDetail(id).catch(() => this.shapes.delete(id));
      }
    };
    await Promise.all(Array.from({ length: Math.min(DETAIL_CONCURRENCY, queue.length) }, worker));
  }
}

/** A thread's count as the page shows it: one leaving out an import not yet readable says so. */
export function countLabel(n: number, importing = false): string {
  return `${plural(n, 'message', 'messages')}${importing ? ' (an import is not counted yet)' : ''}`;
}

/** Whether `seq` lies in one of `ranges` (first and last seq, both included). */
function within(ranges: readonly (readonly [number, number])[], seq: number): boolean {
  return ranges.some(([from, to]) => from <= seq && seq <= to);
}

const rooms = new Map<string, RoomThreads>();

/** The room's threads as this page holds them (one per room id while the page lives). */
export function threadsOf(roomId: string): RoomThreads {
  let threads = rooms.get(roomId);
  if (!threads) {
    threads = new RoomThreads(roomId);
    rooms.set(roomId, threads);
  }
  return threads;
}
