/** `salon extract` as a user runs it: spawns bin/salon.js, so build first (`node scripts/build.mjs`). */
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { CORPORA, tempDir } from '../helpers.js';

const ROOT = resolve(__dirname, '../..');
const HTML_DIR = join(CORPORA, 'extraction/html');
const WSJ = join(HTML_DIR, '042bb7b5fedab6eac7db576522b89b93904c237d344bcbe14a6a5ab7f7335856.html.gz');
const CTPOST = join(HTML_DIR, '05844573ca7e1fba714d715bb11ca08c26e25328999c74a1cb3bc8a0e4399f0f.html.gz');

function salon(...args: string[]) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/salon.js'), ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } });
  return {
    code: r.status,
    lines: r.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>),
    stderr: r.stderr,
  };
}

describe('salon extract', () => {
  const tmp = tempDir('salon-extract-cli-');
  afterAll(() => tmp.cleanup());

  it('prints one JSON object per file, an error object for a missing file, and exits 1', () => {
    const missing = join(tmp.dir, 'missing.html');
    const { code, lines } = salon('extract', WSJ, missing, CTPOST, '--json');
    expect(code).toBe(1);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ file: WSJ, siteName: 'WSJ', byline: 'Sarah E. Needleman' });
    expect(Object.keys(lines[0]).sort()).toEqual(['byline', 'excerpt', 'file', 'publishedTime', 'siteName', 'text', 'title']);
    expect(lines[0].title).toMatch(/^Google Stadia, Microsoft xCloud, Apple Arcade/);
    expect(lines[0].text).toMatch(/^Gaming used to be so simple\./);
    expect(lines[1]).toEqual({ file: missing, error: expect.stringContaining('ENOENT') });
    expect(lines[2].file).toBe(CTPOST);
    expect(lines[2].text).toContain('Los Angeles Auto Show');
  });

  it('reads plain HTML too, detecting gzip by magic bytes not by name, and exits 0 when all succeed', () => {
    const plain = join(tmp.dir, 'page.html');
    writeFileSync(plain, gunzipSync(readFileSync(CTPOST)));
    const misnamed = join(tmp.dir, 'gzipped-without-suffix.html');
    copyFileSync(CTPOST, misnamed);
    const { code, lines } = salon('extract', plain, misnamed, '--url', 'https://www.ctpost.com/news/x', '--json');
    expect(code).toBe(0);
    expect(lines.map((l) => l.error)).toEqual([undefined, undefined]);
    expect(lines[0].text).toBe(lines[1].text);
  });

  it('gives {file, error} for a file that is not an article', () => {
    const junk = join(tmp.dir, 'junk.html');
    writeFileSync(junk, '<html><body><nav>menu</nav></body></html>');
    const { code, lines } = salon('extract', junk, '--json');
    expect(code).toBe(1);
    expect(lines[0]).toEqual({ file: junk, error: expect.stringMatching(/Could not extract an article/) });
  });

  it('prints what a page says without the terminal controls it holds', () => {
    const page = join(tmp.dir, 'hostile.html');
    const esc = '\x1b]0;pwned\x07\x1b[2J\u202e';
    const para = `The council met on Tuesday to decide the future of the harbour, ${esc}and the vote went late into the night after a long debate.`;
    writeFileSync(
      page,
      `<html><head><title>Harbour ${esc}vote</title><meta property="og:site_name" content="Gazette ${esc}"><meta name="author" content="Ann ${esc}Lee"></head>` +
        `<body><article><h1>Harbour ${esc}vote</h1>${`<p>${para}</p>`.repeat(6)}</article></body></html>`,
    );
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/salon.js'), 'extract', page], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('harbour');
    expect(r.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    expect(r.stdout).toContain('\\x1b]0;pwned\\x07');
  });

  it('escapes the C1 controls and bidi overrides a page holds in its JSON too, which parses to the same text', () => {
    const page = join(tmp.dir, 'c1.html');
    const title = 'Harbour \u009b2J\u202evote';
    const para = 'The council met on Tuesday to decide the future of the harbour, and the vote went late into the night after a long debate.';
    writeFileSync(page, `<html><head><meta charset="utf-8"><title>${title}</title></head><body><article>${`<p>${para}</p>`.repeat(6)}</article></body></html>`);
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/salon.js'), 'extract', page, '--json'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/[\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.parse(r.stdout).title).toBe(title);
  });

  it('prints usage and exits 2 without files', () => {
    const { code, stderr } = salon('extract', '--json');
    expect(code).toBe(2);
    expect(stderr).toContain('usage: salon extract FILE...');
  });
});
