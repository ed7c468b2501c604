/**
 * The one owner of the scan worker pool (docs/architecture.md): a piscina pool running workers/search-scan.js.
 * Every flat-index scan goes through `ScanPool.scan`; a full queue becomes ERR_SEARCH_BUSY.
 */
import { Piscina } from 'piscina';
import { errors } from '../../errors.js';
import type { ScanResult, ScanTask, TouchTask } from './layout.js';
import { builtWorkerFile } from '../../worker-files.js';
import { keepPoolUp } from '../../worker-errors.js';
import { wholeNumber } from '../../options.js';
import { resolveKernel, type ScanKernelChoice } from './native-kernel.js';

/** Queued tasks allowed per thread before scans are refused (backpressure, not unbounded latency). */
export const DEFAULT_QUEUE_PER_THREAD = 32;
/**
 * Threads above `minThreads` exit after this much idleness. By default minThreads equals the
 * thread count: a cold worker needs tens of milliseconds to start and compile the kernel, longer
 * than a whole 100K-row scan, so idle workers are kept (they sleep in Atomics.wait and cost no CPU).
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Bytes one touch task maps (~20–50 ms of page faults). */
const TOUCH_SLICE = 16 * 1024 * 1024;
/**
 * How long close() lets the tasks running finish (a scan or a touch slice takes milliseconds)
 * before the workers are stopped anyway.
 */
const CLOSE_TIMEOUT_MS = 5_000;

export interface ScanPoolOptions {
  /** Worker threads (SEARCH_WORKERS); one search splits into at most this many tasks. */
  threads: number;
  /** Threads kept alive when idle (default: all of them). */
  minThreads?: number;
  idleTimeoutMs?: number;
  /** Queued tasks per thread before ERR_SEARCH_BUSY. */
  queuePerThread?: number;
  /** The scoring kernel (SEARCH_KERNEL); `auto` (default): native where the CPU has AVX2 and FMA. */
  kernel?: ScanKernelChoice;
}

export class ScanPool {
  readonly threads: number;
  /** Tasks that may wait in the queue; also bounds concurrent searches (see FlatIndex slots). */
  readonly maxQueue: number;
  /** The kernel every scan of this pool runs. */
  readonly kernel: 'native' | 'wasm';
  private readonly pool: Piscina;
  private closed = false;

  constructor(options: ScanPoolOptions) {
    this.threads = wholeNumber('ScanPool', 'threads', options.threads, 1);
    const minThreads = wholeNumber('ScanPool', 'minThreads', options.minThreads ?? this.threads, 0);
    if (minThreads > this.threads) throw new RangeError(`ScanPool: options.minThreads (${minThreads}) exceeds options.threads (${this.threads})`);
    const idleTimeout = wholeNumber('ScanPool', 'idleTimeoutMs', options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, 0);
    this.kernel = resolveKernel(options.kernel ?? 'auto');
    this.maxQueue = this.threads * wholeNumber('ScanPool', 'queuePerThread', options.queuePerThread ?? DEFAULT_QUEUE_PER_THREAD, 1);
    this.pool = new Piscina({
      filename: builtWorkerFile('search-scan.js'),
      name: 'scan',
      minThreads,
      maxThreads: this.threads,
      idleTimeout,
      maxQueue: this.maxQueue,
      // Scans are CPU-bound: two on one thread would only interleave.
      concurrentTasksPerWorker: 1,
      closeTimeout: CLOSE_TIMEOUT_MS,
    });
    keepPoolUp(this.pool, 'scan');
  }

  /** Runs one scan task; rejects with ERR_SEARCH_BUSY when the queue is full. */
  async scan(task: ScanTask): Promise<ScanResult> {
    if (this.closed) throw new errors.ERR_NOT_READY('the search pool is closed');
    try {
      return (await this.pool.run(task)) as ScanResult;
    } catch (err) {
      if (err instanceof Error && /queue is at limit|all Workers are busy/i.test(err.message)) {
        throw new errors.ERR_SEARCH_BUSY(`${this.pool.queueSize} scans queued`, err);
      }
      throw err;
    }
  }

  /**
   * Maps the pages of bytes [from, to) of `memory` on one of the pool's threads, TOUCH_SLICE at a
   * time (a scan waits behind one slice at most, and the other threads stay free): writing rows
   * into memory never touched before costs the writer a page fault every 4 KB (~3–5 ms a MB on
   * the project's virtual machine), which this moves off the event loop. Best effort: resolves
   * when done, never rejects.
   */
  async touch(memory: WebAssembly.Memory, from: number, to: number): Promise<void> {
    for (let at = from; at < to && !this.closed; at += TOUCH_SLICE) {
      const task: TouchTask = { memory, from: at, to: Math.min(to, at + TOUCH_SLICE) };
      await this.pool.run(task, { name: 'touch' }).catch(() => undefined);
    }
  }

  /** Tasks waiting for a thread. */
  get queueSize(): number {
    return this.pool.queueSize;
  }

  /**
   * Refuses new scans and touches, lets the tasks running finish, then stops the workers. Stopping
   * them at once (piscina's destroy) dropped the tasks running; when one still answered, piscina
   * found no task for the answer and emitted `error` on the pool ("Unexpected message from
   * Worker"), which ended eval:fusion as it closed an app during a touch.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.close();
  }
}
