/** `salon doctor`: one line per check, the fix in failing lines, exit 0 only when all pass. */
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INDEX_EMBEDDER_META_KEY } from '../../src/ai/model-check.js';
import { formatResults, pingRedis, runDoctor } from '../../src/cli/commands/doctor.js';
import { testConfig } from '../../src/config.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { FakeServer } from '../fakes/common.js';
import { startFakeOllama } from '../fakes/ollama-server.js';
import { tempDir } from '../helpers.js';
import { closedPortUrl } from './remote-cases.js';

describe('salon doctor', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  /** A DATA_DIR holding an empty store, as a server's first start leaves it. */
  const dataDir = async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    await new SqliteStore({ filename: join(t.dir, 'salon.db') }).close();
    return t.dir;
  };

  it('fails the store check in a DATA_DIR without data, and creates nothing there', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const missing = join(t.dir, 'not-there');
    for (const dir of [missing, t.dir]) {
      const results = await runDoctor(testConfig({ DATA_DIR: dir }));
      const store = results.find((r) => r.name === 'store')!;
      expect(store.ok).toBe(false);
      expect(store.detail).toContain(`no Salon data in ${dir} (DATA_DIR)`);
      expect(results.find((r) => r.name === 'index-model')!.ok).toBe(false);
    }
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(t.dir)).toEqual([]);
  });

  it('passes every check with the local provider', async () => {
    const results = await runDoctor(testConfig({ DATA_DIR: await dataDir() }));
    expect(results.map((r) => r.name)).toEqual(['store', 'ai', 'index-model', 'bus']);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results[0].detail).toMatch(/sqlite at .*salon\.db: 0 items, 0 chunks/);
  });

  it('checks Ollama and its models through the API', async () => {
    const fake: FakeServer = await startFakeOllama({ models: ['nomic-embed-text:latest'] });
    cleanups.push(() => fake.close());
    const results = await runDoctor(testConfig({ DATA_DIR: await dataDir(), AI_PROVIDER: 'ollama', OLLAMA_HOST: fake.url }));
    const ai = results.find((r) => r.name === 'ai')!;
    expect(ai.ok).toBe(false);
    expect(ai.detail).toContain('run `ollama pull llama3.2`');
    expect(formatResults(results)).toMatch(/^FAIL ai\s+Model llama3\.2 is missing/m);
  });

  it('prints what a model server says without its terminal controls', async () => {
    const title = '\u001b]0;pwned\u0007\u001b[2J';
    // Its error text, which the detail quotes (a version it sends is cut to one plain line at the source).
    const fake: FakeServer = await startFakeOllama({
      raw: (_req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `model runner crashed${title}` }));
      },
    });
    cleanups.push(() => fake.close());
    const results = await runDoctor(testConfig({ DATA_DIR: await dataDir(), AI_PROVIDER: 'ollama', OLLAMA_HOST: fake.url }));
    expect(results.find((r) => r.name === 'ai')!.detail).toContain(title);
    const printed = formatResults(results);
    expect(printed).not.toMatch(/[\u0007\u001b]/);
    expect(printed).toContain('model runner crashed\\x1b]0;pwned\\x07\\x1b[2J');
  });

  it('reports an index built by another embedder with the reindex fix', async () => {
    const dir = await dataDir();
    const store = new SqliteStore({ filename: join(dir, 'salon.db') });
    await store.setMeta(INDEX_EMBEDDER_META_KEY, JSON.stringify({ model: 'ollama:nomic-embed-text', dimensions: 768 }));
    await store.close();
    const results = await runDoctor(testConfig({ DATA_DIR: dir }));
    const idx = results.find((r) => r.name === 'index-model')!;
    expect(idx.ok).toBe(false);
    expect(idx.detail).toContain('salon reindex');
  });

  it('checks a Redis bus with PING', async () => {
    const server: Server = createServer((s) => s.on('data', (d) => s.write(String(d).includes('PING') ? '+PONG\r\n' : '-ERR\r\n')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    const { port } = server.address() as { port: number };
    expect(await pingRedis(`redis://127.0.0.1:${port}`)).toMatchObject({ ok: true });
    const down = await pingRedis((await closedPortUrl()).replace('http:', 'redis:'));
    expect(down.ok).toBe(false);
    expect(down.detail).toContain('fix REDIS_URL');
  });

  it('exits 1 with a FAIL line naming `ollama serve` when Ollama is down (built CLI)', async () => {
    const bin = join(__dirname, '../../dist/src/cli/main.js');
    const url = await closedPortUrl();
    const res = spawnSync(process.execPath, [bin, 'doctor'], {
      env: { ...process.env, DATA_DIR: await dataDir(), AI_PROVIDER: 'ollama', OLLAMA_HOST: url, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(res.status).toBe(1);
    expect(res.stdout).toMatch(/^ok   store/m);
    expect(res.stdout).toContain(`FAIL ai`);
    expect(res.stdout).toContain(`is Ollama running at ${url}? start it with \`ollama serve\``);
  });
});
