/**
 * PostgreSQL for tests: the server at SALON_TEST_DATABASE_URL (default: the local one CI starts),
 * a fresh schema per store or app, dropped afterwards. Suites are skipped where PostgreSQL is not
 * running, unless SALON_REQUIRE_POSTGRES=1 (CI), where that is a failure.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres.js';
import { describe, it } from 'vitest';

export const POSTGRES_URL = process.env.SALON_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REQUIRE_POSTGRES = process.env.SALON_REQUIRE_POSTGRES === '1';

async function reachable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const unreachable = await reachable();
/** PostgreSQL answers at POSTGRES_URL. */
export const HAVE_POSTGRES = unreachable === null;

/** `describe` for suites that need PostgreSQL (see the module comment). */
export function describePostgres(name: string, body: () => void): void {
  if (!HAVE_POSTGRES && REQUIRE_POSTGRES) {
    describe(name, () => {
      it('needs PostgreSQL', () => {
        throw new Error(
          `SALON_REQUIRE_POSTGRES=1 but PostgreSQL at ${POSTGRES_URL} does not answer (${unreachable}): start it, e.g. pg_ctlcluster 15 main start`,
        );
      });
    });
    return;
  }
  describe.skipIf(!HAVE_POSTGRES)(HAVE_POSTGRES ? name : `${name} (skipped: PostgreSQL at ${POSTGRES_URL} does not answer)`, body);
}

/** A schema name no other test uses. */
export function schemaName(): string {
  return `salon_test_${randomBytes(6).toString('hex')}`;
}

/** POSTGRES_URL with `schema` as its search_path, as DATABASE_URL would name it. */
export function urlWithSchema(schema: string): string {
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** Runs one statement on its own connection (creating and dropping schemas, reading what a test checks). */
export async function adminQuery(text: string, values?: unknown[]): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** Creates a fresh empty schema; `drop()` removes it with everything in it. */
export async function freshSchema(): Promise<{ schema: string; url: string; drop: () => Promise<void> }> {
  const schema = schemaName();
  await adminQuery(`CREATE SCHEMA ${schema}`);
  return { schema, url: urlWithSchema(schema), drop: () => dropSchema(schema) };
}

export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

/**
 * A store on a fresh schema; `cleanups` (run last first) closes it, then drops the schema.
 */
export async function freshPostgresStore(cleanups: (() => Promise<unknown> | unknown)[]): Promise<PostgresStore> {
  const schema = schemaName();
  const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
  cleanups.push(
    () => dropSchema(schema),
    () => store.close(),
  );
  return store;
}

/** Polls `isBlocked` until it says so ('blocked'), or until `work` settles first ('settled'). */
export async function blockedOrSettled(isBlocked: () => Promise<boolean>, work: Promise<unknown>): Promise<'blocked' | 'settled'> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (;;) {
    if (settled) return 'settled';
    if (await isBlocked()) return 'blocked';
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
