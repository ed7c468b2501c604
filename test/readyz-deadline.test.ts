/**
 * `/readyz` has one deadline for all its checks: each has its own timeout, but they could add up,
 * and a check that hangs fails at the deadline instead of holding every call.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { READY_DEADLINE_MS } from '../src/routes/health.js';
import { testApp } from './helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await close?.();
  close = undefined;
});

describe('/readyz', () => {
  it('answers 503 at its deadline when a check never answers, naming that check', async () => {
    const t = await testApp();
    close = t.close;
    t.app.salon.readiness.set('stuck', () => new Promise(() => {}));
    await t.app.ready();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const answer = t.app.inject({ method: 'GET', url: '/readyz', headers: { authorization: `Bearer ${t.app.salon.adminToken}` } });
    await vi.advanceTimersByTimeAsync(READY_DEADLINE_MS);
    const res = await answer;
    expect(res.statusCode).toBe(503);
    const body = res.json() as { ok: boolean; checks: Record<string, { ok: boolean; detail: string }> };
    expect(body.ok).toBe(false);
    expect(body.checks.stuck).toEqual({ ok: false, detail: `no answer within ${READY_DEADLINE_MS / 1000} s` });
    expect(body.checks.store.ok).toBe(true);
  });
});
