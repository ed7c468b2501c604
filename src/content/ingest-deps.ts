/**
 * The real IngestDeps: H1's SSRF-guarded fetcher, and article extraction and large-feed parsing
 * on worker pools so a large page or feed never blocks the event loop. The pool starts on first use and runs compiled code
 * (dist/workers/extract.js); when that is not built (running from source without a build) the
 * extraction runs in-process instead.
 */
import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import type { IngestDeps } from './article.js';
import { ExtractPool, extractWorkerPath } from './extract-pool.js';
import { FeedPool } from './feed-pool.js';
import { extractArticle } from './extract/index.js';
import { decodeHtml, fetcherFromConfig } from './fetcher.js';

/** Fetching and extraction configured by FETCH_*. */
export function defaultIngestDeps(config: Config): IngestDeps {
  const fetcher = fetcherFromConfig(config);
  let pool: ExtractPool | null = null;
  const feeds = new FeedPool();
  const workerBuilt = existsSync(extractWorkerPath());
  return {
    fetchPage: (url, signal) => fetcher.fetchPage(url, signal),
    fetchJson: (url, signal) => fetcher.fetchJson(url, signal),
    async extract(page, maxChars, signal) {
      const html = decodeHtml(page);
      if (!workerBuilt) return extractArticle(html, { url: page.url, maxChars });
      pool ??= new ExtractPool();
      return pool.extract(html, { url: page.url, maxChars }, signal);
    },
    parseFeed: (bytes, ref, signal) => feeds.parse(bytes, ref, signal),
    async close() {
      await Promise.all([fetcher.close(), pool?.close(), feeds.close()]);
      pool = null;
    },
  };
}
