/**
 * Keeps this node's vector indexes in step with what other nodes commit (docs/architecture.md,
 * "Content everywhere"). A node that changed rows behind an index logs the ids in the store's
 * change log and sends the entry on the ChangeFeed; the others look the ids up in the store and
 * index what is there, dropping what is not, so applying an entry twice or out of order does no
 * harm. Entries a node did not hear (Redis away, the node starting) it reads from the log: after
 * the feed comes back, after a notice that skipped seqs, and every `resyncMs`. A lone node logs and
 * sends nothing but reads the log too: commands run beside it (`salon ingest`, `import`, `threads`)
 * log what they change there (OfflineChanges).
 */
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
  /** The newest seq applied (or read at `begin`). */
  private newest = 0;
  /** Seqs applied within REREAD of `newest`. */
  private readonly applied = new Set<number>();
  private started = false;
  private closed = false;
  private catchUpQueued = false;
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
    if (!this.options.feed.shared || ids.length === 0) return;
    try {
      const seq = await this.options.store.logIndexChange(target, ids);
      this.applied.add(seq);
      this.advance(seq);
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

  private heard(payload: string): void {
    const notice = parseNotice(payload);
    if (!notice || notice.node === this.options.nodeId || !this.started || this.closed) return;
    if (this.applied.has(notice.seq) || notice.seq <= this.newest - REREAD) return;
    const skipped = notice.seq > this.newest + 1;
    void this.serial(() => this.apply(notice));
    if (skipped) this.catchUp();
  }

  /** Reads the log from a little before the newest applied entry; a request while one waits to run is that one. */
  private catchUp(): void {
    if (!this.started || this.closed || this.catchUpQueued) return;
    this.catchUpQueued = true;
    void this.serial(async () => {
      this.catchUpQueued = false;
      const startedAt = this.now();
      for (let after = Math.max(0, this.newest - REREAD); !this.closed;) {
        const page = await this.options.store.indexChangesAfter(after, LOG_PAGE);
        for (const change of page) if (!this.applied.has(change.seq)) await this.apply(change);
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

  /** Applies one entry; one that fails stays unapplied, so the next catch-up tries it again. */
  private async apply(change: IndexChange): Promise<void> {
    if (this.closed || this.applied.has(change.seq)) return;
    const target = this.options.targets[change.target];
    try {
      if (target) await target.applyStored(change.ids);
      this.applied.add(change.seq);
      this.advance(change.seq);
    } catch (err) {
      this.log.warn({ err, seq: change.seq, target: change.target }, 'index change from another node not applied yet');
    }
  }

  private advance(seq: number): void {
    if (seq <= this.newest) return;
    this.newest = seq;
    for (const s of this.applied) if (s <= seq - REREAD) this.applied.delete(s);
  }

  /** Changes are applied one at a time, so a later look-up never lands before an earlier one. */
  private serial(fn: () => Promise<void>): Promise<void> {
    const run = this.queue.then(fn);
    this.queue = run.catch((err: unknown) => this.log.warn({ err }, 'index change log not read; retrying at the next resync'));
    return this.queue;
  }
}

function parseNotice(payload: string): Notice | null {
  try {
    const n = JSON.parse(payload) as { n?: unknown; s?: unknown; t?: unknown; i?: unknown };
    if (typeof n.n !== 'string' || !Number.isInteger(n.s) || (n.t !== 'documents' && n.t !== 'memory') || !Array.isArray(n.i)) return null;
    return { node: n.n, seq: n.s as number, target: n.t, ids: n.i.filter((id): id is number => Number.isInteger(id)) };
  } catch {
    return null;
  }
}
