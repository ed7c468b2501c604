/** Sources that refresh in the SQLite store: their rows, poll leases and stored entries. */
import type Database from 'better-sqlite3';
import { errors } from '../errors.js';
import { SOURCE_COLUMNS, SOURCE_SELECT, type Row, rowToSource, sourceValues } from './rows.js';
import type { NewSource, SourcePollState, SourceRecord } from './types.js';

type Sql = (text: string) => Database.Statement;

const IN_BATCH = 500;

export function addSource(sql: Sql, source: NewSource): SourceRecord {
  const marks = SOURCE_COLUMNS.split(',')
    .map(() => '?')
    .join(', ');
  const added = sql(`INSERT INTO sources (${SOURCE_COLUMNS}) VALUES (${marks}) ON CONFLICT (id) DO NOTHING`).run(...sourceValues(source));
  if (added.changes === 0) throw new errors.ERR_SOURCE_EXISTS(source.id);
  return getSource(sql, source.id)!;
}

export function getSource(sql: Sql, id: string): SourceRecord | null {
  const row = sql(`${SOURCE_SELECT} WHERE s.id = ?`).get(id) as Row | undefined;
  return row ? rowToSource(row) : null;
}

export function listSources(sql: Sql): SourceRecord[] {
  return (sql(`${SOURCE_SELECT} ORDER BY s.created_at, s.kind, coalesce(s.url, s.list), s.id`).all() as Row[]).map(rowToSource);
}

export function updateSource(sql: Sql, id: string, patch: { everyMinutes?: number; nextDueAt?: string; limit?: number }): SourceRecord | null {
  sql(
    'UPDATE sources SET every_minutes = coalesce(?, every_minutes), next_due_at = coalesce(?, next_due_at), max_entries = coalesce(?, max_entries) WHERE id = ?',
  ).run(patch.everyMinutes ?? null, patch.nextDueAt ?? null, patch.limit ?? null, id);
  return getSource(sql, id);
}

export function deleteSource(sql: Sql, id: string): boolean {
  return sql('DELETE FROM sources WHERE id = ?').run(id).changes === 1;
}

export function leaseSource(sql: Sql, id: string, owner: string, jobId: string, now: string, until: string): boolean {
  const taken = sql('UPDATE sources SET lease_owner = ?, lease_until = ?, lease_job = ? WHERE id = ? AND (lease_until IS NULL OR lease_until < ?)').run(
    owner,
    until,
    jobId,
    id,
    now,
  );
  return taken.changes === 1;
}

export function renewSourceLease(sql: Sql, id: string, owner: string, jobId: string, until: string): boolean {
  return sql('UPDATE sources SET lease_until = ? WHERE id = ? AND lease_owner = ? AND lease_job = ?').run(until, id, owner, jobId).changes === 1;
}

export function endSourcePoll(sql: Sql, id: string, owner: string, jobId: string, state: SourcePollState, nextDueAt: string): boolean {
  const done = sql(
    'UPDATE sources SET state = ?, next_due_at = ?, lease_owner = NULL, lease_until = NULL, lease_job = NULL WHERE id = ? AND lease_owner = ? AND lease_job = ?',
  ).run(JSON.stringify(state), nextDueAt, id, owner, jobId);
  return done.changes === 1;
}

export function sourceEntryHashes(sql: Sql, sourceId: string, keys: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < keys.length; i += IN_BATCH) {
    const batch = keys.slice(i, i + IN_BATCH);
    const rows = sql(`SELECT key, hash FROM source_entries WHERE source_id = ? AND key IN (${batch.map(() => '?').join(', ')})`).all(
      sourceId,
      ...batch,
    ) as Row[];
    for (const r of rows) out.set(r.key, r.hash);
  }
  return out;
}

/** Store.putSourceEntry: nothing, and false, for a source that is gone. */
export function putSourceEntry(sql: Sql, sourceId: string, key: string, hash: string, itemId: string, now: string): boolean {
  const put = sql(
    `INSERT INTO source_entries (source_id, key, hash, item_id, updated_at, seen_at)
     SELECT @sourceId, @key, @hash, @itemId, @now, @now WHERE EXISTS (SELECT 1 FROM sources WHERE id = @sourceId)
     ON CONFLICT (source_id, key) DO UPDATE SET hash = excluded.hash, item_id = excluded.item_id, updated_at = excluded.updated_at, seen_at = excluded.seen_at`,
  ).run({ sourceId, key, hash, itemId, now });
  return put.changes === 1;
}

/** Store.sweepSourceEntries; call inside a transaction. */
export function sweepSourceEntries(sql: Sql, sourceId: string, listed: string[], now: string, forgetBefore: string): number {
  for (let i = 0; i < listed.length; i += IN_BATCH) {
    const batch = listed.slice(i, i + IN_BATCH);
    sql(`UPDATE source_entries SET seen_at = ? WHERE source_id = ? AND key IN (${batch.map(() => '?').join(', ')})`).run(now, sourceId, ...batch);
  }
  return sql('DELETE FROM source_entries WHERE source_id = ? AND seen_at < ?').run(sourceId, forgetBefore).changes;
}
