/**
 * `/readyz`'s checks (src/routes/health.ts): a check still running past the deadline is joined by
 * later calls, not started again, and what a check found reaches the admin without the credentials
 * or terminal controls an error may carry.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CheckRuns, READY_DEADLINE_MS } from '../src/routes/health.js';
import { ADMIN, testApp } from './helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await close?.();
  close = undefined;
});

type Checks = Record<string, { ok: boolean; detail?: string }>;

describe('/readyz checks', () => {
  it('starts a check that hangs past the deadline once, whatever the number of probes, and again only after it settles', async () => {
    const t = await testApp();
    close = t.close;
    let starts = 0;
    let settle: (found: { ok: boolean; provider: string; detail: string }) => void = () => {};
    t.app.salon.readiness.set('stuck', () => {
      starts++;
      return new Promise((resolve) => (settle = resolve));
    });
    await t.app.ready();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const probe = async () => {
      const answer = t.app.inject({ url: '/readyz', headers: ADMIN });
      await vi.advanceTimersByTimeAsync(READY_DEADLINE_MS);
      return answer;
    };
    for (let i = 0; i < 3; i++) {
      const res = await probe();
      expect(res.statusCode).toBe(503);
      expect((res.json() as { checks: Checks }).checks.stuck).toEqual({ ok: false, detail: `no answer within ${READY_DEADLINE_MS / 1000} s` });
    }
    expect(starts).toBe(1);

    // The run that hung answers: a probe while nothing runs checks afresh (no reading is kept).
    settle({ ok: true, provider: 'test', detail: 'back' });
    await vi.advanceTimersByTimeAsync(0);
    const next = t.app.inject({ url: '/readyz', headers: ADMIN });
    await vi.waitFor(() => expect(starts).toBe(2), { timeout: 10_000 });
    settle({ ok: true, provider: 'test', detail: 'fresh' });
    const res = await next;
    expect(res.statusCode).toBe(200);
    expect((res.json() as { checks: Checks }).checks.stuck).toEqual({ ok: true, detail: 'fresh' });
  });

  it('joins a probe to the run under way when it arrives late in it, answering when that run does', async () => {
    const t = await testApp();
    close = t.close;
    let starts = 0;
    let settle: (found: { ok: boolean; provider: string; detail: string }) => void = () => {};
    t.app.salon.readiness.set('slow', () => {
      starts++;
      return new Promise((resolve) => (settle = resolve));
    });
    await t.app.ready();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const first = t.app.inject({ url: '/readyz', headers: ADMIN });
    await vi.advanceTimersByTimeAsync(READY_DEADLINE_MS);
    expect((await first).statusCode).toBe(503);
    const second = t.app.inject({ url: '/readyz', headers: ADMIN });
    await vi.advanceTimersByTimeAsync(READY_DEADLINE_MS / 2);
    settle({ ok: true, provider: 'test', detail: 'answered late' });
    const res = await second;
    expect(res.statusCode).toBe(200);
    expect((res.json() as { checks: Checks }).checks.slow).toEqual({ ok: true, detail: 'answered late' });
    expect(starts).toBe(1);
  });

  it("shows the admin a failing check's error without a URL's credentials or terminal controls", async () => {
    const t = await testApp();
    close = t.close;
    t.app.salon.readiness.set('thrown', async () => {
      throw new Error('cannot reach postgres://salon:s3cret@db.internal:5432/salon \x1b]0;owned\x07');
    });
    t.app.salon.readiness.set('told', async () => ({ ok: false, provider: 'redis', detail: 'Redis at redis://:hunter2@cache:6379 refused' }));
    const res = await t.app.inject({ url: '/readyz', headers: ADMIN });
    expect(res.statusCode).toBe(503);
    const { checks } = res.json() as { checks: Checks };
    expect(checks.thrown).toEqual({ ok: false, detail: 'cannot reach postgres://db.internal:5432/salon \\x1b]0;owned\\x07' });
    expect(checks.told).toEqual({ ok: false, detail: 'Redis at redis://cache:6379 refused' });
    expect(res.body).not.toMatch(/s3cret|hunter2/);
  });

  it('fails a check that answers nothing usable instead of failing /readyz itself', async () => {
    const t = await testApp();
    close = t.close;
    t.app.salon.readiness.set('empty', async () => undefined as never);
    const res = await t.app.inject({ url: '/readyz', headers: ADMIN });
    expect(res.statusCode).toBe(503);
    const { checks } = res.json() as { checks: Checks };
    expect(checks.empty.ok).toBe(false);
    expect(checks.store).toEqual({ ok: true, detail: 'sqlite' });
  });

  it('keeps none of the calls that gave up on a run that never settles, and answers those still waiting when it does', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const runs = new CheckRuns();
    const late = { ok: false, detail: 'late' };
    let settle: (found: { ok: boolean; detail: string }) => void = () => {};
    let starts = 0;
    const hung = () => {
      starts++;
      return new Promise<{ ok: boolean; detail: string }>((resolve) => (settle = resolve));
    };
    for (let i = 0; i < 3; i++) {
      const answer = runs.wait(hung, 1_000, late);
      expect(runs.waiting(hung)).toBe(1);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(await answer).toBe(late);
      expect(runs.waiting(hung)).toBe(0);
    }
    const still = runs.wait(hung, 1_000, late);
    settle({ ok: true, detail: 'back' });
    expect(await still).toEqual({ ok: true, detail: 'back' });
    expect(starts).toBe(1);
  });
});
