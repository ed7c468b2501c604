/**
 * Index changes made outside a server (the `salon ingest`, `import`, `threads` and `sources
 * refresh` commands), and messages `salon import` stores (room-changes.ts), go to the store's change log, where every server sharing the store finds them
 * at its next read of the log (IndexSync reads it every `resyncMs`, 30 s by default, on a lone node
 * as well): a command has no bus to send a notice on, and a node that applies an entry late applies
 * it the same way.
 */
import type { ChunkSink } from '../content/types.js';
import { silentLogger, type Logger } from '../logger.js';
import type { ChangeTarget, Store } from '../store/types.js';
import { changeSlices } from './index-sync.js';
import type { SeqRun } from '../rooms/seq-window.js';
import { roomChangeIds } from './room-changes.js';

export class OfflineChanges {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger = silentLogger,
  ) {}

  /**
   * Logs `ids` of `target` as changed, as one entry per MAX_CHANGE_IDS (what a node logs of its
   * own changes); a failure is a warning (the nodes see the rows at their next start).
   */
  record(target: ChangeTarget, ids: number[]): void {
    if (ids.length === 0) return;
    const write = (async () => {
      for (const slice of changeSlices(ids)) await this.store.logIndexChange(target, slice);
    })().catch((err: unknown) => this.log.warn({ err, target, rows: ids.length }, 'index change not logged for the running servers'));
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /**
   * Messages stored in `roomId` after `afterSeq` and published by nobody (an import), `runs` the
   * seqs it made readable: the servers' live rooms deliver them (room-changes.ts).
   */
  storedUnpublished(roomId: string, afterSeq: number, runs: readonly SeqRun[] = []): void {
    this.record('rooms', roomChangeIds(roomId, afterSeq, runs));
  }

  /** The ChunkSink of an ingestion run outside a server: its chunk changes, logged. */
  get chunkSink(): ChunkSink {
    return {
      chunksChanged: async ({ added, removed }) => this.record('documents', [...added.map((c) => c.rowId), ...removed]),
    };
  }

  /** Resolves once everything recorded so far is written (before the command closes the store). */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}
