/** Reconnect delays: exponential, capped, with jitter so a restarted server is not hit by everyone at once. */

export interface BackoffOptions {
  /** First delay before jitter, in ms. */
  baseMs?: number;
  /** Largest delay before jitter, in ms. */
  capMs?: number;
  /** Random number source in [0, 1); replaceable for tests. */
  random?: () => number;
  /** Failures counted already (a count kept across reloads); 0 unless given. */
  failures?: number;
}

export const DEFAULT_BACKOFF_BASE_MS = 500;
export const DEFAULT_BACKOFF_CAP_MS = 15_000;

/** Tracks consecutive failures and hands out the next delay ("equal jitter": half fixed, half random). */
export class Backoff {
  readonly baseMs: number;
  readonly capMs: number;
  private readonly random: () => number;
  private attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? DEFAULT_BACKOFF_BASE_MS;
    this.capMs = options.capMs ?? DEFAULT_BACKOFF_CAP_MS;
    this.random = options.random ?? Math.random;
    this.attempt = options.failures ?? 0;
    if (!(this.baseMs > 0)) throw new RangeError(`baseMs must be a positive number, got ${this.baseMs}`);
    if (!(this.capMs >= this.baseMs)) throw new RangeError(`capMs must be at least baseMs (${this.baseMs}), got ${this.capMs}`);
    if (!Number.isInteger(this.attempt) || this.attempt < 0) throw new RangeError(`failures must be a whole number, got ${this.attempt}`);
  }

  /** Failures since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  /** The delay before the next try; each call counts one more failure. */
  next(): number {
    const ceiling = Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  /** Called after a successful connection. */
  reset(): void {
    this.attempt = 0;
  }
}
