import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  it('serves an OpenAPI document', async () => {
    const res = await app.inject('/api/v1/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.json().openapi).toMatch(/^3\./);
  });
});
