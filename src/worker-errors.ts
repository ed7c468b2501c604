/**
 * Errors crossing a worker boundary. A thrown SalonError loses its class (and so its code) on the
 * way out of a worker thread, so workers return failures as data and their pools rebuild them:
 * the catalogue code, status and message, and the cause's name and message.
 */
import { SalonError } from './errors.js';

export interface WorkerError {
  name: string;
  message: string;
  code?: string;
  statusCode?: number;
  cause?: { name: string; message: string };
}

/** What a worker returns for a failure. */
export function toWorkerError(err: unknown): WorkerError {
  const e = err instanceof Error ? err : new Error(String(err));
  const salon = err instanceof SalonError ? { code: err.code, statusCode: err.statusCode } : {};
  const cause = e.cause instanceof Error ? { cause: { name: e.cause.name, message: e.cause.message } } : {};
  return { name: e.name, message: e.message, ...salon, ...cause };
}

/** The error a pool throws for a worker's failure: the catalogued SalonError when it had a code, else a plain one of its name. */
export function fromWorkerError(failure: WorkerError): Error {
  const cause = failure.cause ? Object.assign(new Error(failure.cause.message), { name: failure.cause.name }) : undefined;
  const options = cause ? { cause } : undefined;
  if (failure.code && failure.statusCode) return new SalonError(failure.code, failure.statusCode, failure.message, options);
  const err =
    failure.name === 'TypeError'
      ? new TypeError(failure.message, options)
      : failure.name === 'RangeError'
        ? new RangeError(failure.message, options)
        : new Error(failure.message, options);
  if (!(err instanceof TypeError) && !(err instanceof RangeError)) err.name = failure.name;
  return err;
}

/** What keepPoolUp needs of a worker pool: piscina's `error` event. */
interface ErrorEmitter {
  on(event: 'error', listener: (err: unknown) => void): unknown;
}

/** A pool's errors are reported at most once in this long (a fault that repeats would fill the log). */
export const POOL_WARNING_INTERVAL_MS = 60_000;

/**
 * Keeps a pool's own errors from ending the process: piscina emits `error` on the pool, not on a
 * task, when a worker answers a task it no longer tracks ("Unexpected message from Worker": a
 * task running when the pool was destroyed, whose answer still arrived; it ended eval:fusion, see
 * ScanPool.close), when a worker fails while it runs none, or when a graceful close times out;
 * an `error` event nobody listens to is thrown. Each task still settles or fails by itself
 * (piscina replaces a failed worker), so the error is only reported, as a process warning, at
 * most once per POOL_WARNING_INTERVAL_MS with how many came since the last.
 */
export function keepPoolUp(pool: ErrorEmitter, name: string): void {
  let lastWarned = -Infinity;
  let since = 0;
  pool.on('error', (err) => {
    since++;
    const now = Date.now();
    if (now - lastWarned < POOL_WARNING_INTERVAL_MS) return;
    const message = err instanceof Error ? err.message : String(err);
    process.emitWarning(`${name} worker pool: ${message}${since > 1 ? ` (${since} errors since the last warning)` : ''}`, { code: 'SALON_WORKER_POOL' });
    lastWarned = now;
    since = 0;
  });
}
