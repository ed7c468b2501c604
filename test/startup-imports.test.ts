/**
 * What a process loads by importing the app: the packages of a PostgreSQL store and a Redis bus
 * are loaded by the first store or link that needs them (src/lazy-package.ts), so a lone node on
 * SQLite, a CLI command or a benchmark does not pay for them at every start.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const APP = join(import.meta.dirname, '../dist/src/app.js');

/** The packages under node_modules whose modules the require cache holds after `script` ran in a fresh process. */
function packagesLoaded(script: string): string[] {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as string[];
}

const PRINT_PACKAGES = `
const packages = new Set(Object.keys(require.cache).flatMap((file) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file)?.[1] ?? []));
console.log(JSON.stringify([...packages]));`;

describe('importing the app', () => {
  it('loads neither pg nor ioredis until a PostgreSQL store or a Redis link is made', () => {
    const loaded = packagesLoaded(`
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
await import(${JSON.stringify(APP)});
${PRINT_PACKAGES}`);
    expect(loaded).toContain('fastify');
    expect(loaded).not.toContain('pg');
    expect(loaded).not.toContain('ioredis');
  });

  it('loads them when a PostgreSQL store and a Redis link are made', () => {
    const loaded = packagesLoaded(`
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { PgDatabase } = await import(${JSON.stringify(join(import.meta.dirname, '../dist/src/store/postgres-db.js'))});
const { RedisLink } = await import(${JSON.stringify(join(import.meta.dirname, '../dist/src/rooms/redis-link.js'))});
const db = new PgDatabase({ connectionString: 'postgres://127.0.0.1:1/none', connectTimeoutMs: 50 });
const link = new RedisLink({ url: 'redis://127.0.0.1:1', retryMinMs: 10, retryMaxMs: 20, commandTimeoutMs: 50 });
${PRINT_PACKAGES}
process.exit(0);`);
    expect(loaded).toContain('pg');
    expect(loaded).toContain('ioredis');
  });
});
