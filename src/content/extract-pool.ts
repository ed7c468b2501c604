/**
 * The extraction worker pool (STYLE 9): a small piscina pool running dist/workers/extract.js, so
 * parsing a large page never blocks the event loop. Its owner (the app's IngestDeps) closes it
 * with the app. Workers always run compiled code; build first (`node scripts/build.mjs`).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ExtractResult, ExtractTask } from '../../workers/extract.js';
import { SalonError } from '../errors.js';
import type { ExtractOptions, ExtractedArticle } from './extract/index.js';

/** Threads of the shared pool: extraction is occasional work beside the server's own. */
export const DEFAULT_EXTRACT_THREADS = 1;
/** An idle worker exits after this long, so a quiet server holds no extra thread. */
export const DEFAULT_EXTRACT_IDLE_TIMEOUT_MS = 30_000;
/** Pages that may wait for a worker before extraction is refused. */
export const DEFAULT_EXTRACT_MAX_QUEUE = 256;
const MAX_THREADS_LIMIT = 2;

/** Options of {@link ExtractPool}. */
export interface ExtractPoolOptions {
  /** Worker threads, 1 or 2; default 1. */
  maxThreads?: number;
  idleTimeoutMs?: number;
  maxQueue?: number;
  /** The compiled worker; default dist/workers/extract.js beside this module's build. */
  filename?: string;
}

/** dist/workers/extract.js, whether this module runs from dist/src/content or (in tests) src/content. */
export function extractWorkerPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const distRoot = here.split(sep).includes('dist') ? resolve(here, '../..') : resolve(here, '../../dist');
  return join(distRoot, 'workers', 'extract.js');
}

function integer(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`ExtractPool: options.${name} must be an integer from ${min} to ${max}, got ${value}`);
  return value;
}

/** A piscina pool that runs extractArticle in worker threads. */
export class ExtractPool {
  private readonly pool: Piscina;

  constructor(options: ExtractPoolOptions = {}) {
    const filename = options.filename ?? extractWorkerPath();
    if (!existsSync(filename)) throw new Error(`${filename} is missing; run \`node scripts/build.mjs\` first`);
    this.pool = new Piscina({
      filename,
      name: 'extract',
      minThreads: 0,
      maxThreads: integer('maxThreads', options.maxThreads ?? DEFAULT_EXTRACT_THREADS, 1, MAX_THREADS_LIMIT),
      idleTimeout: integer('idleTimeoutMs', options.idleTimeoutMs ?? DEFAULT_EXTRACT_IDLE_TIMEOUT_MS, 0),
      maxQueue: integer('maxQueue', options.maxQueue ?? DEFAULT_EXTRACT_MAX_QUEUE, 1),
    });
  }

  /** Extracts in a worker; rejects with the same SalonError extractArticle would throw. */
  async extract(html: string | Buffer, options: ExtractOptions = {}, signal?: AbortSignal): Promise<ExtractedArticle> {
    const task: ExtractTask = { html: typeof html === 'string' ? html : new Uint8Array(html), url: options.url, maxChars: options.maxChars };
    const result = (await this.pool.run(task, { name: 'extract', signal })) as ExtractResult;
    if (result.ok) return result.article;
    const { name, message, code, statusCode } = result.error;
    if (code && statusCode) throw new SalonError(code, statusCode, message);
    throw Object.assign(name === 'TypeError' ? new TypeError(message) : new Error(message), { name });
  }

  /** Stops the workers; queued tasks are rejected. */
  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
