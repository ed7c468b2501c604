/**
 * The extraction worker pool (docs/architecture.md): a small piscina pool running dist/workers/extract.js, so
 * parsing a large page never blocks the event loop. Its owner (the app's IngestDeps) closes it
 * with the app. Workers always run compiled code; build first (`node scripts/build.mjs`).
 */
import { existsSync } from 'node:fs';
import { Piscina } from 'piscina';
import type { ExtractResult, ExtractTask } from '../../../workers/extract.js';
import { fromWorkerError, keepPoolUp } from '../../worker-errors.js';
import { builtWorkerFile } from '../../worker-files.js';
import type { ExtractOptions, ExtractedArticle } from './index.js';
import { runTimedTask, WORKER_HEAP_MB } from '../worker-task.js';
import { wholeNumber } from '../../options.js';

/** Threads of the shared pool: extraction is occasional work beside the server's own. */
export const DEFAULT_EXTRACT_THREADS = 1;
/** An idle worker exits after this long, so a quiet server holds no extra thread. */
export const DEFAULT_EXTRACT_IDLE_TIMEOUT_MS = 30_000;
/** Pages that may wait for a worker before extraction is refused. */
export const DEFAULT_EXTRACT_MAX_QUEUE = 256;
/** Longest a page may take in a worker before the worker is replaced (EXTRACT_TASK_TIMEOUT_MS). */
export const DEFAULT_EXTRACT_TASK_TIMEOUT_MS = 20_000;
const MAX_THREADS_LIMIT = 2;

/** Options of {@link ExtractPool}. */
export interface ExtractPoolOptions {
  /** Worker threads, 1 or 2; default 1. */
  maxThreads?: number;
  idleTimeoutMs?: number;
  maxQueue?: number;
  /** The compiled worker; default dist/workers/extract.js beside this module's build. */
  filename?: string;
  /** Time limit of one page, after which its worker is terminated and replaced. */
  taskTimeoutMs?: number;
  /** Heap of a worker in MB (default WORKER_HEAP_MB); a page that needs more fails and its worker is replaced. */
  heapMb?: number;
}

/** A piscina pool that runs extractArticle in worker threads. */
export class ExtractPool {
  private readonly pool: Piscina;
  private readonly taskTimeoutMs: number;
  private readonly heapMb: number;

  constructor(options: ExtractPoolOptions = {}) {
    const filename = options.filename ?? builtWorkerFile('extract.js');
    if (!existsSync(filename)) throw new Error(`${filename} is missing; run \`node scripts/build.mjs\` first`);
    this.heapMb = wholeNumber('ExtractPool', 'heapMb', options.heapMb ?? WORKER_HEAP_MB, 16);
    this.pool = new Piscina({
      filename,
      name: 'extract',
      minThreads: 0,
      maxThreads: wholeNumber('ExtractPool', 'maxThreads', options.maxThreads ?? DEFAULT_EXTRACT_THREADS, 1, MAX_THREADS_LIMIT),
      idleTimeout: wholeNumber('ExtractPool', 'idleTimeoutMs', options.idleTimeoutMs ?? DEFAULT_EXTRACT_IDLE_TIMEOUT_MS, 0),
      maxQueue: wholeNumber('ExtractPool', 'maxQueue', options.maxQueue ?? DEFAULT_EXTRACT_MAX_QUEUE, 1),
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
    });
    keepPoolUp(this.pool, 'extract');
    this.taskTimeoutMs = wholeNumber('ExtractPool', 'taskTimeoutMs', options.taskTimeoutMs ?? DEFAULT_EXTRACT_TASK_TIMEOUT_MS, 1);
  }

  /**
   * Extracts in a worker; rejects with the same SalonError extractArticle would throw, or with
   * ERR_PROCESSING_TIMEOUT when the page takes longer than the time limit.
   */
  async extract(html: string | Buffer, options: ExtractOptions = {}, signal?: AbortSignal): Promise<ExtractedArticle> {
    const task: ExtractTask = {
      html: typeof html === 'string' ? html : new Uint8Array(html),
      url: options.url,
      maxChars: options.maxChars,
      contentType: options.contentType,
    };
    const result = await runTimedTask<ExtractResult>(this.pool, task, {
      name: 'extract',
      signal,
      timeoutMs: this.taskTimeoutMs,
      ref: options.url ?? 'a page',
      heapMb: this.heapMb,
    });
    if (result.ok) return result.article;
    throw fromWorkerError(result.error);
  }

  /** Stops the workers; queued tasks are rejected. */
  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
