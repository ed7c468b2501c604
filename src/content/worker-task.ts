/**
 * One task on a piscina pool, with a time limit. Hostile input is never trusted to be cheap: past
 * the limit the task is aborted, which makes piscina terminate the worker running it and start a
 * fresh one for the next task, so a stuck parse costs one thread restart, not the pool.
 *
 * The limit counts from the moment the worker starts the task, which the worker writes into the
 * task's `startedAt` (markStarted): a page queued behind slow ones, or waiting for a fresh worker
 * to start, has not run yet and must not fail as if it had. Waiting is bounded elsewhere: by the
 * pool's queue, each task ahead by its own limit, and by the caller's signal.
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

/** What runTimedTask adds to a task: where its worker writes when it started it (markStarted). */
export interface StartStamped {
  /** One BigInt64 slot: 0 until the worker starts the task, then the worker's Date.now(). */
  startedAt?: SharedArrayBuffer;
}

/** How often a task's time limit looks again whether a task still waiting for a worker has started. */
const START_POLL_MS = 250;

/** Called by a worker's task function first: its time limit counts from now. */
export function markStarted(task: StartStamped): void {
  if (task.startedAt) Atomics.store(new BigInt64Array(task.startedAt), 0, BigInt(Date.now()));
}

/**
 * Runs `task` (whose worker function calls markStarted first); rejects with ERR_PROCESSING_TIMEOUT
 * once it has run `timeoutMs` in its worker, ERR_PROCESSING_TOO_LARGE when the worker ran out of
 * its heap (`heapMb`, the pool's resourceLimits), or with `signal`'s reason.
 */
export async function runTimedTask<T>(pool: Piscina, task: object, options: TimedTaskOptions): Promise<T> {
  const startedAt = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
  const stamp = new BigInt64Array(startedAt);
  const timeout = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const check = (): void => {
    const started = Number(Atomics.load(stamp, 0));
    if (started === 0) timer = setTimeout(check, START_POLL_MS);
    else if (started + options.timeoutMs > Date.now()) timer = setTimeout(check, started + options.timeoutMs - Date.now());
    else timeout.abort();
  };
  timer = setTimeout(check, options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  try {
    return (await pool.run({ ...task, startedAt }, { name: options.name, signal })) as T;
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
