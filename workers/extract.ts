/**
 * Article extraction worker (run by the pool in src/content/extract/extract-pool.ts). Task export
 * `extract`: parses one page off the main thread. Errors come back as data, because a thrown
 * SalonError loses its class and code on the way out of a worker.
 */
import { extractArticle, type ExtractedArticle } from '../src/content/extract/index.js';
import { markStarted, type StartStamped } from '../src/content/worker-task.js';
import { toWorkerError, type WorkerError } from '../src/worker-errors.js';

/** One page to extract: its HTML (text, or bytes decoded here by `contentType`'s charset or a sniffed one) and options. */
export interface ExtractTask extends StartStamped {
  html: string | Uint8Array;
  url?: string;
  maxChars?: number;
  contentType?: string;
}

/** The article, or the error code and message extraction failed with. */
export type ExtractResult = { ok: true; article: ExtractedArticle } | { ok: false; error: WorkerError };

/** Extracts the article of `task.html`. */
export function extract(task: ExtractTask): ExtractResult {
  markStarted(task);
  const html = typeof task.html === 'string' ? task.html : Buffer.from(task.html.buffer, task.html.byteOffset, task.html.byteLength);
  try {
    return { ok: true, article: extractArticle(html, { url: task.url, maxChars: task.maxChars, contentType: task.contentType }) };
  } catch (err) {
    return { ok: false, error: toWorkerError(err) };
  }
}
