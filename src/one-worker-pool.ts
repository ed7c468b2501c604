/**
 * The pool of one worker thread that a parse of its own kind runs on (a feed, a large JSON body),
 * built one way for each: no thread until the first task, none after IDLE_TIMEOUT_MS idle, and
 * kept up after a worker's own error (keepPoolUp). Its owner runs each task with runTimedTask,
 * whose time limit replaces a stuck worker.
 */
import { Piscina } from 'piscina';
import { keepPoolUp } from './worker-errors.js';

/** An idle worker ends after this long: parses come in bursts (a feed poll, an import). */
const IDLE_TIMEOUT_MS = 30_000;

/** What an owner says of its worker. */
export interface OneWorkerPoolOptions {
  /** The compiled worker module. */
  filename: string;
  /** Its task export, the pool's default task. */
  name: string;
  /** What a pool error is reported as (keepPoolUp: 'feed', 'json-body'). */
  label: string;
  /** The worker's heap in MB; a task that needs more fails and the worker is replaced. */
  heapMb: number;
  /** Most tasks waiting for the thread; piscina's default (unbounded) when left out. */
  maxQueue?: number;
}

/** A piscina pool of at most one thread, started by its first task. */
export function oneWorkerPool(options: OneWorkerPoolOptions): Piscina {
  const { filename, name, label, heapMb, maxQueue } = options;
  const pool = new Piscina({
    filename,
    name,
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: IDLE_TIMEOUT_MS,
    ...(maxQueue !== undefined ? { maxQueue } : {}),
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
  });
  keepPoolUp(pool, label);
  return pool;
}
