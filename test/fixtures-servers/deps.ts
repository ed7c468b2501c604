/**
 * IngestDeps for tests: a fetcher that only reaches 127.0.0.1 (anything else fails like a blocked
 * address) and the real article extractor.
 */
import type { IngestDeps, Validators } from '../../src/content/sources/article.js';
import { extractArticle } from '../../src/content/extract/index.js';
import { errors } from '../../src/errors.js';

async function get(url: string, validators?: Validators): Promise<Response> {
  if (new URL(url).hostname !== '127.0.0.1') throw new errors.ERR_FETCH_BLOCKED_ADDRESS(url);
  const headers: Record<string, string> = {};
  if (validators?.etag) headers['if-none-match'] = validators.etag;
  if (validators?.lastModified) headers['if-modified-since'] = validators.lastModified;
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'follow', headers });
  } catch (err) {
    throw new errors.ERR_FETCH_FAILED(url, (err as Error).message);
  }
  if (res.status === 304 && validators) return res;
  if (!res.ok) throw new errors.ERR_FETCH_HTTP_STATUS(url, res.status);
  return res;
}

export function loopbackDeps(): IngestDeps {
  return {
    async fetchPage(url, _signal, validators) {
      const res = await get(url, validators);
      return {
        requestedUrl: url,
        url: res.url,
        status: res.status,
        contentType: res.headers.get('content-type') ?? '',
        body: Buffer.from(await res.arrayBuffer()),
        etag: res.headers.get('etag'),
        lastModified: res.headers.get('last-modified'),
      };
    },
    async fetchJson(url) {
      return (await get(url)).json();
    },
    async extract(page, maxChars) {
      return extractArticle(page.body, { url: page.url, maxChars });
    },
  };
}
