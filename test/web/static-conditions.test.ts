/** Conditional and range requests to static files keep their HTTP status: 412 and 416, not a 400. */
import Fastify, { type FastifyInstance } from 'fastify';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import demoAssets from '../../src/routes/demo-assets.js';
import { installErrorHandlers } from '../../src/routes/error-handler.js';
import webRoutes from '../../src/routes/web.js';
import { tempDir } from '../helpers.js';

const SVG = '<svg xmlns="http://www.w3.org/2000/svg"/>';
const SHELL = '<!doctype html><salon-app></salon-app>';

/** The web routes over a folder holding only the page shell, which is also the 404 page. */
async function shellApp(): Promise<{ app: FastifyInstance; cleanup: () => void }> {
  const { dir, cleanup } = tempDir();
  writeFileSync(join(dir, 'index.html'), SHELL);
  const app = Fastify();
  installErrorHandlers(app, { notFoundPage: async () => SHELL });
  await app.register(webRoutes, { publicDir: dir });
  return { app, cleanup };
}

describe('static files under conditions', () => {
  let app: FastifyInstance;
  let cleanup: () => void;
  beforeAll(async () => {
    const temp = tempDir();
    cleanup = temp.cleanup;
    mkdirSync(join(temp.dir, 'public/assets'), { recursive: true });
    mkdirSync(join(temp.dir, 'img'));
    writeFileSync(join(temp.dir, 'public/index.html'), '<!doctype html><salon-app></salon-app>');
    writeFileSync(join(temp.dir, 'public/assets/app-ABCDEFGH.js'), 'export {};\n');
    writeFileSync(join(temp.dir, 'img/n1.svg'), SVG);
    app = Fastify();
    installErrorHandlers(app);
    await app.register(webRoutes, { publicDir: join(temp.dir, 'public') });
    await app.register(demoAssets, { dir: join(temp.dir, 'img') });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    cleanup();
  });

  it('answers a range past the end with 416 and the size in Content-Range', async () => {
    for (const [url, size] of [
      ['/assets/app-ABCDEFGH.js', 11],
      ['/demo/img/n1.svg', SVG.length],
    ] as const) {
      const res = await app.inject({ url, headers: { range: 'bytes=9999-' } });
      expect(res.statusCode, url).toBe(416);
      expect(res.json().error.code).toBe('ERR_RANGE_NOT_SATISFIABLE');
      expect(res.headers['content-range']).toBe(`bytes */${size}`);
    }
    // A satisfiable range is still served.
    const part = await app.inject({ url: '/demo/img/n1.svg', headers: { range: 'bytes=0-3' } });
    expect(part.statusCode).toBe(206);
    expect(part.body).toBe('<svg');
  });

  it('answers a failed If-Match or If-Unmodified-Since with 412', async () => {
    for (const headers of [{ 'if-match': '"not-this-one"' }, { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' }]) {
      const res = await app.inject({ url: '/assets/app-ABCDEFGH.js', headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(412);
      expect(res.json().error.code).toBe('ERR_PRECONDITION_FAILED');
      expect(res.headers['content-range']).toBeUndefined();
    }
  });
});

describe('a mistyped page address', () => {
  it('answers HEAD with the status and headers of its GET: the page, not JSON', async () => {
    const { app, cleanup } = await shellApp();
    try {
      for (const url of ['/nosuch', '/chat/news_1']) {
        const get = await app.inject({ url, headers: { accept: 'text/html' } });
        const head = await app.inject({ method: 'HEAD', url, headers: { accept: 'text/html' } });
        expect(get.statusCode, url).toBe(404);
        expect(get.headers['content-type']).toMatch(/^text\/html/);
        expect(head.statusCode, url).toBe(404);
        expect(head.headers['content-type'], url).toBe(get.headers['content-type']);
        expect(head.headers['content-length'], url).toBe(get.headers['content-length']);
        expect(head.headers['content-security-policy'], url).toBe(get.headers['content-security-policy']);
      }
      // The API's HEAD answers in its own terms still.
      expect((await app.inject({ method: 'HEAD', url: '/api/v1/nope', headers: { accept: 'text/html' } })).headers['content-type']).toMatch(/json/);
    } finally {
      await app.close();
      cleanup();
    }
  });
});

describe('a page address with a trailing slash', () => {
  it('is the page, as the client shows it: 200 with the shell, not a 404', async () => {
    const { app, cleanup } = await shellApp();
    try {
      for (const url of ['/posts/', '/post/?id=post_1', '/videos/', '/watch/?id=video_1', '/chat/?topic=tech']) {
        const res = await app.inject({ url, headers: { accept: 'text/html' } });
        expect(res.statusCode, url).toBe(200);
        expect(res.body).toBe(SHELL);
        expect(res.headers['cache-control']).toBe('no-cache');
      }
      // A path below a page is no page.
      expect((await app.inject({ url: '/chat/news_1', headers: { accept: 'text/html' } })).statusCode).toBe(404);
    } finally {
      await app.close();
      cleanup();
    }
  });
});
