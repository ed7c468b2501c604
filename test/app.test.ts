import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADMIN, testApp } from './helpers.js';

describe('app skeleton', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await testApp());
  });
  afterAll(async () => close());

  it('is healthy and ready', async () => {
    expect((await app.inject('/healthz')).json()).toEqual({ ok: true });
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    // Strangers learn whether each check passes, not what it found.
    expect(ready.json().checks.store).toEqual({ ok: true });
    const forAdmin = await app.inject({ url: '/readyz', headers: ADMIN });
    expect(forAdmin.json().checks.store).toEqual({ ok: true, detail: 'sqlite' });
  });

  it('answers unknown routes with the error shape', async () => {
    const res = await app.inject('/api/v1/nope');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'ERR_NOT_FOUND', message: 'No route GET /api/v1/nope' } });
  });

  it('names the content type it refuses with 415 (it said "Unsupported content type: Unsupported Media Type")', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/content',
      headers: { ...ADMIN, 'content-type': 'application/xml; charset=utf-8' },
      payload: '<x/>',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({
      error: { code: 'ERR_UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported content type: application/xml (send application/json)' },
    });
    // What a client wrote comes back only as printable ASCII, and short.
    const odd = await app.inject({ method: 'POST', url: '/api/v1/content', headers: { ...ADMIN, 'content-type': `x/${'y'.repeat(300)}\t` }, payload: 'z' });
    expect(odd.json().error.message).toBe(`Unsupported content type: x/${'y'.repeat(98)} (send application/json)`);
  });

  it('serves an OpenAPI document', async () => {
    const res = await app.inject('/api/v1/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.json().openapi).toMatch(/^3\./);
  });
});

describe('start-up steps', () => {
  /** An app whose start has one more step that takes `stepMs` (a large index loading), under fake timers. */
  async function startWithSlowStep(
    env: Record<string, string>,
    stepMs: number,
  ): Promise<{ started: PromiseLike<string | undefined>; close: () => Promise<void> }> {
    const { app, close } = await testApp(env);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    app.addHook('onReady', () => new Promise<void>((resolve) => setTimeout(resolve, stepMs)));
    const started = app.ready().then(
      () => 'ready',
      (err: { code?: string }) => err.code,
    );
    await vi.advanceTimersByTimeAsync(stepMs);
    vi.useRealTimers();
    return { started, close };
  }

  it('may each take up to STARTUP_TIMEOUT_MS, far past Fastify’s own 10 s', async () => {
    const { started, close } = await startWithSlowStep({}, 120_000);
    try {
      expect(await started).toBe('ready');
    } finally {
      await close();
    }
  });

  it('stop the start with a typed error once one takes longer than STARTUP_TIMEOUT_MS', async () => {
    const { started, close } = await startWithSlowStep({ STARTUP_TIMEOUT_MS: '5000' }, 6_000);
    try {
      expect(await started).toBe('FST_ERR_HOOK_TIMEOUT');
    } finally {
      vi.useRealTimers();
      await close();
    }
  });
});
