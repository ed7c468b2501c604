/** `salon sources list|add|remove|refresh` on DATA_DIR, through the real fetcher against a loopback feed (needs the build). */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourcesCommand } from '../../src/cli/commands/sources.js';
import { testConfig } from '../../src/config.js';
import { openStore } from '../../src/parts.js';
import { articlePage, startFixtureServer, type Answer, type FixtureServer } from '../fixtures-servers/http.js';
import { tempDir } from '../helpers.js';

async function run(args: string[], config: ReturnType<typeof testConfig>): Promise<{ code: number; out: string; err: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  const chunks = { out: '', err: '' };
  out.on('data', (d) => (chunks.out += d));
  err.on('data', (d) => (chunks.err += d));
  const code = await sourcesCommand(args, config, out, err);
  return { code, ...chunks };
}

/**
 * Ctrl-C as the command hears it: the SIGINT listeners added since `others` were read (the
 * command's) are called, the test process's own are not. Playwright's, there while a browser file
 * that ran before in this process keeps its Chromium (test/browser/harness.ts), exits the process
 * with 130: a `process.emit('SIGINT')` here ended the vitest worker with the files after it.
 */
function interruptOnly(others: readonly NodeJS.SignalsListener[]): void {
  const added = process.listeners('SIGINT').filter((l) => !others.includes(l));
  expect(added.length).toBeGreaterThan(0);
  for (const listener of added) listener('SIGINT');
}

describe('salon sources', () => {
  let web: FixtureServer;
  let dir: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    web = await startFixtureServer({ '/a/one': { body: articlePage('Story one', ['The harbour council voted to rebuild the old pier with timber.']) } });
    web.routes.set('/feed.xml', {
      type: 'application/rss+xml',
      body: `<?xml version="1.0"?><rss version="2.0"><channel><title>F</title><item><title>Story one</title><link>${web.origin}/a/one</link></item></channel></rss>`,
    });
    dir = tempDir();
  });
  afterAll(async () => {
    await web.close();
    dir.cleanup();
  });

  it('adds, lists, refreshes and removes a source; bad usage exits 2, a refused change 1', async () => {
    const config = testConfig({ DATA_DIR: dir.dir, FETCH_ALLOW_HOSTS: '127.0.0.1' });
    const added = await run(['add', 'feed', `${web.origin}/feed.xml`, '--every', '15'], config);
    expect(added.code).toBe(0);
    const id = added.out.split(/\s+/)[0];
    expect(id).toMatch(/^src_[0-9a-f]{16}$/);
    expect((await run(['add', 'feed', `${web.origin}/feed.xml`], config)).err).toContain('salon sources: ERR_SOURCE_EXISTS: ');
    const refreshed = await run(['refresh', id], config);
    expect(refreshed).toMatchObject({ code: 0 });
    expect(refreshed.out.trim().split('\n')).toHaveLength(1);
    expect(refreshed.err).toContain('done, 1 stored');
    const listed = await run(['list', '--json'], config);
    expect(JSON.parse(listed.out)).toMatchObject({ id, itemCount: 1, everyMinutes: 15, lastError: null });
    expect((await run(['remove', id], config)).code).toBe(0);
    expect((await run(['list'], config)).out).toBe('');
    expect((await run(['remove', id], config)).code).toBe(1);
    expect((await run(['frobnicate'], config)).code).toBe(2);
    expect((await run(['add', 'feed'], config)).code).toBe(2);
    // Reading the sources of a DATA_DIR that holds no data fails, and creates none.
    const missing = join(dir.dir, 'not-there');
    for (const args of [['list'], ['remove', id], ['refresh', id]]) {
      const r = await run(args, testConfig({ DATA_DIR: missing }));
      expect(r.code, args[0]).toBe(1);
      expect(r.err).toContain(`no Salon data in ${missing} (DATA_DIR)`);
    }
    // Nor does an `add` that is wrongly written or names a bad source.
    for (const args of [
      ['add', 'feed'],
      ['add', 'rss', `${web.origin}/feed.xml`],
      ['add', 'feed', `${web.origin}/feed.xml`, '--every', '0'],
    ]) {
      expect((await run(args, testConfig({ DATA_DIR: missing }))).code, args.join(' ')).toBeGreaterThan(0);
    }
    expect(existsSync(missing)).toBe(false);
    for (const every of [[], ['0x10'], ['1e2'], ['0'], ['99999']]) {
      const bad = await run(['add', 'feed', `${web.origin}/other.xml`, '--every', ...every], config);
      expect(bad.code, JSON.stringify(every)).toBe(2);
      expect(bad.err).toMatch(/--every (needs a value|must be a whole number from 1 to 10080)/);
    }
  });

  it('logs the chunks a refresh stored in the change log, so running servers index them without a restart', async () => {
    const own = tempDir();
    try {
      const config = testConfig({ DATA_DIR: own.dir, FETCH_ALLOW_HOSTS: '127.0.0.1' });
      const id = (await run(['add', 'feed', `${web.origin}/feed.xml`], config)).out.split(/\s+/)[0];
      const refreshed = await run(['refresh', id], config);
      expect(refreshed.code, refreshed.err).toBe(0);
      const itemId = refreshed.out.trim();
      const store = openStore(config, { mustExist: true });
      try {
        const rows = (await store.chunksOfItem(itemId)).map((c) => c.rowId);
        expect(rows.length).toBeGreaterThan(0);
        const logged = (await store.indexChangesAfter(0, 100)).filter((c) => c.target === 'documents').flatMap((c) => c.ids);
        expect(new Set(logged)).toEqual(new Set(rows));
      } finally {
        await store.close();
      }
    } finally {
      own.cleanup();
    }
  });

  it('lists a source whose last failure quotes C1 controls and bidi overrides with them escaped, in its JSON too', async () => {
    const config = testConfig({ DATA_DIR: dir.dir, FETCH_ALLOW_HOSTS: '127.0.0.1' });
    web.routes.set('/odd.xml', { type: 'application/rss+xml', body: '<?xml version="1.0"?><x\u009b2J\u202e/>' });
    const id = (await run(['add', 'feed', `${web.origin}/odd.xml`], config)).out.split(/\s+/)[0];
    expect((await run(['refresh', id], config)).code).toBe(1);
    const listed = await run(['list', '--json'], config);
    expect(listed.out).not.toMatch(/[\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    const source = listed.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((s) => s.id === id);
    expect(source.lastError).toMatchObject({ code: 'ERR_FEED_PARSE', message: expect.stringContaining('<x\u009b2J\u202e>') });
    expect((await run(['remove', id], config)).code).toBe(0);
  });

  it('releases the source, as it was, when a refresh is interrupted (Ctrl-C), and exits 130', async () => {
    const config = testConfig({ DATA_DIR: dir.dir, FETCH_ALLOW_HOSTS: '127.0.0.1' });
    let asked = () => {};
    const reached = new Promise<void>((resolve) => (asked = resolve));
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    web.routes.set('/slow.xml', async (): Promise<Answer> => {
      asked();
      await held;
      return { type: 'application/rss+xml', body: '<?xml version="1.0"?><rss version="2.0"><channel><title>S</title></channel></rss>' };
    });
    const id = (await run(['add', 'feed', `${web.origin}/slow.xml`], config)).out.split(/\s+/)[0];
    // The test process's own listener, as playwright's is while a browser is open: it must not hear it.
    let heardElsewhere = 0;
    const elsewhere = () => heardElsewhere++;
    process.on('SIGINT', elsewhere);
    let r: Awaited<ReturnType<typeof run>>;
    try {
      const others = process.listeners('SIGINT');
      const refreshing = run(['refresh', id], config);
      await reached;
      interruptOnly(others);
      release();
      r = await refreshing;
    } finally {
      process.off('SIGINT', elsewhere);
    }
    expect(heardElsewhere).toBe(0);
    expect(r.code, r.err).toBe(130);
    expect(r.err).toContain(`${id}: failed`);
    const listed = await run(['list', '--json'], config);
    const source = listed.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((s) => s.id === id);
    // Not held, not counted against the source, and still due.
    expect(source).toMatchObject({ polling: null, failures: 0, lastError: null, lastPolledAt: null });
    // So polling it again needs no wait for a lease to expire.
    expect((await run(['refresh', id], config)).code).toBe(0);
  });
});
