/**
 * Ingest jobs in the PostgreSQL store: each job one JSON row, as in SQLite, with its status and
 * runner as columns (migration 6) so that nothing parses the JSON in SQL.
 */
import type { Sql } from './postgres-db.js';
import { jobJson, unfinished } from './rows.js';
import type { IngestJob, JobRunner, LiveJobs } from './types.js';

/**
 * Saves a job; the save is a sign of life of its node (alive_at, by the database's clock). `owned`:
 * not over a job stored under another node (Store.saveJob); false when it was not written.
 */
export async function save(sql: Sql, job: IngestJob, owned = false): Promise<boolean> {
  const { rowCount } = await sql.query(
    `INSERT INTO jobs (id, data, updated_at, status, runner, node, alive_at) VALUES ($1, $2, $3, $4, $5, $6, now())
     ON CONFLICT (id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at, status = excluded.status, runner = excluded.runner,
       node = excluded.node, alive_at = excluded.alive_at
     ${owned ? 'WHERE jobs.node IS NOT DISTINCT FROM excluded.node' : ''}`,
    [job.id, jobJson(job), job.updatedAt, job.status, job.runner ?? 'server', job.node ?? null],
  );
  return rowCount === 1;
}

/** Store.touchJobs. */
export async function touch(sql: Sql, node: string): Promise<void> {
  await sql.query("UPDATE jobs SET alive_at = now() WHERE node = $1 AND status IN ('queued', 'running')", [node]);
}

export async function get(sql: Sql, id: string): Promise<IngestJob | null> {
  const { rows } = await sql.query('SELECT data FROM jobs WHERE id = $1', [id]);
  return rows.length ? (JSON.parse(rows[0].data) as IngestJob) : null;
}

/** Store.settleUnfinishedJobs; call inside a transaction. */
export async function settleUnfinished(sql: Sql, runner: JobRunner, except: LiveJobs, settle: (job: IngestJob) => IngestJob): Promise<IngestJob[]> {
  // The database's clock on both sides, as for the change log: nodes' clocks may differ. A row
  // another sweep settled while this one waited for its lock is checked again as it now is.
  const { rows } = await sql.query(
    `SELECT data FROM jobs WHERE status IN ('queued', 'running') AND runner = $1 AND ($2::text IS NULL OR node IS DISTINCT FROM $2)
       AND (alive_at IS NULL OR alive_at <= now() - $3 * interval '1 millisecond' OR node = $4) ORDER BY id COLLATE "C" FOR UPDATE`,
    [runner, except.node ?? null, except.silentForMs ?? 0, except.gone ?? null],
  );
  const settled: IngestJob[] = [];
  for (const row of rows) {
    const job = settle(JSON.parse(row.data) as IngestJob);
    await save(sql, job);
    settled.push(job);
  }
  const ended = settled.filter((job) => !unfinished(job)).map((job) => job.id);
  if (ended.length) await sql.query('UPDATE sources SET lease_owner = NULL, lease_until = NULL, lease_job = NULL WHERE lease_job = ANY($1::text[])', [ended]);
  return settled;
}
