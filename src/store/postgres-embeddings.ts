/** The embedding cache of the PostgreSQL store: document vectors as float32 bytes, keyed by (model, text hash). */
import type { Sql } from './postgres-db.js';
import { blobToVector, vectorToBlob } from './rows.js';

export async function get(sql: Sql, model: string, textHashes: string[]): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  if (!textHashes.length) return out;
  const { rows } = await sql.query('SELECT text_hash, vector FROM embeddings WHERE model = $1 AND text_hash = ANY($2::text[])', [model, textHashes]);
  for (const r of rows) out.set(r.text_hash, blobToVector(r.vector));
  return out;
}

/** Stores vectors, then drops the oldest entries (all models) beyond `maxEntries`; call inside a transaction. */
export async function put(sql: Sql, model: string, entries: { textHash: string; vector: Float32Array }[], maxEntries?: number): Promise<void> {
  // One row per hash (the last given wins): an upsert may not touch a row twice.
  const byHash = new Map(entries.map((e) => [e.textHash, e.vector]));
  if (byHash.size) {
    await sql.query(
      `INSERT INTO embeddings (model, text_hash, dimensions, vector, stored_at)
       SELECT $1, h, d, v, $5 FROM unnest($2::text[], $3::integer[], $4::bytea[]) AS e (h, d, v)
       ON CONFLICT (model, text_hash) DO UPDATE SET dimensions = excluded.dimensions, vector = excluded.vector, stored_at = excluded.stored_at`,
      [model, [...byHash.keys()], [...byHash.values()].map((v) => v.length), [...byHash.values()].map(vectorToBlob), Date.now()],
    );
  }
  if (maxEntries === undefined) return;
  const n = (await sql.query('SELECT count(*) AS n FROM embeddings')).rows[0].n as number;
  if (n > maxEntries) {
    await sql.query('DELETE FROM embeddings WHERE (model, text_hash) IN (SELECT model, text_hash FROM embeddings ORDER BY stored_at LIMIT $1)', [
      n - maxEntries,
    ]);
  }
}

export async function models(sql: Sql): Promise<{ model: string; dimensions: number; count: number }[]> {
  const { rows } = await sql.query('SELECT model, dimensions, count(*) AS count FROM embeddings GROUP BY model, dimensions ORDER BY count DESC');
  return rows.map((r) => ({ model: r.model, dimensions: r.dimensions, count: r.count }));
}
