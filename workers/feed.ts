/**
 * Feed parsing worker (run by src/content/sources/feed-pool.ts). Task export `parse`: parses one feed
 * document and turns its entries into plain text, off the main thread (a large podcast feed takes
 * hundreds of milliseconds of cheerio; a hostile one, whatever its time limit allows). Errors come
 * back as data, because a thrown SalonError loses its class on the way out.
 */
import { toPlainFeed } from '../src/content/sources/feed-items.js';
import { parseFeed, type ParsedFeed } from '../src/content/sources/feeds.js';
import { markStarted, type StartStamped } from '../src/content/worker-task.js';
import { toWorkerError, type WorkerError } from '../src/worker-errors.js';

/** One feed document: its bytes (decoded by declaration or detection) and a name for errors. */
export interface FeedTask extends StartStamped {
  bytes: Uint8Array;
  ref: string;
  /** The Content-Type the feed came with: its charset decodes an undeclared feed that is not UTF-8. */
  contentType?: string;
}

export type FeedResult = { ok: true; feed: ParsedFeed } | { ok: false; error: WorkerError };

/** Parses `task.bytes` as a feed, with plain-text entries. */
export function parse(task: FeedTask): FeedResult {
  markStarted(task);
  try {
    return { ok: true, feed: toPlainFeed(parseFeed(task.bytes, task.ref, task.contentType)) };
  } catch (err) {
    return { ok: false, error: toWorkerError(err) };
  }
}
