/**
 * The one owner of the JSON body worker (dist/workers/json-body.js): bodies past
 * PARSE_OFF_LOOP_BYTES (an import of 5,000 messages, a batch of content items: up to 32 MiB) are
 * decoded and parsed there, so no request body holds the event loop that every room shares.
 */
import type { Piscina } from 'piscina';
import type { JsonBodyResult, JsonBodyTask } from '../../workers/json-body.js';
import { runTimedTask, WORKER_HEAP_MB } from '../content/worker-task.js';
import { wholeNumber } from '../options.js';
import { oneWorkerPool } from '../one-worker-pool.js';
import { builtWorkerFile } from '../worker-files.js';

/**
 * Bodies larger than this are parsed on the worker: the app's own body limit (1 MiB, ~5–10 ms to
 * decode and parse), so only the routes that raise it, all admin ones, send bodies there.
 */
export const PARSE_OFF_LOOP_BYTES = 1_048_576;
/** Longest one body may take in the worker (32 MiB parse in ~0.3–0.6 s) before the worker is replaced. */
export const DEFAULT_JSON_BODY_TIMEOUT_MS = 20_000;

export interface JsonBodyPoolOptions {
  /** The compiled worker; default dist/workers/json-body.js. */
  filename?: string;
  /** Time limit of one body, after which its worker is terminated and replaced. */
  taskTimeoutMs?: number;
}

/** Parses large JSON bodies on one worker thread, started on first use. */
export class JsonBodyPool {
  private pool: Piscina | null = null;
  private readonly filename: string;
  private readonly taskTimeoutMs: number;

  constructor(options: JsonBodyPoolOptions = {}) {
    this.filename = options.filename ?? builtWorkerFile('json-body.js');
    this.taskTimeoutMs = wholeNumber('JsonBodyPool', 'taskTimeoutMs', options.taskTimeoutMs ?? DEFAULT_JSON_BODY_TIMEOUT_MS, 1);
  }

  /**
   * The body's value, or `{ok: false}` for text that is not JSON or holds a poisoned object;
   * rejects with ERR_PROCESSING_TIMEOUT or ERR_PROCESSING_TOO_LARGE when the worker had to be replaced.
   */
  async parse(bytes: Uint8Array): Promise<JsonBodyResult> {
    this.pool ??= oneWorkerPool({ filename: this.filename, name: 'parse', label: 'json-body', heapMb: WORKER_HEAP_MB });
    const task: JsonBodyTask = { bytes };
    return runTimedTask<JsonBodyResult>(this.pool, task, { name: 'parse', timeoutMs: this.taskTimeoutMs, ref: 'the request body' });
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
  }
}
