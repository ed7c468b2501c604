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
 */
import { createHash } from 'node:crypto';
import { silentLogger, type Logger } from '../logger.js';
import { positiveNumber, required } from '../options.js';
import type { ChangeTarget, IndexChange, Store } from '../store/types.js';
import type { ChangeFeed } from './change-feed.js';

export const DEFAULT_RESYNC_MS = 30_000;
/**
 * Entries before the newest applied one that a catch-up reads again: an entry's seq is taken
 * before its insert commits, so a smaller seq may become visible after a larger one.
 */
const REREAD = 100;
const LOG_PAGE = 500;
/** Row ids one entry (and its notice) carries at most: a larger change is logged as several entries. */
export const MAX_CHANGE_IDS = 10_000;
/**
 * How far past the node's position a notice is applied before the log is read: other nodes log
 * this many entries only while this node fails to read the log. Further ahead, the log is read
 * first (a notice's entry is applied from there), and `applied` never holds more than
 * REREAD + MAX_NOTICE_LEAD entries, whatever seqs notices name.
 */
const MAX_NOTICE_LEAD = 1_000;
/** Longest node id a notice may name. */
const MAX_NODE_ID_CHARS = 256;
/** How long entries stay in the log: far longer than any running node takes to read them. */
export const DEFAULT_LOG_RETENTION_MS = 24 * 3_600_000;
/** How often a node deletes entries older than the retention (every node does; deleting is idempotent). */
export const DEFAULT_PRUNE_EVERY_MS = 10 * 60_000;

/** One index as the sync changes it. */
export interface ChangeApplier {
  /** Indexes the rows `ids` that the store holds and drops the others from the index. */
  applyStored(ids: number[]): Promise<void>;
}

export interface IndexSyncOptions {
  store: Store;
  feed: ChangeFeed;
  /** This node's id (the bus's): its own notices are not applied again. */
  nodeId: string;
  targets: Record<ChangeTarget, ChangeApplier>;
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
  private readonly now: () => number;
  /** The newest seq read from the log and applied (or read at `begin`): where the next catch-up starts. */
  private newest = 0;
  /** Seqs applied within REREAD of `newest` (and notices' ahead of it), each with what was applied under it (fingerprint). */
  private readonly applied = new Map<number, string>();
  private started = false;
  private closed = false;
  /** The read of the log waiting to run: from `newest` (`ahead`) or from REREAD before it (`reread`). */
  private readQueued: 'ahead' | 'reread' | null = null;
  private queue: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  /** When the log was last read through (catch-up), to tell a node that fell behind the retention. */
  private lastReadAt: number | null = null;

  constructor(private readonly options: IndexSyncOptions) {
    for (const name of ['store', 'feed', 'nodeId', 'targets'] as const) required('IndexSync', name, options[name]);
    this.resyncMs = positiveNumber('IndexSync', 'resyncMs', options.resyncMs ?? DEFAULT_RESYNC_MS);
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
    for (let i = 0; i < ids.length; i += MAX_CHANGE_IDS) await this.recordOne(target, ids.slice(i, i + MAX_CHANGE_IDS));
  }

  private async recordOne(target: ChangeTarget, ids: number[]): Promise<void> {
    try {
      const seq = await this.options.store.logIndexChange(target, ids);
      this.applied.set(seq, fingerprint({ target, ids }));
      // The store gave the seq, but entries between `newest` and it may be others' not yet applied.
      if (seq === this.newest + 1) this.advance(seq);
      else if (seq > this.newest) this.readLog('ahead');
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
  }

  /**
   * Another node's notice: its ids are looked up at once, then the log says whether the entry is
   * there and moves the node on. A notice far ahead is left to the log; one that names a seq
   * already applied with other ids makes the node read the log again.
   */
  private heard(payload: string): void {
    const notice = parseNotice(payload);
    if (!notice) return this.log.warn({ notice: payload.slice(0, 200) }, 'malformed index change notice dropped');
    if (notice.node === this.options.nodeId || !this.started || this.closed) return;
    if (notice.seq <= this.newest - REREAD) return;
    const seen = this.applied.get(notice.seq);
    if (seen !== undefined) {
      if (seen !== fingerprint(notice)) this.readLog('reread');
      return;
    }
    if (notice.seq <= this.newest + MAX_NOTICE_LEAD) void this.serial(() => this.apply(notice, false));
    if (notice.seq > this.newest) this.readLog('ahead');
  }

  /** Reads the log from a little before the newest applied entry and every `resyncMs`. */
  private catchUp(): void {
    this.readLog('reread');
  }

  /**
   * Reads the log after `newest` (`ahead`: what notices just named) or from REREAD before it
   * (`reread`), applying what was not applied as logged; a request while a read waits to run is
   * that read (a reread when either asked for one).
   */
  private readLog(from: 'ahead' | 'reread'): void {
    if (!this.started || this.closed) return;
    if (this.readQueued) {
      if (from === 'reread') this.readQueued = from;
      return;
    }
    this.readQueued = from;
    void this.serial(async () => {
      const reread = this.readQueued === 'reread';
      this.readQueued = null;
      const startedAt = this.now();
      for (let after = reread ? Math.max(0, this.newest - REREAD) : this.newest; !this.closed;) {
        const page = await this.options.store.indexChangesAfter(after, LOG_PAGE);
        for (const change of page) {
          if (this.applied.get(change.seq) === fingerprint(change)) this.advance(change.seq);
          else await this.apply(change, true);
        }
        if (page.length < LOG_PAGE) break;
        after = page[page.length - 1].seq;
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
   * Applies one entry, read from the log (`logged`: the node's position moves to it) or heard in a
   * notice; one that fails stays unapplied, so the next catch-up tries it again.
   */
  private async apply(change: IndexChange, logged: boolean): Promise<void> {
    const done = fingerprint(change);
    if (this.closed || this.applied.get(change.seq) === done) return;
    const target = this.options.targets[change.target];
    try {
      if (target) await target.applyStored(change.ids);
      this.applied.set(change.seq, done);
      if (logged) this.advance(change.seq);
    } catch (err) {
      this.log.warn({ err, seq: change.seq, target: change.target }, 'index change from another node not applied yet');
    }
  }

  private advance(seq: number): void {
    if (seq <= this.newest) return;
    this.newest = seq;
    for (const s of this.applied.keys()) if (s <= seq - REREAD) this.applied.delete(s);
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
