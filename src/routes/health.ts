/**
 * `/healthz` (the process is up), `/readyz` (the store and every registered check answer) and
 * `/metrics` (this node's Prometheus metrics, src/metrics/). Anyone may ask whether the server is
 * ready and which check fails; what each check found (hosts, models, error messages) is for the
 * admin token only, scrubbed of credentials; calls that arrive while a check runs share its run,
 * even past the deadline. Metrics hold counts and timings, nothing private; a scrape is limited per
 * address.
 */
import type { FastifyInstance } from 'fastify';
import { isAdmin } from './auth.js';
import { FreshReading } from '../rooms/fresh-reading.js';
import { API_RATE_LIMIT } from './rate-limit.js';
import { textForLog } from '../log-text.js';

/**
 * How long `/readyz` waits for its checks all together: each has its own timeout, but the store's
 * ping, Redis and a model server could add theirs up. A check that has not answered by then fails.
 */
export const READY_DEADLINE_MS = 5_000;

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

  // A scrape renders every series (a few ms for ~20 KB of text): limited per address like the API's
  // costly routes, far above what a Prometheus server asks (one scrape in 15 s).
  app.get('/metrics', { schema: { hide: true }, config: { rateLimit: API_RATE_LIMIT } }, async (_request, reply) => {
    const { contentType, body } = await app.salon.metrics.scrape();
    return reply.type(contentType).send(body);
  });

  // Every check runs once for all the calls that arrive while it runs: `/readyz` is open to anyone,
  // and each call was a store query, a Redis PING and an index-model read, so a flood of calls
  // queued a thousand pings on a PostgreSQL pool of ten ahead of the rooms' own queries. No reading
  // outlives its run: what /readyz says is never older than the call (an outage's end shows at once).
  const runs = new CheckRuns();
  const store = async () => {
    await app.salon.store.ping();
    return { ok: true, detail: app.salon.store.kind };
  };
  const readings = new FreshReading(0, () => runChecks(app, runs, store));
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    const { ok, checks } = await readings.get(null);
    reply.status(ok ? 200 : 503);
    if (isAdmin(request)) return { ok, checks };
    return { ok, checks: Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, { ok: c.ok }])) };
  });
}

/** What a check found, as `/readyz` tells it. */
interface Reading {
  ok: boolean;
  detail: string;
}

/**
 * Each check's run, at most one at a time: a call while a check runs joins that run, and the next
 * run starts only once it has settled. The deadline ends a call's wait, not the check, so a check
 * that hangs (a store pool that never hands out a connection) would otherwise be started again by
 * every call after the deadline, one more pending query or PING per probe for as long as it hangs.
 * A call that waited past its deadline leaves the run's waiters, so a run that never settles holds
 * none of the probes that gave up on it. No reading outlives its run. Keyed by the check itself: a
 * check replaced under the same name runs afresh.
 */
export class CheckRuns {
  private readonly waiters = new WeakMap<Check, Set<(found: Reading) => void>>();

  /** What `check` finds, from its run under way or a new one; `late` when that has not answered within `ms`. */
  wait(check: Check, ms: number, late: Reading): Promise<Reading> {
    return new Promise((resolve) => {
      let waiting = this.waiters.get(check);
      if (!waiting) {
        const run = new Set<(found: Reading) => void>();
        this.waiters.set(check, run);
        void readingOf(check).then((found) => {
          this.waiters.delete(check);
          for (const answer of run) answer(found);
        });
        waiting = run;
      }
      const own = waiting;
      const answer = (found: Reading) => {
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        own.delete(answer);
        resolve(late);
      }, ms);
      own.add(answer);
    });
  }

  /** Calls waiting on `check`'s run under way. */
  waiting(check: Check): number {
    return this.waiters.get(check)?.size ?? 0;
  }
}

/** A readiness check. */
type Check = () => Promise<Reading>;

/**
 * What `check` found, its detail scrubbed as the log scrubs text (an error naming DATABASE_URL or
 * REDIS_URL shows no password, and no terminal controls reach the admin's terminal); a check that
 * throws, or answers nothing usable, fails with its reason. Never rejects.
 */
async function readingOf(check: Check): Promise<Reading> {
  try {
    const found = await check();
    return { ok: found.ok === true, detail: textForLog(String(found.detail)) };
  } catch (err) {
    return { ok: false, detail: textForLog(err instanceof Error ? err.message : String(err)) };
  }
}

/** The store's ping and every registered check, each with what it found, all within READY_DEADLINE_MS. */
async function runChecks(app: FastifyInstance, runs: CheckRuns, store: () => Promise<Reading>): Promise<{ ok: boolean; checks: Record<string, Reading> }> {
  const late = { ok: false, detail: `no answer within ${READY_DEADLINE_MS / 1000} s` };
  const all: [string, Check][] = [['store', store], ...app.salon.readiness];
  const read = await Promise.all(all.map(async ([name, check]) => [name, await runs.wait(check, READY_DEADLINE_MS, late)] as const));
  // In the order they were registered, the store first, whichever answered first.
  const checks = Object.fromEntries(read);
  return { ok: Object.values(checks).every((c) => c.ok), checks };
}
