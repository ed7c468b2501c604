/**
 * `/healthz` (the process is up), `/readyz` (the store and every registered check answer) and
 * `/metrics` (this node's Prometheus metrics, src/metrics/). Anyone may ask whether the server is
 * ready and which check fails; what each check found (hosts, models, error messages) is for the
 * admin token only; calls that arrive while the checks run share their result. Metrics hold counts
 * and timings, nothing private; a scrape is limited per address.
 */
import type { FastifyInstance } from 'fastify';
import { isAdmin } from './auth.js';
import { FreshReading } from '../rooms/fresh-reading.js';
import { API_RATE_LIMIT } from './rate-limit.js';

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
  // queued a thousand pings on a PostgreSQL pool of ten ahead of the rooms' own queries.
  const readings = new FreshReading(0, () => runChecks(app));
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    const { ok, checks } = await readings.get(null);
    reply.status(ok ? 200 : 503);
    if (isAdmin(request)) return { ok, checks };
    return { ok, checks: Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, { ok: c.ok }])) };
  });
}

/** The store's ping and every registered check, each with what it found. */
async function runChecks(app: FastifyInstance): Promise<{ ok: boolean; checks: Record<string, { ok: boolean; detail: string }> }> {
  const checks: Record<string, { ok: boolean; detail: string }> = {};
  try {
    await app.salon.store.ping();
    checks.store = { ok: true, detail: app.salon.store.kind };
  } catch (err) {
    checks.store = { ok: false, detail: (err as Error).message };
  }
  await Promise.all(
    [...app.salon.readiness].map(async ([name, check]) => {
      try {
        const h = await check();
        checks[name] = { ok: h.ok, detail: h.detail };
      } catch (err) {
        checks[name] = { ok: false, detail: (err as Error).message };
      }
    }),
  );
  return { ok: Object.values(checks).every((c) => c.ok), checks };
}
