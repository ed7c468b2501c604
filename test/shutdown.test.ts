/**
 * `shutdownOnce` (src/shutdown.ts), in process: a shutdown whose onClose hooks hang past the grace
 * still stores the open memory windows and closes the store, then exits 1; a shutdown during start-up
 * never binds the port (`listenUnlessShutDown`). (The process as a whole,
 * SIGTERM with slow clients: test/faults/shutdown.test.ts.)
 */
import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../src/ai/local/local-embedder.js';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { DEMO_SEED_KEY } from '../src/content/ingest/seed.js';
import { listenUnlessShutDown, shutdownOnce } from '../src/shutdown.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { tempDir, testApp } from './helpers.js';
import { item, joined, ROOM } from './rooms/helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('shutdownOnce', () => {
  /**
   * An app whose onClose hook hangs until released (it runs before the memory's and the store's),
   * and a member who said `lines` lines: an open memory window only a last resort can store.
   * `memoryChunks()` reads the store file once the shutdown has exited.
   */
  async function appWithHangingClose(lines: number) {
    const t = await testApp({}, { roomOptions: { shutdownGraceMs: 100 } });
    let release = () => {};
    let entered = () => {};
    const hanging = new Promise<void>((resolve) => (entered = resolve));
    t.app.addHook('onClose', () => new Promise<void>((resolve) => ((release = resolve), entered())));
    await t.app.salon.store.upsertItem(item(ROOM, { title: 'Tide tables' }));
    await t.app.ready();
    const { client, welcome } = await joined(t.app, 'Mara');
    for (let n = 1; n <= lines; n++) client.send({ type: 'say', text: `line ${n} about the tide tables`, clientId: `t${n}` });
    await client.next('message', (f) => f.message.clientId === `t${lines}`);
    const memoryChunks = async () => {
      const store = new SqliteStore({ filename: join(t.config.DATA_DIR, 'salon.db') });
      cleanups.push(async () => {
        release();
        await store.close();
        await t.close();
      });
      return store.countMemoryChunks(welcome.threadId);
    };
    return { app: t.app, hanging, memoryChunks };
  }

  it('past its grace, stores the open memory windows and closes the store before exiting 1', async () => {
    const { app, memoryChunks } = await appWithHangingClose(3);
    const code = await new Promise<number>((resolve) => shutdownOnce(app, { graceMs: 200, lastStepMs: 5_000, exit: resolve })('SIGTERM'));
    expect(code).toBe(1);
    // The window the hanging hook kept from memory.close() was stored by the last resort.
    expect(await memoryChunks()).toBe(1);
  });

  it('at a second signal, stores the open memory windows and exits 1 without waiting out the grace', async () => {
    const { app, hanging, memoryChunks } = await appWithHangingClose(1);
    let exited = (_code: number) => {};
    const exit = new Promise<number>((resolve) => (exited = resolve));
    const shutdown = shutdownOnce(app, { graceMs: 3_600_000, lastStepMs: 5_000, exit: exited });
    shutdown('SIGTERM');
    await hanging;
    // A fatal error while closing is not someone asking again.
    shutdown('uncaughtException');
    shutdown('SIGINT');
    expect(await exit).toBe(1);
    expect(await memoryChunks()).toBe(1);
  });

  it('exits with 0 once the app has closed within its grace', async () => {
    const t = await testApp();
    await t.app.ready();
    const code = await new Promise<number>((resolve) => shutdownOnce(t.app, { exit: resolve })('SIGTERM'));
    expect(code).toBe(0);
    cleanups.push(() => t.close());
  });

  it('during start-up, never binds the port and exits 0 once loading has ended', async () => {
    const t = await testApp();
    // A plugin still loading when the signal comes, as the index of a large store does.
    let loaded = () => {};
    t.app.register(() => new Promise<void>((resolve) => (loaded = resolve)));
    let listened = false;
    t.app.server.on('listening', () => (listened = true));
    let exited: (code: number) => void = () => {};
    const code = new Promise<number>((resolve) => (exited = resolve));
    const shutdown = shutdownOnce(t.app, { exit: exited });
    const started = listenUnlessShutDown(t.app, { port: 0, host: '127.0.0.1' }, shutdown);
    await new Promise((r) => setImmediate(r));
    shutdown('SIGTERM');
    expect(shutdown.begun).toBe(true);
    loaded();
    expect(await started).toBe(false);
    expect(await code).toBe(0);
    expect(listened).toBe(false);
    expect(t.app.server.listening).toBe(false);
    cleanups.push(() => t.close());
  });

  it('listens when no shutdown began', async () => {
    const t = await testApp();
    cleanups.push(() => t.close());
    const shutdown = shutdownOnce(t.app, { exit: () => {} });
    expect(await listenUnlessShutDown(t.app, { port: 0, host: '127.0.0.1' }, shutdown)).toBe(true);
    expect(t.app.server.listening).toBe(true);
  });

  it('answers a request that arrives while the app closes with 503 ERR_NOT_READY and Connection: close', async () => {
    const t = await testApp();
    cleanups.push(() => t.close());
    // The rooms draining their answers: the close waits here while a keep-alive client asks again.
    let drained = () => {};
    t.app.addHook('preClose', () => new Promise<void>((resolve) => (drained = resolve)));
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, agent }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
        });
        req.on('error', reject);
        req.end();
      });
    expect((await get('/healthz')).status).toBe(200);
    const closed = t.app.close();
    await new Promise((r) => setImmediate(r));
    const late = await get('/api/v1/rooms');
    drained();
    await closed;
    agent.destroy();
    expect(late.status).toBe(503);
    expect(late.connection).toBe('close');
    expect(JSON.parse(late.body)).toEqual({ error: { code: 'ERR_NOT_READY', message: 'Not ready: the server is shutting down' } });
  });
});

/**
 * The built-in embedder, except that from its `blockFrom`-th call on it waits as a slow remote
 * model does, until the call's signal is aborted; `blocked` settles when it first waits.
 */
class SlowEmbedder extends LocalEmbedder {
  blockFrom = Infinity;
  private calls = 0;
  private started = () => {};
  readonly blocked = new Promise<void>((resolve) => (this.started = resolve));

  override async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (++this.calls >= this.blockFrom) {
      this.started();
      await new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
    }
    return super.embed(texts, signal);
  }
}

describe('a shutdown during a long start-up step', () => {
  /** Starts `app` as the server does and sends SIGTERM once `embedder` waits; the exit code and whether it listened. */
  async function stopWhileSlow(app: Awaited<ReturnType<typeof buildApp>>, embedder: SlowEmbedder): Promise<{ code: number; listened: boolean }> {
    let exited: (code: number) => void = () => {};
    const code = new Promise<number>((resolve) => (exited = resolve));
    const shutdown = shutdownOnce(app, { exit: exited });
    const started = listenUnlessShutDown(app, { port: 0, host: '127.0.0.1' }, shutdown);
    await embedder.blocked;
    shutdown('SIGTERM');
    // Past the grace (10 s) the exit would be 1: the step ran on until the process gave up on it.
    return { code: await code, listened: await started };
  }

  it('stops loading the index: the process exits 0 without listening', async () => {
    const embedder = new SlowEmbedder();
    const t = await testApp({}, { embedder });
    cleanups.push(() => t.close());
    for (const n of [1, 2, 3]) await t.app.salon.ingest.pipeline.put(item(`news_slow${n}`, { title: `Slow item ${n}` }));
    embedder.blockFrom = 0;
    expect(await stopWhileSlow(t.app, embedder)).toEqual({ code: 0, listened: false });
    expect(t.app.server.listening).toBe(false);
  });

  it('stops seeding the demo between items, each stored whole, and the next start seeds what is missing', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const config = testConfig({ DATA_DIR: dir, SEED_DEMO: 'true', ADMIN_TOKEN: 'test-admin-token' });
    const embedder = new SlowEmbedder();
    embedder.blockFrom = 3;
    const first = await buildApp(config, { embedder });
    expect(await stopWhileSlow(first, embedder)).toEqual({ code: 0, listened: false });

    const store = new SqliteStore({ filename: join(dir, 'salon.db') });
    // Not "seeding", which would keep every later start from seeding until the claim went stale.
    expect(JSON.parse((await store.getMeta(DEMO_SEED_KEY))!).state).toBe('failed');
    const stored = await store.countItems();
    expect(stored).toBeGreaterThan(0);
    // Every stored item has its chunks: it went in whole, in one transaction.
    const withChunks = new Set((await store.scanChunks(0, 100_000)).map((c) => c.itemId));
    expect(withChunks.size).toBe(stored);
    await store.close();

    const second = await buildApp(config);
    cleanups.push(() => second.close());
    await second.ready();
    expect(JSON.parse((await second.salon.store.getMeta(DEMO_SEED_KEY))!).state).toBe('done');
    expect(await second.salon.store.countItems()).toBeGreaterThan(stored);
  });
});
