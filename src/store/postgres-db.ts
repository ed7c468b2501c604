/**
 * The connection side of the PostgreSQL store: one `pg.Pool`, migrations applied once under an
 * advisory lock, and transactions (BEGIN … COMMIT on one pooled client, retried when PostgreSQL
 * aborts one to break a deadlock). The pool opens in the background; every query waits for it, so
 * a store can be handed out synchronously and a bad DATABASE_URL fails the first use, naming it.
 */
import type pg from 'pg';
import { lazyPackage } from '../lazy-package.js';
import { required, wholeNumber } from '../options.js';
import { withoutNul } from '../text.js';
import { POSTGRES_MIGRATIONS } from './postgres-schema.js';

/** `$1, $2, …, $n`: the parameters of an n-column row. */
export const placeholders = (n: number): string => Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');
import type { Row } from './rows.js';

/** Connections per store. */
export const DEFAULT_POOL_SIZE = 10;
/** How long opening a connection, or waiting for a pooled one, may take before the query fails. */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * How long one statement may wait for its answer. A server that hangs or a network that drops
 * packets silently left queries waiting forever: a room's message append held its queue, and the
 * pool's connections stayed checked out, so close() never returned. Generous for the longest
 * statements (a thread's deletion, the index load's pages); migrations, at start, have none.
 */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
/** pg's error for a statement past its query_timeout; its connection is destroyed, not reused. */
const QUERY_TIMED_OUT = 'Query read timeout';
/** Attempts of a transaction PostgreSQL aborted as a deadlock or serialization victim. */
const TX_ATTEMPTS = 3;
/**
 * The longest wait before the first retry of such a transaction, doubled for each later one; each
 * wait is random up to it. Run again at once, the victim met the winner still holding its locks,
 * and two writers that had just collided collided again in step.
 */
const TX_RETRY_MAX_WAIT_MS = 40;
/** SQLSTATEs of a transaction that may simply be run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const OID_INT8 = 20;
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** What runs a query: the pool, or one client inside a transaction. */
export interface Sql {
  query(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>>;
}

/** Rounds of lockCovering before it leaves the matter to the transaction's retry. */
const LOCK_ROUNDS = 8;

/**
 * Runs `lock` (one statement locking rows in one order, inside a transaction) until `missed` finds
 * no row it should have locked: the statement reads which rows to lock in its own snapshot, and
 * what it waited for may have changed them. Each round's locks are given back (a savepoint) before
 * the next round takes them again, so they are only ever taken in that one order, never added to
 * out of it. Rounds that keep missing rows end in a serialization failure, which `tx` runs again.
 */
export async function lockCovering<T>(sql: Sql, lock: () => Promise<T>, missed: (locked: T) => Promise<boolean>): Promise<T> {
  await sql.query('SAVEPOINT lock_covering');
  for (let round = 1; ; round++) {
    const locked = await lock();
    if (!(await missed(locked))) {
      await sql.query('RELEASE SAVEPOINT lock_covering');
      return locked;
    }
    await sql.query('ROLLBACK TO SAVEPOINT lock_covering');
    if (round >= LOCK_ROUNDS) throw Object.assign(new Error(`the rows to lock kept changing while they were locked (${round} rounds)`), { code: '40001' });
  }
}

/** Options for PgDatabase. */
export interface PgDatabaseOptions {
  /** postgres:// URL (DATABASE_URL). */
  connectionString: string;
  /**
   * Schema that holds Salon's tables, created if missing (tests give each run its own). Without
   * it, the connection's search_path decides (a URL may set it: `?options=-c%20search_path%3Dsalon`).
   */
  schema?: string;
  /** Connections in the pool (DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** Refuse a database Salon has never migrated (CLI commands that only read one). */
  mustExist?: boolean;
  /** Longest wait for one statement's answer (default DEFAULT_QUERY_TIMEOUT_MS; tests shorten it). */
  queryTimeoutMs?: number;
  /** Longest wait for a new connection to be made (default CONNECT_TIMEOUT_MS; tests shorten it). */
  connectTimeoutMs?: number;
}

/** pg, loaded by the first database opened: parts.ts imports every store, and a server on SQLite needs none of it. */
const loadPg = lazyPackage<typeof pg>('pg');

// bigint columns (row ids, seqs, counts) as numbers: every one stays far below 2^53.
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === OID_INT8 && format !== 'binary' ? (v: string) => Number(v) : loadPg().types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export class PgDatabase {
  private readonly pool: pg.Pool;
  /** Settles once the schema is migrated; rejects with a message naming DATABASE_URL. */
  readonly ready: Promise<void>;
  private closed = false;
  private readonly queryTimeoutMs: number;

  constructor(private readonly options: PgDatabaseOptions) {
    required('PgDatabase', 'connectionString', options.connectionString);
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new TypeError(`PgDatabase: options.schema must be a lower-case identifier, got "${options.schema}"`);
    }
    const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
    wholeNumber('PgDatabase', 'poolSize', poolSize, 1);
    this.queryTimeoutMs = wholeNumber('PgDatabase', 'queryTimeoutMs', options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS, 1);
    this.pool = new (loadPg().Pool)({
      connectionString: options.connectionString,
      max: poolSize,
      connectionTimeoutMillis: wholeNumber('PgDatabase', 'connectTimeoutMs', options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS, 1),
      application_name: 'salon',
      types,
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    });
    // A pooled connection that dies while idle (a restart of PostgreSQL) is dropped by the pool and
    // replaced on the next query; without a listener its error would end the process.
    this.pool.on('error', () => undefined);
    this.ready = this.open();
    // Whoever queries sees the failure; nobody querying must not make it an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  async query(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>> {
    await this.ready;
    return this.pool.query(this.statement(text, values));
  }

  /**
   * Runs `fn` in one transaction on one client: COMMIT when it resolves, ROLLBACK when it throws.
   * A deadlock or serialization failure runs it again after a short random wait (fn must only
   * talk to the database).
   */
  async tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    await this.ready;
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      let broken: Error | undefined;
      // The pool listens for errors only on idle clients: a connection lost while this one is
      // checked out between two queries would otherwise be an unhandled 'error' event (the end of
      // the process). Kept, it makes the client be released as broken.
      const onError = (err: Error) => (broken = err);
      client.on('error', onError);
      try {
        await client.query(this.statement('BEGIN'));
        const result = await fn({ query: (text, values) => client.query(this.statement(text, values)) });
        await client.query(this.statement('COMMIT'));
        return result;
      } catch (err) {
        // A statement that timed out still holds the connection: dropping it ends the transaction.
        if ((err as Error)?.message === QUERY_TIMED_OUT) broken = err as Error;
        else await client.query(this.statement('ROLLBACK')).catch((rollbackErr: Error) => (broken = rollbackErr));
        if (attempt >= TX_ATTEMPTS || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * TX_RETRY_MAX_WAIT_MS * 2 ** (attempt - 1)));
    }
  }

  /** A statement with its values made storable and the query timeout. */
  private statement(text: string, values?: unknown[]): pg.QueryConfig & { query_timeout: number } {
    return { text, values: storable(values), query_timeout: this.queryTimeoutMs };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.ready.catch(() => undefined);
    await this.pool.end();
  }

  private async open(): Promise<void> {
    try {
      const client = await this.pool.connect();
      let broken: Error | undefined;
      const onError = (err: Error) => (broken = err);
      client.on('error', onError);
      try {
        await migrate(client, this.options);
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    } catch (err) {
      throw new Error(`DATABASE_URL: cannot open the PostgreSQL store at ${describeUrl(this.options.connectionString)}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}

/**
 * Applies the migrations not yet recorded, in one transaction under an advisory lock of the
 * schema: several nodes starting together queue on the lock, and each later one finds the work
 * done. PostgreSQL's DDL is transactional, so a failed migration leaves nothing half-made.
 */
async function migrate(client: pg.PoolClient, options: PgDatabaseOptions): Promise<void> {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query('SELECT coalesce($1::text, current_schema()) AS schema', [options.schema ?? null]);
    const schema = rows[0].schema as string | null;
    if (!schema) throw new Error('no schema to create tables in: set search_path (options=-c search_path=…) to an existing schema');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('salon-migrate'), hashtext($1))", [schema]);
    const exists = await client.query("SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'salon_migrations'", [schema]);
    if (!exists.rowCount && options.mustExist) throw new Error(`no Salon data in schema "${schema}"; start the server or ingest content first`);
    if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
    await client.query('CREATE TABLE IF NOT EXISTS salon_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = await client.query('SELECT coalesce(max(version), 0) AS version FROM salon_migrations');
    // A newer Salon's schema: this version would write into tables it does not know.
    if (done.rows[0].version > POSTGRES_MIGRATIONS.length) {
      throw new Error(
        `schema "${schema}" was written by a newer Salon (migration ${done.rows[0].version}; this one knows up to ${POSTGRES_MIGRATIONS.length}): run that version or a later one`,
      );
    }
    for (let v = done.rows[0].version as number; v < POSTGRES_MIGRATIONS.length; v++) {
      const migration = POSTGRES_MIGRATIONS[v];
      if (typeof migration === 'string') await client.query(migration);
      else await migration(client);
      await client.query('INSERT INTO salon_migrations (version) VALUES ($1)', [v + 1]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * Query values as PostgreSQL can keep them: text cannot hold NUL, which SQLite stores, so a NUL in
 * a string (a chat message may have one) is kept as U+FFFD.
 */
function storable(values: unknown[] | undefined): unknown[] | undefined {
  return values?.map((v) => (typeof v === 'string' ? withoutNul(v) : Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? withoutNul(x) : x)) : v));
}

/** host:port/database of a URL, without its credentials, for messages. */
export function describeUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
  } catch {
    return 'an unreadable URL';
  }
}
