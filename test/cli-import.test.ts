/** `salon import` as a process over a DATA_DIR, with files as tools write them (needs the build). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { item } from './store/contract.js';
import { salon, tempDir } from './helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('salon import', () => {
  it('reads a UTF-8 file that starts with a byte order mark', async () => {
    const { dir, cleanup } = tempDir('salon-cli-import-bom-');
    closers.push(cleanup);
    const env = { DATA_DIR: dir, LOCAL_EMBED_DIM: '256', SEARCH_WORKERS: '1' };
    const seeded = await buildApp(testConfig({ ...env, ADMIN_TOKEN: 'test-admin-token' }));
    await seeded.ready();
    await seeded.salon.store.upsertItem(item('news_1', { title: 'Rust 2.0 released' }));
    await seeded.close();

    const file = join(dir, 'chat.json');
    const messages = [
      { author: { name: 'Caroline' }, text: 'The support group met yesterday.', ts: '2023-05-08T13:00:00Z' },
      { author: { name: 'Melanie' }, text: 'I painted a lake sunrise.', ts: '2023-05-08T13:01:00Z' },
    ];
    writeFileSync(file, `\uFEFF${JSON.stringify(messages)}`, 'utf8');
    const run = await salon(['import', file, '--room', 'news_1'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ stored: 2, messageIds: [expect.any(String), expect.any(String)] });

    // A mark anywhere else is no mark: the file is refused, and nothing is written.
    writeFileSync(file, ` \uFEFF${JSON.stringify(messages)}`, 'utf8');
    const refused = await salon(['import', file, '--room', 'news_1'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^salon import: cannot read .*chat\.json: /);
  }, 60_000);
});
