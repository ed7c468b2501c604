/**
 * The log of a failure that may repeat many times a minute: with a remote embedder down, every
 * batch of every ingest and retry fails, and a warning each filled the log. The first failure is
 * logged at once; the ones after it are counted, and at most one summary line per interval says
 * how many were not logged and the last one's error; the first success after them logs once that
 * it works again. A dependency that fails and works by turns (a balancer with one broken backend
 * of two) wrote two lines a turn: a failure that follows a success within the interval of the
 * last failure logged at once is counted into the summary instead, and its success says nothing
 * unless a summary told of its failures. Counting every failure is for metrics, not for this.
 */
import type { Logger } from './logger.js';

/** Summaries of repeated failures are written at most this often. */
export const FAILURE_SUMMARY_INTERVAL_MS = 60_000;

export interface RepeatedFailureLogOptions {
  log?: Logger;
  /** What fails, as a summary line starts: `embedding documents`. */
  what: string;
  /** Default FAILURE_SUMMARY_INTERVAL_MS. */
  intervalMs?: number;
}

export class RepeatedFailureLog {
  private readonly intervalMs: number;
  /** When the failures began (the first since the last success); null while it works. */
  private since: number | null = null;
  /** Failures since `since`, those not logged yet (these and earlier ones), and those of them since `since`. */
  private total = 0;
  private unlogged = 0;
  private unloggedSince = 0;
  private lastError: unknown = null;
  private timer: NodeJS.Timeout | null = null;
  /** When a failure was last logged at once; a failure starting anew within the interval waits for the summary. */
  private loggedAt = -Infinity;
  /** Whether the log told of the failures since `since` (their first at once, or a summary): only then is their end told. */
  private told = false;

  constructor(private readonly options: RepeatedFailureLogOptions) {
    this.intervalMs = options.intervalMs ?? FAILURE_SUMMARY_INTERVAL_MS;
  }

  /** Whether the last outcome was a failure. */
  get failing(): boolean {
    return this.since !== null;
  }

  /**
   * A failure: `message` is logged (with `details` and `err`) only when it is the first since the
   * last success and no failure was logged at once in the interval before it.
   */
  failed(err: unknown, details: object, message: string): void {
    this.total++;
    this.lastError = err;
    const now = Date.now();
    if (this.since === null && now - this.loggedAt >= this.intervalMs) {
      this.since = now;
      this.loggedAt = now;
      this.told = true;
      this.unloggedSince = 0;
      this.options.log?.warn({ ...details, err }, message);
    } else {
      if (this.since === null) {
        this.since = now;
        this.unloggedSince = 0;
      }
      this.unlogged++;
      this.unloggedSince++;
    }
    this.summarizeLater();
  }

  /**
   * A success: after failures the log told of, logged once with how many there were (those not
   * logged yet among them). Failures the log did not tell of stay counted for the interval's summary.
   */
  succeeded(): void {
    if (this.since === null) return;
    if (this.told) {
      const seconds = Math.round((Date.now() - this.since) / 1000);
      this.options.log?.info({ failures: this.total, seconds }, `${this.options.what} works again after ${this.total} failure(s) in ${seconds} s`);
      this.unlogged -= this.unloggedSince;
    }
    this.unloggedSince = 0;
    this.since = null;
    this.total = 0;
    this.told = false;
    if (this.unlogged === 0) this.reset();
  }

  /**
   * The work these failures belong to ended without a success to tell them apart (a load that left
   * some items out): the failures not logged yet are summarised now, not at the interval's end (a
   * command-line tool may have exited by then), and a failure after this is logged at once again.
   */
  finish(): void {
    if (this.unlogged > 0) {
      const err = this.lastError;
      this.options.log?.warn(
        { err, failures: this.unlogged },
        `${this.options.what} failed ${this.unlogged} more time(s) before it ended; the last: ${reasonOf(err)}`,
      );
    }
    this.reset();
    this.loggedAt = -Infinity;
  }

  /** Stops the summary timer (the process or its part is closing). */
  close(): void {
    this.reset();
  }

  private summarizeLater(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.unlogged === 0) return;
      const err = this.lastError;
      const reason = reasonOf(err);
      const s = this.intervalMs / 1000;
      this.options.log?.warn(
        { err, failures: this.unlogged },
        `${this.options.what} failed ${this.unlogged} more time(s) in the last ${s} s; the last: ${reason}`,
      );
      this.unlogged = 0;
      this.unloggedSince = 0;
      // Failures still going on are told now: their end is told too.
      if (this.since !== null) this.told = true;
      // Another interval: a failure in it is summarised at its end, never sooner.
      this.summarizeLater();
    }, this.intervalMs);
    this.timer.unref();
  }

  private reset(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.since = null;
    this.total = 0;
    this.unlogged = 0;
    this.unloggedSince = 0;
    this.lastError = null;
    this.told = false;
  }
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
