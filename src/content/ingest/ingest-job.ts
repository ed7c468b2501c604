/**
 * Progress of one ingest job: counts, item ids and failures, saved to the store as they change
 * (at most every SAVE_INTERVAL_MS, and always at the end) and reported to a listener.
 */
import type { Logger } from '../../logger.js';
import { SalonError, errors } from '../../errors.js';
import type { IngestJob, JobFailure, Store } from '../../store/types.js';
import { truncate } from '../text.js';

const SAVE_INTERVAL_MS = 250;
/** A job keeps at most this many failures and item ids, so a huge feed cannot bloat its record. */
export const JOB_LIST_CAP = 1000;

/**
 * Characters of a failure's ref and message a job or a source keeps: messages may quote what was
 * fetched (a feed whose root tag was 4 MB long gave a 4 MB message, stored and served on every read).
 */
export const FAILURE_TEXT_MAX = 500;

/** A failure as a job records it: catalogued errors keep their code; anything else is internal. */
export function toFailure(ref: string, err: unknown): JobFailure {
  const message = err instanceof SalonError ? err.message : new errors.ERR_INTERNAL().message;
  return { ref: truncate(ref, FAILURE_TEXT_MAX), code: err instanceof SalonError ? err.code : 'ERR_INTERNAL', message: truncate(message, FAILURE_TEXT_MAX) };
}

/** Keeps one job's record current while its work runs. */
export class JobTracker {
  private lastSave = 0;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    readonly job: IngestJob,
    private readonly store: Store,
    private readonly log?: Logger,
    private readonly onChange?: (job: IngestJob) => void,
    /** A save was refused: another node took the job over (it found this node silent too long). */
    private readonly onTakenOver?: () => void,
  ) {}

  /** Announces more work (totals grow as feeds and folders are read). */
  addTotal(n: number): void {
    this.job.total += n;
    this.changed();
  }

  /** One item stored. */
  itemDone(id: string): void {
    this.job.done++;
    if (this.job.itemIds.length < JOB_LIST_CAP && !this.job.itemIds.includes(id)) this.job.itemIds.push(id);
    this.changed();
  }

  /** The last item that could not be stored, as a job records it (its code: the item's own fault, or the way to it). */
  lastItemFailure: JobFailure | undefined;

  /** One item that could not be stored. */
  itemFailed(ref: string, err: unknown): void {
    this.job.failed++;
    this.lastItemFailure = toFailure(ref, err);
    this.note(ref, err);
  }

  /** A problem that did not stop an item (e.g. its article could not be fetched, so the feed text was kept). */
  note(ref: string, err: unknown): void {
    if (!(err instanceof SalonError)) this.log?.error({ err, ref }, 'ingest step failed');
    if (this.job.failures.length < JOB_LIST_CAP) this.job.failures.push(toFailure(ref, err));
    this.changed();
  }

  setStatus(status: IngestJob['status']): void {
    this.job.status = status;
    this.changed(true);
  }

  /** Resolves when every save so far has been written. */
  async flush(): Promise<void> {
    this.save();
    await this.saving;
  }

  private changed(force = false): void {
    this.job.updatedAt = new Date().toISOString();
    this.onChange?.(this.job);
    if (force || Date.now() - this.lastSave >= SAVE_INTERVAL_MS) this.save();
  }

  private save(): void {
    this.lastSave = Date.now();
    const snapshot: IngestJob = structuredClone(this.job);
    this.saving = this.saving
      .then(() => this.store.saveJob(snapshot))
      .then((saved) => {
        if (!saved) this.onTakenOver?.();
      })
      .catch((err) => this.log?.error({ err, jobId: this.job.id }, 'saving an ingest job failed'));
  }
}
