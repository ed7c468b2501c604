/**
 * The `salon` command when its readers close early (`salon ingest … 2>&1 | head -1`): it finishes
 * its work and exits with its own code. Spawns bin/salon.js, so build first.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/store/sqlite.js';
import { tempDir } from './helpers.js';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

describe('salon with its output piped to a reader that stops', () => {
  it('stores what it ingests and exits 0 when both stdout and stderr meet EPIPE (it died at its summary line, exit 1)', async () => {
    const { dir, cleanup } = tempDir('salon-cli-pipes-');
    closers.push(cleanup);
    const post = join(dir, 'harbour.md');
    writeFileSync(post, '---\ntitle: The harbour\n---\n\nThe harbour council voted to rebuild the old pier with timber from local forests.\n');
    const child = spawn(process.execPath, [join(__dirname, '../bin/salon.js'), 'ingest', '--file', post], {
      env: { ...process.env, LOG_LEVEL: 'silent', SEED_DEMO: 'false', DATA_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Both readers are gone before the first line: every write the command makes meets EPIPE.
    child.stdout.destroy();
    child.stderr.destroy();
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    expect(code).toBe(0);
    const store = new SqliteStore({ filename: join(dir, 'salon.db') });
    try {
      expect(await store.getItem('post_harbour')).toMatchObject({ title: 'The harbour' });
    } finally {
      await store.close();
    }
  });
});
