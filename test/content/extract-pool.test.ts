/** The extraction worker pool runs compiled workers: build first (`node scripts/build.mjs`). */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ExtractPool } from '../../src/content/extract/extract-pool.js';
import { builtWorkerFile } from '../../src/worker-files.js';
import { extractArticle } from '../../src/content/extract/index.js';
import { SalonError } from '../../src/errors.js';

const PROSE = Array.from(
  { length: 4 },
  (_, i) => `<p>Paragraph ${i}: the council met again on the harbour plan, and the debate went on, with many views heard.</p>`,
).join('');
const HTML = `<html><head><meta property="og:title" content="Harbour plan"></head><body><article>${PROSE}</article></body></html>`;

describe('extraction worker pool', () => {
  const pool = new ExtractPool();
  const extractInWorker = pool.extract.bind(pool);
  afterAll(async () => {
    await pool.close();
  });

  it('finds the compiled worker under dist/workers', () => {
    expect(builtWorkerFile('extract.js')).toMatch(/dist[\\/]workers[\\/]extract\.js$/);
    expect(existsSync(builtWorkerFile('extract.js'))).toBe(true);
    expect(() => builtWorkerFile('missing.js')).toThrow(/build/);
  });

  it('extracts in a worker exactly what the main thread would', async () => {
    const inWorker = await extractInWorker(HTML, { url: 'https://news.example/a' });
    expect(inWorker).toEqual(extractArticle(HTML, { url: 'https://news.example/a' }));
    expect(inWorker.title).toBe('Harbour plan');
  });

  it('accepts bytes and sniffs their charset in the worker', async () => {
    const bytes = Buffer.from(`<html><head><meta charset="windows-1252"></head><body><article>${PROSE}<p>Caf\xe9 \x80 5</p></article></body></html>`, 'latin1');
    expect((await extractInWorker(bytes)).text).toContain('Café € 5');
  });

  it('rejects with the typed error extraction throws', async () => {
    const err = await extractInWorker('<html><body><nav>menu</nav></body></html>', { url: 'https://x.example/' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SalonError);
    expect((err as SalonError).code).toBe('ERR_EXTRACTION_FAILED');
    expect((err as SalonError).statusCode).toBe(422);
    const bad = await extractInWorker(HTML, { maxChars: -1 }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(TypeError);
  });

  it('validates its options by name', () => {
    expect(() => new ExtractPool({ maxThreads: 3 })).toThrow(/maxThreads/);
    expect(() => new ExtractPool({ idleTimeoutMs: -5 })).toThrow(/idleTimeoutMs/);
    expect(() => new ExtractPool({ filename: '/nonexistent/extract.js' })).toThrow(/build/);
  });

  it('runs several pages concurrently on a two-thread pool and closes', async () => {
    const two = new ExtractPool({ maxThreads: 2, idleTimeoutMs: 1000 });
    try {
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => two.extract(HTML.replace('Harbour plan', `Plan ${i}`))));
      expect(results.map((r) => r.title)).toEqual(['Plan 0', 'Plan 1', 'Plan 2', 'Plan 3', 'Plan 4', 'Plan 5']);
    } finally {
      await two.close();
    }
  });
});
