/**
 * The one owner of the feed-parsing worker pool: large feeds are parsed on a worker thread
 * (dist/workers/feed.js) so ingestion never holds the event loop for long; small ones are parsed
 * in-process, where a thread hop would cost more than it saves.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { FeedResult, FeedTask } from '../../workers/feed.js';
import { SalonError, errors } from '../errors.js';
import { parseFeed, type ParsedFeed } from './feeds.js';

/** Feeds smaller than this are parsed in-process (a few tens of milliseconds at most). */
export const FEED_WORKER_MIN_BYTES = 200_000;
const IDLE_TIMEOUT_MS = 30_000;
const MAX_QUEUE = 64;

/** dist/workers/feed.js, whether this module runs from dist/src/content or (in tests) src/content. */
export function feedWorkerPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const distRoot = here.split(sep).includes('dist') ? resolve(here, '../..') : resolve(here, '../../dist');
  return join(distRoot, 'workers', 'feed.js');
}

export interface FeedPoolOptions {
  /** Documents at least this large go to the worker; default FEED_WORKER_MIN_BYTES. */
  minWorkerBytes?: number;
  /** The compiled worker; default dist/workers/feed.js. */
  filename?: string;
}

/** Parses feeds, large ones on one worker thread started on first use. */
export class FeedPool {
  private pool: Piscina | null = null;
  private readonly filename: string;
  private readonly minWorkerBytes: number;

  constructor(options: FeedPoolOptions = {}) {
    this.filename = options.filename ?? feedWorkerPath();
    this.minWorkerBytes = options.minWorkerBytes ?? FEED_WORKER_MIN_BYTES;
    if (!Number.isInteger(this.minWorkerBytes) || this.minWorkerBytes < 0) {
      throw new RangeError(`FeedPool: options.minWorkerBytes must be a whole number ≥ 0, got ${this.minWorkerBytes}`);
    }
  }

  /** Whether large feeds really go to a worker (false when running from source without a build). */
  get usesWorker(): boolean {
    return existsSync(this.filename);
  }

  /** Parses a feed; rejects with ERR_FEED_PARSE like parseFeed. */
  async parse(bytes: Uint8Array, ref: string, signal?: AbortSignal): Promise<ParsedFeed> {
    if (bytes.byteLength < this.minWorkerBytes || !this.usesWorker) return parseFeed(bytes, ref);
    this.pool ??= new Piscina({ filename: this.filename, name: 'parse', minThreads: 0, maxThreads: 1, idleTimeout: IDLE_TIMEOUT_MS, maxQueue: MAX_QUEUE });
    const task: FeedTask = { bytes: new Uint8Array(bytes), ref };
    const result = (await this.pool.run(task, { name: 'parse', signal })) as FeedResult;
    if (result.ok) return result.feed;
    const { code, statusCode, message } = result.error;
    if (code && statusCode) throw new SalonError(code, statusCode, message);
    throw new errors.ERR_FEED_PARSE(`${ref}: ${message}`);
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
  }
}
