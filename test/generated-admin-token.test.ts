/**
 * A server started without ADMIN_TOKEN shows the token it generated whatever LOG_LEVEL says, and
 * admin routes accept it (the server process itself: `node dist/src/server.js`).
 */
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const SERVER_ENTRY = resolve(__dirname, '../dist/src/server.js');
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A port nothing listens on now (with LOG_LEVEL=error the server never says which it took). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  return port;
}

describe('the generated admin token', () => {
  it('is written to stderr with LOG_LEVEL=error, and admin routes accept it', async () => {
    const data = tempDir('salon-token-');
    cleanups.push(data.cleanup);
    const port = await freePort();
    const child = spawn(process.execPath, [SERVER_ENTRY], {
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: data.dir, LOG_LEVEL: 'error', SEED_DEMO: 'false', SEARCH_WORKERS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    cleanups.push(async () => {
      child.kill('SIGTERM');
      await exited;
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.resume();

    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const up = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline) throw new Error(`server did not answer within 30 s:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const token = /admin routes accept this generated token: (\S+)/.exec(stderr)?.[1];
    expect(token, stderr).toBeDefined();
    const readyz = await (await fetch(`${base}/readyz`, { headers: { authorization: `Bearer ${token}` } })).json();
    // Details (a store check's detail) are shown to the admin only.
    expect(readyz.checks.store.detail).toBeDefined();
    const missing = await fetch(`${base}/api/v1/threads/nope`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(missing.status).toBe(404);
  }, 60_000);
});
