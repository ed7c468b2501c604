/**
 * PostgreSQL migrations run against rows an older schema holds: each test builds a schema at an
 * older version from the released migrations, writes rows as that version wrote them, and opens
 * the store on it.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/store/hashing.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres-schema.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { POSTGRES_URL, adminQuery, describePostgres, dropSchema, schemaName, urlWithSchema } from './postgres-harness.js';
import { privateExchange } from './memory-chunk.js';

/** A fresh schema migrated to `version` (the first `version` migrations), as that release left it. */
async function schemaAt(schema: string, version: number): Promise<void> {
  await adminQuery(`CREATE SCHEMA ${schema}`);
  const client = new pg.Client({ connectionString: urlWithSchema(schema) });
  await client.connect();
  try {
    await client.query('CREATE TABLE salon_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    for (let v = 0; v < version; v++) {
      const migration = POSTGRES_MIGRATIONS[v];
      if (typeof migration === 'string') await client.query(migration);
      else await migration(client);
      await client.query('INSERT INTO salon_migrations (version) VALUES ($1)', [v + 1]);
    }
  } finally {
    await client.end();
  }
}

describePostgres('PostgreSQL migrations', () => {
  let schema: string;
  const opened: PostgresStore[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    await dropSchema(schema);
  });
  const open = async () => {
    const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
    opened.push(store);
    return store;
  };

  it('drops the embedding cache’s vectors of texts no document chunk has (migration 5): those memory put there before d4c95a4', async () => {
    schema = schemaName();
    await schemaAt(schema, 4);
    const document = 'The harbour pier opens in May.';
    const [kept, dropped] = [sha256(document), sha256('Ann (1 Nov 2026, 10:00): my new address is 4 Elm Street')];
    await adminQuery(
      `INSERT INTO ${schema}.items (id, kind, title, description, body, comments, source, hash, sort_key, created_at, updated_at)
       VALUES ('news_1', 'news', 'Pier', '', 'Body.', '[]', 'api', 'h', 'k', 'a', 'a')`,
    );
    await adminQuery(`INSERT INTO ${schema}.chunks (item_id, ord, part, text, text_hash) VALUES ('news_1', 0, 'body', $1, $2)`, [document, kept]);
    const vector = Buffer.from(new Float32Array([0.6, 0.8]).buffer);
    for (const hash of [kept, dropped]) {
      await adminQuery(`INSERT INTO ${schema}.embeddings (model, text_hash, dimensions, vector) VALUES ('m@2', $1, 2, $2)`, [hash, vector]);
    }
    const after = await open();
    expect([...(await after.getEmbeddings('m@2', [kept, dropped])).keys()]).toEqual([kept]);
    const { rows } = await adminQuery(`SELECT max(version) AS version FROM ${schema}.salon_migrations`);
    expect(rows[0].version).toBe(POSTGRES_MIGRATIONS.length);
  });

  it('keys the source entries written before migration 8 by their keys’ hash, finding each by its key, and drops items_url', async () => {
    schema = schemaName();
    await schemaAt(schema, 7);
    await adminQuery(
      `INSERT INTO ${schema}.sources (id, kind, url, max_entries, every_minutes, origin, created_at, next_due_at, state)
       VALUES ('src_a', 'feed', 'https://example.com/f.xml', 50, 30, 'api', 'a', 'a', '{}')`,
    );
    for (const [key, hash] of [
      ['guid-1', 'h1'],
      ['guid-€', 'h2'],
    ]) {
      await adminQuery(`INSERT INTO ${schema}.source_entries (source_id, key, hash, item_id, updated_at) VALUES ('src_a', $1, $2, 'news_1', 'a')`, [key, hash]);
    }
    const store = await open();
    expect([...(await store.sourceEntryHashes('src_a', ['guid-1', 'guid-€', 'guid-3']))].sort()).toEqual([
      ['guid-1', 'h1'],
      ['guid-€', 'h2'],
    ]);
    await store.putSourceEntry('src_a', 'guid-€', 'h2b', 'news_1', 'b');
    expect(await store.sourceEntryHashes('src_a', ['guid-€'])).toEqual(new Map([['guid-€', 'h2b']]));
    expect((await store.getSource('src_a'))?.itemCount).toBe(2);
    // Migration 10: an entry counts as last seen when it was last stored, so a sweep can forget it.
    expect(await store.sweepSourceEntries('src_a', [], 'c', 'aa')).toBe(1);
    expect((await adminQuery(`SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = $1 AND indexname = 'items_url'`, [schema])).rows[0].n).toBe(0);
  });

  it('puts back the items an undated update had moved to the top (migration 9)', async () => {
    schema = schemaName();
    await schemaAt(schema, 8);
    const insert = (id: string, publishedAt: string | null, sortKey: string, createdAt: string) =>
      adminQuery(
        `INSERT INTO ${schema}.items (id, kind, title, description, body, comments, published_at, source, hash, sort_key, created_at, updated_at)
         VALUES ($1, 'news', 'T', '', 'Body.', '[]', $2, 'api', 'h', $3, $4, $3)`,
        [id, publishedAt, sortKey, createdAt],
      );
    await insert('news_moved', null, '2026-03-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
    await insert('news_dated', '2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-02-05T00:00:00.000Z');
    const store = await open();
    expect((await store.listItems({ limit: 10 })).items.map((i) => i.id)).toEqual(['news_dated', 'news_moved']);
  });

  it('refuses a schema a newer Salon migrated, naming its version, and leaves it as it was', async () => {
    schema = schemaName();
    await (await open()).close();
    const newer = POSTGRES_MIGRATIONS.length + 1;
    await adminQuery(`INSERT INTO ${schema}.salon_migrations (version) VALUES ($1)`, [newer]);
    await expect(PostgresStore.open({ connectionString: POSTGRES_URL, schema })).rejects.toThrow(
      new RegExp(`^DATABASE_URL: .*written by a newer Salon \\(migration ${newer}; this one knows up to ${POSTGRES_MIGRATIONS.length}\\)`),
    );
    expect((await adminQuery(`SELECT max(version)::int AS v FROM ${schema}.salon_migrations`)).rows[0].v).toBe(newer);
  });

  it('gives jobs written before migration 6 their status and runner, a job whose JSON escapes a NUL included, and a restart fails them', async () => {
    schema = schemaName();
    await schemaAt(schema, 5);
    const job = (id: string, status: string, extra: object = {}) => ({
      id,
      request: { file: ['v.json'] },
      status,
      total: 1,
      done: 0,
      failed: 1,
      itemIds: [],
      failures: [{ ref: 'bad\u0000id', code: 'ERR_BAD_ITEM', message: 'id "bad\u0000id \ud800" is not allowed' }],
      createdAt: 'a',
      updatedAt: 'b',
      ...extra,
    });
    const rows = [job('j_legacy', 'running'), job('j_cli', 'running', { runner: 'cli' }), job('j_done', 'done', { runner: 'server' })];
    for (const j of rows) await adminQuery(`INSERT INTO ${schema}.jobs (id, data, updated_at) VALUES ($1, $2, 'b')`, [j.id, JSON.stringify(j)]);
    const store = await open();
    const failure = { ref: 'restart', code: 'ERR_JOB_CANCELLED', message: 'the server stopped' };
    expect(await store.failUnfinishedJobs('server', failure, '2030-01-01T00:00:00.000Z')).toEqual(['j_legacy']);
    expect(await store.getJob('j_legacy')).toMatchObject({
      status: 'failed',
      failures: [{ ref: 'bad\uFFFDid', message: 'id "bad\uFFFDid \uFFFD" is not allowed' }, failure],
    });
    expect(await store.getJob('j_cli')).toMatchObject({ status: 'running', runner: 'cli' });
    // Every row's JSON is one PostgreSQL reads.
    expect((await adminQuery(`SELECT count(*)::int AS n FROM ${schema}.jobs WHERE data::json ->> 'status' IS NOT NULL`)).rows[0].n).toBe(3);
  });

  it('names the rooms of a private chunk’s lineage from before lineages named them when every thread stands (migration 12), as SQLite does', async () => {
    schema = schemaName();
    await schemaAt(schema, 11);
    const at = '2026-11-02T10:00:00.000Z';
    await adminQuery(
      `INSERT INTO ${schema}.threads (id, room_id, title, created_at) VALUES ('thr_f', 'news_1', 'F', $1), ('thr_a', 'post_2', 'A', $1), ('thr_b', 'news_1', 'B', $1)`,
      [at],
    );
    const lineage = (threadIds: string[], more = {}) => JSON.stringify({ chunkIds: [7, 8], threadIds, ...more });
    const rows: [string, number, string | null, string][] = [
      ['Q: my locker code?', 1, 'u_ann', lineage(['thr_a', 'thr_b'])],
      ['Q: my bike lock code?', 1, 'u_ann', lineage(['thr_a', 'thr_gone'])],
      ['Q: where is the pier?', 0, null, lineage(['thr_a'])],
      ['Q: my door code?', 1, 'u_ann', lineage(['thr_a'], { roomIds: ['elsewhere'] })],
    ];
    const ids: number[] = [];
    for (const [text, privileged, owner, l] of rows) {
      const { rows: inserted } = await adminQuery(
        `INSERT INTO ${schema}.memory_chunks (thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, privileged, owner, words_key, created_at, updated_at, fusion, lineage)
         VALUES ('thr_f', 'news_1', 'exchange', $1, '[]', '["Ann"]', $2, $2, $3, $4, $1, $2, $2, 'fused', $5) RETURNING id`,
        [text, at, privileged, owner, l],
      );
      ids.push(Number(inserted[0].id));
    }
    const store = await open();
    const lineages = (await store.getMemoryChunks(ids)).map((c) => c.lineage);
    expect(lineages[0]).toEqual({ chunkIds: [7, 8], threadIds: ['thr_a', 'thr_b'], roomIds: expect.arrayContaining(['post_2', 'news_1']) });
    expect(lineages[0]!.roomIds).toHaveLength(2);
    expect(lineages[1]).toEqual({ chunkIds: [7, 8], threadIds: ['thr_a', 'thr_gone'] });
    expect(lineages[2]).toEqual({ chunkIds: [7, 8], threadIds: ['thr_a'] });
    expect(lineages[3]).toEqual({ chunkIds: [7, 8], threadIds: ['thr_a'], roomIds: ['elsewhere'] });
  });

  it('gives a private exchange’s row from before migration 14 no forget mark, so a forget from any mark reads it, as SQLite does (its migration 30)', async () => {
    schema = schemaName();
    await schemaAt(schema, 13);
    const at = '2026-11-02T10:00:00.000Z';
    await adminQuery(`INSERT INTO ${schema}.threads (id, room_id, title, created_at) VALUES ('thr_a', 'news_1', 'A', $1)`, [at]);
    // Ann forgot twice in the room, then asked again: her exchange was filed under mark 2.
    await adminQuery(`INSERT INTO ${schema}.private_forgets (owner, room_id, mark) VALUES ('u_ann', 'news_1', 2)`);
    const { rows } = await adminQuery(
      `INSERT INTO ${schema}.memory_chunks (thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, privileged, owner, words_key, created_at, updated_at)
       VALUES ('thr_a', 'news_1', 'exchange', 'Q: my locker code? A: 4417.', '[]', '["Ann"]', $1, $1, 1, 'u_ann', 'k1', $1, $1) RETURNING id`,
      [at],
    );
    const before = Number(rows[0].id);
    const store = await open();
    expect((await adminQuery(`SELECT forget_mark FROM ${schema}.memory_chunks WHERE id = $1`, [before])).rows[0].forget_mark).toBeNull();
    const since = await store.addMemoryChunk(privateExchange('Q: my bike lock code? A: 1234.', at, 2), at);
    const ids = async (mark: number) => (await store.scanPrivateMemory('u_ann', 0, 10, { roomId: 'news_1', mark })).map((c) => c.id);
    // Even the scan of the forget that moved her mark to 2 reads the row from before, and leaves
    // out the exchange filed under 2 since; her next forget reads both.
    expect(await ids(2)).toEqual([before]);
    expect(await store.markPrivateForget('u_ann', 'news_1')).toBe(3);
    expect(await ids(3)).toEqual([before, since.id]);
  });

  it('indexes again the text written before migration 16 cut and folded as SQLite does it, and a row written without an index still gets its raw text’s', async () => {
    schema = schemaName();
    await schemaAt(schema, 15);
    const at = '2026-11-02T10:00:00.000Z';
    await adminQuery(
      `INSERT INTO ${schema}.items (id, kind, title, description, body, comments, source, hash, sort_key, created_at, updated_at)
       VALUES ('news_1', 'news', 'T', '', 'Body.', '[]', 'api', 'h', 'k', 'a', 'a')`,
    );
    const chunk = async (text: string) =>
      Number(
        (await adminQuery(`INSERT INTO ${schema}.chunks (item_id, ord, part, text, text_hash) VALUES ('news_1', 0, 'body', $1, 'h') RETURNING row_id`, [text]))
          .rows[0].row_id,
      );
    const [accented, plain, linked] = [await chunk('Une École à Zürich'), await chunk('The harbour pier'), await chunk('See https://github.com/x at 3.14')];
    await adminQuery(`INSERT INTO ${schema}.threads (id, room_id, title, created_at) VALUES ('thr_a', 'news_1', 'A', $1)`, [at]);
    const { rows } = await adminQuery(
      `INSERT INTO ${schema}.memory_chunks (thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, words_key, created_at, updated_at)
       VALUES ('thr_a', 'news_1', 'window', 'Ann: the pier\nCy: Crème brûlée at cafe.example', '[]', '["Ann"]', $1, $1, 'k', $1, $1) RETURNING id`,
      [at],
    );
    const memory = Number(rows[0].id);
    for (const [line, text] of ['Ann: the pier', 'Cy: Crème brûlée at cafe.example'].entries()) {
      await adminQuery(`INSERT INTO ${schema}.memory_lines (chunk_id, line, text, scope) VALUES ($1, $2, $3, 'thr_a')`, [memory, line, text]);
    }
    const store = await open();
    expect((await store.searchText('ecole zurich', 5)).map((h) => h.rowId)).toEqual([accented]);
    expect((await store.searchText('pier', 5)).map((h) => h.rowId)).toEqual([plain]);
    expect((await store.searchText('github 14', 5)).map((h) => h.rowId)).toEqual([linked]);
    expect((await store.searchMemoryLines('creme brulee', ['thr_a'], 5)).map((h) => h.line)).toEqual(['Cy: Crème brûlée at cafe.example']);
    expect((await store.searchMemoryLines('example', ['thr_a'], 5)).map((h) => h.line)).toEqual(['Cy: Crème brûlée at cafe.example']);
    expect((await store.searchMemoryLines('pier', ['thr_a'], 5)).map((h) => h.line)).toEqual(['Ann: the pier']);
    // A node still on the old version writes no index: its rows are found by their raw words.
    const late = await chunk('A late quay');
    expect((await store.searchText('quay', 5)).map((h) => h.rowId)).toEqual([late]);
  });
});
