/**
 * The real IngestDeps: the SSRF-guarded fetcher, and article extraction and feed parsing on worker
 * pools only, each task with a time limit (EXTRACT_TASK_TIMEOUT_MS), so no page or feed ever runs
 * on the event loop. Workers run compiled code (dist/workers/); a missing build is an error here,
 * not a silent fallback to the main thread.
 */
import type { Config } from '../../config.js';
import type { IngestDeps } from '../sources/article.js';
import { ExtractPool } from '../extract/extract-pool.js';
import { FeedPool } from '../sources/feed-pool.js';
import { fetcherFromConfig } from '../fetch/fetcher.js';

/** Fetching and extraction configured by FETCH_* and EXTRACT_TASK_TIMEOUT_MS. */
export function defaultIngestDeps(config: Config): IngestDeps {
  const fetcher = fetcherFromConfig(config);
  const taskTimeoutMs = config.EXTRACT_TASK_TIMEOUT_MS;
  const feeds = new FeedPool({ taskTimeoutMs });
  // The extraction pool checks for its worker at once, and starts threads only on first use.
  const pages = new ExtractPool({ taskTimeoutMs });
  return {
    fetchPage: (url, signal, validators) => fetcher.fetchPage(url, signal, validators),
    fetchJson: (url, signal) => fetcher.fetchJson(url, signal),
    // The bytes go to the worker, which decodes them: a 5 MB page in a single-byte charset took
    // 0.4 s of the event loop to decode here.
    extract: (page, maxChars, signal) => pages.extract(page.body, { url: page.url, maxChars, contentType: page.contentType }, signal),
    parseFeed: (bytes, ref, signal, contentType) => feeds.parse(bytes, ref, signal, contentType),
    async close() {
      await Promise.all([fetcher.close(), pages.close(), feeds.close()]);
    },
  };
}
