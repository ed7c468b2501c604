/** `salon import` as a process over a DATA_DIR, with files as tools write them (needs the build). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { item } from './store/contract.js';
import { salon, tempDir, testApp } from './helpers.js';
import { joined, until } from './rooms/helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** A DATA_DIR holding the room news_1; the env to run `salon` on it. */
async function seeded(): Promise<{ dir: string; env: Record<string, string> }> {
  const { dir, cleanup } = tempDir('salon-cli-import-');
  closers.push(cleanup);
  const env = { DATA_DIR: dir, LOCAL_EMBED_DIM: '256', SEARCH_WORKERS: '1' };
  const app = await buildApp(testConfig({ ...env, ADMIN_TOKEN: 'test-admin-token' }));
  await app.ready();
  await app.salon.store.upsertItem(item('news_1', { title: 'Rust 2.0 released' }));
  await app.close();
  return { dir, env };
}

const messages = [
  { author: { name: 'Caroline' }, text: 'The support group met yesterday.', ts: '2023-05-08T13:00:00Z' },
  { author: { name: 'Melanie' }, text: 'I painted a lake sunrise.', ts: '2023-05-08T13:01:00Z' },
];

describe('salon import', () => {
  it('exits 1 naming the fix when the memory of stored messages could not be stored; the same import again builds it', async () => {
    const { dir, env } = await seeded();
    const db = new Database(join(dir, 'salon.db'));
    db.exec("CREATE TRIGGER planted BEFORE INSERT ON memory_chunks BEGIN SELECT RAISE(ABORT, 'planted failure'); END");
    db.close();
    const file = join(dir, 'chat.json');
    writeFileSync(file, JSON.stringify(messages));
    const failed = await salon(['import', file, '--room', 'news_1'], env);
    expect(failed.code, failed.stderr).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ stored: 2 });
    expect(failed.stderr).toMatch(/^warning: memory chunk not stored: planted failure$/m);
    expect(failed.stderr).toMatch(/^import: 0 done, 2 failed of 2 /m);
    expect(failed.stderr).toMatch(/^salon import: the messages are stored, but the memory of 2 of them was not .*; run the same import again to build it$/m);

    const fixed = new Database(join(dir, 'salon.db'));
    fixed.exec('DROP TRIGGER planted');
    fixed.close();
    const again = await salon(['import', file, '--room', 'news_1'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ stored: 0 });
    expect(again.stderr).toMatch(/^import: 2 done, 0 failed of 2 .*\(1 memory chunks in the thread\)$/m);
  }, 60_000);

  it('reads a UTF-8 file that starts with a byte order mark', async () => {
    const { dir, env } = await seeded();
    const file = join(dir, 'chat.json');
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

  it('reaches the members of the room live on a server beside it, once each, in order', async () => {
    const env = { LOCAL_EMBED_DIM: '256', SEARCH_WORKERS: '1' };
    const node = await testApp({ SEED_DEMO: 'false', ...env }, { indexResyncMs: 50 });
    closers.push(node.close);
    await node.app.ready();
    await node.app.salon.store.upsertItem(item('news_1', { title: 'Rust 2.0 released' }));
    const { client: bo } = await joined(node.app, 'Bo', 'news_1');
    bo.send({ type: 'say', text: 'Before the import.', clientId: 'c1' });
    const live = await bo.next('message', (f) => f.message.clientId === 'c1');
    const many = Array.from({ length: 30 }, (_, i) => ({
      author: { name: 'Caroline' },
      text: `Imported line ${i}.`,
      ts: `2023-05-08T13:${String(i).padStart(2, '0')}:00Z`,
    }));
    const file = join(node.config.DATA_DIR, 'chat.json');
    writeFileSync(file, JSON.stringify(many));
    const run = await salon(['import', file, '--room', 'news_1'], { ...env, DATA_DIR: node.config.DATA_DIR });
    expect(run.code, run.stderr).toBe(0);
    const imported = () => bo.all('message').filter((f) => String(f.message.text).startsWith('Imported line'));
    await until(() => imported().length >= many.length, 10_000);
    // Several more reads of the log: nothing comes twice.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const frames = imported();
    expect(frames.map((f) => f.message.text)).toEqual(many.map((m) => m.text));
    expect(frames.map((f) => f.message.id)).toEqual(JSON.parse(run.stdout).messageIds);
    const seqs = frames.map((f) => f.message.seq as number);
    expect(seqs).toEqual(seqs.map((_, i) => (live.message.seq as number) + 1 + i));
  }, 60_000);

  it('logs the memory it built for the running servers as one change entry, not one per chunk', async () => {
    const { dir, env } = await seeded();
    const file = join(dir, 'chat.json');
    // A day between messages: each closes a window of its own, a chunk each.
    const days = Array.from({ length: 12 }, (_, i) => ({
      author: { name: i % 2 ? 'Melanie' : 'Caroline' },
      text: `Day ${i}: the ferry to the island ran ${i} times, and the market sold apples.`,
      ts: new Date(Date.UTC(2023, 4, 1 + i, 13)).toISOString(),
    }));
    writeFileSync(file, JSON.stringify(days));
    const run = await salon(['import', file, '--room', 'news_1'], env);
    expect(run.code, run.stderr).toBe(0);
    const db = new Database(join(dir, 'salon.db'), { readonly: true });
    const chunks = db.prepare('SELECT id FROM memory_chunks ORDER BY id').pluck().all() as number[];
    const entries = db.prepare("SELECT ids FROM index_changes WHERE target = 'memory'").pluck().all() as string[];
    db.close();
    expect(chunks.length).toBeGreaterThan(1);
    expect(entries.map((ids) => (JSON.parse(ids) as number[]).sort((x, y) => x - y))).toEqual([chunks]);
  }, 60_000);

  it('says which unfinished imports of the room a run made readable and which it left unreadable', async () => {
    const { dir, env } = await seeded();
    const file = join(dir, 'chat.json');
    writeFileSync(file, JSON.stringify(messages));
    const first = await salon(['import', file, '--room', 'news_1'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toMatch(/unfinished/);
    // What a run stopped after its first slice leaves (store/sqlite-unsettled.ts): its rows, listed
    // unsettled; and a range another import left.
    const db = new Database(join(dir, 'salon.db'));
    const plant = db.prepare('INSERT INTO unsettled_seqs (room_id, from_seq, to_seq, started_at) VALUES (?, ?, ?, ?)');
    plant.run('news_1', 1, 2, '2026-01-02T03:04:05.000Z');
    plant.run('news_1', 50, 60, '2026-01-03T00:00:00.000Z');
    db.close();
    const again = await salon(['import', file, '--room', 'news_1'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(
      /^salon import: made readable the messages an unfinished import had left in news_1: seqs 1–2 \(begun 2026-01-02T03:04:05.000Z\)$/m,
    );
    expect(again.stderr).toMatch(
      /^salon import: news_1 holds messages of an unfinished import that nobody can read: seqs 50–60 \(begun 2026-01-03T00:00:00.000Z\); run that import again .*$/m,
    );
  }, 60_000);
});
