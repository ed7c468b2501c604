/**
 * Per-address request limits on the HTTP API (@fastify/rate-limit): the routes that cost work —
 * ask, search, ingest, content, the room and source listings, metrics and the OpenAPI document — opt in with
 * `config: { rateLimit: API_RATE_LIMIT }`; health checks, pages and static files do not. Addresses are counted by key (IPv6 by /64, src/rooms/address.ts),
 * and behind a proxy by the address TRUST_PROXY lets it report. Past the limit: 429 with
 * ERR_RATE_LIMITED and Retry-After.
 */
import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { errors } from '../errors.js';
import { addressKey } from '../rooms/address.js';

/** A route's `config.rateLimit` to be limited with the API's per-address budget (each route has its own). */
export const API_RATE_LIMIT = {};

/** Addresses one route's counters remember at most (the plugin's own default), the least recently counted dropped first. */
export const API_LIMIT_ADDRESSES = 5_000;

type Incr = FastifyRateLimitStore['incr'];
/** What a route's counters are told of it. */
type RouteShape = { method: string | string[]; url: string };

/** One route's requests per address in the current window (what the plugin's own store counts). */
class WindowCounters implements FastifyRateLimitStore {
  private readonly counts = new Map<string, { current: number; startMs: number }>();

  incr(key: string, callback: Parameters<Incr>[1], timeWindow: number): void {
    const now = Date.now();
    let c = this.counts.get(key);
    // Taken out and put back last: the map's first key is then the least recently counted.
    this.counts.delete(key);
    // A window that starts after `now` (the clock was set back) starts again, as an old one does.
    if (!c || now - c.startMs >= timeWindow || now < c.startMs) c = { current: 0, startMs: now };
    c.current++;
    this.counts.set(key, c);
    if (this.counts.size > API_LIMIT_ADDRESSES) this.counts.delete(this.counts.keys().next().value!);
    callback(null, { current: c.current, ttl: timeWindow - (now - c.startMs) });
  }

  child(): FastifyRateLimitStore {
    return new WindowCounters();
  }
}

/** The method a route is counted under: a HEAD as its GET. */
function countedMethod(method: string): string {
  return method === 'HEAD' ? 'GET' : method;
}

/**
 * The API's counters, one set per route, where a route's HEAD counts with its GET. Fastify adds a
 * HEAD route beside each GET, and the plugin gave it counters of its own: a HEAD runs the GET's
 * handler (a whole search, a metrics scrape) and drops the body, so alternating the two doubled
 * every route's budget.
 */
class ApiCounters implements FastifyRateLimitStore {
  private readonly routes = new Map<string, WindowCounters>();
  private readonly global = new WindowCounters();

  incr(key: string, callback: Parameters<Incr>[1], timeWindow: number): void {
    this.global.incr(key, callback, timeWindow);
  }

  /** Called once per limited route, with the route's limit settings and, in `routeInfo`, the route itself. */
  child(params: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
    // @fastify/rate-limit 11 hands the route's merged settings, the route under `routeInfo` (its types say the route).
    const route = (params as { routeInfo?: RouteShape }).routeInfo ?? (params as RouteShape);
    const methods = [route.method].flat().map(countedMethod);
    const id = `${[...new Set(methods)].sort().join(',')} ${route.url}`;
    let counters = this.routes.get(id);
    if (!counters) this.routes.set(id, (counters = new WindowCounters()));
    return counters;
  }
}

async function apiRateLimit(app: FastifyInstance, options: { perMinute: number }): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    max: options.perMinute,
    timeWindow: 60_000,
    store: ApiCounters,
    keyGenerator: (request) => addressKey(request.ip),
    errorResponseBuilder: (_request, context) =>
      new errors.ERR_RATE_LIMITED(`at most ${context.max} API requests a minute from one address; retry in ${context.after}`),
  });
}

export default fp(apiRateLimit, { name: 'salon-api-rate-limit' });
