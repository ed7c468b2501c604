/**
 * Feed parsing worker (run by src/content/feed-pool.ts). Task export `parse`: parses one feed
 * document off the main thread; a large podcast feed takes hundreds of milliseconds of cheerio.
 * Errors come back as data, because a thrown SalonError loses its class on the way out.
 */
import { parseFeed, type ParsedFeed } from '../src/content/feeds.js';
import { SalonError } from '../src/errors.js';

/** One feed document: its bytes (decoded by declaration or detection) and a name for errors. */
export interface FeedTask {
  bytes: Uint8Array;
  ref: string;
}

export type FeedResult = { ok: true; feed: ParsedFeed } | { ok: false; error: { message: string; code?: string; statusCode?: number } };

/** Parses `task.bytes` as a feed. */
export function parse(task: FeedTask): FeedResult {
  try {
    return { ok: true, feed: parseFeed(task.bytes, task.ref) };
  } catch (err) {
    const salon = err instanceof SalonError ? { code: err.code, statusCode: err.statusCode } : {};
    return { ok: false, error: { message: (err as Error).message, ...salon } };
  }
}
