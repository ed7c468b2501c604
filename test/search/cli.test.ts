// `salon search` and `salon reindex` as processes over a DATA_DIR the app filled. Needs the build (bin/salon.js runs dist/).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import type { ContentItem } from '../../src/content/types.js';
import { ADMIN, salon, tempDir } from '../helpers.js';
import { itemOf, paragraphs } from './corpus.js';

describe('salon search / salon reindex', () => {
  const { dir, cleanup } = tempDir('salon-cli-search-');
  const env = { DATA_DIR: dir, LOCAL_EMBED_DIM: '256', SEARCH_WORKERS: '1' };
  const corpus = paragraphs(12);

  beforeAll(async () => {
    const app = await buildApp(testConfig({ ...env, ADMIN_TOKEN: 'test-admin-token' }));
    try {
      const items = corpus.map((p) => {
        const { source: _s, ...rest }: ContentItem = itemOf(p, 'news');
        return rest;
      });
      const r = await app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: { items } });
      expect(r.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
  afterAll(() => cleanup());

  it('refuses an option the command does not take, naming it, before doing anything', async () => {
    for (const args of [
      ['search', 'anything', '--kk', '3'],
      ['reindex', '--force'],
      ['serve', '--port=1'],
    ]) {
      const r = await salon(args, env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`salon ${args[0]}: unknown option ${args.find((a) => a.startsWith('--'))!.split('=')[0]}`);
      expect(r.stderr).toContain(`usage: salon ${args[0]}`);
      expect(r.stdout).toBe('');
    }
  });

  it('prints the hits for a query, and one JSON object per hit with --json', async () => {
    const p = corpus[2];
    const text = await salon(['search', p.questions[0], '--k', '3'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`news_${p.id}`);
    expect(text.stdout).toMatch(/^ 1\. \d\.\d{3} {2}news_/);

    const json = await salon(['search', p.questions[0], '--k', '2', '--json'], env);
    expect(json.code).toBe(0);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(Object.keys(lines[0]).sort()).toEqual(['category', 'id', 'kind', 'publishedAt', 'score', 'site', 'snippet', 'title', 'url']);
  });

  it('keeps the hits on one site with --source', async () => {
    const q = corpus[2].questions[0];
    const on = await salon(['search', q, '--source', 'example.test', '--json'], env);
    expect(on.code).toBe(0);
    expect(on.stdout).toContain(`news_${corpus[2].id}`);
    const off = await salon(['search', q, '--source', 'elsewhere.test', '--json'], env);
    expect(off.code).toBe(0);
    expect(off.stdout.trim()).toBe('');
  });

  it('stops printing quietly and exits 0 when its reader closes early (salon search … | head)', async () => {
    const child = spawn(process.execPath, [join(__dirname, '../../bin/salon.js'), 'search', corpus[2].questions[0], '--k', '50'], {
      env: { ...process.env, LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before the first line: every write the command makes meets EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('exits 2 with a message on bad arguments', async () => {
    for (const args of [['search'], ['search', 'x', '--k', '0'], ['search', 'x', '--kind', 'podcast'], ['search', 'x', '--source', 'https://a.example/']]) {
      const r = await salon(args, env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^salon search: /);
    }
  });

  it('takes --k as decimal digits only, and a --k without a value is an error naming it, not k = 1', async () => {
    for (const k of [[], ['0x3'], ['1e1'], ['3.0'], [' 3'], ['']]) {
      const r = await salon(['search', corpus[2].questions[0], '--k', ...k], env);
      expect(r.code, JSON.stringify(k)).toBe(2);
      expect(r.stderr).toMatch(/^salon search: --k (needs a value|must be a whole number)/);
      expect(r.stderr).toContain('usage: salon search');
      expect(r.stdout).toBe('');
    }
  });

  it('after a change of embedder, searches by text and says to reindex; reindex fixes it', async () => {
    const wider = { ...env, LOCAL_EMBED_DIM: '320' };
    const p = corpus[5];
    const before = await salon(['search', p.questions[0], '--json'], wider);
    expect(before.code).toBe(0);
    expect(before.stderr).toMatch(/salon reindex/);
    expect(before.stdout).toContain(`news_${p.id}`); // found by text

    const re = await salon(['reindex'], wider);
    expect(re.code).toBe(0);
    expect(re.stderr).toMatch(/reindex: \d+ done, 0 failed of \d+/);

    const after = await salon(['search', p.questions[0], '--json'], wider);
    expect(after.code).toBe(0);
    expect(after.stderr).not.toMatch(/reindex/);
    expect(after.stdout).toContain(`news_${p.id}`);
  });

  it('fails clearly when DATA_DIR holds no data', async () => {
    const empty = tempDir('salon-cli-empty-');
    try {
      const r = await salon(['search', 'anything'], { ...env, DATA_DIR: empty.dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/no Salon data in .*DATA_DIR/);
    } finally {
      empty.cleanup();
    }
  });
});
