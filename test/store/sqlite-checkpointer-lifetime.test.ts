/**
 * The checkpoint worker and the process's lifetime (src/store/sqlite-checkpointer.ts): a store left
 * open does not keep a process alive through its checkpointer, but a request waiting for the worker's
 * reply (a deletion paced by `catchUp`) does, so the process cannot end in the middle of it.
 * Run in a child process, which ends by itself or not at all.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const MODULE = pathToFileURL(resolve(__dirname, '../../dist/src/store/sqlite-checkpointer.js')).href;
const DRIVER = pathToFileURL(createRequire(import.meta.url).resolve('better-sqlite3')).href;
/** Far beyond what either script needs: a child still running then is one that would never end. */
const HANG_MS = 20_000;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Runs `body` in a fresh Node process with a WAL database `file` and `startCheckpointer(onRunning)` in scope. */
function inChild(body: string): Promise<{ code: number | null; killed: boolean; stdout: string }> {
  dir = mkdtempSync(join(tmpdir(), 'salon-ckpt-'));
  const source = `
    import Database from ${JSON.stringify(DRIVER)};
    import { SqliteCheckpointer } from ${JSON.stringify(MODULE)};
    const file = ${JSON.stringify(join(dir, 'salon.db'))};
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x)');
    const startCheckpointer = (onRunning) => new SqliteCheckpointer({ filename: file, busyTimeoutMs: 1000, onRunning, onCheckpoint() {} });
    ${body}
  `;
  // A file, not `-e` with --input-type=module: the worker's eval'd source would inherit that flag.
  const script = join(dir, 'child.mjs');
  writeFileSync(script, source);
  return new Promise((done) => {
    execFile(process.execPath, [script], { timeout: HANG_MS, encoding: 'utf8' }, (err, stdout) => {
      const e = err as (Error & { code?: number; killed?: boolean }) | null;
      done({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, killed: e?.killed ?? false, stdout });
    });
  });
}

describe('the checkpoint worker and the process', () => {
  it(
    'lets a process end that never stopped it',
    async () => {
      const child = await inChild(`
      const running = new Promise((ok) => { const c = startCheckpointer((on) => on && ok(c)); });
      const hold = setInterval(() => {}, 1000);
      await running;
      clearInterval(hold);
      db.close();
      console.log('running');
    `);
      expect(child.stdout.trim()).toBe('running');
      expect(child.killed).toBe(false);
      expect(child.code).toBe(0);
    },
    HANG_MS + 10_000,
  );

  it(
    'keeps the process alive until a pending catch-up is answered',
    async () => {
      const child = await inChild(`
      const hold = setInterval(() => {}, 1000);
      const checkpointer = await new Promise((ok) => { const c = startCheckpointer((on) => on && ok(c)); });
      clearInterval(hold);
      db.prepare('INSERT INTO t VALUES (?)').run(1);
      // Nothing but the request is left to keep the event loop going.
      void checkpointer.catchUp().then((reply) => console.log(JSON.stringify(reply)));
    `);
      expect(child.killed).toBe(false);
      expect(child.code).toBe(0);
      const reply = JSON.parse(child.stdout.trim()) as { log: number; checkpointed: number } | null;
      expect(reply).not.toBeNull();
      expect(reply!.checkpointed).toBe(reply!.log);
    },
    HANG_MS + 10_000,
  );
});
