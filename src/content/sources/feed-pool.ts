/**
 * The one owner of the feed-parsing worker pool: every feed is parsed, and its entries turned into
 * plain text, on a worker thread (dist/workers/feed.js) with a time limit, so no feed, however
 * hostile, holds the event loop that every room shares.
 */
import { existsSync } from 'node:fs';
import type { Piscina } from 'piscina';
import type { FeedResult, FeedTask } from '../../../workers/feed.js';
import { errors } from '../../errors.js';
import { oneWorkerPool } from '../../one-worker-pool.js';
import { fromWorkerError } from '../../worker-errors.js';
import { builtWorkerFile } from '../../worker-files.js';
import type { ParsedFeed } from './feeds.js';
import { runTimedTask, WORKER_HEAP_MB } from '../worker-task.js';
import { wholeNumber } from '../../options.js';

const MAX_QUEUE = 64;
/** Longest a feed may take in the worker before the worker is replaced (EXTRACT_TASK_TIMEOUT_MS). */
export const DEFAULT_FEED_TASK_TIMEOUT_MS = 20_000;

export interface FeedPoolOptions {
  /** The compiled worker; default dist/workers/feed.js. */
  filename?: string;
  /** Time limit of one feed, after which its worker is terminated and replaced. */
  taskTimeoutMs?: number;
  /** Heap of the worker in MB (default WORKER_HEAP_MB); a feed that needs more fails and the worker is replaced. */
  heapMb?: number;
}

/** Parses feeds on one worker thread, started on first use. */
export class FeedPool {
  private pool: Piscina | null = null;
  private readonly filename: string;
  private readonly taskTimeoutMs: number;
  private readonly heapMb: number;

  constructor(options: FeedPoolOptions = {}) {
    this.filename = options.filename ?? builtWorkerFile('feed.js');
    if (!existsSync(this.filename)) throw new Error(`${this.filename} is missing; run \`node scripts/build.mjs\` first`);
    this.taskTimeoutMs = options.taskTimeoutMs ?? DEFAULT_FEED_TASK_TIMEOUT_MS;
    wholeNumber('FeedPool', 'taskTimeoutMs', this.taskTimeoutMs, 1);
    this.heapMb = wholeNumber('FeedPool', 'heapMb', options.heapMb ?? WORKER_HEAP_MB, 16);
  }

  /**
   * Parses a feed into plain-text entries (toPlainFeed); rejects with ERR_FEED_PARSE like
   * parseFeed, or ERR_PROCESSING_TIMEOUT past the time limit.
   */
  async parse(bytes: Uint8Array, ref: string, signal?: AbortSignal, contentType?: string): Promise<ParsedFeed> {
    this.pool ??= oneWorkerPool({ filename: this.filename, name: 'parse', label: 'feed', heapMb: this.heapMb, maxQueue: MAX_QUEUE });
    const task: FeedTask = { bytes: new Uint8Array(bytes), ref, contentType };
    const result = await runTimedTask<FeedResult>(this.pool, task, { name: 'parse', signal, timeoutMs: this.taskTimeoutMs, ref, heapMb: this.heapMb });
    if (result.ok) return result.feed;
    if (result.error.code) throw fromWorkerError(result.error);
    throw new errors.ERR_FEED_PARSE(`${ref}: ${result.error.message}`, fromWorkerError(result.error));
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
  }
}
