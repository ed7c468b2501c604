/**
 * The SSRF-guarded HTTP fetcher (undici). Every socket goes through the guarded connector, so
 * private and reserved addresses are refused at connect time, whatever redirects or DNS say.
 * Redirects are followed by hand (each hop re-validated), bodies are capped while streaming,
 * 429/5xx answers are retried with backoff, and only HTML/XML (pages) or JSON are accepted.
 */
import type { LookupFunction } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { Config } from '../../config.js';
import { SalonError, errors, permanently } from '../../errors.js';
import type { FetchedPage, Validators } from '../sources/article.js';
import { isBlockedAddress, isIpLiteral } from './address-guard.js';
import { badPortOf } from './bad-ports.js';
import { withoutUserinfo } from '../../url-userinfo.js';
import { decompress, discard, isJsonType, isPageType, mediaType, readCapped } from './fetch-body.js';
import { nestsDeeperThan } from '../../json-depth.js';
import { BlockedAddressError, guardedConnector, hostPolicy } from './guarded-connector.js';
import { wholeNumber } from '../../options.js';

export const DEFAULT_MAX_REDIRECTS = 5;
export const DEFAULT_RETRIES = 2;
export const DEFAULT_RETRY_DELAY_MS = 500;
export const DEFAULT_USER_AGENT = 'Salon/0.1 (article fetcher)';
/** Longest Retry-After the fetcher waits for; a longer one ends the retries. */
const MAX_RETRY_AFTER_MS = 10_000;
/** One attempt may take this many timeouts in all (connect + headers + a slowly dripping body). */
const ATTEMPT_DEADLINE_FACTOR = 3;
/**
 * A whole fetch, every hop and retry, ends after this many timeouts: each attempt had its own
 * deadline, so a site answering 503 or redirecting slowly, hop after hop, could hold an ingest slot
 * for minutes (2 retries × 6 hops × 3 timeouts).
 */
const FETCH_DEADLINE_FACTOR = 4;
/** Deepest nesting of a JSON answer read (HN and Reddit answers nest a dozen levels at most). */
export const MAX_JSON_DEPTH = 64;
/**
 * Largest JSON answer read, whatever FETCH_MAX_BYTES allows pages: JSON.parse runs on the event
 * loop, ~8 ms a MB of flat numbers here. An HN item is a few KB and a Reddit thread read with its
 * `limit` ~50 comments of ~4 KB, so 2 MiB leaves ten times the room real answers need.
 */
export const MAX_JSON_BYTES = 2 * 1024 * 1024;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Client errors that say "not now" rather than "never": Request Timeout, Too Early, Too Many Requests. */
const NOT_NOW_STATUSES = new Set([408, 425, 429]);

/** What a fetch asks for, which media types it takes, and the most it reads (besides FETCH_MAX_BYTES). */
interface BodyKind {
  accept: string;
  acceptable: (mediaType: string) => boolean;
  maxBytes: number;
}

const PAGE_BODY: BodyKind = {
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,application/rss+xml;q=0.9,application/atom+xml;q=0.9,*/*;q=0.1',
  acceptable: isPageType,
  maxBytes: Infinity,
};
const JSON_BODY: BodyKind = { accept: 'application/json', acceptable: isJsonType, maxBytes: MAX_JSON_BYTES };
const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Options of {@link createFetcher}. */
export interface FetcherOptions {
  /** Connect, headers and body timeout, in milliseconds. */
  timeoutMs: number;
  /** Largest body read (after decompression), in bytes. */
  maxBytes: number;
  /** Host names or IPs that may be reached even though they are private (tests, local services). */
  allowHosts: string[];
  /** Redirects followed at most; default 5. */
  maxRedirects?: number;
  /** Retries after a 429 or 5xx answer; default 2. */
  retries?: number;
  /** First backoff delay (doubled per retry) when no Retry-After is given; default 500 ms. */
  retryDelayMs?: number;
  /** Dispatcher to send requests through (tests pass a MockAgent); default a guarded undici Agent. */
  dispatcher?: Dispatcher;
  /** Name resolution behind the guard; default `dns.lookup` (tests stub it). */
  lookup?: LookupFunction;
  userAgent?: string;
}

export type { FetchedPage };

/** Fetches pages and JSON with the guards above. */
export interface Fetcher {
  /**
   * HTML or XML only (text/html, application/xhtml+xml, application/xml, text/xml, application/rss+xml, application/atom+xml, ...).
   * With `validators`, a conditional request: a 304 answer resolves with status 304 and an empty body.
   */
  fetchPage(url: string, signal?: AbortSignal, validators?: Validators): Promise<FetchedPage>;
  /** application/json (the HN and Reddit APIs). Same guards, and at most {@link MAX_JSON_BYTES}. */
  fetchJson<T = unknown>(url: string, signal?: AbortSignal): Promise<T>;
  /** Closes the fetcher's own connection pool (a dispatcher passed in is left to its owner). */
  close(): Promise<void>;
}

function validate(options: FetcherOptions) {
  if (!Array.isArray(options.allowHosts) || options.allowHosts.some((h) => typeof h !== 'string')) {
    throw new TypeError('allowHosts must be an array of host names or IPs');
  }
  return {
    timeoutMs: wholeNumber('Fetcher', 'timeoutMs', options.timeoutMs, 1),
    maxBytes: wholeNumber('Fetcher', 'maxBytes', options.maxBytes, 1),
    maxRedirects: wholeNumber('Fetcher', 'maxRedirects', options.maxRedirects ?? DEFAULT_MAX_REDIRECTS, 0),
    retries: wholeNumber('Fetcher', 'retries', options.retries ?? DEFAULT_RETRIES, 0),
    retryDelayMs: wholeNumber('Fetcher', 'retryDelayMs', options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS, 0),
  };
}

/** Milliseconds a Retry-After header asks for, or null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\s*\d+\s*$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Creates a fetcher. Options are validated here; a bad one throws a TypeError naming it. */
export function createFetcher(options: FetcherOptions): Fetcher {
  const o = validate(options);
  const policy = hostPolicy(options.allowHosts);
  const own = options.dispatcher
    ? null
    : new Agent({
        connect: guardedConnector({ allowHosts: options.allowHosts, timeoutMs: o.timeoutMs, lookup: options.lookup }),
        headersTimeout: o.timeoutMs,
        bodyTimeout: o.timeoutMs,
      });
  const dispatcher: Dispatcher = options.dispatcher ?? own!;
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;

  /**
   * Parses and checks one hop's URL: http(s) only, literal IPs guarded before any connection, no
   * port browsers refuse (an allow-listed host excepted: the operator named it), and userinfo
   * dropped, so that it is neither sent nor kept in the page's URL.
   */
  function checkUrl(raw: string, requested: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new errors.ERR_FETCH_BAD_URL(withoutUserinfo(raw));
    }
    url.username = '';
    url.password = '';
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new errors.ERR_FETCH_BAD_URL(url.href);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIpLiteral(host) && !policy.allowedName(host) && isBlockedAddress(host)) throw new errors.ERR_FETCH_BLOCKED_ADDRESS(requested);
    const port = badPortOf(url);
    if (port !== null && !policy.allowedName(host)) throw new errors.ERR_FETCH_BLOCKED_PORT(url.href, port);
    return url;
  }

  function mapError(err: unknown, requested: string, signal?: AbortSignal): unknown {
    if (err instanceof SalonError) return err;
    if (signal?.aborted) return signal.reason;
    const e = err as { code?: string; name?: string; message?: string; cause?: unknown };
    if (err instanceof BlockedAddressError || e.cause instanceof BlockedAddressError) return new errors.ERR_FETCH_BLOCKED_ADDRESS(requested);
    if (UNDICI_TIMEOUTS.has(e.code ?? '') || e.name === 'TimeoutError') return new errors.ERR_FETCH_TIMEOUT(requested, o.timeoutMs);
    return new errors.ERR_FETCH_FAILED(requested, e.message ?? String(err), err instanceof Error ? err : undefined);
  }

  async function send(url: URL, accept: string, signal?: AbortSignal, validators?: Validators): Promise<Dispatcher.ResponseData> {
    const deadline = AbortSignal.timeout(o.timeoutMs * ATTEMPT_DEADLINE_FACTOR);
    const conditional: Record<string, string> = {};
    if (validators?.etag) conditional['if-none-match'] = validators.etag;
    if (validators?.lastModified) conditional['if-modified-since'] = validators.lastModified;
    return request(url, {
      dispatcher,
      method: 'GET',
      headers: { 'user-agent': userAgent, accept, 'accept-encoding': 'gzip, deflate, br', ...conditional },
      signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
    });
  }

  /** Sends one hop, retrying 429/5xx answers; returns the first answer that is not retried. */
  async function sendWithRetries(url: URL, accept: string, signal?: AbortSignal, validators?: Validators): Promise<Dispatcher.ResponseData> {
    for (let attempt = 0; ; attempt++) {
      const res = await send(url, accept, signal, validators);
      const retriable = res.statusCode === 429 || res.statusCode >= 500;
      if (!retriable || attempt >= o.retries) return res;
      const asked = retryAfterMs(res.headers['retry-after']);
      if (asked !== null && asked > MAX_RETRY_AFTER_MS) return res;
      await res.body.dump();
      const backoff = o.retryDelayMs * 2 ** attempt * (1 + Math.random() * 0.2);
      await sleep(asked ?? backoff, undefined, { signal });
    }
  }

  async function fetchChecked(requested: string, kind: BodyKind, signal?: AbortSignal, validators?: Validators): Promise<FetchedPage> {
    const { accept, acceptable } = kind;
    const maxBytes = Math.min(o.maxBytes, kind.maxBytes);
    let url = checkUrl(requested, requested);
    const deadlineMs = o.timeoutMs * FETCH_DEADLINE_FACTOR;
    const deadline = AbortSignal.timeout(deadlineMs);
    const bounded = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      for (let hop = 0; ; hop++) {
        const res = await sendWithRetries(url, accept, bounded, validators);
        const location = header(res.headers, 'location');
        if (REDIRECT_STATUSES.has(res.statusCode) && location) {
          await res.body.dump();
          if (hop >= o.maxRedirects) throw permanently(new errors.ERR_FETCH_TOO_MANY_REDIRECTS(requested));
          url = checkUrl(new URL(location, url).href, requested);
          continue;
        }
        const etag = header(res.headers, 'etag') ?? null;
        const lastModified = header(res.headers, 'last-modified') ?? null;
        if (res.statusCode === 304 && validators) {
          await res.body.dump();
          const contentType = header(res.headers, 'content-type') ?? '';
          return {
            requestedUrl: requested,
            url: url.href,
            status: 304,
            contentType,
            body: Buffer.alloc(0),
            etag: etag ?? validators.etag,
            lastModified: lastModified ?? validators.lastModified,
          };
        }
        if (res.statusCode < 200 || res.statusCode > 299) {
          await res.body.dump();
          const refused = new errors.ERR_FETCH_HTTP_STATUS(requested, res.statusCode);
          throw res.statusCode >= 400 && res.statusCode < 500 && !NOT_NOW_STATUSES.has(res.statusCode) ? permanently(refused) : refused;
        }
        const contentType = header(res.headers, 'content-type') ?? '';
        if (!acceptable(mediaType(contentType))) {
          discard(res);
          throw permanently(new errors.ERR_FETCH_CONTENT_TYPE(requested, contentType || '(none)'));
        }
        const raw = await readCapped(res, maxBytes, requested);
        // Every line of the header: `gzip` twice on two lines is a stack, which one pass left compressed.
        const encoding = [res.headers['content-encoding'] ?? []].flat().join(', ');
        const body = await decompress(raw, encoding, maxBytes, requested);
        return { requestedUrl: requested, url: url.href, status: res.statusCode, contentType, body, etag, lastModified };
      }
    } catch (err) {
      if (deadline.aborted && !signal?.aborted) throw new errors.ERR_FETCH_TIMEOUT(requested, deadlineMs);
      throw mapError(err, requested, signal);
    }
  }

  return {
    // Userinfo is dropped before anything, so no error or page names it either.
    fetchPage: (url, signal, validators) => fetchChecked(withoutUserinfo(url), PAGE_BODY, signal, validators),
    async fetchJson<T>(raw: string, signal?: AbortSignal): Promise<T> {
      const url = withoutUserinfo(raw);
      const page = await fetchChecked(url, JSON_BODY, signal);
      // JSON.parse runs on the event loop: 5 MB of `[[[[…` held it 2.8 s; the APIs read nest a few levels.
      if (nestsDeeperThan(page.body, MAX_JSON_DEPTH))
        throw permanently(new errors.ERR_FETCH_FAILED(url, `the answer nests deeper than ${MAX_JSON_DEPTH} levels`));
      try {
        return JSON.parse(page.body.toString('utf8')) as T;
      } catch (err) {
        throw permanently(new errors.ERR_FETCH_FAILED(url, 'the answer is not valid JSON', err as Error));
      }
    },
    async close() {
      await own?.close();
    },
  };
}

/** A fetcher configured by FETCH_TIMEOUT_MS, FETCH_MAX_BYTES and FETCH_ALLOW_HOSTS. */
export function fetcherFromConfig(config: Config): Fetcher {
  return createFetcher({ timeoutMs: config.FETCH_TIMEOUT_MS, maxBytes: config.FETCH_MAX_BYTES, allowHosts: [...config.FETCH_ALLOW_HOSTS] });
}
