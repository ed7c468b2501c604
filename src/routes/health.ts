/**
 * `/healthz` (the process is up) and `/readyz` (the store and every registered check answer).
 * Anyone may ask whether the server is ready and which check fails; what each check found (hosts,
 * models, error messages) is for the admin token only.
 */
import type { FastifyInstance } from 'fastify';
import { isAdmin } from './auth.js';

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
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
    const ok = Object.values(checks).every((c) => c.ok);
    reply.status(ok ? 200 : 503);
    if (isAdmin(request)) return { ok, checks };
    return { ok, checks: Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, { ok: c.ok }])) };
  });
}
