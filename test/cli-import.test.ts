/** `salon import` as a process over a DATA_DIR, with files as tools write them (needs the build). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { item } from './store/contract.js';
import { spawn } from 'node:child_process';
import { SALON_BIN, salon, tempDir, testApp } from './helpers.js';
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

describe('salon import stopped and run again', () => {
  /** `n` messages a minute apart from `start`, their text telling them apart. */
  const minutes = (n: number, start: number, tag: string) =>
    Array.from({ length: n }, (_, i) => ({
      author: { name: ['Caroline', 'Melanie', 'Jon'][i % 3] },
      text: `${tag} ${i}: the ferry ran ${i % 7} times and the market sold ${i % 11} apples.`,
      ts: new Date(start + i * 60_000).toISOString(),
    }));

  it('logs for the servers the memory it stored before a SIGTERM, and the same import again finishes it, past the rooms’ 8,192-seq window', async () => {
    const { dir, env } = await seeded();
    const first = join(dir, 'first.json');
    const second = join(dir, 'second.json');
    writeFileSync(first, JSON.stringify(minutes(5_000, Date.UTC(2023, 4, 1), 'Early')));
    writeFileSync(second, JSON.stringify(minutes(5_000, Date.UTC(2023, 5, 1), 'Later')));
    const done = await salon(['import', first, '--room', 'news_1'], env);
    expect(done.code, done.stderr).toBe(0);
    const read = () => {
      const db = new Database(join(dir, 'salon.db'), { readonly: true });
      try {
        return {
          messages: db.prepare("SELECT COUNT(*) FROM messages WHERE room_id = 'news_1'").pluck().get() as number,
          chunks: db.prepare('SELECT id, message_ids FROM memory_chunks').all() as { id: number; message_ids: string }[],
          logged: new Set(
            (db.prepare("SELECT ids FROM index_changes WHERE target = 'memory'").pluck().all() as string[]).flatMap((ids) => JSON.parse(ids) as number[]),
          ),
        };
      } finally {
        db.close();
      }
    };
    const firstChunks = read().chunks.length;

    // The second import, seqs 5,001–10,000, held where it is (SIGSTOP) once its memory is being
    // built, then sent SIGTERM.
    const counter = new Database(join(dir, 'salon.db'), { readonly: true });
    const chunksNow = counter.prepare('SELECT COUNT(*) FROM memory_chunks').pluck();
    const stopped = await salonStoppedWhen(['import', second, '--room', 'news_1'], env, () => (chunksNow.get() as number) > firstChunks);
    counter.close();
    expect(stopped.signal).toBeNull();
    expect(stopped.code, stopped.stderr).toBe(143);
    expect(stopped.stderr).toMatch(/^salon import: stopped by SIGTERM; run the same import again to finish it$/m);
    const half = read();
    expect(half.messages).toBe(10_000);
    // Stopped midway: its memory begun, not done.
    expect(half.chunks.length).toBeGreaterThan(firstChunks);
    expect(half.chunks.length).toBeLessThan(2 * firstChunks);
    // Every chunk it stored is in the log the running servers read, none left to their next start.
    expect(half.chunks.filter((c) => !half.logged.has(c.id))).toEqual([]);

    const again = await salon(['import', second, '--room', 'news_1'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ stored: 0 });
    const whole = read();
    expect(whole.messages).toBe(10_000);
    expect(whole.chunks.filter((c) => !whole.logged.has(c.id))).toEqual([]);
    // Each message is remembered once.
    const remembered = whole.chunks.flatMap((c) => JSON.parse(c.message_ids) as string[]);
    expect(new Set(remembered).size).toBe(remembered.length);
    expect(remembered.length).toBe(10_000);
  }, 240_000);
});

/**
 * Runs `salon`, and once `when()` holds (asked every 2 ms) holds it where it is with SIGSTOP,
 * sends it SIGTERM and lets it go on to handle it.
 */
function salonStoppedWhen(
  args: string[],
  env: Record<string, string>,
  when: () => boolean,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SALON_BIN, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const poll = setInterval(() => {
      if (!when()) return;
      clearInterval(poll);
      child.kill('SIGSTOP');
      child.kill('SIGTERM');
      child.kill('SIGCONT');
    }, 2);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearInterval(poll);
      resolve({ code, signal, stderr });
    });
  });
}
