import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { IngestService, JOB_RETENTION_MS, MAX_JOB_ATTEMPTS } from '../../src/content/ingest/ingest.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { NODE_FILE, succeedNode } from '../../src/content/ingest/predecessor.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { IngestJob } from '../../src/store/types.js';
import type { IngestDeps } from '../../src/content/sources/article.js';
import { loopbackDeps } from '../fixtures-servers/deps.js';
import { articlePage, startFixtureServer } from '../fixtures-servers/http.js';
import { tempDir } from '../helpers.js';
import { source } from '../store/sources-contract.js';

/** A job last updated `ageMs` ago (an hour by default: well within JOB_RETENTION_MS). */
function job(id: string, status: IngestJob['status'], runner: IngestJob['runner'], ageMs = 3_600_000): IngestJob {
  const at = new Date(Date.now() - ageMs).toISOString();
  return {
    id,
    runner,
    request: { url: `https://example.com/${id}` },
    status,
    total: 4,
    done: 2,
    failed: 0,
    itemIds: ['news_a', 'news_b'],
    failures: [],
    createdAt: at,
    updatedAt: at,
  };
}

const PIER = 'The harbour council voted on Tuesday to rebuild the old pier with timber from local forests, ending a decade of debate.';

/** The ids of the jobs in a SQLite store. */
async function jobIds(store: SqliteStore): Promise<string[]> {
  return store.db.prepare('SELECT id FROM jobs ORDER BY id').pluck().all() as string[];
}

/** Ingest deps for tests that never fetch or extract: any call fails. */
function unusedDeps(): IngestDeps {
  const unused = async (): Promise<never> => {
    throw new Error('not used');
  };
  return { fetchPage: unused, fetchJson: unused, extract: unused };
}

describe('closing the app', () => {
  it('closes the fetcher and worker pools behind ingestion', async () => {
    const { dir, cleanup } = tempDir();
    let closed = 0;
    const deps: IngestDeps = {
      ...unusedDeps(),
      close: async () => {
        closed++;
      },
    };
    try {
      const app = await buildApp(testConfig({ DATA_DIR: dir }), { ingestDeps: deps });
      await app.ready();
      expect(closed).toBe(0);
      await app.close();
      expect(closed).toBe(1);
    } finally {
      cleanup();
    }
  });
});

describe('ingest jobs after a crash', () => {
  it('a starting server runs an admin’s jobs an earlier server left queued or running again, up to MAX_JOB_ATTEMPTS starts, and fails its polls', async () => {
    const { dir, cleanup } = tempDir();
    const web = await startFixtureServer({
      '/pier': { body: articlePage('Harbour council backs timber pier', [PIER]) },
      '/quay': { body: articlePage('The quay reopens', [PIER]) },
    });
    try {
      // What a crashed server process leaves behind in its DATA_DIR.
      const before = new SqliteStore({ filename: join(dir, 'salon.db') });
      const jobs = [
        // Saved before attempts were counted: started once.
        { ...job('job_running', 'running', 'server'), request: { url: `${web.origin}/pier` } },
        { ...job('job_queued', 'queued', 'server'), request: { url: `${web.origin}/quay` } },
        // Started MAX_JOB_ATTEMPTS times already: it may be what crashes the server.
        { ...job('job_spent', 'running', 'server'), attempts: MAX_JOB_ATTEMPTS },
        { ...job('job_poll', 'running', 'server'), request: { source: 'src_gone' } },
        job('job_done', 'done', 'server'),
        job('job_cli', 'running', 'cli'),
      ];
      for (const j of jobs) await before.saveJob(j);
      await before.close();

      const app = await buildApp(testConfig({ DATA_DIR: dir }), { ingestDeps: loopbackDeps() });
      try {
        await app.ready();
        await app.salon.ingest.idle();
        const read = async (id: string) => (await app.inject(`/api/v1/ingest/${id}`)).json();
        const running = await read('job_running');
        expect(running).toMatchObject({ status: 'done', attempts: 2, total: 1, done: 1, failed: 0, itemIds: [expect.any(String)] });
        expect(running.failures).toEqual([{ ref: 'restart', code: 'ERR_JOB_CANCELLED', message: expect.stringContaining('queued again (start 2 of 3)') }]);
        expect(await read('job_queued')).toMatchObject({ status: 'done', attempts: 1, done: 1 });
        for (const id of ['job_running', 'job_queued']) expect((await app.inject(`/api/v1/content/${(await read(id)).itemIds[0]}`)).statusCode).toBe(200);
        const spent = await read('job_spent');
        expect(spent).toMatchObject({ status: 'failed', attempts: MAX_JOB_ATTEMPTS, done: 2, itemIds: ['news_a', 'news_b'] });
        expect(spent.failures).toEqual([{ ref: 'restart', code: 'ERR_JOB_CANCELLED', message: expect.stringContaining('3 times; it is not run again') }]);
        const poll = await read('job_poll');
        expect(poll).toMatchObject({ status: 'failed', done: 2 });
        expect(poll.failures).toEqual([{ ref: 'restart', code: 'ERR_JOB_CANCELLED', message: expect.stringContaining('stopped before the job finished') }]);
        expect(Date.parse(poll.updatedAt)).toBeGreaterThan(Date.parse(jobs[0].updatedAt));
        expect(await read('job_done')).toMatchObject({ status: 'done', failures: [] });
        // A `salon ingest` may still be running beside the server: its job is not touched.
        expect(await read('job_cli')).toMatchObject({ status: 'running', runner: 'cli' });
      } finally {
        await app.close();
      }
    } finally {
      await web.close();
      cleanup();
    }
  });

  it('a starting server deletes the jobs that ended over JOB_RETENTION_MS ago, and keeps the rest', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const before = new SqliteStore({ filename: join(dir, 'salon.db') });
      const old = JOB_RETENTION_MS + 60_000;
      const jobs = [
        job('job_done_old', 'done', 'server', old),
        job('job_failed_old', 'failed', 'cli', old),
        job('job_cancelled_old', 'cancelled', 'server', old),
        job('job_done_recent', 'done', 'server'),
        job('job_cli_running_old', 'running', 'cli', old),
      ];
      for (const j of jobs) await before.saveJob(j);
      await before.close();
      const app = await buildApp(testConfig({ DATA_DIR: dir }));
      try {
        await app.ready();
        const status = async (id: string) => (await app.inject(`/api/v1/ingest/${id}`)).statusCode;
        for (const id of ['job_done_old', 'job_failed_old', 'job_cancelled_old']) expect(await status(id), id).toBe(404);
        for (const id of ['job_done_recent', 'job_cli_running_old']) expect(await status(id), id).toBe(200);
      } finally {
        await app.close();
      }
    } finally {
      cleanup();
    }
  });
});

describe('ingest jobs on a store several nodes share', () => {
  const deps = unusedDeps();
  const node = (store: SqliteStore, nodeId: string) =>
    new IngestService({
      store,
      pipeline: createItemPipeline({ store, bodyMaxChars: 10_000, chunk: { size: 300, overlap: 50 } }),
      deps,
      hn: { base: 'http://127.0.0.1:9/v0', commentLimit: 0, intervalMs: 0 },
      bodyMaxChars: 10_000,
      nodeId,
      jobSilenceMs: 1_500,
      heartbeatMs: 100,
    });

  it('a starting node leaves the jobs another node is running alone, and fails those of a node that stopped touching its own', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const a = node(store, 'node_a');
    const b = node(store, 'node_b');
    let finish = () => {};
    try {
      await a.failInterruptedJobs();
      const running = await a.submitTask({ request: { source: 's' }, ref: 's', work: () => new Promise<void>((resolve) => (finish = resolve)) });
      await store.saveJob({ ...job('job_gone', 'running', 'server'), node: 'node_gone', request: { source: 's_gone' } });
      // Node b starts while a runs its job and the gone node's job was saved a moment ago.
      expect(await b.failInterruptedJobs()).toEqual([]);
      // The gone node never touches its job again: b's heartbeat fails it once it has been silent long enough.
      await expect.poll(async () => (await store.getJob('job_gone'))?.status, { timeout: 10_000, interval: 100 }).toBe('failed');
      // a touched its own all along.
      expect(await store.getJob(running.id)).toMatchObject({ status: 'running', node: 'node_a' });
      finish();
      await a.idle();
      expect(await store.getJob(running.id)).toMatchObject({ status: 'done' });
    } finally {
      finish();
      await a.close();
      await b.close();
      await store.close();
    }
  });

  it('a node that fell silent stops a job another node took over, leaving the taker’s record as it is', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const a = node(store, 'node_a');
    let progress = () => {};
    try {
      const stopped = new Promise<unknown>((resolve) => {
        void a.submitTask({
          request: { url: 'https://example.com/slow' },
          ref: 'slow',
          work: (ctx) =>
            new Promise<void>((_, reject) => {
              progress = () => ctx.tracker.addTotal(1);
              ctx.signal.addEventListener('abort', () => {
                resolve(ctx.signal.reason);
                reject(ctx.signal.reason);
              });
            }),
        });
      });
      await expect.poll(async () => (await store.getJob((await jobIds(store))[0]))?.status).toBe('running');
      const [id] = await jobIds(store);
      // Node b found node a silent and took the job over.
      await store.settleUnfinishedJobs('server', { node: 'node_b' }, (j) => ({ ...j, node: 'node_b', status: 'queued', attempts: 1 }));
      const taken = await store.getJob(id);
      // Progress is saved at most every 250 ms: reported until a save meets the taker's record.
      const reporting = setInterval(() => progress(), 50);
      await stopped.finally(() => clearInterval(reporting));
      expect(await stopped).toMatchObject({ code: 'ERR_JOB_CANCELLED', message: expect.stringContaining('another node took the job over') });
      await a.idle();
      expect(await store.getJob(id)).toEqual(taken);
    } finally {
      await a.close();
      await store.close();
    }
  });

  it('a restarted node fails its predecessor’s jobs at once, not once they fall silent, and frees the source it was polling', async () => {
    const { dir, cleanup } = tempDir();
    const store = new SqliteStore({ filename: ':memory:' });
    const before = node(store, 'node_before');
    const after = node(store, 'node_after');
    try {
      // The process before, on this DATA_DIR, pid 4242 (gone now), was polling a source when it died.
      expect(succeedNode(dir, 'node_before', { pid: 4242, alive: () => true, started: new Set() })).toBeNull();
      await store.saveJob({ ...job('job_poll', 'running', 'server'), node: 'node_before', request: { source: 'src_a' } });
      await store.addSource({ ...source('src_a') });
      await store.leaseSource('src_a', 'node_before', 'job_poll', new Date().toISOString(), new Date(Date.now() + 960_000).toISOString());
      const predecessor = succeedNode(dir, 'node_after', { pid: 4343, alive: (pid) => pid !== 4242, started: new Set() });
      expect(predecessor).toBe('node_before');
      // Saved a moment ago, well within jobSilenceMs: only knowing whose it was fails it now.
      expect(await after.failInterruptedJobs(predecessor)).toEqual(['job_poll']);
      expect(await store.getJob('job_poll')).toMatchObject({ status: 'failed', failures: [{ code: 'ERR_JOB_CANCELLED' }] });
      expect(await store.getSource('src_a')).toMatchObject({ leaseOwner: null, leaseJob: null });
    } finally {
      await before.close();
      await after.close();
      await store.close();
      cleanup();
    }
  });
});

describe('the node a server succeeds on its DATA_DIR', () => {
  it('is the one DATA_DIR/node names when its process is gone, or had this very pid, and never one still running', () => {
    const { dir, cleanup } = tempDir();
    // Each call a new process (nothing started before it) unless it shares `here`.
    const run = (pid: number, alive: (pid: number) => boolean, started = new Set<string>()) => ({ pid, alive, started });
    const here = new Set<string>();
    try {
      expect(
        succeedNode(
          dir,
          'n_1',
          run(10, () => true),
        ),
      ).toBeNull();
      // n_1's process (pid 10) still runs: a second server on the same DATA_DIR succeeds nobody.
      expect(
        succeedNode(
          dir,
          'n_2',
          run(11, () => true),
        ),
      ).toBeNull();
      expect(
        succeedNode(
          dir,
          'n_3',
          run(12, (pid) => pid !== 11),
        ),
      ).toBe('n_2');
      // A container restarted: pid 12 again, and that is this process, so n_3 is gone.
      expect(
        succeedNode(
          dir,
          'n_4',
          run(12, () => true, here),
        ),
      ).toBe('n_3');
      // A node this process started (an app before, in a test) is not its predecessor, though the pid is its own.
      expect(
        succeedNode(
          dir,
          'n_5',
          run(12, () => false, here),
        ),
      ).toBeNull();
      writeFileSync(join(dir, NODE_FILE), '{"nodeId": 7}');
      expect(
        succeedNode(
          dir,
          'n_6',
          run(13, () => false),
        ),
      ).toBeNull();
      expect(JSON.parse(readFileSync(join(dir, NODE_FILE), 'utf8'))).toEqual({ nodeId: 'n_6', pid: 13 });
    } finally {
      cleanup();
    }
  });
});
