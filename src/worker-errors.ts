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

/**
 * Keeps a pool's own errors from ending the process: piscina emits `error` on the pool, not on a
 * task, e.g. "Unexpected message from Worker" when a worker answers a task twice (seen on Node 20
 * with eval:fusion's back-to-back memory touches: the first answer settled the task, the second
 * had none), and an `error` event nobody listens to is thrown. Each task still settles or fails
 * by itself, so the error is only reported.
 */
export function keepPoolUp(pool: ErrorEmitter, name: string): void {
  pool.on('error', (err) => process.emitWarning(`${name} worker pool: ${err instanceof Error ? err.message : String(err)}`, { code: 'SALON_WORKER_POOL' }));
}
