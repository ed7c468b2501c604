/**
 * Keeps this node's vector indexes in step with what other nodes commit (docs/architecture.md,
 * "Content everywhere"). A node that changed rows behind an index logs the ids in the store's
 * change log and sends the entry on the ChangeFeed; the others look the ids up in the store and
 * index what is there, dropping what is not, so applying an entry twice or out of order does no
 * harm. Entries a node did not hear (Redis away, the node starting) it reads from the log: after
 * the feed comes back, after a notice that skipped seqs, and every `resyncMs`. A lone node logs and
 * sends nothing but reads the log too: commands run beside it (`salon ingest`, `import`, `threads`)
 * log what they change there (OfflineChanges).
 *
 * A notice is applied at once, but only the log moves the node's position: a notice's seq is the
 * sender's word, and one notice of seq 1e300 once put the node past every real entry (and every
 * catch-up asked PostgreSQL for entries after 1e+300, which it refused) until a restart.
 *
 * A seq is taken before its insert commits, so a smaller one may become visible after a larger
 * (PostgreSQL). A seq the log skipped below the position is a gap: every read of the log looks for
 * the open gaps by seq (one query) before reading on from the position, until the entry shows up or
 * the gap is older than GAP_WAIT_MS. Only the log makes gaps, never a notice.
 *
 * The log may go back (a store restored from a backup): every catch-up first checks that the entry
 * at the position is still the one applied there; when it differs, or the log ends below it, the node
 * reads the whole log again (a reconciliation like any other), else what was logged after the
 * restore under seqs it had passed was never read until a restart. No entry left in the log names
 * the rows the restore removed, so the node then also re-checks every row its indexes hold against
 * the store, RECHECK_SLICE at a time beside the log's reads, and drops those the store lacks.
 */
import { createHash } from 'node:crypto';
import { silentLogger, type Logger } from '../logger.js';
import { positiveNumber, required } from '../options.js';
import type { ChangeTarget, IndexChange, Store } from '../store/types.js';
import type { ChangeFeed } from './change-feed.js';

export const DEFAULT_RESYNC_MS = 30_000;
/**
 * How long a seq missing below the position is looked for before it is given up. A seq is missing
 * while its insert has not committed (an insert is one statement: 30 s at most before the node that
 * logs it gives up, DEFAULT_QUERY_TIMEOUT_MS in store/postgres-db.ts, though PostgreSQL may finish it
 * later: that timeout is the client's), and for good when the store skipped it (a rolled-back insert,
 * the values a PostgreSQL sequence caches or loses in a crash). Ten times that timeout: a gap costs a
 * few bytes and a seq in the query every catch-up (ten of them at the default resync), an entry
 * given up too early is missing from this node's index until a restart.
 */
export const GAP_WAIT_MS = 5 * 60_000;
/**
 * Open gaps kept at most (the lowest are given up first). Only inserts in flight leave a gap that
 * fills, one per pooled connection of every node; a store that skips a huge range of seqs (setval)
 * must not make the node track every seq in it.
 */
export const MAX_GAPS = 1_000;
const LOG_PAGE = 500;
/** Positions remembered with their entries' prints, to tell a restore when the entry at the position is missing. */
const RECENT_PRINTS = 16;
/** Row ids one entry (and its notice) carries at most: a larger change is logged as several entries. */
export const MAX_CHANGE_IDS = 10_000;

/** `ids` cut into the entries a change of them is logged as: MAX_CHANGE_IDS each at most, in order. */
export function changeSlices(ids: readonly number[]): number[][] {
  const slices: number[][] = [];
  for (let i = 0; i < ids.length; i += MAX_CHANGE_IDS) slices.push(ids.slice(i, i + MAX_CHANGE_IDS));
  return slices;
}

/**
 * How far past the node's position a notice is applied before the log is read: other nodes log
 * this many entries only while this node fails to read the log. Further ahead, the log is read
 * first (a notice's entry is applied from there), and `applied` never holds more than
 * MAX_NOTICE_LEAD + MAX_GAPS entries, whatever seqs notices name.
 */
const MAX_NOTICE_LEAD = 1_000;
/** Longest node id a notice may name. */
const MAX_NODE_ID_CHARS = 256;
/** How long entries stay in the log: far longer than any running node takes to read them. */
export const DEFAULT_LOG_RETENTION_MS = 24 * 3_600_000;
/** How often a node deletes entries older than the retention (every node does; deleting is idempotent). */
export const DEFAULT_PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Row ids of one index looked up in the store at a time by the re-check after a restore: one query
 * each, the event loop getting a turn between them (SQLite's reads are synchronous).
 */
export const RECHECK_SLICE = 500;

/** The targets that are vector indexes (`rooms` is not: room-changes.ts). */
type IndexTarget = Exclude<ChangeTarget, 'rooms'>;

/** One index as the sync changes it. */
export interface ChangeApplier {
  /** Indexes the rows `ids` that the store holds and drops the others from the index. */
  applyStored(ids: number[]): Promise<void>;
  /**
   * The row ids the index holds now (a snapshot), re-checked against the store when the log went
   * back (a restore). Absent: the index is not re-checked.
   */
  indexedRowIds?(): ArrayLike<number>;
}

/** `applier` with the row ids `index` holds, for the re-check after a restore. */
export function withIndexedRows(applier: ChangeApplier, index: { rowIds?(): ArrayLike<number> }): ChangeApplier {
  return { applyStored: (ids) => applier.applyStored(ids), indexedRowIds: index.rowIds && (() => index.rowIds!()) };
}

/** Which of the row ids `ids` of each index the store holds. */
const STORED_ROWS: Record<IndexTarget, (store: Store, ids: number[]) => Promise<number[]>> = {
  documents: async (store, ids) => (await store.getChunks(ids)).map((c) => c.rowId),
  memory: async (store, ids) => (await store.getMemoryChunks(ids)).map((c) => c.id),
};

/**
 * The row ids the store holds for each index after `after`, in id order, at most `limit`: the
 * re-check's walk of the store for rows a restore brought back.
 */
const STORE_ROWS: Record<IndexTarget, (store: Store, after: number, limit: number) => Promise<number[]>> = {
  documents: async (store, after, limit) => (await store.scanChunks(after, limit)).map((c) => c.rowId),
  memory: async (store, after, limit) => (await store.scanMemoryChunks(after, limit)).map((c) => c.id),
};

export interface IndexSyncOptions {
  store: Store;
  feed: ChangeFeed;
  /** This node's id (the bus's): its own notices are not applied again. */
  nodeId: string;
  /** Every index's applier; `rooms` (room-changes.ts) where the node has rooms to tell. */
  targets: Record<IndexTarget, ChangeApplier> & { rooms?: ChangeApplier };
  log?: Logger;
  resyncMs?: number;
  /** Entries older than this are deleted from the log. */
  retentionMs?: number;
  pruneEveryMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

interface Notice extends IndexChange {
  node: string;
}

export class IndexSync {
  private readonly log: Logger;
  private readonly resyncMs: number;
  private readonly retentionMs: number;
  /** GAP_WAIT_MS, or three catch-ups when they come further apart: a gap is looked for again before it is given up. */
  private readonly gapWaitMs: number;
  private readonly now: () => number;
  /** The newest seq read from the log (or read at `begin`): where the next read goes on from. */
  private newest = 0;
  /** What the entry at `newest` asked for (fingerprint), to tell the log went back; null until known. */
  private newestPrint: string | null = null;
  /**
   * The last RECENT_PRINTS positions read from the log, each with what its entry asked for: when the
   * entry at the position is missing with later ones logged, these tell a restore from the pruning.
   */
  private readonly recentPrints = new Map<number, string>();
  /**
   * Seqs below `newest` that are not applied yet, each with when it was found missing (null: the log
   * holds it but applying it failed, tried again at every read until it succeeds). At most MAX_GAPS.
   */
  private readonly gaps = new Map<number, number | null>();
  /** Seqs applied ahead of `newest` or in a gap (notices'), each with what was applied under it (fingerprint). */
  private readonly applied = new Map<number, string>();
  private started = false;
  private closed = false;
  /** Whether a read of the log waits to run. */
  private readQueued = false;
  /** Whether the next read checks that the log did not go back (catch-ups do; reads for a notice need not). */
  private checkDue = false;
  /** Gaps given up during the read running because there were more than MAX_GAPS. */
  private gapsDropped = 0;
  private queue: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  /** When the log was last read through (catch-up), to tell a node that fell behind the retention. */
  private lastReadAt: number | null = null;
  /** The re-check of the indexes against the store under way (after a restore), beside the log's reads. */
  private recheck: Promise<void> | null = null;
  /** Whether the indexes are re-checked once more: the log went back again during a re-check, or one failed. */
  private recheckDue = false;

  constructor(private readonly options: IndexSyncOptions) {
    for (const name of ['store', 'feed', 'nodeId', 'targets'] as const) required('IndexSync', name, options[name]);
    this.resyncMs = positiveNumber('IndexSync', 'resyncMs', options.resyncMs ?? DEFAULT_RESYNC_MS);
    this.gapWaitMs = Math.max(GAP_WAIT_MS, 3 * this.resyncMs);
    this.log = options.log ?? silentLogger;
    this.retentionMs = positiveNumber('IndexSync', 'retentionMs', options.retentionMs ?? DEFAULT_LOG_RETENTION_MS);
    positiveNumber('IndexSync', 'pruneEveryMs', options.pruneEveryMs ?? DEFAULT_PRUNE_EVERY_MS);
    this.now = options.now ?? Date.now;
    options.feed.subscribe((notice) => this.heard(notice));
    options.feed.onConnectionChange((connected) => connected && this.catchUp());
  }

  /** Notes where the log stands. Call before the indexes load from the store: what is logged later is applied after. */
  async begin(): Promise<void> {
    this.newest = await this.options.store.lastIndexChange();
  }

  /** Whether the node follows the feed (its indexes are loaded and `start` has run). */
  get following(): boolean {
    return this.started;
  }

  /** The indexes are loaded: applies what was logged since `begin`, then follows the feed. */
  start(): void {
    if (this.closed || this.started) return;
    this.started = true;
    this.catchUp();
    this.timer = setInterval(() => this.catchUp(), this.resyncMs);
    this.timer.unref();
    this.pruneTimer = setInterval(() => void this.prune(), this.options.pruneEveryMs ?? DEFAULT_PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  /** Deletes the log's entries older than the retention; never rejects. */
  async prune(): Promise<void> {
    try {
      const removed = await this.options.store.pruneIndexChanges(this.retentionMs);
      if (removed) this.log.debug({ removed }, 'old index changes pruned from the log');
    } catch (err) {
      this.log.warn({ err }, 'index change log not pruned; trying again later');
    }
  }

  /**
   * Logs a change this node committed and tells the other nodes (nothing for a lone node). Never
   * rejects: a change that cannot be logged reaches the other nodes' indexes at their next start.
   */
  async record(target: ChangeTarget, ids: number[]): Promise<void> {
    if (!this.options.feed.shared) return;
    for (const slice of changeSlices(ids)) await this.recordOne(target, slice);
  }

  private async recordOne(target: ChangeTarget, ids: number[]): Promise<void> {
    try {
      const seq = await this.options.store.logIndexChange(target, ids);
      // Committed, and this node's indexes made the change already.
      if (this.gaps.delete(seq)) this.applied.delete(seq);
      else if (seq > this.newest) this.applied.set(seq, fingerprint({ target, ids }));
      // The store gave the seq, but entries between `newest` and it may be others' not yet applied.
      if (seq === this.newest + 1) this.advance(seq, fingerprint({ target, ids }));
      else if (seq > this.newest) this.readLog();
      await this.options.feed.publish(JSON.stringify({ n: this.options.nodeId, s: seq, t: target, i: ids }));
    } catch (err) {
      this.log.warn({ err, target, rows: ids.length }, 'index change not sent to the other nodes');
    }
  }

  /** Stops following; waits for the change being applied. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    await this.queue;
    await this.recheck;
  }

  /**
   * Another node's notice: its ids are looked up at once, then the log says whether the entry is
   * there and moves the node on. A notice far ahead is left to the log, as is one below the
   * position outside a gap (the log applied that entry); one that names a seq already applied with
   * other ids makes the node read the log again.
   */
  private heard(payload: string): void {
    const notice = parseNotice(payload);
    if (!notice) return this.log.warn({ notice: payload.slice(0, 200) }, 'malformed index change notice dropped');
    if (notice.node === this.options.nodeId || !this.started || this.closed) return;
    if (notice.seq <= this.newest && !this.gaps.has(notice.seq)) return;
    const seen = this.applied.get(notice.seq);
    if (seen !== undefined) {
      if (seen !== fingerprint(notice)) this.readLog();
      return;
    }
    if (notice.seq <= this.newest + MAX_NOTICE_LEAD)
      void this.serial(async () => {
        // A read of the log queued before it may have applied the entry, and moved the position past it.
        if (notice.seq <= this.newest && !this.gaps.has(notice.seq)) return;
        await this.apply(notice);
      });
    this.readLog();
  }

  /** Reads the log (after the feed comes back and every `resyncMs`), checking first that it did not go back. */
  private catchUp(): void {
    this.checkDue = true;
    this.readLog();
    if (this.recheckDue) this.recheckIndexes();
  }

  /**
   * Looks for the open gaps, then reads the log after `newest`, applying what was not applied as
   * logged; a request while a read waits to run is that read.
   */
  private readLog(): void {
    if (!this.started || this.closed || this.readQueued) return;
    this.readQueued = true;
    void this.serial(async () => {
      this.readQueued = false;
      const startedAt = this.now();
      if (this.checkDue) {
        this.checkDue = false;
        if (await this.wentBack()) {
          await this.readAllAgain();
          this.recheckIndexes();
        }
      }
      await this.readGaps(startedAt);
      for (let after = this.newest; !this.closed;) {
        const page = await this.options.store.indexChangesAfter(after, LOG_PAGE);
        for (const change of page) {
          this.missing(after, change.seq, startedAt);
          if (!(await this.applyLogged(change))) this.keepGap(change.seq, null);
          this.advance(change.seq, fingerprint(change));
          after = change.seq;
        }
        if (page.length < LOG_PAGE) break;
      }
      if (this.gapsDropped) {
        this.log.warn({ count: this.gapsDropped, kept: MAX_GAPS }, 'index change log seqs given up: too many missing below the position');
        this.gapsDropped = 0;
      }
      // Entries this node never read may have been pruned meanwhile: only a restart (which rebuilds
      // the indexes from the store) is sure to hold everything again.
      if (this.lastReadAt !== null && startedAt - this.lastReadAt > this.retentionMs)
        this.log.error(
          { unreadMs: startedAt - this.lastReadAt },
          'this node could not read the index change log for longer than it is kept; restart it to rebuild its indexes from the store',
        );
      this.lastReadAt = startedAt;
    });
  }

  /**
   * Whether the log went back below the position: the entry there is another than the one read
   * there, or the log now ends below it. An entry missing at the position with later ones logged is
   * no sign: the retention prunes it once a newer one exists (and never prunes the newest).
   */
  private async wentBack(): Promise<boolean> {
    if (this.newest === 0) return false;
    // The entry at the position, or the first after it: one read on the primary key.
    const [there] = await this.options.store.indexChangesAfter(this.newest - 1, 1);
    if (!there) return true;
    // Missing at the position: pruned (then so are those before it), or a seq the store skipped
    // after a restore (PostgreSQL: a rolled-back insert) below entries logged anew under the others.
    if (there.seq !== this.newest) return this.recentDiffer();
    const print = fingerprint(there);
    // Read at `begin`: known from here on.
    if (this.newestPrint === null) this.newestPrint = print;
    return print !== this.newestPrint;
  }

  /** Whether an entry the log still holds at one of the last positions read asks for another change than the one read there. */
  private async recentDiffer(): Promise<boolean> {
    if (!this.recentPrints.size) return false;
    const now = await this.options.store.indexChangesAt([...this.recentPrints.keys()]);
    return now.some((change) => this.recentPrints.get(change.seq) !== fingerprint(change));
  }

  /**
   * The log went back (a restored store): forgets the position, the gaps and what notices applied,
   * and reads the log from its oldest entry. Applying is a reconciliation with the store, so what
   * was applied already is only applied again; rows the restore removed, which no entry left in the
   * log names, are the re-check's (recheckIndexes).
   */
  private async readAllAgain(): Promise<void> {
    const [oldest] = await this.options.store.indexChangesAfter(0, 1);
    this.log.error(
      { position: this.newest, oldest: oldest?.seq ?? null },
      'the index change log went back below this node’s position (was the store restored?): reading all of it again and dropping from the indexes rows the store no longer holds',
    );
    this.newest = oldest ? oldest.seq - 1 : 0;
    this.newestPrint = null;
    this.recentPrints.clear();
    this.gaps.clear();
    this.applied.clear();
  }

  /**
   * Re-checks every row the indexes hold against the store, beside the log's reads (a notice is not
   * held up for as long as that takes); one under way runs once more when it is done.
   */
  private recheckIndexes(): void {
    this.recheckDue = true;
    if (this.recheck || this.closed) return;
    this.recheck = (async () => {
      while (this.recheckDue && !this.closed) {
        this.recheckDue = false;
        try {
          const dropped = await this.dropGoneRows();
          const added = await this.addMissingRows();
          this.log.warn({ dropped, added }, 'indexes re-checked against the restored store: rows it no longer holds dropped, rows it brought back indexed');
        } catch (err) {
          this.log.warn({ err }, 'indexes not re-checked against the restored store; trying again at the next catch-up');
          this.recheckDue = true;
          return;
        }
      }
    })().finally(() => (this.recheck = null));
  }

  /**
   * Drops from each index the rows it holds (a snapshot) that the store lacks, RECHECK_SLICE at a
   * time. What goes out goes through applyStored, which looks again: a row stored meanwhile (by
   * another node, under a reused id) is indexed, not dropped. Returns how many were dropped.
   */
  private async dropGoneRows(): Promise<number> {
    let dropped = 0;
    for (const target of Object.keys(STORED_ROWS) as IndexTarget[]) {
      const applier = this.options.targets[target];
      const held = applier?.indexedRowIds?.();
      if (!held) continue;
      for (let i = 0; i < held.length && !this.closed; i += RECHECK_SLICE) {
        const slice: number[] = [];
        for (let j = i; j < Math.min(i + RECHECK_SLICE, held.length); j++) slice.push(held[j]);
        const stored = new Set(await STORED_ROWS[target](this.options.store, slice));
        const gone = slice.filter((id) => !stored.has(id));
        if (gone.length) await applier.applyStored(gone);
        dropped += gone.length;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    return dropped;
  }

  /**
   * Indexes the rows the store holds that each index lacks (a snapshot of it), walking the store
   * RECHECK_SLICE rows a query: rows the restore brought back (deleted after the backup) are named
   * by no entry, when the log's retention pruned the one that added them. They go through
   * applyStored, which indexes what it finds stored. Returns how many were missing.
   */
  private async addMissingRows(): Promise<number> {
    let added = 0;
    for (const target of Object.keys(STORE_ROWS) as IndexTarget[]) {
      const applier = this.options.targets[target];
      const snapshot = applier?.indexedRowIds?.();
      if (!snapshot) continue;
      const held = new Set(Array.from(snapshot));
      for (let after = 0; !this.closed;) {
        const ids = await STORE_ROWS[target](this.options.store, after, RECHECK_SLICE);
        if (!ids.length) break;
        after = ids[ids.length - 1];
        const missing = ids.filter((id) => !held.has(id));
        if (missing.length) await applier.applyStored(missing);
        added += missing.length;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    return added;
  }

  /**
   * Gives up the gaps older than `gapWaitMs`, then reads the others' entries by seq: what shows up
   * is applied and its gap closed.
   */
  private async readGaps(now: number): Promise<void> {
    const givenUp: number[] = [];
    for (const [seq, since] of this.gaps) if (since !== null && now - since > this.gapWaitMs) givenUp.push(seq);
    for (const seq of givenUp) this.forgetGap(seq);
    if (givenUp.length)
      this.log.warn(
        { seqs: givenUp.slice(0, 20), count: givenUp.length, waitedMs: this.gapWaitMs },
        'index change log seqs never seen given up (most likely skipped by the store: an insert rolled back)',
      );
    if (this.gaps.size === 0) return;
    for (const change of await this.options.store.indexChangesAt([...this.gaps.keys()])) {
      if (this.closed) return;
      if (await this.applyLogged(change)) this.forgetGap(change.seq);
      // Still open unless this node's own entry closed it meanwhile (record).
      else if (this.gaps.has(change.seq)) this.gaps.set(change.seq, null);
    }
  }

  /** Notes the seqs between `after` and `seq` (exclusive), which the log skipped, as gaps (the highest MAX_GAPS). */
  private missing(after: number, seq: number, now: number): void {
    const from = Math.max(after + 1, seq - MAX_GAPS);
    this.gapsDropped += from - (after + 1);
    for (let s = from; s < seq; s++) this.keepGap(s, now);
  }

  /** Opens the gap at `seq`, above every open one; past MAX_GAPS the lowest is given up. */
  private keepGap(seq: number, since: number | null): void {
    if (this.gaps.size >= MAX_GAPS) {
      // Gaps open in increasing seq order (all below the position, each new one above it): the first is the lowest.
      this.forgetGap(this.gaps.keys().next().value as number);
      this.gapsDropped++;
    }
    this.gaps.set(seq, since);
  }

  private forgetGap(seq: number): void {
    this.gaps.delete(seq);
    this.applied.delete(seq);
  }

  /** Applies an entry read from the log unless a notice applied the same already; false when it failed. */
  private async applyLogged(change: IndexChange): Promise<boolean> {
    if (this.applied.get(change.seq) === fingerprint(change)) return true;
    return this.apply(change);
  }

  /**
   * Applies one entry, read from the log or heard in a notice; one that fails stays unapplied, so
   * the next read of the log tries it again. False when it failed.
   */
  private async apply(change: IndexChange): Promise<boolean> {
    const done = fingerprint(change);
    if (this.closed) return false;
    if (this.applied.get(change.seq) === done) return true;
    const target = this.options.targets[change.target];
    try {
      if (target) await target.applyStored(change.ids);
      this.applied.set(change.seq, done);
      return true;
    } catch (err) {
      this.log.warn({ err, seq: change.seq, target: change.target }, 'index change from another node not applied yet');
      return false;
    }
  }

  /** Moves the position to `seq`, whose entry asked for `print`: what is applied at or below it matters only in a gap. */
  private advance(seq: number, print: string): void {
    if (seq <= this.newest) return;
    this.newest = seq;
    this.newestPrint = print;
    this.recentPrints.set(seq, print);
    if (this.recentPrints.size > RECENT_PRINTS) this.recentPrints.delete(this.recentPrints.keys().next().value as number);
    for (const s of this.applied.keys()) if (s <= seq && !this.gaps.has(s)) this.applied.delete(s);
  }

  /** Changes are applied one at a time, so a later look-up never lands before an earlier one. */
  private serial(fn: () => Promise<void>): Promise<void> {
    const run = this.queue.then(fn);
    this.queue = run.catch((err: unknown) => this.log.warn({ err }, 'index change log not read; retrying at the next resync'));
    return this.queue;
  }
}

/** What an entry asks for (its target and ids): two entries under one seq that differ in it are not the same entry. */
function fingerprint(change: Pick<IndexChange, 'target' | 'ids'>): string {
  return createHash('sha1').update(change.target).update(':').update(change.ids.join(',')).digest('base64');
}

const isRowId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;

/** A notice read from the feed; null unless every field is one a store and a node could have sent. */
export function parseNotice(payload: string): Notice | null {
  let n: { n?: unknown; s?: unknown; t?: unknown; i?: unknown } | null;
  try {
    n = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof n !== 'object' || n === null) return null;
  if (typeof n.n !== 'string' || n.n.length === 0 || n.n.length > MAX_NODE_ID_CHARS) return null;
  if (!isRowId(n.s) || (n.t !== 'documents' && n.t !== 'memory')) return null;
  if (!Array.isArray(n.i) || n.i.length > MAX_CHANGE_IDS || !n.i.every(isRowId)) return null;
  return { node: n.n, seq: n.s, target: n.t, ids: n.i };
}
