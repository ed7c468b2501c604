/** Shared test helpers: temp dirs, a built app that always closes, corpus paths. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { vi } from 'vitest';
import { buildApp, type AppOverrides } from '../src/app.js';
import { readSetting, testConfig, type Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';
import { TURN_MS } from '../src/memory/threads/turns.js';
import { SalonMetrics } from '../src/metrics/metrics.js';
import { SqliteStore, type SqliteStoreOptions } from '../src/store/sqlite.js';

/** The shared corpora (SALON_CORPORA, default ../shared/corpora), read in place. */
export const CORPORA = resolve(readSetting('SALON_CORPORA'));

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = 'salon-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The SQL of every statement `store` prepared on its own connection (its statement cache, read for a test). */
export function preparedStatements(store: SqliteStore): string[] {
  return [...(store as unknown as { statements: Map<string, unknown> }).statements.keys()];
}

/** A SQLite store in a fresh temporary directory; `close()` closes it and removes the directory. */
export function tempStore(): { store: SqliteStore; dir: string; close: () => Promise<void> } {
  const { dir, cleanup } = tempDir();
  const store = new SqliteStore({ filename: join(dir, 'salon.db') });
  return {
    store,
    dir,
    close: async () => {
      await store.close();
      cleanup();
    },
  };
}

/**
 * SQLite stores on one database file in a fresh temporary directory, one for each entry of
 * `options`; `close()` closes them all, then removes the directory.
 */
export function storesOnOneFile<K extends string>(
  options: Record<K, Omit<SqliteStoreOptions, 'filename'>>,
): { stores: Record<K, SqliteStore>; file: string; close: () => Promise<void> } {
  const { dir, cleanup } = tempDir();
  const file = join(dir, 'salon.db');
  const entries = Object.entries(options) as [K, Omit<SqliteStoreOptions, 'filename'>][];
  const stores = Object.fromEntries(entries.map(([name, opts]) => [name, new SqliteStore({ ...opts, filename: file })])) as Record<K, SqliteStore>;
  return {
    stores,
    file,
    close: async () => {
      for (const store of Object.values<SqliteStore>(stores).reverse()) await store.close();
      cleanup();
    },
  };
}

/** Builds an app over a temp DATA_DIR. Call `close()` in afterEach/afterAll. */
export async function testApp(
  env: Parameters<typeof testConfig>[0] = {},
  overrides: AppOverrides = {},
): Promise<{ app: FastifyInstance; config: Config; close: () => Promise<void> }> {
  const { dir, cleanup } = tempDir();
  const config = testConfig({ DATA_DIR: dir, ADMIN_TOKEN: 'test-admin-token', ...env });
  let app: FastifyInstance;
  try {
    app = await buildApp(config, overrides);
  } catch (err) {
    cleanup();
    throw err;
  }
  return {
    app,
    config,
    close: async () => {
      await app.close();
      cleanup();
    },
  };
}

export const ADMIN = { authorization: 'Bearer test-admin-token' };

export const SALON_BIN = join(__dirname, '../bin/salon.js');

/** Runs the built `salon` CLI (bin/salon.js runs dist/: needs the build) with `env` added; resolves with its exit code and output. */
export function salon(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SALON_BIN, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Linux scheduling policies, as /proc reports them. */
export const SCHED_OTHER = 0;
export const SCHED_IDLE = 5;

/** /proc's stat line of one of this process's threads (a task id, or `thread-self`). Linux only. */
export function threadStat(task: string): string {
  return readFileSync(task === 'thread-self' ? '/proc/thread-self/stat' : `/proc/self/task/${task}/stat`, 'utf8');
}

/** The scheduling policy of a stat line (proc(5): field 41; the name before it may hold spaces). */
export function policyOf(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]);
}

/** How many of this process's threads run under `policy`. Linux only. */
export function threadsUnder(policy: number): number {
  let n = 0;
  for (const task of readdirSync('/proc/self/task')) {
    try {
      if (policyOf(threadStat(task)) === policy) n++;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return n;
}

/** A logger that keeps each line above debug as `LEVEL message`, for tests of what is logged. */
export function linesLog(): { lines: string[]; log: Logger } {
  const lines: string[] = [];
  const keep = (level: string) => (_details: object, msg: string) => void lines.push(`${level} ${msg}`);
  return { lines, log: { debug() {}, info: keep('INFO'), warn: keep('WARN'), error: keep('ERROR') } };
}

/**
 * `work()`, with the array elements iterated meanwhile (spreads, for…of) counted on
 * Array.prototype: a test of work that must grow with its input, not with its square, without
 * timing it.
 */
export async function countedIteration<T>(work: () => T | Promise<T>): Promise<{ result: T; elements: number }> {
  const values = Array.prototype[Symbol.iterator];
  let elements = 0;
  Array.prototype[Symbol.iterator] = function (this: unknown[]) {
    elements += this.length;
    return values.call(this);
  } as typeof values;
  try {
    return { result: await work(), elements };
  } finally {
    Array.prototype[Symbol.iterator] = values;
  }
}

/**
 * `work(turned)` with every look at the clock finding TURN_MS gone by, so a turn of the event loop
 * is due at every check (memory/threads/turns.ts); `turned()` tells whether the loop has turned
 * since `work` began (an immediate set before it has run).
 */
export async function withTurnsDue<T>(work: (turned: () => boolean) => Promise<T>): Promise<T> {
  let turned = false;
  let clock = performance.now();
  const now = vi.spyOn(performance, 'now').mockImplementation(() => (clock += TURN_MS));
  setImmediate(() => (turned = true));
  try {
    return await work(() => turned);
  } finally {
    now.mockRestore();
  }
}

/** Metrics of a node with nothing going on: every source reads zero. */
export function idleMetrics(): SalonMetrics {
  const zero = () => 0;
  return new SalonMetrics({
    connections: zero,
    queuedBytes: zero,
    rooms: zero,
    queueDepth: zero,
    indexSize: () => ({ documents: 0, memory: 0 }),
    graphFailed: () => ({ documents: false, memory: false }),
    ingestRunning: zero,
    busRoomsUnheard: zero,
    busConnected: () => true,
    deliveries: zero,
  });
}

/** `store` with its listCategories calls counted, and the names of every method called on it. */
export function countingStore<S extends object>(store: S): { store: S; reads: () => number; called: Set<string> } {
  let reads = 0;
  const called = new Set<string>();
  const wrapped = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (prop === 'listCategories') reads++;
        called.add(String(prop));
        return value.apply(target, args);
      };
    },
  });
  return { store: wrapped, reads: () => reads, called };
}
