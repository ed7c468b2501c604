/**
 * One abort signal per model call that fires on the caller's abort, an overall timeout, or (for
 * streams) too long a silence between pieces. Providers pass `signal` to their HTTP request and,
 * when the request fails, ask `why` to tell a timeout from a caller's abort from a real failure.
 */
import { errors, type SalonError } from '../../errors.js';

export type StopReason = 'caller' | 'total' | 'idle';

export interface DeadlineOptions {
  /** Longest the whole call may take (AI_TIMEOUT_MS). */
  totalMs: number;
  /** Longest silence between stream pieces (AI_IDLE_TIMEOUT_MS); armed by the first `touch()`. */
  idleMs?: number;
  /** The caller's signal. */
  signal?: AbortSignal;
}

/** Timers and an AbortController for one call. Always `dispose()` it when the call ends. */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly totalTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | undefined;
  private reason: StopReason | null = null;
  private readonly onCallerAbort = () => this.stop('caller');

  constructor(private readonly options: DeadlineOptions) {
    this.totalTimer = setTimeout(() => this.stop('total'), options.totalMs);
    if (options.signal?.aborted) this.stop('caller');
    else options.signal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /** Aborts when the call is to stop, for whatever reason. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the call was stopped, or null while it runs. */
  get why(): StopReason | null {
    return this.reason;
  }

  /** A piece arrived: restart the idle timer. */
  touch(): void {
    if (this.options.idleMs === undefined || this.reason) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.stop('idle'), this.options.idleMs);
  }

  /** ERR_AI_TIMEOUT naming the limit that was hit. */
  timeoutError(): SalonError {
    const ms = this.reason === 'idle' ? this.options.idleMs : this.options.totalMs;
    return new errors.ERR_AI_TIMEOUT(ms);
  }

  /** Clears the timers and aborts whatever request is still open (the caller is done with it). */
  dispose(): void {
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
    this.options.signal?.removeEventListener('abort', this.onCallerAbort);
    if (!this.controller.signal.aborted) this.controller.abort(new Error('model call finished'));
  }

  private stop(reason: StopReason): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller.abort(new Error(`model call stopped: ${reason}`));
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
  }
}
