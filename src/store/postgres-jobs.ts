/** Ingest jobs in the PostgreSQL store: each job one JSON row, as in SQLite. */
import type { Sql } from './postgres-db.js';
import type { IngestJob, JobFailure, JobRunner } from './types.js';

export async function save(sql: Sql, job: IngestJob): Promise<void> {
  await sql.query(
    'INSERT INTO jobs (id, data, updated_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at',
    [job.id, JSON.stringify(job), job.updatedAt],
  );
}

export async function get(sql: Sql, id: string): Promise<IngestJob | null> {
  const { rows } = await sql.query('SELECT data FROM jobs WHERE id = $1', [id]);
  return rows.length ? (JSON.parse(rows[0].data) as IngestJob) : null;
}

/** Store.failUnfinishedJobs; call inside a transaction. */
export async function failUnfinished(sql: Sql, runner: JobRunner, failure: JobFailure, now: string): Promise<string[]> {
  // json, not jsonb: jsonb refuses the \u0000 escape a stored failure message may hold.
  const { rows } = await sql.query(
    `SELECT data FROM jobs WHERE data::json ->> 'status' IN ('queued', 'running') AND coalesce(data::json ->> 'runner', 'server') = $1 FOR UPDATE`,
    [runner],
  );
  const ids: string[] = [];
  for (const row of rows) {
    const job = JSON.parse(row.data) as IngestJob;
    const failed: IngestJob = { ...job, status: 'failed', failures: [...job.failures, failure], updatedAt: now };
    await sql.query('UPDATE jobs SET data = $1, updated_at = $2 WHERE id = $3', [JSON.stringify(failed), now, job.id]);
    ids.push(job.id);
  }
  return ids;
}
