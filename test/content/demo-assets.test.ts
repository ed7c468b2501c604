/** The demo images route: plain image names only, with a CSP that keeps an opened SVG from running code. */
import Fastify, { type FastifyInstance } from 'fastify';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import demoAssets from '../../src/routes/demo-assets.js';

describe('demo images', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'salon-demo-img-'));
    writeFileSync(join(dir, 'n1.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(dir, '.hidden.svg'), '<svg/>');
    writeFileSync(join(dir, 'notes.txt'), 'not an image');
    app = Fastify();
    await app.register(demoAssets, { dir });
    await app.ready();
  });
  afterAll(() => app.close());

  it('serves an image with a script-free CSP, nosniff and a cache lifetime', async () => {
    const res = await app.inject('/demo/img/n1.svg');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; img-src data:");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toMatch(/max-age=3600/);
  });

  it('serves nothing but plain image names', async () => {
    for (const url of ['/demo/img/notes.txt', '/demo/img/.hidden.svg', '/demo/img/%2e%2e/n1.svg', '/demo/img/']) {
      expect((await app.inject(url)).statusCode, url).toBe(404);
    }
  });
});
