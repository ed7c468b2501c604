/**
 * Every ingest job ends: an admin can cancel it (`DELETE /api/v1/ingest/:jobId`), and past its
 * budget (INGEST_JOB_BUDGET_MS) it stops by itself. Either way the items it finished stay and
 * nothing is half-written. The "slow site" here never answers until the request is aborted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { IngestDeps } from '../../src/content/sources/article.js';
import { idForUrl } from '../../src/content/ids.js';
import { IngestService } from '../../src/content/ingest/ingest.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { IngestJob } from '../../src/store/types.js';
import { loopbackDeps } from '../fixtures-servers/deps.js';
import { articlePage, startFixtureServer } from '../fixtures-servers/http.js';
import { testApp } from '../helpers.js';

const PARAS = Array.from({ length: 4 }, (_, i) => `Paragraph ${i}: the harbour council met again and debated the timber pier at length, hearing many views.`);

/** Real loopback fetches, except that URLs containing /hang wait until their request is aborted. */
function hangingDeps(): IngestDeps {
  const real = loopbackDeps();
  return {
    ...real,
    fetchPage(url, signal) {
      if (!url.includes('/hang')) return real.fetchPage(url, signal);
      return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
    },
  };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function service(jobBudgetMs?: number, limits: { maxRunning?: number; maxJobs?: number } = {}) {
  const store = new SqliteStore({ filename: ':memory:' });
  const pipeline = createItemPipeline({ store, bodyMaxChars: 200_000, chunk: { size: 300, overlap: 50 } });
  const ingest = new IngestService({
    store,
    pipeline,
    deps: hangingDeps(),
    hn: { base: 'http://127.0.0.1:9/v0', commentLimit: 0, intervalMs: 0 },
    bodyMaxChars: 200_000,
    jobBudgetMs,
    ...limits,
  });
  closers.push(async () => {
    await ingest.close();
    await store.close();
  });
  return { store, ingest };
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 10));
}

describe('ingest jobs always end', () => {
  it('refuses an admin’s job past maxJobs running and queued with ERR_INGEST_BUSY, and takes one again once a job ended', async () => {
    const { ingest } = await service(undefined, { maxRunning: 1, maxJobs: 2 });
    const running = await ingest.submit({ url: 'http://127.0.0.1:9/hang/1' });
    const queued = await ingest.submit({ url: 'http://127.0.0.1:9/hang/2' });
    expect(ingest.activeJobs).toBe(2);
    await expect(ingest.submit({ url: 'http://127.0.0.1:9/hang/3' })).rejects.toMatchObject({ code: 'ERR_INGEST_BUSY', statusCode: 429 });
    // Refused, it left nothing behind: the two jobs go on, and no third was saved or queued.
    expect(ingest.activeJobs).toBe(2);
    expect((await ingest.getJob(queued.id)).status).toBe('queued');
    expect((await ingest.cancel(running.id)).status).toBe('cancelled');
    const next = await ingest.submit({ url: 'http://127.0.0.1:9/hang/4' });
    expect(ingest.activeJobs).toBe(2);
    for (const job of [queued, next]) expect((await ingest.cancel(job.id)).status).toBe('cancelled');
  });

  it('counts submissions arriving together against maxJobs while their jobs are being saved', async () => {
    const { store, ingest } = await service(undefined, { maxRunning: 1, maxJobs: 2 });
    // A store that answers later, as PostgreSQL does: every submission reaches the check before any job is saved.
    const saveJob = store.saveJob.bind(store);
    store.saveJob = async (job) => {
      await new Promise((resolve) => setImmediate(resolve));
      return saveJob(job);
    };
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => ingest.submit({ url: `http://127.0.0.1:9/hang/${i}` })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code)).toEqual(Array(3).fill('ERR_INGEST_BUSY'));
    expect(ingest.activeJobs).toBe(2);
  });

  it('keeps a queued job waiting when another queued job is cancelled: no more run than maxRunning', async () => {
    const { ingest } = await service(undefined, { maxRunning: 1 });
    const first = await ingest.submit({ url: 'http://127.0.0.1:9/hang/1' });
    const second = await ingest.submit({ url: 'http://127.0.0.1:9/hang/2' });
    const third = await ingest.submit({ url: 'http://127.0.0.1:9/hang/3' });
    await until(async () => (await ingest.getJob(first.id)).status === 'running');
    expect((await ingest.cancel(third.id)).status).toBe('cancelled');
    // Time for a job wrongly given a slot to start (the second must not, however long this is).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await ingest.getJob(second.id)).status).toBe('queued');
    // The first job's slot passes to the second once it ends.
    expect((await ingest.cancel(first.id)).status).toBe('cancelled');
    await until(async () => (await ingest.getJob(second.id)).status === 'running');
    expect((await ingest.cancel(second.id)).status).toBe('cancelled');
  });

  it('cancels a running job: it ends cancelled, keeping the items it finished', async () => {
    const site = await startFixtureServer({ '/done': { body: articlePage('Finished before the cancel', PARAS) } });
    closers.push(() => site.close());
    const feed = `<?xml version="1.0"?><rss><channel><title>F</title>
      <item><title>A</title><link>${site.origin}/done</link></item>
      <item><title>B</title><link>${site.origin}/hang</link></item></channel></rss>`;
    site.routes.set('/feed.xml', { type: 'application/rss+xml', body: feed });
    const { store, ingest } = await service();
    const job = await ingest.submit({ feed: `${site.origin}/feed.xml` });
    // Progress is saved in batches; the stored item is what shows the first entry is finished.
    await until(async () => (await store.getItem(idForUrl('news', `${site.origin}/done`))) !== null);
    const ended = await ingest.cancel(job.id);
    expect(ended.status).toBe('cancelled');
    expect(ended.failures.map((f) => f.code)).toContain('ERR_JOB_CANCELLED');
    expect(ended.itemIds).toHaveLength(1);
    const kept = await store.getItem(ended.itemIds[0]);
    expect(kept?.title).toBe('A');
    expect(kept?.body).toContain('harbour council met again');
    // Cancelling again changes nothing.
    expect(await ingest.cancel(job.id)).toEqual(ended);
  });

  it('stops a job past its budget as failed with ERR_JOB_BUDGET', async () => {
    const { ingest } = await service(200);
    const job = await ingest.submit({ url: 'http://127.0.0.1:9/hang' });
    await ingest.idle();
    const ended = await ingest.getJob(job.id);
    expect(ended.status).toBe('failed');
    expect(ended.failures.map((f) => f.code)).toEqual(['ERR_JOB_BUDGET']);
  });

  it('cancels a queued job before it starts', async () => {
    const { ingest } = await service();
    const running = await Promise.all([ingest.submit({ url: 'http://127.0.0.1:9/hang/1' }), ingest.submit({ url: 'http://127.0.0.1:9/hang/2' })]);
    const queued = await ingest.submit({ url: 'http://127.0.0.1:9/hang/3' });
    expect((await ingest.getJob(queued.id)).status).toBe('queued');
    const ended = await ingest.cancel(queued.id);
    expect(ended.status).toBe('cancelled');
    for (const j of running) expect((await ingest.getJob(j.id)).status).toBe('running');
  });
});

describe('DELETE /api/v1/ingest/:jobId', () => {
  it('is for admins, names unknown jobs, and answers with the cancelled job', async () => {
    const t = await testApp({}, { ingestDeps: hangingDeps() });
    closers.push(t.close);
    const admin = { authorization: 'Bearer test-admin-token' };
    const started = await t.app.inject({ method: 'POST', url: '/api/v1/ingest', headers: admin, payload: { url: 'http://127.0.0.1:9/hang' } });
    expect(started.statusCode).toBe(202);
    const { jobId } = started.json() as { jobId: string };
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/ingest/${jobId}` })).statusCode).toBe(401);
    const missing = await t.app.inject({ method: 'DELETE', url: '/api/v1/ingest/job_00000000-0000-4000-8000-000000000000', headers: admin });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('ERR_JOB_NOT_FOUND');
    const cancelled = await t.app.inject({ method: 'DELETE', url: `/api/v1/ingest/${jobId}`, headers: admin });
    expect(cancelled.statusCode).toBe(200);
    expect((cancelled.json() as IngestJob).status).toBe('cancelled');
    expect(((await t.app.inject({ method: 'GET', url: `/api/v1/ingest/${jobId}` })).json() as IngestJob).status).toBe('cancelled');
  });
});
