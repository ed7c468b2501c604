/**
 * PostgreSQL migrations, applied in order; `salon_migrations` records each one (src/store/postgres-db.ts).
 * Never edit a released migration: add a new one.
 *
 * The tables are SQLite's (src/store/sqlite-schema.ts) with these differences: flags stay 0/1
 * smallints and JSON stays text so both stores share their row mappers (rows.ts); text that is
 * sorted or compared by range is `COLLATE "C"`, the byte order SQLite uses, whatever the
 * database's locale; full-text search is a `tsvector` (english) of the text folded in JS
 * (migration 16: searchFolded) with a GIN index instead of FTS5 tables; memory lines are keyed by
 * (chunk_id, line), go with their chunk by foreign key, and keep their scope as bytes (a private
 * scope holds a NUL, which text cannot). A migration that must read rows in JS is a function given
 * the migrating transaction's connection.
 */
import { searchFolded } from './search-folding.js';
import { jobJson } from './rows.js';
import type { IngestJob } from './types.js';

/** What a migration written as a function may run its statements on (the migrating transaction). */
export interface MigrationSql {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, any>[] }>;
}

export type PostgresMigration = string | ((sql: MigrationSql) => Promise<void>);

export const POSTGRES_MIGRATIONS: PostgresMigration[] = [
  `
  CREATE TABLE items (
    id text COLLATE "C" PRIMARY KEY,
    kind text NOT NULL,
    title text NOT NULL,
    url text,
    description text NOT NULL,
    body text NOT NULL,
    comments text NOT NULL,
    category text COLLATE "C",
    published_at text,
    image text,
    author text,
    channel text,
    thumbnail text,
    site_name text,
    source text NOT NULL,
    hash text NOT NULL,
    sort_key text COLLATE "C" NOT NULL,
    created_at text NOT NULL,
    updated_at text NOT NULL
  );
  CREATE INDEX items_sort ON items (sort_key DESC, id DESC);
  CREATE INDEX items_kind_sort ON items (kind, sort_key DESC, id DESC);
  CREATE INDEX items_category ON items (lower(category));
  CREATE INDEX items_url ON items (url);

  CREATE TABLE chunks (
    row_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    item_id text COLLATE "C" NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    ord integer NOT NULL,
    part text NOT NULL,
    comment_by text,
    text text NOT NULL,
    text_hash text NOT NULL,
    source_type text NOT NULL DEFAULT 'document',
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
  );
  CREATE INDEX chunks_item ON chunks (item_id, ord);
  CREATE INDEX chunks_tsv ON chunks USING gin (tsv);

  CREATE TABLE embeddings (
    model text NOT NULL,
    text_hash text NOT NULL,
    dimensions integer NOT NULL,
    vector bytea NOT NULL,
    stored_at bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (model, text_hash)
  );
  CREATE INDEX embeddings_age ON embeddings (stored_at);

  CREATE TABLE room_seq (
    room_id text PRIMARY KEY,
    seq bigint NOT NULL
  );

  CREATE TABLE threads (
    id text COLLATE "C" PRIMARY KEY,
    room_id text NOT NULL,
    title text NOT NULL,
    main smallint NOT NULL DEFAULT 0,
    created_at text COLLATE "C" NOT NULL,
    memory_enabled smallint NOT NULL DEFAULT 1,
    privileged smallint NOT NULL DEFAULT 0,
    status text NOT NULL DEFAULT 'active',
    tags text NOT NULL DEFAULT '[]',
    summary text NOT NULL DEFAULT '',
    weight double precision NOT NULL DEFAULT 1,
    parent_id text,
    origin text NOT NULL DEFAULT 'original',
    split_locked_until text,
    merged_into text,
    is_merged smallint NOT NULL DEFAULT 0,
    version integer NOT NULL DEFAULT 0
  );
  CREATE UNIQUE INDEX threads_main ON threads (room_id) WHERE main = 1;
  CREATE INDEX threads_room ON threads (room_id, created_at);
  CREATE INDEX threads_parent ON threads (parent_id);

  CREATE TABLE thread_bridges (
    thread_id text NOT NULL,
    other_id text COLLATE "C" NOT NULL,
    weight double precision NOT NULL,
    PRIMARY KEY (thread_id, other_id)
  );
  CREATE INDEX thread_bridges_other ON thread_bridges (other_id);

  CREATE TABLE thread_history (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id text NOT NULL,
    at text NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    details text NOT NULL
  );
  CREATE INDEX thread_history_thread ON thread_history (thread_id, id);

  CREATE TABLE messages (
    room_id text NOT NULL,
    seq bigint NOT NULL,
    id text NOT NULL UNIQUE,
    thread_id text NOT NULL,
    author_id text NOT NULL,
    author_name text NOT NULL,
    author_kind text NOT NULL,
    text text NOT NULL,
    ts text NOT NULL,
    client_id text,
    reply_to text,
    sources text,
    PRIMARY KEY (room_id, seq)
  );
  CREATE UNIQUE INDEX messages_client ON messages (room_id, author_id, client_id) WHERE client_id IS NOT NULL;
  CREATE INDEX messages_thread ON messages (thread_id, seq);

  CREATE TABLE memory_chunks (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id text NOT NULL,
    room_id text NOT NULL,
    kind text NOT NULL,
    text text NOT NULL,
    message_ids text NOT NULL,
    authors text NOT NULL,
    first_ts text NOT NULL,
    last_ts text NOT NULL,
    privileged smallint NOT NULL DEFAULT 0,
    owner text,
    words_key text NOT NULL,
    created_at text NOT NULL,
    updated_at text COLLATE "C" NOT NULL,
    vector bytea,
    vector_model text,
    fusion text,
    lineage text
  );
  CREATE INDEX memory_thread_age ON memory_chunks (thread_id, updated_at);
  CREATE INDEX memory_words ON memory_chunks (words_key);
  CREATE INDEX memory_age ON memory_chunks (updated_at);

  CREATE TABLE memory_lines (
    chunk_id bigint NOT NULL REFERENCES memory_chunks (id) ON DELETE CASCADE,
    line smallint NOT NULL,
    text text NOT NULL,
    scope bytea NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    PRIMARY KEY (chunk_id, line)
  );
  CREATE INDEX memory_lines_tsv ON memory_lines USING gin (tsv);
  CREATE INDEX memory_lines_scope ON memory_lines (scope);

  CREATE TABLE jobs (
    id text PRIMARY KEY,
    data text NOT NULL,
    updated_at text NOT NULL
  );

  CREATE TABLE meta (
    key text PRIMARY KEY,
    value text NOT NULL
  );
  `,
  // 2: the vector indexes' change log (src/sync).
  `
  CREATE TABLE index_changes (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    target text NOT NULL,
    ids text NOT NULL
  );
  `,
  // 3: sources that refresh (src/content/refresh), their poll lease and the entries stored from them.
  `
  CREATE TABLE sources (
    id text PRIMARY KEY,
    kind text NOT NULL,
    url text,
    list text,
    max_entries integer NOT NULL,
    every_minutes integer NOT NULL,
    origin text NOT NULL,
    created_at text COLLATE "C" NOT NULL,
    next_due_at text COLLATE "C" NOT NULL,
    state text NOT NULL,
    lease_owner text,
    lease_until text COLLATE "C",
    lease_job text
  );
  CREATE TABLE source_entries (
    source_id text NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    key text NOT NULL,
    hash text NOT NULL,
    item_id text NOT NULL,
    updated_at text NOT NULL,
    PRIMARY KEY (source_id, key)
  );
  `,
  // 4: when each change-log entry was logged, so old entries can be pruned (src/sync/index-sync.ts).
  `
  ALTER TABLE index_changes ADD COLUMN logged_at timestamptz NOT NULL DEFAULT now();
  CREATE INDEX index_changes_logged_at ON index_changes (logged_at);
  `,
  // 5: the embedding cache keeps the vectors of document chunks' texts only: what conversation
  // memory put there before it stopped embedding through the cache goes (SQLite's migration 17).
  `
  DELETE FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.text_hash = e.text_hash);
  `,
  // 6: a job's status and runner are columns, which the start-up sweep reads instead of parsing
  // every row's JSON in SQL: `data::json ->> 'status'` de-escapes the whole document, and one job
  // whose failure quoted a NUL or half a surrogate pair (`\u0000`, `\ud800`) failed the query, and
  // so every start of the server. Filled here in JS, which reads those escapes, and each row's
  // JSON is written again without them (jobJson).
  jobColumns,
  // 7: the node running a server job and when it last showed life (a save or a touch), so a
  // starting node fails only the jobs of nodes that are gone. Jobs from before have neither, and
  // count as a gone node's.
  `
  ALTER TABLE jobs ADD COLUMN node text, ADD COLUMN alive_at timestamptz;
  `,
  // 8: a btree entry holds at most 2,704 bytes. A source's entry is keyed by the sha-256 of its key
  // (a feed's guid, up to 8,192 characters), the key itself kept beside it: one long guid failed
  // every poll of its feed. items_url goes: no query reads items by url, and a long url (a path of
  // CJK characters, nine bytes each once percent-encoded) could not be stored.
  `
  ALTER TABLE source_entries ADD COLUMN key_hash bytea;
  UPDATE source_entries SET key_hash = sha256(convert_to(key, 'UTF8'));
  ALTER TABLE source_entries ALTER COLUMN key_hash SET NOT NULL;
  ALTER TABLE source_entries DROP CONSTRAINT source_entries_pkey;
  ALTER TABLE source_entries ADD PRIMARY KEY (source_id, key_hash);
  DROP INDEX items_url;
  `,
  // 9: an update without a publication time had made its time the item's sort key, moving the
  // item to the top of every list; each such item goes back to where its creation put it.
  `
  UPDATE items SET sort_key = coalesce(published_at, created_at) WHERE sort_key <> coalesce(published_at, created_at);
  `,
  // 10: when a poll last found each source entry listed, so entries the feed dropped long ago can
  // be deleted (Store.sweepSourceEntries); the rows there were count as seen when last stored.
  `
  ALTER TABLE source_entries ADD COLUMN seen_at text COLLATE "C";
  UPDATE source_entries SET seen_at = updated_at;
  `,
  // 11: each asker's private chunks, found by owner in every thread (Store.scanPrivateMemory), as
  // in SQLite (its migration 25).
  `
  CREATE INDEX memory_private_owner ON memory_chunks (owner, id) WHERE privileged = 1;
  `,
  // 12: a private chunk's lineage from before lineages named rooms names the rooms of its threads
  // when every one still stands, as in SQLite (its migration 27).
  `
  UPDATE memory_chunks c SET lineage = jsonb_set(c.lineage::jsonb, '{roomIds}', (
    SELECT jsonb_agg(DISTINCT t.room_id) FROM jsonb_array_elements_text(c.lineage::jsonb -> 'threadIds') j (id) JOIN threads t ON t.id = j.id COLLATE "C"))::text
  WHERE c.privileged = 1 AND coalesce(c.owner, '') <> '' AND c.lineage IS NOT NULL AND NOT (c.lineage::jsonb ? 'roomIds')
    AND jsonb_array_length(c.lineage::jsonb -> 'threadIds') > 0
    AND NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements_text(c.lineage::jsonb -> 'threadIds') j (id) WHERE NOT EXISTS (SELECT 1 FROM threads t WHERE t.id = j.id COLLATE "C")
    );
  `,
  // 13: each member's forget mark per room (Store.markPrivateForget), as in SQLite (its migration 29).
  `
  CREATE TABLE private_forgets (
    owner text NOT NULL,
    room_id text NOT NULL,
    mark bigint NOT NULL,
    PRIMARY KEY (owner, room_id)
  );
  `,
  // 14: each private exchange's row keeps the forget mark it was filed under, as in SQLite (its
  // migration 30); rows from before have none (NULL): any later forget takes them.
  `
  ALTER TABLE memory_chunks ADD COLUMN forget_mark bigint;
  `,
  // 15: a page of one category (GET /api/v1/content?category=…, a topic's recent items) is read
  // from an index in its order, as in SQLite (its migration 31): items_category found the
  // category's rows and every page sorted all of them. The new index serves its lookups too.
  `
  CREATE INDEX items_category_sort ON items (lower(category), sort_key DESC, id DESC);
  DROP INDEX items_category;
  `,
  // 16: the full-text columns index text cut and folded in JS (searchFolded: words, lower case,
  // accents dropped), as SQLite's unicode61 tokenizer does it: generated from the raw text, they
  // kept accents, an address, URL or number whole ("ann@example.org", "3.14"), and under an
  // LC_CTYPE of C every non-ASCII capital ("Москве" was never found by "москве"). Rows
  // written without one (a node of an older version, during a rolling upgrade) get the raw text's,
  // as before.
  foldSearchText,
  // 17: the messages of the live windows filed, as in SQLite (its migration 32).
  `
  CREATE TABLE memory_claims (
    message_id text COLLATE "C" PRIMARY KEY,
    claimed_at text NOT NULL
  );
  CREATE INDEX memory_claims_at ON memory_claims (claimed_at);
  `,
  // 18: seqs of a batch of messages written in several transactions (an import), unread until its
  // last one deletes their range, as in SQLite (its migration 33; postgres-unsettled.ts).
  `
  CREATE TABLE unsettled_seqs (
    id bigserial PRIMARY KEY,
    room_id text NOT NULL,
    from_seq bigint NOT NULL,
    to_seq bigint NOT NULL,
    started_at text NOT NULL
  );
  CREATE INDEX unsettled_seqs_room ON unsettled_seqs (room_id, to_seq);
  `,
];

/**
 * Text searchFolded may index otherwise than PostgreSQL's parser did: a word character joined to
 * another by `.`, `@`, `/` or `:`, or a digit after a sign (an address, a URL, a path, a decimal, a
 * version, a time, a date's parts), or a character it folds where PostgreSQL's own lower-casing
 * may not: Latin letters past ASCII, combining accents, Greek, Cyrillic, Armenian and Georgian
 * capitals, Latin and Greek extended, fullwidth capitals. Only the rows holding one are indexed again.
 */
const FOLDABLE = `[[:alnum:]_][.@/:][[:alnum:]_]|[-+][0-9]|[${[
  [0xc0, 0x24f],
  [0x300, 0x52f],
  [0x531, 0x556],
  [0x10a0, 0x10c5],
  [0x1e00, 0x1fff],
  [0x2c00, 0x2c7f],
  [0xa640, 0xa69f],
  [0xa722, 0xa7ff],
  [0xff21, 0xff3a],
]
  .map(([from, to]) => `${String.fromCodePoint(from)}-${String.fromCodePoint(to)}`)
  .join('')}]`;

/** Rows indexed again per statement by migration 16. */
const REFOLD_BATCH = 500;

async function foldSearchText(sql: MigrationSql): Promise<void> {
  await sql.query(`
    ALTER TABLE chunks ALTER COLUMN tsv DROP EXPRESSION;
    ALTER TABLE memory_lines ALTER COLUMN tsv DROP EXPRESSION;
    CREATE FUNCTION salon_raw_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.tsv IS NULL THEN NEW.tsv := to_tsvector('english', NEW.text); END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER chunks_raw_tsv BEFORE INSERT ON chunks FOR EACH ROW EXECUTE FUNCTION salon_raw_tsv();
    CREATE TRIGGER memory_lines_raw_tsv BEFORE INSERT ON memory_lines FOR EACH ROW EXECUTE FUNCTION salon_raw_tsv();
  `);
  for (let after = 0; ;) {
    const { rows } = await sql.query(`SELECT row_id, text FROM chunks WHERE row_id > $1 AND text ~ $2 ORDER BY row_id LIMIT ${REFOLD_BATCH}`, [
      after,
      FOLDABLE,
    ]);
    if (!rows.length) break;
    await sql.query("UPDATE chunks SET tsv = to_tsvector('english', f.t) FROM unnest($1::bigint[], $2::text[]) AS f (id, t) WHERE chunks.row_id = f.id", [
      rows.map((r) => r.row_id),
      rows.map((r) => searchFolded(r.text as string)),
    ]);
    after = Number(rows[rows.length - 1].row_id);
  }
  for (let after = [0, -1]; ;) {
    const { rows } = await sql.query(
      `SELECT chunk_id, line, text FROM memory_lines WHERE (chunk_id, line) > ($1, $2) AND text ~ $3 ORDER BY chunk_id, line LIMIT ${REFOLD_BATCH}`,
      [...after, FOLDABLE],
    );
    if (!rows.length) break;
    await sql.query(
      `UPDATE memory_lines SET tsv = to_tsvector('english', f.t) FROM unnest($1::bigint[], $2::smallint[], $3::text[]) AS f (id, line, t)
        WHERE memory_lines.chunk_id = f.id AND memory_lines.line = f.line`,
      [rows.map((r) => r.chunk_id), rows.map((r) => r.line), rows.map((r) => searchFolded(r.text as string))],
    );
    const last = rows[rows.length - 1];
    after = [Number(last.chunk_id), Number(last.line)];
  }
}

async function jobColumns(sql: MigrationSql): Promise<void> {
  await sql.query('ALTER TABLE jobs ADD COLUMN status text, ADD COLUMN runner text');
  for (let after = ''; ;) {
    const { rows } = await sql.query('SELECT id, data FROM jobs WHERE id > $1 ORDER BY id LIMIT 1000', [after]);
    if (!rows.length) break;
    const jobs = rows.map((r) => JSON.parse(r.data as string) as IngestJob);
    await sql.query(
      `UPDATE jobs SET status = j.status, runner = j.runner, data = j.data
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS j (id, status, runner, data) WHERE jobs.id = j.id`,
      [rows.map((r) => r.id), jobs.map((j) => j.status), jobs.map((j) => j.runner ?? 'server'), jobs.map(jobJson)],
    );
    after = rows[rows.length - 1].id as string;
  }
  await sql.query("CREATE INDEX jobs_unfinished ON jobs (runner) WHERE status IN ('queued', 'running')");
}
