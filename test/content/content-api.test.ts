import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { idForUrl } from '../../src/content/ids.js';
import { startHnServer, type HnServer } from '../fixtures-servers/hn-server.js';
import { articlePage, startFixtureServer, type FixtureServer } from '../fixtures-servers/http.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { ADMIN, tempDir, testApp } from '../helpers.js';

const PARAS = [
  'The library will open on Sundays from March, the city said, after a petition gathered four thousand signatures.',
  'Staff hours will be covered by moving two weekday evening shifts, which saw the fewest visitors last year.',
];

function post(i: number, extra: Record<string, unknown> = {}) {
  return {
    id: `p${i}`,
    kind: 'post',
    title: `Post ${i}`,
    body: `Body of post ${i}. It has words.`,
    category: i % 2 ? 'Odd' : 'Even',
    publishedAt: new Date(Date.UTC(2024, 0, i + 1)).toISOString(),
    ...extra,
  };
}

describe('content and ingest API', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  let web: FixtureServer;
  let hn: HnServer;
  const demo = tempDir();

  beforeAll(async () => {
    web = await startFixtureServer({ '/library': { body: articlePage('Library opens on Sundays', PARAS) } });
    hn = await startHnServer();
    mkdirSync(join(demo.dir, 'img'));
    writeFileSync(join(demo.dir, 'img', 'a.svg'), '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
    writeFileSync(join(demo.dir, 'img', 'notes.txt'), 'secret');
    writeFileSync(join(demo.dir, 'img', '.hidden.svg'), '<svg/>');
    writeFileSync(join(demo.dir, 'secret.svg'), '<svg/>');
    // The real SSRF-guarded fetcher, allowed to reach the loopback fixture servers.
    ({ app, close } = await testApp({ FETCH_ALLOW_HOSTS: '127.0.0.1', HN_API_BASE: hn.base, HN_REQUEST_INTERVAL_MS: '0' }, { demoDir: demo.dir }));
  });
  afterAll(async () => {
    await close();
    await web.close();
    await hn.close();
    demo.cleanup();
  });

  it('needs the admin token to add content', async () => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/content', payload: post(1) });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('ERR_UNAUTHORIZED');
  });

  it('checks the admin token before the body: no schema errors for strangers, wrong tokens refused', async () => {
    const cases = [
      { method: 'POST' as const, url: '/api/v1/content', payload: { nonsense: true } },
      { method: 'POST' as const, url: '/api/v1/ingest', payload: { file: '/etc/passwd' } },
    ];
    for (const c of cases) {
      for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: ADMIN.authorization.replace('Bearer ', 'Basic ') }]) {
        const res = await app.inject({ ...c, headers });
        expect(res.statusCode, `${c.url} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.json().error.code).toBe('ERR_UNAUTHORIZED');
      }
    }
  });

  it('adds items one at a time or in a batch, reporting created/updated/unchanged', async () => {
    const one = await app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: post(1) });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual({ items: [{ id: 'post_p1', status: 'created' }] });
    const batch = await app.inject({
      method: 'POST',
      url: '/api/v1/content',
      headers: ADMIN,
      payload: { items: [post(1), post(1, { title: 'Post 1 retitled' }), ...Array.from({ length: 24 }, (_, i) => post(i + 2))] },
    });
    expect(batch.statusCode).toBe(200);
    const statuses = batch.json().items.map((r: { status: string }) => r.status);
    expect(statuses.slice(0, 3)).toEqual(['unchanged', 'updated', 'created']);
    expect(statuses.filter((s: string) => s === 'created')).toHaveLength(24);
  });

  it('writes nothing when any item of a batch is invalid', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/content',
      headers: ADMIN,
      payload: { items: [post(90), post(91, { publishedAt: 'not a date' })] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({ code: 'ERR_INVALID_CONTENT', message: expect.stringContaining('items[1]') });
    expect((await app.inject('/api/v1/content/post_p90')).statusCode).toBe(404);
    const schemaFail = await app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: { kind: 'post', title: 'x', extra: 1 } });
    expect(schemaFail.statusCode).toBe(400);
    const mismatch = await app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: { id: 'news_1', kind: 'post', title: 'x' } });
    expect(mismatch.json().error.code).toBe('ERR_INVALID_CONTENT');
  });

  it('lists summaries newest first, pages with a cursor and filters by kind and category', async () => {
    const first = await app.inject('/api/v1/content');
    expect(first.statusCode).toBe(200);
    const page1 = first.json();
    expect(page1.items).toHaveLength(20);
    expect(page1.items[0]).toEqual({
      id: 'post_p25',
      kind: 'post',
      title: 'Post 25',
      url: null,
      description: 'Body of post 25. It has words.',
      category: 'Odd',
      publishedAt: '2024-01-26T00:00:00.000Z',
      image: null,
      author: null,
      channel: null,
      thumbnail: null,
      siteName: null,
      commentCount: 0,
    });
    expect(page1.items[0]).not.toHaveProperty('body');
    const page2 = (await app.inject(`/api/v1/content?cursor=${page1.nextCursor}`)).json();
    expect(page2.nextCursor).toBeNull();
    const ids = [...page1.items, ...page2.items].map((i: { id: string }) => i.id);
    expect(new Set(ids).size).toBe(25);
    const odd = (await app.inject('/api/v1/content?category=odd&limit=100')).json();
    expect(odd.items.every((i: { category: string }) => i.category === 'Odd')).toBe(true);
    expect(odd.items).toHaveLength(13);
    expect((await app.inject('/api/v1/content?kind=video')).json().items).toEqual([]);
  });

  it('refuses bad list parameters', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'kind=podcast']) {
      const res = await app.inject(`/api/v1/content?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.code).toBe('ERR_BAD_REQUEST');
    }
    const cursor = await app.inject('/api/v1/content?cursor=garbage');
    expect(cursor.json().error.code).toBe('ERR_INVALID_CURSOR');
  });

  it('returns one full item, or ERR_CONTENT_NOT_FOUND', async () => {
    const res = await app.inject('/api/v1/content/post_p2');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: 'post_p2', body: 'Body of post 2. It has words.', comments: [], source: 'api' });
    const missing = await app.inject('/api/v1/content/news_nothing');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('ERR_CONTENT_NOT_FOUND');
  });

  it('deletes an item with its chunks for the admin: search no longer finds it', async () => {
    const body = { kind: 'post', id: 'zebra', title: 'Zebra crossings repainted', body: 'The council repainted every zebra crossing in the harbour district.' };
    expect((await app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: body })).statusCode).toBe(200);
    const hits = async () => ((await app.inject('/api/v1/search?q=zebra%20crossing%20harbour')).json().hits as { id: string }[]).map((h) => h.id);
    expect(await hits()).toContain('post_zebra');
    const before = app.salon.index.size;
    expect((await app.inject({ method: 'DELETE', url: '/api/v1/content/post_zebra' })).statusCode).toBe(401);
    const res = await app.inject({ method: 'DELETE', url: '/api/v1/content/post_zebra', headers: ADMIN });
    expect(res.json()).toMatchObject({ deleted: 'post_zebra', chunks: expect.any(Number) });
    expect(res.json().chunks).toBeGreaterThan(0);
    expect(app.salon.index.size).toBe(before - res.json().chunks);
    expect(await hits()).not.toContain('post_zebra');
    expect((await app.inject('/api/v1/content/post_zebra')).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: '/api/v1/content/post_zebra', headers: ADMIN })).json().error.code).toBe('ERR_CONTENT_NOT_FOUND');
  });

  it('runs an ingest job through the real fetcher and reports it', async () => {
    expect((await app.inject({ method: 'POST', url: '/api/v1/ingest', payload: { url: `${web.origin}/library` } })).statusCode).toBe(401);
    const res = await app.inject({ method: 'POST', url: '/api/v1/ingest', headers: ADMIN, payload: { url: `${web.origin}/library` } });
    expect(res.statusCode).toBe(202);
    const { jobId } = res.json();
    await app.salon.ingest!.idle();
    const job = (await app.inject(`/api/v1/ingest/${jobId}`)).json();
    expect(job).toMatchObject({ id: jobId, status: 'done', total: 1, done: 1, failed: 0, itemIds: [idForUrl('news', `${web.origin}/library`)] });
    const item = (await app.inject(`/api/v1/content/${job.itemIds[0]}`)).json();
    expect(item.title).toBe('Library opens on Sundays');
  });

  it('shows anyone but the admin a job’s URLs without their query, however the query was typed', async () => {
    // A space or a quote ended the URL where the query was cut from it, and what followed was shown.
    const url = `${web.origin}/private.xml?token=s3cret 7rue"0nly'h3re<n0w>`;
    const { jobId } = (await app.inject({ method: 'POST', url: '/api/v1/ingest', headers: ADMIN, payload: { url } })).json();
    await app.salon.ingest!.idle();
    const full = (await app.inject({ url: `/api/v1/ingest/${jobId}`, headers: ADMIN })).json();
    expect(full.status).toBe('failed');
    expect(JSON.stringify(full)).toContain('s3cret');
    const shown = (await app.inject(`/api/v1/ingest/${jobId}`)).json();
    expect(shown.request.url).toBe(`${web.origin}/private.xml`);
    expect(shown.failures[0].message).toContain(`${web.origin}/private.xml`);
    for (const secret of ['s3cret', '7rue', '0nly', 'h3re', 'n0w']) expect(JSON.stringify(shown)).not.toContain(secret);
  });

  it('ingests an HN story through the API', async () => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/ingest', headers: ADMIN, payload: { hn: 121003 } });
    await app.salon.ingest!.idle();
    const job = (await app.inject(`/api/v1/ingest/${res.json().jobId}`)).json();
    expect(job).toMatchObject({ status: 'done', itemIds: ['news_hn121003'] });
  });

  it('refuses malformed ingest requests and unknown jobs', async () => {
    for (const payload of [
      {},
      { url: `${web.origin}/a`, feed: `${web.origin}/b` },
      { file: '/etc/passwd' },
      { url: 'file:///etc/passwd' },
      { hn: 'best' },
      { feed: `${web.origin}/x`, limit: 9999 },
    ]) {
      const r = await app.inject({ method: 'POST', url: '/api/v1/ingest', headers: ADMIN, payload });
      expect(r.statusCode, JSON.stringify(payload)).toBe(400);
    }
    const missing = await app.inject('/api/v1/ingest/job_nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('ERR_JOB_NOT_FOUND');
  });

  it('describes the routes in the OpenAPI document, admin routes with the bearer scheme', async () => {
    const doc = (await app.inject('/api/v1/openapi.json')).json();
    expect(doc.paths['/api/v1/content'].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['category', 'cursor', 'kind', 'limit']);
    expect(doc.paths['/api/v1/content'].post.security).toEqual([{ adminToken: [] }]);
    expect(doc.paths['/api/v1/content/{id}'].get.responses).toHaveProperty('404');
    expect(doc.paths['/api/v1/ingest'].post.security).toEqual([{ adminToken: [] }]);
    expect(doc.paths['/api/v1/ingest/{jobId}'].get).toBeDefined();
  });

  it('serves demo images with safe names only', async () => {
    const ok = await app.inject('/demo/img/a.svg');
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(ok.headers['content-security-policy']).toContain("default-src 'none'");
    for (const path of ['/demo/img/notes.txt', '/demo/img/.hidden.svg', '/demo/img/../secret.svg', '/demo/img/%2e%2e/secret.svg', '/demo/img/missing.svg']) {
      expect((await app.inject(path)).statusCode, path).toBeGreaterThanOrEqual(400);
    }
  });

  it('keeps the items of a batch before a store failure, whole and searchable, writes none after it, and stays up', async () => {
    const db = (app.salon.store as SqliteStore).db;
    db.exec(`CREATE TRIGGER boom BEFORE INSERT ON items WHEN NEW.id = 'post_boom' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`);
    const batch = { items: [post(95, { body: 'The quokka ferry sails at dawn.' }), { ...post(97), id: 'boom' }, post(96)] };
    try {
      const res = await app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: batch });
      expect(res.statusCode).toBe(500);
      expect(res.json().error.code).toBe('ERR_INTERNAL');
      expect((await app.inject('/api/v1/content/post_p96')).statusCode).toBe(404);
      const stored = await app.salon.store.getItem('post_p95');
      expect(stored?.body).toBe('The quokka ferry sails at dawn.');
      expect((await app.salon.store.chunksOfItem('post_p95')).length).toBeGreaterThan(0);
      // Told to the index though the batch failed after it.
      const hits = (await app.inject('/api/v1/search?q=quokka%20ferry')).json().hits as { id: string }[];
      expect(hits.map((h) => h.id)).toContain('post_p95');
    } finally {
      db.exec('DROP TRIGGER boom');
    }
    const again = await app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: batch });
    expect(again.json()).toEqual({
      items: [
        { id: 'post_p95', status: 'unchanged' },
        { id: 'post_boom', status: 'created' },
        { id: 'post_p96', status: 'created' },
      ],
    });
  });

  it('writes a batch an item at a time, the event loop turning between two', async () => {
    const store = app.salon.store;
    const turnedBefore: boolean[] = [];
    const putItems = store.putItems.bind(store);
    let turned = true;
    const watch = () => setImmediate(() => (turned = true));
    store.putItems = async (entries) => {
      turnedBefore.push(turned);
      turned = false;
      watch();
      return putItems(entries);
    };
    try {
      const res = await app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: { items: [post(90), post(91), post(92)] } });
      expect(res.statusCode, res.body).toBe(200);
    } finally {
      store.putItems = putItems;
    }
    // One item a call, and an immediate set during one call has run before the next call.
    expect(turnedBefore).toEqual([true, true, true]);
  });
});
