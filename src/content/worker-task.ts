/**
 * One task on a piscina pool, with a time limit. Hostile input is never trusted to be cheap: past
 * the limit the task is aborted, which makes piscina terminate the worker running it and start a
 * fresh one for the next task, so a stuck parse costs one thread restart, not the pool.
 */
import type { Piscina } from 'piscina';
import { errors } from '../errors.js';

export interface TimedTaskOptions {
  /** The worker module's export to call. */
  name: string;
  /** Aborts the task early (a cancelled or out-of-budget job); its reason is rethrown. */
  signal?: AbortSignal;
  timeoutMs: number;
  /** What the task works on, for the error (a URL, a feed name). */
  ref: string;
}

/** Runs `task`; rejects with ERR_PROCESSING_TIMEOUT past `timeoutMs`, or with `signal`'s reason. */
export async function runTimedTask<T>(pool: Piscina, task: unknown, options: TimedTaskOptions): Promise<T> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  try {
    return (await pool.run(task, { name: options.name, signal })) as T;
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    if (timeout.signal.aborted) throw new errors.ERR_PROCESSING_TIMEOUT(options.ref, options.timeoutMs);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
