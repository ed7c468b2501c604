/**
 * A node killed with SIGKILL while it polls a source, restarted on its DATA_DIR, on a shared
 * PostgreSQL and Redis: the poll's job is failed and the source's lease freed at its start, and the
 * source polled again, instead of the job waiting out JOB_SILENCE_MS (two minutes) and the lease
 * the job budget (sixteen); and an admin's job it was running is run again there, its second start.
 * Processes, schema, keys and the fixture site are removed whatever happens.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { articlePage, startFixtureServer, type Answer, type FixtureServer } from '../fixtures-servers/http.js';
import { FAULTS_ADMIN_TOKEN, startServer, type ServerProcess } from '../faults/server-process.js';
import { tempDir } from '../helpers.js';
import { describeRedis, deleteKeys, REDIS_URL, testPrefix } from '../redis/gate.js';
import { describePostgres, freshSchema } from '../store/postgres-harness.js';

const ADMIN = { authorization: `Bearer ${FAULTS_ADMIN_TOKEN}`, 'content-type': 'application/json' };
/** Far below JOB_SILENCE_MS: only knowing the restarted node's predecessor makes it in time. */
const WAIT_MS = 30_000;

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string): Promise<T> {
  const end = Date.now() + WAIT_MS;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describePostgres('a node restarted while it polls (PostgreSQL)', () => {
  describeRedis('a node restarted while it polls, on one PostgreSQL and one Redis', () => {
    const prefix = testPrefix();
    const data = tempDir('salon-restart-');
    let schema: Awaited<ReturnType<typeof freshSchema>> | undefined;
    let site: FixtureServer | undefined;
    let node: ServerProcess | undefined;
    let hang = true;
    let release = () => {};
    const hung = new Promise<void>((resolve) => (release = resolve));
    let hangArticle = true;
    let releaseArticle = () => {};
    const articleHung = new Promise<void>((resolve) => (releaseArticle = resolve));

    beforeAll(async () => {
      schema = await freshSchema();
      site = await startFixtureServer({}, () => ({ status: 404, body: 'not found' }));
      site.routes.set('/feed.xml', async (): Promise<Answer> => {
        if (hang) await hung;
        return { type: 'application/rss+xml', body: '<?xml version="1.0"?><rss version="2.0"><channel><title>Empty</title></channel></rss>' };
      });
      site.routes.set('/article', async (): Promise<Answer> => {
        if (hangArticle) await articleHung;
        return { body: articlePage('The pier reopens', ['The harbour council reopened the old pier on Tuesday after a year of repairs to its timber deck.']) };
      });
    });

    afterAll(async () => {
      release();
      releaseArticle();
      await node?.stop(5_000);
      await site?.close();
      await schema?.drop();
      await deleteKeys(prefix);
      data.cleanup();
    }, 60_000);

    const env = () => ({
      DATABASE_URL: schema!.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      IDENTITY_SECRET: 'one identity secret for the node and its restart',
      AI_PROVIDER: 'local',
      SEED_DEMO: 'false',
      FETCH_ALLOW_HOSTS: '127.0.0.1',
    });
    const api = async (path: string, init: RequestInit = {}) => (await fetch(`${node!.base}${path}`, { headers: ADMIN, ...init })).json();

    it('fails the killed poll at the restart, frees its source and polls it again', async () => {
      node = await startServer({ env: env(), dataDir: data.dir });
      const source = await api('/api/v1/sources', { method: 'POST', body: JSON.stringify({ kind: 'feed', url: `${site!.origin}/feed.xml` }) });
      const { jobId } = await api(`/api/v1/sources/${source.id}/refresh`, { method: 'POST', body: '{}' });
      await eventually(
        async () => site!.requests.filter((r) => r.path === '/feed.xml').length,
        (n) => n > 0,
        'the poll to ask for the feed',
      );
      await node.kill9();
      hang = false;
      node = await startServer({ env: env(), dataDir: data.dir });
      const job = await eventually(
        () => api(`/api/v1/ingest/${jobId}`),
        (j) => j.status === 'failed',
        'the killed poll to be failed',
      );
      expect(job.failures.at(-1)).toMatchObject({ code: 'ERR_JOB_CANCELLED' });
      // Freed, the source is due as it was: the restarted node polls it at its first look.
      const polled = await eventually(
        () => api(`/api/v1/sources/${source.id}`),
        (s) => s.polling === null && s.lastPolledAt !== null,
        'the source to be polled again',
      );
      expect(polled).toMatchObject({ lastError: null, failures: 0 });
    }, 120_000);

    it('runs an admin’s job the killed node was running again at the restart, its second start', async () => {
      node ??= await startServer({ env: env(), dataDir: data.dir });
      const { jobId } = await api('/api/v1/ingest', { method: 'POST', body: JSON.stringify({ url: `${site!.origin}/article` }) });
      await eventually(
        async () => site!.requests.filter((r) => r.path === '/article').length,
        (n) => n > 0,
        'the job to ask for the article',
      );
      await node.kill9();
      hangArticle = false;
      node = await startServer({ env: env(), dataDir: data.dir });
      const job = await eventually(
        () => api(`/api/v1/ingest/${jobId}`),
        (j) => j.status !== 'queued' && j.status !== 'running',
        'the killed job to run again',
      );
      expect(job).toMatchObject({ status: 'done', attempts: 2, done: 1, failed: 0 });
      expect(job.failures).toEqual([expect.objectContaining({ ref: 'restart', code: 'ERR_JOB_CANCELLED', message: expect.stringContaining('start 2 of 3') })]);
    }, 120_000);
  });
});
