/** Sliding-window counters for the assistant's per-room and per-user ask limits. */
import { errors, withRetryAfterMs } from '../errors.js';
import { positiveNumber, wholeNumber } from '../options.js';
import { plural } from '../text.js';

export interface WindowLimit {
  /** Asks allowed per window. */
  limit: number;
  windowMs: number;
}

/** Records between two sweeps of the keys whose events have all left the window. */
const SWEEP_EVERY = 1000;

/**
 * Keys a WindowLimiter remembers at most by default. Keys come from outside (client addresses,
 * IPv6 giving one client millions of /64s): past the cap the key whose last event is oldest is
 * forgotten whatever it holds, which frees it of its window early, and only a client holding this
 * many keys can arrange that, one that has this many windows anyway.
 */
export const DEFAULT_MAX_KEYS = 100_000;

/**
 * Counts events per key over the last `windowMs`; refuses the one past `limit`. Keys are kept in
 * the order of their last event, so those whose events have all left the window are at the front:
 * a sweep drops them without walking the others, and the cap drops the oldest first.
 */
export class WindowLimiter {
  private readonly hits = new Map<string, number[]>();
  private records = 0;
  private readonly maxKeys: number;

  constructor(
    private readonly options: WindowLimit,
    name = 'WindowLimiter',
    maxKeys = DEFAULT_MAX_KEYS,
  ) {
    wholeNumber(name, 'limit', options.limit, 1);
    positiveNumber(name, 'windowMs', options.windowMs);
    this.maxKeys = wholeNumber(name, 'maxKeys', maxKeys, 1);
  }

  /** Whether one more event for `key` fits now (without recording it). */
  allows(key: string, now = Date.now()): boolean {
    return this.recent(key, now).length < this.options.limit;
  }

  /** Records an event for `key`. */
  record(key: string, now = Date.now()): void {
    const list = this.recent(key, now);
    list.push(now);
    this.hits.delete(key);
    if (this.hits.size >= this.maxKeys) this.hits.delete(this.hits.keys().next().value!);
    this.hits.set(key, list);
    // Keys that never come back would pile up: drop the expired ones now and then.
    if (++this.records % SWEEP_EVERY === 0) this.sweep(now);
  }

  /** Drops the keys at the front whose events have all left the window, up to the first that has one in it. */
  private sweep(now: number): void {
    for (const key of this.hits.keys()) if (this.recent(key, now).length > 0) return;
  }

  /** Events allowed per window. */
  get limit(): number {
    return this.options.limit;
  }

  /** The window's length, in milliseconds. */
  get windowMs(): number {
    return this.options.windowMs;
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

/** "a minute", "10 s": the window a limit counts over, in words. */
function windowWords(windowMs: number): string {
  return windowMs === 60_000 ? 'a minute' : `every ${Math.ceil(windowMs / 1000)} s`;
}

/**
 * Throws ERR_RATE_LIMITED when one more event for `key` does not fit `limiter` at `now`. Its
 * message names the limit and whose it is ("each member") and the whole seconds until the next
 * place comes free, which the error's `retryAfterMs` carries to the client exactly.
 */
export function refuseOverLimit(limiter: WindowLimiter, key: string, whose: string, now = Date.now()): void {
  const waitMs = limiter.waitMs(key, now);
  if (waitMs <= 0) return;
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const refused = new errors.ERR_RATE_LIMITED(
    `the assistant takes ${plural(limiter.limit, 'question', 'questions')} ${windowWords(limiter.windowMs)} from ${whose}; ask again in ${seconds} s`,
  );
  throw withRetryAfterMs(refused, waitMs);
}
