import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { PAGE_ROUTES } from '../../src/routes/web.js';
import webRoutes from '../../src/routes/web.js';
import { installErrorHandlers } from '../../src/routes/error-handler.js';
import { testApp, tempDir } from '../helpers.js';
import { ensureClientBuilt } from './harness.js';

function cspOf(header: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of String(header).split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out.set(name, values);
  }
  return out;
}

describe('web routes', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeAll(async () => {
    await ensureClientBuilt();
    ({ app, close } = await testApp());
  });
  afterAll(async () => close());

  it('serves the HTML shell on every page route, loading only same-origin files', async () => {
    for (const url of PAGE_ROUTES) {
      const res = await app.inject(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toContain('<salon-app>');
      expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
      const script = /<script type="module" src="(\/assets\/app-[A-Z0-9]+\.js)"><\/script>/.exec(res.body);
      expect(script, 'hashed bundle').not.toBeNull();
    }
  });

  it('serves hashed assets as immutable and the rest with revalidation', async () => {
    const page = await app.inject('/');
    const js = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)![1];
    const css = /href="(\/assets\/[^"]+\.css)"/.exec(page.body)![1];
    for (const url of [js, css]) {
      const res = await app.inject(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control']).toContain('immutable');
    }
    expect((await app.inject(js)).headers['content-type']).toMatch(/javascript/);
    const icon = await app.inject('/assets/favicon.svg');
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
    expect((await app.inject('/assets/../index.html')).statusCode).toBe(404);
    expect((await app.inject('/assets/nope.js')).statusCode).toBe(404);
    // The folder itself and a dotfile are no asset either: 404, not the static plugin's 403 as a 400.
    for (const path of ['/assets/', '/assets/.hidden', '/demo/img/'])
      expect((await app.inject(path)).json(), path).toMatchObject({ error: { code: 'ERR_NOT_FOUND' } });
  });

  it('sends a strict CSP: own scripts only, no inline script, the socket origin, Trusted Types', async () => {
    const res = await app.inject({ url: '/chat?id=news_1', headers: { host: '127.0.0.1:3000' } });
    const csp = cspOf(res.headers['content-security-policy']);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(csp.get('script-src-attr')).toEqual(["'none'"]);
    expect(csp.get('style-src')).toEqual(["'self'"]);
    expect(csp.get('img-src')).toEqual(["'self'", 'data:']);
    expect(csp.get('connect-src')).toEqual(["'self'", 'ws://127.0.0.1:3000', 'wss://127.0.0.1:3000']);
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('frame-src')).toEqual(["'none'"]);
    expect(csp.get('require-trusted-types-for')).toEqual(["'script'"]);
    expect(csp.has('upgrade-insecure-requests')).toBe(false);
    expect(res.headers['content-security-policy']).not.toContain('unsafe');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it('does not echo a hostile Host header into the CSP', async () => {
    const res = await app.inject({ url: '/', headers: { host: "evil; script-src 'unsafe-inline'" } });
    const header = String(res.headers['content-security-policy']);
    expect(header).not.toContain('unsafe-inline');
    expect(cspOf(header).get('script-src')).toEqual(["'self'"]);
    expect(cspOf(header).get('connect-src')).toEqual(["'self'"]);
  });

  it('puts the security headers on API responses too', async () => {
    const res = await app.inject('/healthz');
    expect(res.headers['content-security-policy']).toBeDefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('web routes without a built client', () => {
  it('answers pages with ERR_NOT_READY naming the fix', async () => {
    const { dir, cleanup } = tempDir();
    const app = Fastify();
    installErrorHandlers(app);
    await app.register(webRoutes, { publicDir: dir });
    try {
      const res = await app.inject('/');
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('ERR_NOT_READY');
      expect(res.json().error.message).toContain('npm run build');
    } finally {
      await app.close();
      cleanup();
    }
  });
});
