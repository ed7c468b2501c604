/**
 * One task on a piscina pool, with a time limit. Hostile input is never trusted to be cheap: past
 * the limit the task is aborted, which makes piscina terminate the worker running it and start a
 * fresh one for the next task, so a stuck parse costs one thread restart, not the pool.
 */
import type { Piscina } from 'piscina';
import { errors } from '../errors.js';

/**
 * Heap of one extraction or feed worker, in MB. A parse costs ~1 KB a element, so 5 MB of `<p>x`
 * (1.25 million elements) grew a worker past 1.8 GB; the biggest real pages of the extraction
 * corpus, 5 MB of them together, parse in less than 256.
 */
export const WORKER_HEAP_MB = 512;

export interface TimedTaskOptions {
  /** The worker module's export to call. */
  name: string;
  /** Aborts the task early (a cancelled or out-of-budget job); its reason is rethrown. */
  signal?: AbortSignal;
  timeoutMs: number;
  /** What the task works on, for the error (a URL, a feed name). */
  ref: string;
  /** The pool's heap limit per worker, for the error (default WORKER_HEAP_MB). */
  heapMb?: number;
}

/**
 * Runs `task`; rejects with ERR_PROCESSING_TIMEOUT past `timeoutMs`, ERR_PROCESSING_TOO_LARGE when
 * the worker ran out of its heap (`heapMb`, the pool's resourceLimits), or with `signal`'s reason.
 */
export async function runTimedTask<T>(pool: Piscina, task: unknown, options: TimedTaskOptions): Promise<T> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  try {
    return (await pool.run(task, { name: options.name, signal })) as T;
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    if (timeout.signal.aborted) throw new errors.ERR_PROCESSING_TIMEOUT(options.ref, options.timeoutMs);
    if ((err as { code?: unknown })?.code === 'ERR_WORKER_OUT_OF_MEMORY')
      throw new errors.ERR_PROCESSING_TOO_LARGE(options.ref, options.heapMb ?? WORKER_HEAP_MB);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
