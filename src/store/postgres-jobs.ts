/**
 * Ingest jobs in the PostgreSQL store: each job one JSON row, as in SQLite, with its status and
 * runner as columns (migration 6) so that nothing parses the JSON in SQL.
 */
import type { Sql } from './postgres-db.js';
import { jobJson } from './rows.js';
import type { IngestJob, JobFailure, JobRunner } from './types.js';

export async function save(sql: Sql, job: IngestJob): Promise<void> {
  await sql.query(
    `INSERT INTO jobs (id, data, updated_at, status, runner) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at, status = excluded.status, runner = excluded.runner`,
    [job.id, jobJson(job), job.updatedAt, job.status, job.runner ?? 'server'],
  );
}

export async function get(sql: Sql, id: string): Promise<IngestJob | null> {
  const { rows } = await sql.query('SELECT data FROM jobs WHERE id = $1', [id]);
  return rows.length ? (JSON.parse(rows[0].data) as IngestJob) : null;
}

/** Store.failUnfinishedJobs; call inside a transaction. */
export async function failUnfinished(sql: Sql, runner: JobRunner, failure: JobFailure, now: string): Promise<string[]> {
  const { rows } = await sql.query(`SELECT data FROM jobs WHERE status IN ('queued', 'running') AND runner = $1 ORDER BY id FOR UPDATE`, [runner]);
  const ids: string[] = [];
  for (const row of rows) {
    const job = JSON.parse(row.data) as IngestJob;
    await save(sql, { ...job, status: 'failed', failures: [...job.failures, failure], updatedAt: now });
    ids.push(job.id);
  }
  return ids;
}
