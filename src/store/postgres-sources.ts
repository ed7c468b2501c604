/** Sources that refresh in the PostgreSQL store: their rows, poll leases and stored entries. */
import { errors } from '../errors.js';
import { placeholders, type Sql } from './postgres-db.js';
import { SOURCE_COLUMNS, SOURCE_SELECT, rowToSource, sourceValues } from './rows.js';
import type { NewSource, SourcePollState, SourceRecord } from './types.js';

/** Store.clockNow: the database's now() (the time its source leases are on). */
export async function databaseNow(sql: Sql): Promise<number> {
  const { rows } = await sql.query('SELECT (extract(epoch FROM now()) * 1000)::float8 AS ms');
  return Number(rows[0].ms);
}

export async function addSource(sql: Sql, source: NewSource): Promise<SourceRecord> {
  const values = sourceValues(source);
  const added = await sql.query(`INSERT INTO sources (${SOURCE_COLUMNS}) VALUES (${placeholders(values.length)}) ON CONFLICT (id) DO NOTHING`, values);
  if (added.rowCount === 0) throw new errors.ERR_SOURCE_EXISTS(source.id);
  return (await getSource(sql, source.id))!;
}

export async function getSource(sql: Sql, id: string): Promise<SourceRecord | null> {
  const { rows } = await sql.query(`${SELECT_WITH_LEASE} WHERE s.id = $1`, [id]);
  return rows.length ? withLease(rows[0]) : null;
}

/** Oldest first, ties in byte order (`COLLATE "C"`, as SQLite sorts), whatever the database's locale. */
export async function listSources(sql: Sql): Promise<SourceRecord[]> {
  const order = 's.created_at, s.kind COLLATE "C", coalesce(s.url, s.list) COLLATE "C", s.id COLLATE "C"';
  return (await sql.query(`${SELECT_WITH_LEASE} ORDER BY ${order}`)).rows.map(withLease);
}

export async function updateSource(sql: Sql, id: string, patch: { everyMinutes?: number; nextDueAt?: string; limit?: number }): Promise<SourceRecord | null> {
  await sql.query(
    'UPDATE sources SET every_minutes = coalesce($1, every_minutes), next_due_at = coalesce($2, next_due_at), max_entries = coalesce($3, max_entries) WHERE id = $4',
    [patch.everyMinutes ?? null, patch.nextDueAt ?? null, patch.limit ?? null, id],
  );
  return getSource(sql, id);
}

export async function deleteSource(sql: Sql, id: string): Promise<boolean> {
  return (await sql.query('DELETE FROM sources WHERE id = $1', [id])).rowCount === 1;
}

/**
 * A time on the database's clock as the `lease_until` column holds it: the text of
 * `Date.toISOString` (UTC, milliseconds, `Z`), so that times written by either side compare as text.
 */
const DB_TIME = (at: string) => `to_char((${at}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** The end of a lease `ms` long (bound as `$n`) from now on the database's clock. */
const LEASE_END = (ms: string) => DB_TIME(`now() + ${ms}::double precision * interval '1 millisecond'`);

/**
 * A source's row with whether its lease holds on the database's clock (where leaseSource took it),
 * as leaseSource tells an expired one: a node whose clock runs ahead would take a held lease for
 * run out (the API's `polling` null while the poll runs), one running behind a dead holder's for held.
 */
const SELECT_WITH_LEASE = SOURCE_SELECT.replace(/ FROM sources s$/, `, s.lease_until >= ${DB_TIME('now()')} AS lease_held FROM sources s`);

function withLease(row: Record<string, unknown>): SourceRecord {
  return { ...rowToSource(row), leaseHeld: row.lease_held === true };
}

/** How long a lease the node asks for holds: its `until` less its `now`, both on the node's clock. */
function leaseLength(now: string, until: string): number {
  const ms = Date.parse(until) - Date.parse(now);
  // A caller's bug, not a state of the store: the Store contract passes ISO times.
  if (!Number.isFinite(ms)) throw new TypeError(`a source lease needs ISO times, got ${JSON.stringify(now)} and ${JSON.stringify(until)}`);
  return ms;
}

/**
 * One conditional UPDATE: PostgreSQL re-checks the WHERE on the row it locked, so of racing nodes
 * one wins. The lease's times are the database's (`now()`), not the node's: only its length is
 * taken from `now` and `until`. Nodes whose clocks disagree by more than a lease's margin took a
 * lease that had not run out on its holder's clock (two polls of one source at once), or kept off
 * a lease whose holder had died, for as long as their clock ran behind.
 */
export async function leaseSource(sql: Sql, id: string, owner: string, jobId: string, now: string, until: string): Promise<boolean> {
  const taken = await sql.query(
    `UPDATE sources SET lease_owner = $1, lease_until = ${LEASE_END('$2')}, lease_job = $3 WHERE id = $4 AND (lease_until IS NULL OR lease_until < ${DB_TIME('now()')})`,
    [owner, leaseLength(now, until), jobId, id],
  );
  return taken.rowCount === 1;
}

/** Extends the lease to `until` less `now` from now on the database's clock (leaseSource). */
export async function renewSourceLease(sql: Sql, id: string, owner: string, jobId: string, now: string, until: string): Promise<boolean> {
  const renewed = await sql.query(`UPDATE sources SET lease_until = ${LEASE_END('$1')} WHERE id = $2 AND lease_owner = $3 AND lease_job = $4`, [
    leaseLength(now, until),
    id,
    owner,
    jobId,
  ]);
  return renewed.rowCount === 1;
}

export async function endSourcePoll(sql: Sql, id: string, owner: string, jobId: string, state: SourcePollState, nextDueAt: string): Promise<boolean> {
  const done = await sql.query(
    'UPDATE sources SET state = $1, next_due_at = $2, lease_owner = NULL, lease_until = NULL, lease_job = NULL WHERE id = $3 AND lease_owner = $4 AND lease_job = $5',
    [JSON.stringify(state), nextDueAt, id, owner, jobId],
  );
  return done.rowCount === 1;
}

/**
 * An entry's key as its row is found by (migration 8): the sha-256 of the key, which fits a btree
 * entry whatever the key's length. Computed by PostgreSQL from the key as bound, on every side.
 */
const KEY_HASH = (key: string) => `sha256(convert_to(${key}, 'UTF8'))`;

export async function sourceEntryHashes(sql: Sql, sourceId: string, keys: string[]): Promise<Map<string, string>> {
  const { rows } = await sql.query(
    `SELECT key, hash FROM source_entries WHERE source_id = $1 AND key_hash = ANY(ARRAY(SELECT ${KEY_HASH('k')} FROM unnest($2::text[]) AS k))`,
    [sourceId, keys],
  );
  return new Map(rows.map((r) => [r.key as string, r.hash as string]));
}

/** SQLSTATE of a row whose foreign key names a row that is gone. */
const FOREIGN_KEY_VIOLATION = '23503';

/** Store.putSourceEntry: nothing, and false, for a source that is gone. */
export async function putSourceEntry(sql: Sql, sourceId: string, key: string, hash: string, itemId: string, now: string): Promise<boolean> {
  try {
    const { rowCount } = await sql.query(
      `INSERT INTO source_entries (source_id, key, key_hash, hash, item_id, updated_at, seen_at)
       SELECT $1::text, $2::text, ${KEY_HASH('$2::text')}, $3::text, $4::text, $5::text, $5::text WHERE EXISTS (SELECT 1 FROM sources WHERE id = $1)
       ON CONFLICT (source_id, key_hash) DO UPDATE SET key = excluded.key, hash = excluded.hash, item_id = excluded.item_id, updated_at = excluded.updated_at,
         seen_at = excluded.seen_at`,
      [sourceId, key, hash, itemId, now],
    );
    return rowCount === 1;
  } catch (err) {
    // Deleted by another node between the check and the insert's own check of the key.
    if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) return false;
    throw err;
  }
}

/** Store.sweepSourceEntries: one statement, the touch a CTE the delete runs after (it sees the rows as they were, so it skips those touched). */
export async function sweepSourceEntries(sql: Sql, sourceId: string, listed: string[], now: string, forgetBefore: string): Promise<number> {
  const { rowCount } = await sql.query(
    `WITH seen AS (
       UPDATE source_entries SET seen_at = $3 WHERE source_id = $1 AND key_hash = ANY(ARRAY(SELECT ${KEY_HASH('k')} FROM unnest($2::text[]) AS k)) RETURNING key_hash
     )
     DELETE FROM source_entries WHERE source_id = $1 AND seen_at < $4 AND key_hash NOT IN (SELECT key_hash FROM seen)`,
    [sourceId, listed, now, forgetBefore],
  );
  return rowCount ?? 0;
}
