/** Sliding-window counters for the assistant's per-room and per-user ask limits. */
import { positiveNumber, wholeNumber } from '../options.js';

export interface WindowLimit {
  /** Asks allowed per window. */
  limit: number;
  windowMs: number;
}

/** Counts events per key over the last `windowMs`; refuses the one past `limit`. */
const SWEEP_EVERY = 1000;

export class WindowLimiter {
  private readonly hits = new Map<string, number[]>();
  private records = 0;

  constructor(
    private readonly options: WindowLimit,
    name = 'WindowLimiter',
  ) {
    wholeNumber(name, 'limit', options.limit, 1);
    positiveNumber(name, 'windowMs', options.windowMs);
  }

  /** Whether one more event for `key` fits now (without recording it). */
  allows(key: string, now = Date.now()): boolean {
    return this.recent(key, now).length < this.options.limit;
  }

  /** Records an event for `key`. */
  record(key: string, now = Date.now()): void {
    const list = this.recent(key, now);
    list.push(now);
    this.hits.set(key, list);
    // Keys of askers who never come back would pile up: drop the expired ones now and then.
    if (++this.records % SWEEP_EVERY === 0) for (const k of [...this.hits.keys()]) this.recent(k, now);
  }

  /** Milliseconds from `now` until one more event for `key` fits (0 when one fits now). */
  waitMs(key: string, now = Date.now()): number {
    const list = this.recent(key, now);
    if (list.length < this.options.limit) return 0;
    return list[list.length - this.options.limit] + this.options.windowMs - now;
  }

  /** Takes back one event recorded for `key` at `at` (one that did not happen after all). */
  forget(key: string, at: number): void {
    const list = this.hits.get(key);
    const i = list ? list.lastIndexOf(at) : -1;
    if (i < 0) return;
    list!.splice(i, 1);
    if (!list!.length) this.hits.delete(key);
  }

  /** Keys with events in the window (for tests and metrics). */
  get size(): number {
    return this.hits.size;
  }

  private recent(key: string, now: number): number[] {
    const list = this.hits.get(key);
    if (!list) return [];
    const from = now - this.options.windowMs;
    while (list.length && list[0] <= from) list.shift();
    if (!list.length) this.hits.delete(key);
    return list;
  }
}
