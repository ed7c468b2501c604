/**
 * The sources API end to end on a built app: add (admin), list with poll state, refresh → a job
 * that stores the feed, change, remove; configured sources from SOURCES and DATA_DIR/sources.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { loopbackDeps } from '../fixtures-servers/deps.js';
import { articlePage, startFixtureServer, type FixtureServer } from '../fixtures-servers/http.js';
import { ADMIN, tempDir, testApp } from '../helpers.js';

const PARAS = ['The harbour council voted on Tuesday to rebuild the old pier with timber from local forests.', 'Engineers said it would last sixty years.'];

describe('sources API', () => {
  let web: FixtureServer;
  beforeAll(async () => {
    web = await startFixtureServer({ '/a/one': { body: articlePage('Story one', PARAS) } });
    web.routes.set('/feed.xml', {
      type: 'application/rss+xml',
      body: `<?xml version="1.0"?><rss version="2.0"><channel><title>F</title><item><title>Story one</title><link>${web.origin}/a/one</link></item></channel></rss>`,
    });
  });
  afterAll(async () => web.close());

  it('adds, lists, refreshes, changes and removes a source; mutations need the admin token', async () => {
    const { app, close } = await testApp({ SOURCE_POLLING: 'false' }, { ingestDeps: loopbackDeps() });
    try {
      const body = { kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 30 };
      expect((await app.inject({ method: 'POST', url: '/api/v1/sources', payload: body })).statusCode).toBe(401);
      const created = await app.inject({ method: 'POST', url: '/api/v1/sources', headers: ADMIN, payload: body });
      expect(created.statusCode).toBe(201);
      const source = created.json();
      expect(source).toMatchObject({
        kind: 'feed',
        url: `${web.origin}/feed.xml`,
        everyMinutes: 30,
        itemCount: 0,
        lastPolledAt: null,
        lastError: null,
        polling: null,
      });
      expect((await app.inject({ method: 'POST', url: '/api/v1/sources', headers: ADMIN, payload: body })).json().error.code).toBe('ERR_SOURCE_EXISTS');
      const bad = await app.inject({ method: 'POST', url: '/api/v1/sources', headers: ADMIN, payload: { kind: 'hn' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.code).toBe('ERR_BAD_REQUEST');

      const refresh = await app.inject({ method: 'POST', url: `/api/v1/sources/${source.id}/refresh`, headers: ADMIN });
      expect(refresh.statusCode).toBe(202);
      const { jobId } = refresh.json();
      await app.salon.ingest.idle();
      expect((await app.inject({ url: `/api/v1/ingest/${jobId}` })).json()).toMatchObject({ status: 'done', done: 1, request: { source: source.id } });
      const listed = (await app.inject({ url: '/api/v1/sources' })).json().sources;
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ id: source.id, itemCount: 1, lastError: null, polling: null });
      expect(listed[0].lastPolledAt).not.toBeNull();
      expect(Date.parse(listed[0].nextDueAt)).toBeGreaterThan(Date.parse(listed[0].lastPolledAt));

      const patched = await app.inject({ method: 'PATCH', url: `/api/v1/sources/${source.id}`, headers: ADMIN, payload: { everyMinutes: 5 } });
      expect(patched.json()).toMatchObject({ everyMinutes: 5 });
      expect(Date.parse(patched.json().nextDueAt) - Date.parse(patched.json().lastPolledAt)).toBe(5 * 60_000);
      expect((await app.inject({ method: 'PATCH', url: `/api/v1/sources/${source.id}`, headers: ADMIN, payload: {} })).statusCode).toBe(400);
      expect((await app.inject({ method: 'DELETE', url: `/api/v1/sources/${source.id}`, headers: ADMIN })).json()).toEqual({ deleted: source.id });
      expect((await app.inject({ url: `/api/v1/sources/${source.id}` })).json().error.code).toBe('ERR_SOURCE_NOT_FOUND');
      // the item stays
      expect((await app.inject({ url: '/api/v1/content' })).json().items).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it('shows a feed URL, and URLs in its last error, without their query except to the admin: private feeds keep their key there', async () => {
    const { app, close } = await testApp({ SOURCE_POLLING: 'false' }, { ingestDeps: loopbackDeps() });
    try {
      const url = `${web.origin}/private.xml?token=abc123`;
      const source = (await app.inject({ method: 'POST', url: '/api/v1/sources', headers: ADMIN, payload: { kind: 'feed', url } })).json();
      // The fixture server has no /private.xml: the poll fails, and its error names the URL.
      const { jobId } = (await app.inject({ method: 'POST', url: `/api/v1/sources/${source.id}/refresh`, headers: ADMIN })).json();
      await app.salon.ingest.idle();
      const full = (await app.inject({ url: `/api/v1/sources/${source.id}`, headers: ADMIN })).json();
      expect(full.url).toBe(url);
      expect(full.lastError.message).toContain('abc123');

      for (const shown of [
        (await app.inject({ url: '/api/v1/sources' })).json().sources[0],
        (await app.inject({ url: `/api/v1/sources/${source.id}` })).json(),
      ]) {
        expect(shown).toMatchObject({ id: source.id, url: `${web.origin}/private.xml` });
        expect(shown.lastError.code).toBe(full.lastError.code);
        expect(shown.lastError.message).toContain(`${web.origin}/private.xml`);
        expect(JSON.stringify(shown)).not.toContain('abc123');
      }
      // Nor does the poll's job, which the list names while it runs.
      expect(JSON.stringify((await app.inject({ url: `/api/v1/ingest/${jobId}` })).json())).not.toContain('abc123');
    } finally {
      await close();
    }
  });

  it('takes configured sources from DATA_DIR/sources and SOURCES, and refuses a bad entry at start naming it', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(join(dir, 'sources'), `# polled every 20 minutes\nfeed ${web.origin}/feed.xml 20\n`);
      const config = testConfig({ DATA_DIR: dir, ADMIN_TOKEN: 'test-admin-token', SOURCE_POLLING: 'false', SOURCES: 'hn top 15; hn best' });
      const app = await buildApp(config, { ingestDeps: loopbackDeps() });
      try {
        const listed = (await app.inject({ url: '/api/v1/sources' })).json().sources;
        expect(
          listed.map((s: { origin: string; kind: string; list: string | null; everyMinutes: number }) => [s.origin, s.kind, s.list, s.everyMinutes]),
        ).toEqual(
          expect.arrayContaining([
            ['config', 'feed', null, 20],
            ['config', 'hn', 'top', 15],
            ['config', 'hn', 'best', 60],
          ]),
        );
        const fixed = listed[0].id;
        expect((await app.inject({ method: 'DELETE', url: `/api/v1/sources/${fixed}`, headers: ADMIN })).json().error.code).toBe('ERR_SOURCE_FIXED');
      } finally {
        await app.close();
      }
      writeFileSync(join(dir, 'sources'), 'feed not-a-url\n');
      await expect(buildApp(config, { ingestDeps: loopbackDeps() }).then((a) => a.ready())).rejects.toThrow(/sources entry 1/);
      expect(() => testConfig({ SOURCES: 'rss https://x.test/feed' })).toThrow(/^SOURCES: /);
    } finally {
      cleanup();
    }
  });
});
