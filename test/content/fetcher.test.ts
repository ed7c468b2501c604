import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { MockAgent, request as undiciRequest, Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config.js';
import { decodeDocument } from '../../src/content/extract/decode.js';
import { ExtractPool } from '../../src/content/extract/extract-pool.js';
import { extractArticle } from '../../src/content/extract/index.js';
import {
  MAX_JSON_BYTES,
  MAX_JSON_DEPTH,
  createFetcher,
  fetcherFromConfig,
  retryAfterMs,
  type Fetcher,
  type FetcherOptions,
} from '../../src/content/fetch/fetcher.js';
import { decompress } from '../../src/content/fetch/fetch-body.js';
import { nestsDeeperThan } from '../../src/json-depth.js';
import { BlockedAddressError, guardedConnector } from '../../src/content/fetch/guarded-connector.js';
import { SalonError } from '../../src/errors.js';
import { HTML, startFixtureServer, type FixtureServer } from './fetch-fixture-server.js';

/** A DNS stub: `fixture.test` and `evil.test` both resolve to the loopback fixture server. */
const DNS: Record<string, LookupAddress[]> = {
  'fixture.test': [{ address: '127.0.0.1', family: 4 }],
  'evil.test': [{ address: '127.0.0.1', family: 4 }],
  'mixed.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.7', family: 4 },
  ],
  'mapped.test': [{ address: '::ffff:7f00:1', family: 6 }],
};
const stubLookup = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  const found = DNS[hostname];
  if (!found) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
  if (options.all) return callback(null, found);
  callback(null, found[0].address, found[0].family);
}) as unknown as LookupFunction;

let server: FixtureServer;
const open: Fetcher[] = [];
const base = () => `http://fixture.test:${server.port}`;

function fetcher(overrides: Partial<FetcherOptions> = {}): Fetcher {
  const f = createFetcher({ timeoutMs: 2000, maxBytes: 100_000, allowHosts: ['fixture.test'], retryDelayMs: 10, lookup: stubLookup, ...overrides });
  open.push(f);
  return f;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return err instanceof SalonError ? err.code : `not a SalonError: ${String(err)}`;
  }
  return 'resolved';
}

beforeAll(async () => {
  server = await startFixtureServer();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((f) => f.close()));
  server.hits.clear();
  server.redirectTarget = '/page';
});
afterAll(async () => {
  await server.close();
});

describe('fetcher: pages and JSON', () => {
  it('fetches an allow-listed HTML page with its final URL and content type', async () => {
    const page = await fetcher().fetchPage(`${base()}/page`);
    expect(page.status).toBe(200);
    expect(page.url).toBe(`${base()}/page`);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.body.toString()).toBe(HTML);
  });

  it('accepts feeds and parses JSON', async () => {
    expect((await fetcher().fetchPage(`${base()}/feed`)).body.toString()).toContain('<rss');
    expect(await fetcher().fetchJson(`${base()}/json`)).toEqual({ id: 8863, by: 'dhouston' });
    expect(await codeOf(fetcher().fetchJson(`${base()}/bad-json`))).toBe('ERR_FETCH_FAILED');
  });

  it('makes conditional requests: a page answered 304 has no body and keeps its validators', async () => {
    const first = await fetcher().fetchPage(`${base()}/etag-feed`);
    expect(first).toMatchObject({ status: 200, etag: '"v1"', lastModified: 'Tue, 02 Jan 2024 10:00:00 GMT' });
    const again = await fetcher().fetchPage(`${base()}/etag-feed`, undefined, { etag: first.etag });
    expect(again).toMatchObject({ status: 304, etag: '"v1"' });
    expect(again.body.length).toBe(0);
    const byDate = await fetcher().fetchPage(`${base()}/etag-feed`, undefined, { lastModified: first.lastModified });
    expect(byDate.status).toBe(304);
    // without validators a 304 is not expected, and other 3xx/4xx answers still fail
    expect(await codeOf(fetcher().fetchPage(`${base()}/missing`, undefined, { etag: '"v1"' }))).toBe('ERR_FETCH_HTTP_STATUS');
  });

  it('refuses other content types', async () => {
    expect(await codeOf(fetcher().fetchPage(`${base()}/image`))).toBe('ERR_FETCH_CONTENT_TYPE');
    expect(await codeOf(fetcher().fetchPage(`${base()}/no-type`))).toBe('ERR_FETCH_CONTENT_TYPE');
    expect(await codeOf(fetcher().fetchPage(`${base()}/json`))).toBe('ERR_FETCH_CONTENT_TYPE');
    expect(await codeOf(fetcher().fetchJson(`${base()}/page`))).toBe('ERR_FETCH_CONTENT_TYPE');
  });

  it('refuses URLs that are not http or https', async () => {
    for (const url of ['ftp://fixture.test/x', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url', 'data:text/html,hi']) {
      expect(await codeOf(fetcher().fetchPage(url)), url).toBe('ERR_FETCH_BAD_URL');
    }
  });

  it('reports non-2xx answers', async () => {
    expect(await codeOf(fetcher().fetchPage(`${base()}/missing`))).toBe('ERR_FETCH_HTTP_STATUS');
    expect(server.hits.get('/missing')).toBe(1);
  });

  it('reports network errors as ERR_FETCH_FAILED', async () => {
    expect(await codeOf(fetcher().fetchPage('http://nowhere.test/'))).toBe('ERR_FETCH_FAILED');
  });
});

describe('fetcher: size cap', () => {
  it('refuses a body announced larger than maxBytes', async () => {
    expect(await codeOf(fetcher().fetchPage(`${base()}/big`))).toBe('ERR_FETCH_TOO_LARGE');
  });
  it('stops reading a chunked body once it passes maxBytes', async () => {
    expect(await codeOf(fetcher().fetchPage(`${base()}/big-chunked`))).toBe('ERR_FETCH_TOO_LARGE');
    expect((await fetcher({ maxBytes: 300_000 }).fetchPage(`${base()}/big-chunked`)).body.length).toBe(50 * 4096);
  });
  it('reads JSON answers up to MAX_JSON_BYTES, however large a page may be', async () => {
    const roomy = fetcher({ maxBytes: 5_000_000 });
    const atCap = await roomy.fetchJson<number[]>(`${base()}/json-at-cap`);
    expect(JSON.stringify(atCap).length).toBe(MAX_JSON_BYTES);
    expect(await codeOf(roomy.fetchJson(`${base()}/json-over-cap`))).toBe('ERR_FETCH_TOO_LARGE');
    // A smaller FETCH_MAX_BYTES still caps JSON too.
    expect(await codeOf(fetcher().fetchJson(`${base()}/json-at-cap`))).toBe('ERR_FETCH_TOO_LARGE');
  });
  it('decompresses gzip, but not past maxBytes', async () => {
    expect((await fetcher().fetchPage(`${base()}/gzip`)).body.toString()).toBe(HTML);
    expect(await codeOf(fetcher().fetchPage(`${base()}/gzip-bomb`))).toBe('ERR_FETCH_TOO_LARGE');
  });
  it('inflates every encoding off the event loop, within maxBytes, and refuses unknown ones', async () => {
    const page = Buffer.from(HTML.repeat(1000));
    for (const [coding, packed] of [
      ['gzip', gzipSync(page)],
      ['deflate', deflateSync(page)],
      ['br', brotliCompressSync(page)],
    ] as const) {
      // A promise, not the bytes: the work is on the libuv pool while the loop serves the rooms.
      const inflating = decompress(packed, coding, page.length, 'u');
      expect(inflating).toBeInstanceOf(Promise);
      expect((await inflating).equals(page)).toBe(true);
      await expect(decompress(packed, coding, page.length - 1, 'u')).rejects.toMatchObject({ code: 'ERR_FETCH_TOO_LARGE' });
    }
    await expect(decompress(page, 'gzip', page.length, 'u')).rejects.toMatchObject({ code: 'ERR_FETCH_FAILED' });
    await expect(decompress(page, 'compress', page.length, 'u')).rejects.toMatchObject({ code: 'ERR_FETCH_FAILED' });
    await expect(decompress(page, 'constructor', page.length, 'u')).rejects.toMatchObject({ code: 'ERR_FETCH_FAILED' });
  });

  it('reads codings named on several header lines as one list, refusing a stack rather than undoing one of them', async () => {
    expect(await codeOf(fetcher().fetchPage(`${base()}/gzip-twice`))).toBe('ERR_FETCH_FAILED');
  });
});

describe('fetcher: redirects', () => {
  it('follows up to five redirects and reports the final URL', async () => {
    const page = await fetcher().fetchPage(`${base()}/redirect/5`);
    expect(page.url).toBe(`${base()}/page`);
    expect(page.requestedUrl).toBe(`${base()}/redirect/5`);
  });
  it('refuses a sixth redirect', async () => {
    expect(await codeOf(fetcher().fetchPage(`${base()}/redirect/6`))).toBe('ERR_FETCH_TOO_MANY_REDIRECTS');
  });
  it('honours a smaller maxRedirects', async () => {
    expect(await codeOf(fetcher({ maxRedirects: 1 }).fetchPage(`${base()}/redirect/2`))).toBe('ERR_FETCH_TOO_MANY_REDIRECTS');
  });
});

describe('fetcher: userinfo', () => {
  const withUser = (user: string, path: string) => base().replace('//', `//${user}@`) + path;

  it('drops it from the URL asked for and from a redirect, so that no page or error names it', async () => {
    const page = await fetcher().fetchPage(withUser('alice:s3cret', '/page'));
    expect(page).toMatchObject({ requestedUrl: `${base()}/page`, url: `${base()}/page` });
    server.redirectTarget = withUser('bob:pw', '/page');
    expect((await fetcher().fetchPage(`${base()}/to-target`)).url).toBe(`${base()}/page`);
    const err = await fetcher()
      .fetchPage(withUser('alice:s3cret', '/missing'))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERR_FETCH_HTTP_STATUS' });
    expect((err as Error).message).not.toContain('s3cret');
  });
});

describe('fetcher: address guard at connect time', () => {
  it('refuses a name whose DNS answer is loopback when the name is not allow-listed', async () => {
    expect(await codeOf(fetcher().fetchPage(`http://evil.test:${server.port}/page`))).toBe('ERR_FETCH_BLOCKED_ADDRESS');
    expect(server.hits.get('/page')).toBeUndefined();
  });

  it('refuses a redirect from an allowed host to a name that resolves to a private address', async () => {
    server.redirectTarget = `http://evil.test:${server.port}/page`;
    expect(await codeOf(fetcher().fetchPage(`${base()}/to-target`))).toBe('ERR_FETCH_BLOCKED_ADDRESS');
    expect(server.hits.get('/to-target')).toBe(1);
    expect(server.hits.get('/page')).toBeUndefined();
  });

  it('refuses a redirect to a literal private address', async () => {
    for (const target of [`http://127.0.0.1:${server.port}/page`, `http://[::ffff:7f00:1]:${server.port}/page`, 'http://169.254.169.254/latest/meta-data/']) {
      server.redirectTarget = target;
      expect(await codeOf(fetcher().fetchPage(`${base()}/to-target`)), target).toBe('ERR_FETCH_BLOCKED_ADDRESS');
    }
    expect(server.hits.get('/page')).toBeUndefined();
  });

  it('refuses when any resolved address is private, and IPv4-mapped answers', async () => {
    expect(await codeOf(fetcher().fetchPage('http://mixed.test/'))).toBe('ERR_FETCH_BLOCKED_ADDRESS');
    expect(await codeOf(fetcher().fetchPage('http://mapped.test/'))).toBe('ERR_FETCH_BLOCKED_ADDRESS');
  });

  it('refuses localhost through the real resolver', async () => {
    const f = fetcher({ lookup: undefined, allowHosts: [] });
    expect(await codeOf(f.fetchPage(`http://localhost:${server.port}/page`))).toBe('ERR_FETCH_BLOCKED_ADDRESS');
    expect(server.hits.get('/page')).toBeUndefined();
  });

  it('reaches a name or IP once it is allow-listed', async () => {
    expect((await fetcher({ allowHosts: ['evil.test'] }).fetchPage(`http://evil.test:${server.port}/page`)).status).toBe(200);
    expect((await fetcher({ allowHosts: ['127.0.0.1'] }).fetchPage(`http://127.0.0.1:${server.port}/page`)).status).toBe(200);
  });

  it('refuses the ports browsers refuse (mail, IRC …), asked for or redirected to, before connecting, unless the host is allow-listed', async () => {
    for (const url of ['http://example.com:25/', 'https://example.com:6667/x', 'http://93.184.216.34:22/']) {
      expect(await codeOf(fetcher().fetchPage(url)), url).toBe('ERR_FETCH_BLOCKED_PORT');
    }
    server.redirectTarget = 'http://example.com:587/page';
    expect(await codeOf(fetcher().fetchPage(`${base()}/to-target`))).toBe('ERR_FETCH_BLOCKED_PORT');
    // The usual ports, and any other, are fetched as before.
    expect(await codeOf(fetcher().fetchJson(`${base()}/json`))).toBe('resolved');
    // An allow-listed host is the operator's: its port is not checked (nothing listens on 25 here).
    expect(await codeOf(fetcher().fetchPage('http://fixture.test:25/page'))).toBe('ERR_FETCH_FAILED');
  });

  it('the connector itself refuses literal addresses, whoever sends the request', async () => {
    const agent = new Agent({ connect: guardedConnector({ allowHosts: [], timeoutMs: 1000 }) });
    try {
      const err = await undiciRequest(`http://127.0.0.1:${server.port}/page`, { dispatcher: agent }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(BlockedAddressError);
      expect(server.hits.get('/page')).toBeUndefined();
    } finally {
      await agent.close();
    }
  });
});

describe('fetcher: retries', () => {
  it('retries a 429 and then succeeds', async () => {
    const page = await fetcher().fetchPage(`${base()}/flaky`);
    expect(page.status).toBe(200);
    expect(server.hits.get('/flaky')).toBe(2);
  });
  it('gives up on a 500 after the configured retries', async () => {
    expect(await codeOf(fetcher({ retries: 2 }).fetchPage(`${base()}/always-500`))).toBe('ERR_FETCH_HTTP_STATUS');
    expect(server.hits.get('/always-500')).toBe(3);
  });
  it('does not wait for an unreasonable Retry-After', async () => {
    expect(await codeOf(fetcher().fetchPage(`${base()}/retry-later`))).toBe('ERR_FETCH_HTTP_STATUS');
    expect(server.hits.get('/retry-later')).toBe(1);
  });
  it('marks a failure permanent when the answer was refused for what it held, not when the server could not answer now', async () => {
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => expect.unreachable('resolved'),
        (err: SalonError) => err,
      );
    const f = fetcher({ retries: 0 });
    const refused = [
      () => f.fetchPage(`${base()}/missing`),
      () => f.fetchPage(`${base()}/image`),
      () => f.fetchPage(`${base()}/big`),
      () => f.fetchPage(`${base()}/gzip-bomb`),
      () => f.fetchJson(`${base()}/bad-json`),
      () => f.fetchJson(`${base()}/page`),
      () => f.fetchPage(`${base()}/redirect/9`),
    ];
    for (const fetch of refused) expect(await failure(fetch())).toMatchObject({ permanent: true });
    const notNow = [
      () => f.fetchPage(`${base()}/always-500`),
      () => f.fetchPage(`${base()}/retry-later`),
      () => fetcher({ timeoutMs: 100 }).fetchPage(`${base()}/hang`),
    ];
    for (const fetch of notNow) {
      const err = await failure(fetch());
      expect(err).toBeInstanceOf(SalonError);
      expect(err.permanent).toBeUndefined();
    }
    // A connection refused: nobody answered.
    const closed = await startFixtureServer();
    const port = closed.port;
    await closed.close();
    expect((await failure(f.fetchPage(`http://fixture.test:${port}/page`))).permanent).toBeUndefined();
  });
  it('reads Retry-After as seconds or a date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 0, 5)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(5000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(undefined)).toBeNull();
  });
});

describe('fetcher: JSON nesting', () => {
  it('measures nesting outside strings, and refuses deeper answers before parsing them', () => {
    const deep = (n: number) => Buffer.from('['.repeat(n) + ']'.repeat(n));
    expect(nestsDeeperThan(deep(64), 64)).toBe(false);
    expect(nestsDeeperThan(deep(65), 64)).toBe(true);
    expect(nestsDeeperThan(Buffer.from(JSON.stringify({ a: '[[[[[[["\\"', b: [{ c: '{{{{' }] })), 3)).toBe(false);
    expect(nestsDeeperThan(Buffer.from('[' + '"x",'.repeat(1000) + '[[[]]]]'), 3)).toBe(true);
    expect(nestsDeeperThan(Buffer.alloc(5_000_000, 0x5b), MAX_JSON_DEPTH)).toBe(true);
  });
});

describe('fetcher: timeouts and cancellation', () => {
  it('times out on a server that never answers', async () => {
    expect(await codeOf(fetcher({ timeoutMs: 300 }).fetchPage(`${base()}/hang`))).toBe('ERR_FETCH_TIMEOUT');
  });
  it('times out on a body that stalls', async () => {
    expect(await codeOf(fetcher({ timeoutMs: 300 }).fetchPage(`${base()}/stall-body`))).toBe('ERR_FETCH_TIMEOUT');
  });
  it('bounds a whole fetch, hops and retries together, not only each attempt', async () => {
    // Twelve hops of 150 ms: each well within its attempt's deadline (3 × 400 ms), together past the fetch's (4 × 400 ms).
    const slow = fetcher({ timeoutMs: 400, maxRedirects: 15 });
    expect(await codeOf(slow.fetchPage(`${base()}/slow-redirect/12`))).toBe('ERR_FETCH_TIMEOUT');
    expect((await slow.fetchPage(`${base()}/slow-redirect/1`)).url).toBe(`${base()}/page`);
  });
  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = fetcher().fetchPage(`${base()}/hang`, controller.signal);
    setTimeout(() => controller.abort(new Error('caller gave up')), 50);
    await expect(pending).rejects.toThrow('caller gave up');
  });
});

describe('fetcher: charsets', () => {
  it('decodes a page by the charset its Content-Type names, also in the extraction worker given the bytes', async () => {
    const page = await fetcher().fetchPage(`${base()}/latin1`);
    expect(decodeDocument(page.body, page.contentType)).toContain('Café crème brûlée € 5');
    // Ingestion hands the worker the bytes and the Content-Type: the event loop decodes nothing.
    const article = await fetcher().fetchPage(`${base()}/cyrillic-article`);
    const pool = new ExtractPool();
    try {
      const extracted = await pool.extract(article.body, { url: article.url, contentType: article.contentType });
      expect(extracted.text).toContain('the harbour greeted every ferry with привет that morning');
    } finally {
      await pool.close();
    }
  });
  it('decodes an ISO-8859-1 page named by <meta charset>, also through extractArticle', async () => {
    const page = await fetcher().fetchPage(`${base()}/latin1-meta`);
    expect(decodeDocument(page.body, page.contentType)).toContain('Die Straße ist lang, und naïve Leute');
    expect(extractArticle(page.body).text).toContain('Die Straße ist lang, und naïve Leute');
  });
});

describe('fetcher: MockAgent, no network', () => {
  it('works through an injected dispatcher and still refuses literal private redirects', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get('https://news.example.com');
    pool.intercept({ path: '/a' }).reply(200, HTML, { headers: { 'content-type': 'text/html' } });
    pool.intercept({ path: '/b' }).reply(301, '', { headers: { location: 'http://10.0.0.5/admin' } });
    const f = fetcher({ dispatcher: agent, allowHosts: [] });
    expect((await f.fetchPage('https://news.example.com/a')).body.toString()).toBe(HTML);
    expect(await codeOf(f.fetchPage('https://news.example.com/b'))).toBe('ERR_FETCH_BLOCKED_ADDRESS');
    expect(await codeOf(f.fetchPage('http://[fd00::1]/'))).toBe('ERR_FETCH_BLOCKED_ADDRESS');
    await agent.close();
  });
});

describe('fetcher: options', () => {
  it('fails with the option name', () => {
    expect(() => createFetcher({ timeoutMs: 0, maxBytes: 10, allowHosts: [] })).toThrow(/timeoutMs/);
    expect(() => createFetcher({ timeoutMs: 10, maxBytes: -1, allowHosts: [] })).toThrow(/maxBytes/);
    expect(() => createFetcher({ timeoutMs: 10, maxBytes: 10, allowHosts: 'x' as never })).toThrow(/allowHosts/);
    expect(() => createFetcher({ timeoutMs: 10, maxBytes: 10, allowHosts: [], maxRedirects: 1.5 })).toThrow(/maxRedirects/);
    expect(() => createFetcher({ timeoutMs: 10, maxBytes: 10, allowHosts: [], retries: -1 })).toThrow(/retries/);
  });
  it('builds from the config and uses FETCH_ALLOW_HOSTS', async () => {
    const f = fetcherFromConfig(testConfig({ FETCH_ALLOW_HOSTS: '127.0.0.1', FETCH_TIMEOUT_MS: '2000' }));
    open.push(f);
    expect((await f.fetchPage(`http://127.0.0.1:${server.port}/page`)).status).toBe(200);
    const strict = fetcherFromConfig(testConfig());
    open.push(strict);
    expect(await codeOf(strict.fetchPage(`http://127.0.0.1:${server.port}/page`))).toBe('ERR_FETCH_BLOCKED_ADDRESS');
  });
});
