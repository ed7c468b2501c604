/**
 * The API's per-route budgets count a route's HEAD with its GET (src/routes/rate-limit.ts): Fastify
 * adds a HEAD beside each GET, which runs the GET's handler, and had a budget of its own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADMIN, testApp } from './helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function app(perMinute: number): Promise<FastifyInstance> {
  const t = await testApp({ API_RATE_LIMIT_PER_MINUTE: String(perMinute) });
  close = t.close;
  return t.app;
}

const remoteAddress = '198.51.100.7';

describe('API rate limits and HEAD', () => {
  it('counts a HEAD with its GET: alternating them no longer doubles a route’s budget', async () => {
    const a = await app(3);
    const call = (method: 'GET' | 'HEAD', url = '/api/v1/search?q=lava') => a.inject({ method, url, remoteAddress });
    expect((await call('HEAD')).statusCode).toBe(200);
    expect((await call('GET')).statusCode).toBe(200);
    expect((await call('HEAD')).statusCode).toBe(200);
    expect((await call('GET')).statusCode).toBe(429);
    expect((await call('HEAD')).statusCode).toBe(429);
    // Each route still has its own budget.
    expect((await call('GET', '/api/v1/content')).statusCode).toBe(200);
  });

  it('keeps a route’s other methods apart: a POST does not spend the GET’s budget', async () => {
    const a = await app(2);
    for (let i = 0; i < 2; i++) {
      const posted = await a.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, remoteAddress, payload: { title: 'x' } });
      expect(posted.statusCode).not.toBe(429);
    }
    expect((await a.inject({ method: 'GET', url: '/api/v1/content', remoteAddress })).statusCode).toBe(200);
    expect((await a.inject({ method: 'HEAD', url: '/api/v1/content', remoteAddress })).statusCode).toBe(200);
    expect((await a.inject({ method: 'GET', url: '/api/v1/content', remoteAddress })).statusCode).toBe(429);
  });
});
