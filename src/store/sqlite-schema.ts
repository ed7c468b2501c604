/**
 * SQLite migrations, applied in order; `PRAGMA user_version` records how many have run.
 * Never edit a released migration: add a new one.
 */
export const SQLITE_MIGRATIONS: string[] = [
  `
  CREATE TABLE items (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    url TEXT,
    description TEXT NOT NULL,
    body TEXT NOT NULL,
    comments TEXT NOT NULL,
    category TEXT,
    published_at TEXT,
    image TEXT,
    author TEXT,
    channel TEXT,
    thumbnail TEXT,
    site_name TEXT,
    source TEXT NOT NULL,
    hash TEXT NOT NULL,
    sort_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX items_sort ON items (sort_key DESC, id DESC);
  CREATE INDEX items_kind_sort ON items (kind, sort_key DESC, id DESC);
  CREATE INDEX items_category ON items (category);
  CREATE INDEX items_url ON items (url);

  CREATE TABLE chunks (
    row_id INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    part TEXT NOT NULL,
    comment_by TEXT,
    text TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    source_type TEXT NOT NULL DEFAULT 'document'
  );
  CREATE INDEX chunks_item ON chunks (item_id, ord);

  CREATE VIRTUAL TABLE chunks_fts USING fts5 (text, content='chunks', content_rowid='row_id', tokenize='porter unicode61');
  CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text) VALUES (new.row_id, new.text);
  END;
  CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.row_id, old.text);
  END;

  CREATE TABLE embeddings (
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dimensions INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
  ) WITHOUT ROWID;

  CREATE TABLE room_seq (
    room_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE threads (
    id TEXT PRIMARY KEY,
    room_id TEXT NOT NULL,
    title TEXT NOT NULL,
    main INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
  );
  CREATE UNIQUE INDEX threads_main ON threads (room_id) WHERE main = 1;
  CREATE INDEX threads_room ON threads (room_id, created_at);

  CREATE TABLE messages (
    room_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    author_id TEXT NOT NULL,
    author_name TEXT NOT NULL,
    author_kind TEXT NOT NULL,
    text TEXT NOT NULL,
    ts TEXT NOT NULL,
    client_id TEXT,
    reply_to TEXT,
    sources TEXT,
    PRIMARY KEY (room_id, seq)
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX messages_client ON messages (room_id, author_id, client_id) WHERE client_id IS NOT NULL;
  CREATE INDEX messages_thread ON messages (thread_id, seq);

  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );

  CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // 2: messages move to a rowid table. A WITHOUT ROWID table keeps whole rows in b-tree cells of
  // at most ~1 KB; an assistant answer with its sources (~2 KB) spilled to overflow pages, and
  // appending one took ~3x as long (0.22 against 0.07 ms); chat-sized messages cost the same.
  `
  CREATE TABLE messages_rowid (
    room_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    author_id TEXT NOT NULL,
    author_name TEXT NOT NULL,
    author_kind TEXT NOT NULL,
    text TEXT NOT NULL,
    ts TEXT NOT NULL,
    client_id TEXT,
    reply_to TEXT,
    sources TEXT,
    PRIMARY KEY (room_id, seq)
  );
  INSERT INTO messages_rowid (room_id, seq, id, thread_id, author_id, author_name, author_kind, text, ts, client_id, reply_to, sources)
    SELECT room_id, seq, id, thread_id, author_id, author_name, author_kind, text, ts, client_id, reply_to, sources FROM messages;
  DROP TABLE messages;
  ALTER TABLE messages_rowid RENAME TO messages;
  CREATE UNIQUE INDEX messages_client ON messages (room_id, author_id, client_id) WHERE client_id IS NOT NULL;
  CREATE INDEX messages_thread ON messages (thread_id, seq);
  `,
  // 3: the embedding cache holds document vectors only, oldest dropped first. Until now it also
  // held the vectors of questions (private asks among them), so what it held is dropped: a miss
  // only costs one more embedding of a document.
  `
  DELETE FROM embeddings;
  ALTER TABLE embeddings ADD COLUMN stored_at INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX embeddings_age ON embeddings (stored_at);
  `,
  // 4: conversation memory (src/memory/) and each thread's memory switch.
  `
  CREATE TABLE memory_chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    room_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    message_ids TEXT NOT NULL,
    authors TEXT NOT NULL,
    first_ts TEXT NOT NULL,
    last_ts TEXT NOT NULL,
    privileged INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    words_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX memory_thread_age ON memory_chunks (thread_id, updated_at);
  CREATE INDEX memory_words ON memory_chunks (words_key);
  CREATE INDEX memory_age ON memory_chunks (updated_at);
  -- One row per line of a chunk, rowid = chunk id × 16 + line (MEMORY_LINES_PER_CHUNK), so a chunk's
  -- lines are found and deleted by rowid range.
  CREATE VIRTUAL TABLE memory_lines USING fts5 (text, scope UNINDEXED, tokenize = 'porter unicode61');
  ALTER TABLE threads ADD COLUMN memory_enabled INTEGER NOT NULL DEFAULT 1;
  `,
  // 5: threads that start, merge, split and fuse (src/memory/threads/), their bridges and history;
  // memory chunks keep their vector (a fused chunk's vector is not the embedding of its text) and
  // their lineage.
  `
  ALTER TABLE threads ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
  ALTER TABLE threads ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
  ALTER TABLE threads ADD COLUMN summary TEXT NOT NULL DEFAULT '';
  ALTER TABLE threads ADD COLUMN weight REAL NOT NULL DEFAULT 1;
  ALTER TABLE threads ADD COLUMN parent_id TEXT;
  ALTER TABLE threads ADD COLUMN origin TEXT NOT NULL DEFAULT 'original';
  ALTER TABLE threads ADD COLUMN split_locked_until TEXT;
  ALTER TABLE threads ADD COLUMN merged_into TEXT;
  ALTER TABLE threads ADD COLUMN is_merged INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE threads ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX threads_parent ON threads (parent_id);
  CREATE TABLE thread_bridges (
    thread_id TEXT NOT NULL,
    other_id TEXT NOT NULL,
    weight REAL NOT NULL,
    PRIMARY KEY (thread_id, other_id)
  ) WITHOUT ROWID;
  CREATE INDEX thread_bridges_other ON thread_bridges (other_id);
  CREATE TABLE thread_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    details TEXT NOT NULL
  );
  CREATE INDEX thread_history_thread ON thread_history (thread_id, id);
  ALTER TABLE memory_chunks ADD COLUMN vector BLOB;
  ALTER TABLE memory_chunks ADD COLUMN vector_model TEXT;
  ALTER TABLE memory_chunks ADD COLUMN fusion TEXT;
  ALTER TABLE memory_chunks ADD COLUMN lineage TEXT;
  `,
  // 6: a thread whose exchanges with the assistant are remembered for their askers alone.
  `
  ALTER TABLE threads ADD COLUMN privileged INTEGER NOT NULL DEFAULT 0;
  `,
  // 7: the vector indexes' change log (src/sync), for nodes sharing one store.
  `
  CREATE TABLE index_changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    target TEXT NOT NULL,
    ids TEXT NOT NULL
  );
  `,
  // 8: sources that refresh (src/content/refresh), their poll lease and the entries stored from them.
  `
  CREATE TABLE sources (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    url TEXT,
    list TEXT,
    max_entries INTEGER NOT NULL,
    every_minutes INTEGER NOT NULL,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    next_due_at TEXT NOT NULL,
    state TEXT NOT NULL,
    lease_owner TEXT,
    lease_until TEXT,
    lease_job TEXT
  );
  CREATE TABLE source_entries (
    source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    hash TEXT NOT NULL,
    item_id TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (source_id, key)
  ) WITHOUT ROWID;
  `,
  // 9: a memory chunk that copies another unchanged (a fused thread's unchanged chunks: same text,
  // same vector) refers to that row (copy_of) instead of storing its 8 KB vector and its lines
  // again; line searches find its original's lines for it (SqliteStore.searchMemoryLines). Deleting
  // a row that others copy first makes the lowest of them the original, with the vector and lines
  // (the lines under its own scope), so a reference never dangles and never chains.
  // memory_staging lists the threads whose memory is being written in slices before the change
  // that creates them commits (sqlite-staging.ts): their rows are invisible to every reader.
  `
  ALTER TABLE memory_chunks ADD COLUMN copy_of INTEGER;
  CREATE INDEX memory_copy_of ON memory_chunks (copy_of, id) WHERE copy_of IS NOT NULL;
  CREATE INDEX memory_copies ON memory_chunks (thread_id) WHERE copy_of IS NOT NULL;
  ${copyHeirTrigger([])}
  CREATE TABLE memory_staging (
    thread_id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // 10: copies leave the words index to their originals (they have the same words): a fusion's
  // 14,000 copies inserted into it at random places cost about half of their rows' writing time.
  // The repeat lookup (SqliteStore.repeatOf) finds a copy through its original's entry
  // (memory_copy_of). When an original goes, the copy that takes its place (copy_of set to NULL)
  // enters the index.
  `
  DROP INDEX memory_words;
  CREATE INDEX memory_words ON memory_chunks (words_key) WHERE copy_of IS NULL;
  `,
  // 11: when each change-log entry was logged (ms since the epoch), so old entries can be pruned
  // (src/sync/index-sync.ts); entries logged before this have none and go at the first prune.
  `
  ALTER TABLE index_changes ADD COLUMN logged_at INTEGER;
  CREATE INDEX index_changes_logged_at ON index_changes (logged_at);
  `,
  // 12: a copy stores its text, messages, authors and words key empty and reads its original's
  // (SqliteStore's COPY_TEXT), as it reads its vector: a fusion's 14,000 copies were ~1.6 KB rows
  // of text they repeat. The heir of a deleted original (migration 9) takes them with the vector.
  // Copies written before this keep their own, which are the same.
  `
  DROP TRIGGER memory_copy_heir;
  ${copyHeirTrigger(['text', 'message_ids', 'authors', 'words_key'])}
  `,
  // 13: a fused chunk whose text is two stored chunks' texts marked [A] and [B] may refer to the
  // rows whose lines are those (lines_a, lines_b: rows with lines of their own) instead of writing
  // its ~16 lines again: a fusion's 3,000 pairs were ~48,000 full-text lines, a quarter of its
  // store time. Line searches find those rows' lines for it (SqliteStore.searchMemoryLines); its
  // copies take its references with its vector. Both are set, or neither. When a row referred to
  // goes, the chunks referring to it are given lines of their own (SqliteStore.ownLinesAfter).
  `
  ALTER TABLE memory_chunks ADD COLUMN lines_a INTEGER;
  ALTER TABLE memory_chunks ADD COLUMN lines_b INTEGER;
  CREATE INDEX memory_lines_a ON memory_chunks (lines_a) WHERE lines_a IS NOT NULL;
  CREATE INDEX memory_lines_b ON memory_chunks (lines_b) WHERE lines_b IS NOT NULL;
  CREATE INDEX memory_line_refs ON memory_chunks (thread_id) WHERE lines_a IS NOT NULL;
  `,
  // 14: a deleted original's heir takes its references too: the fused pairs that referred to the
  // original's lines refer to the heir's (which are those lines), instead of writing their own.
  `
  DROP TRIGGER memory_copy_heir;
  ${copyHeirTrigger(['text', 'message_ids', 'authors', 'words_key'], true)}
  `,
  // 15: a row's 8 KB vector moves to its end. SQLite keeps the first ~1.7 KB of such a row on its
  // b-tree page and the rest on overflow pages, which it can only walk in order: every column added
  // after the vector (its model, fusion, lineage, copy_of, lines_a, lines_b) cost two or three
  // page reads to reach, ~6 µs a row, in every read that joins through copy_of or looks at a
  // fused pair's references (a fusion reads 20,000 rows). The vector is read last, when asked for.
  // A column added later lands after the vector again: move the vector the same way.
  `
  DROP TRIGGER memory_copy_heir;
  ALTER TABLE memory_chunks RENAME COLUMN vector TO vector_before_15;
  ALTER TABLE memory_chunks ADD COLUMN vector BLOB;
  UPDATE memory_chunks SET vector = vector_before_15 WHERE vector_before_15 IS NOT NULL;
  ALTER TABLE memory_chunks DROP COLUMN vector_before_15;
  ${copyHeirTrigger(['text', 'message_ids', 'authors', 'words_key'], true)}
  `,
  // 16: an append takes the room's next seq from its messages, and room_seq keeps only the highest
  // seq deleted: a commit wrote the counter's page for every message (one of its ~7 WAL pages).
  // Every room's row already holds its last seq given, so what is there stays right.
  `
  CREATE TRIGGER messages_seq_mark AFTER DELETE ON messages
  WHEN OLD.seq > coalesce((SELECT seq FROM room_seq WHERE room_id = OLD.room_id), 0)
  BEGIN
    INSERT INTO room_seq (room_id, seq) VALUES (OLD.room_id, OLD.seq)
      ON CONFLICT (room_id) DO UPDATE SET seq = excluded.seq;
  END;
  `,
  // 17: the embedding cache keeps the vectors of document chunks' texts only. Until d4c95a4,
  // conversation memory embedded its public windows through it, and each window's text hash and
  // vector stayed there after the chunk was deleted (its thread, retention, a compaction): a vector
  // says much of its text, a hash confirms a guess of it. Every row whose hash is no chunk's goes;
  // a text that comes back is embedded again.
  `
  DELETE FROM embeddings WHERE text_hash NOT IN (SELECT text_hash FROM chunks);
  `,
  // 18: an item's comments and body move to the end of its row, the body last, as memory vectors
  // did (15). An article's body and comments are tens of KB, kept on overflow pages that SQLite
  // walks in order, and every read of a column after them walked them: each chunk's item head (its
  // category, time and source) as an ask reads its candidates, the body for a page of item summaries
  // (which counts the comments). `bench:store-reads` (16 KB bodies, 40 comments): 30 chunks with
  // their items' heads 0.59–0.72 → 0.21–0.23 ms at the median. Columns are renamed, added and
  // dropped rather than the table rebuilt: dropping `items` would delete every chunk through their
  // foreign key. The UPDATE and each DROP COLUMN rewrite the table (3.7 s for 5,000 such items,
  // 200 MB), which needs free disk of about three times the table while it runs and leaves the
  // file that much larger (free pages, reused; VACUUM returns them). A column added later lands
  // after them: move them again.
  `
  ALTER TABLE items RENAME COLUMN body TO body_before_18;
  ALTER TABLE items RENAME COLUMN comments TO comments_before_18;
  ALTER TABLE items ADD COLUMN comments TEXT NOT NULL DEFAULT '[]';
  ALTER TABLE items ADD COLUMN body TEXT NOT NULL DEFAULT '';
  UPDATE items SET body = body_before_18, comments = comments_before_18;
  ALTER TABLE items DROP COLUMN body_before_18;
  ALTER TABLE items DROP COLUMN comments_before_18;
  `,
  // 19: a job's status and runner are columns, as in PostgreSQL (its migration 6), so the start-up
  // sweep reads them instead of every row's JSON.
  `
  ALTER TABLE jobs ADD COLUMN status TEXT;
  ALTER TABLE jobs ADD COLUMN runner TEXT;
  UPDATE jobs SET status = json_extract(data, '$.status'), runner = coalesce(json_extract(data, '$.runner'), 'server') WHERE json_valid(data);
  CREATE INDEX jobs_unfinished ON jobs (runner) WHERE status IN ('queued', 'running');
  `,
  // 20: the node running a server job and when it last showed life (ms since the epoch), as in
  // PostgreSQL (its migration 7).
  `
  ALTER TABLE jobs ADD COLUMN node TEXT;
  ALTER TABLE jobs ADD COLUMN alive_at INTEGER;
  `,
  // 21: items_url goes, as in PostgreSQL (its migration 8): no query reads items by url, and every
  // item's write kept it.
  `
  DROP INDEX items_url;
  `,
  // 22: an update without a publication time had made its time the item's sort key, moving the
  // item to the top of every list; each such item goes back to where its creation put it.
  `
  UPDATE items SET sort_key = coalesce(published_at, created_at) WHERE sort_key <> coalesce(published_at, created_at);
  `,
  // 23: when a poll last found each source entry listed, so entries the feed dropped long ago can
  // be deleted (Store.sweepSourceEntries), as in PostgreSQL (its migration 10).
  `
  ALTER TABLE source_entries ADD COLUMN seen_at TEXT;
  UPDATE source_entries SET seen_at = updated_at;
  `,
  // 24: the terms of every memory line deleted so far leave the full-text index. FTS5 only records
  // a deletion, keeping the line's terms in its segments until a merge happens to rewrite them,
  // readable by anyone with the file: forgotten private exchanges among them (docs/architecture.md;
  // private lines are now deleted with FTS5's secure-delete, SqliteStore.erasingLines). 'optimize'
  // merges all segments into one without them; the pages it frees are overwritten (secure_delete
  // is on before migrating).
  `
  INSERT INTO memory_lines (memory_lines) VALUES ('optimize');
  `,
  // 25: each asker's private chunks, found by owner in every thread (Store.scanPrivateMemory):
  // `/forget private` finds a fusion's copy of an exchange whose source thread is gone, which no
  // thread of the room leads to any more.
  `
  CREATE INDEX memory_private_owner ON memory_chunks (owner, id) WHERE privileged = 1;
  `,
  // 26: memory lines name no thread. The line search reads each matching line's chunk for its scope
  // (SqliteStore.searchMemoryLines), so moving a chunk to another thread (a merge, a split) writes
  // none of its lines: a private chunk's had to be deleted with FTS5's secure-delete and written
  // again, ~4 ms each, all in the merge's one transaction. New lines leave the scope column empty
  // (an FTS5 column cannot be dropped), the heir of a deleted original too; older lines keep theirs,
  // which nothing reads (rewriting them would update private lines, which FTS5's secure-delete
  // corrupted the index over: see SqliteStore.erasingLines).
  `
  DROP TRIGGER memory_copy_heir;
  ${copyHeirTrigger(['text', 'message_ids', 'authors', 'words_key'], true, false)}
  `,
  // 27: a private chunk's lineage from before lineages named rooms (a fusion's copy or pair) names
  // the rooms of its threads, when every one of them still stands: `/forget private` in such a
  // room then finds it after its thread is deleted (a lineage naming a thread already gone cannot
  // tell its room, and any forget of its asker takes it: MemoryService.forgetPrivate).
  `
  UPDATE memory_chunks SET lineage = json_set(lineage, '$.roomIds', json((
    SELECT json_group_array(DISTINCT t.room_id) FROM json_each(memory_chunks.lineage, '$.threadIds') j JOIN threads t ON t.id = j.value)))
  WHERE privileged = 1 AND coalesce(owner, '') <> '' AND lineage IS NOT NULL AND json_type(lineage, '$.roomIds') IS NULL
    AND json_array_length(lineage, '$.threadIds') > 0
    AND NOT EXISTS (SELECT 1 FROM json_each(memory_chunks.lineage, '$.threadIds') j WHERE j.value NOT IN (SELECT id FROM threads));
  `,
  // 28: FTS5 no longer merges the memory lines' segments inside the statements that write them
  // (64 pages a level at a time, tens of milliseconds in one statement on the event loop): the
  // store merges them in bounded slices of its own (sqlite-line-merges.ts). The setting is stored in
  // the table, so it holds for every connection; nothing is rewritten, and the index's segments
  // stay as they are until those slices merge them as automerge would have.
  `
  INSERT INTO memory_lines (memory_lines, rank) VALUES ('automerge', 0);
  `,
  // 29: each member's forget mark per room (Store.markPrivateForget): a private exchange asked
  // before their last `/forget private` there is refused as it is written, whichever node forgot.
  `
  CREATE TABLE private_forgets (
    owner TEXT NOT NULL,
    room_id TEXT NOT NULL,
    mark INTEGER NOT NULL,
    PRIMARY KEY (owner, room_id)
  ) WITHOUT ROWID;
  `,
  // 30: each private exchange's row keeps the forget mark it was filed under (memoryChunkValues),
  // so `/forget private` deletes only those filed before it moved the mark: one asked after it and
  // filed while its scan runs, on any node, is kept (Store.scanPrivateMemory's `filedSince`). Rows
  // from before have none (NULL), as a thread operation's rows have: any later forget takes them.
  // The column lands after the vector (migration 15) and stays there: only that scan reads it, of
  // one member's private rows, each beside its deletion's milliseconds; a NULL, every row's but a
  // private exchange's, is told by the row's header without walking to it.
  `
  ALTER TABLE memory_chunks ADD COLUMN forget_mark INTEGER;
  `,
  // 31: a page of one category's items (`category = ? COLLATE NOCASE`, newest first: listItems,
  // listItemSummaries) is read from an index of its own. items_category is in byte order, which a
  // case-insensitive comparison cannot use, so such a page walked the items newest first checking
  // each one's category: one of a category no item has (anyone may ask GET /api/v1/content for
  // one) read the whole table, 18 ms warm and 46 ms cold at 60,000 items. items_category stays,
  // for listCategories' GROUP BY.
  `
  CREATE INDEX items_category_sort ON items (category COLLATE NOCASE, sort_key DESC, id DESC);
  `,
  // 32: the messages of the live windows filed (ClaimedMessages): every node in a room windows the
  // messages it hears, and a window is filed by the first node to claim its messages. A claim is
  // kept a day (Store.pruneMemoryClaims), long past any open window.
  `
  CREATE TABLE memory_claims (
    message_id TEXT PRIMARY KEY,
    claimed_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX memory_claims_at ON memory_claims (claimed_at);
  `,
  // 33: seqs of a batch of messages written in several transactions (an import): no read of a
  // room's or a thread's messages sees a row in a range listed here until the batch's last
  // transaction deletes the range (sqlite-unsettled.ts). room_seq may now also hold the top of such
  // a range, taken before its rows are written, so live messages stored meanwhile follow the batch.
  `
  CREATE TABLE unsettled_seqs (
    id INTEGER PRIMARY KEY,
    room_id TEXT NOT NULL,
    from_seq INTEGER NOT NULL,
    to_seq INTEGER NOT NULL,
    started_at TEXT NOT NULL
  );
  CREATE INDEX unsettled_seqs_room ON unsettled_seqs (room_id, to_seq);
  `,
];

/**
 * The trigger that gives a deleted original's copies an heir (migrations 9, 12, 14, 15 and 26): the lowest
 * copy takes the original's lines (under its own scope, unless `scoped` is false), its vector and the `inherited` columns;
 * the other copies refer to the heir, so a reference never dangles and never chains; with
 * `lineRefs`, so do the fused pairs that referred to the original's lines (migration 13). Migration
 * 9's text is what it always was (`inherited` empty): a released migration never changes.
 */
function copyHeirTrigger(inherited: string[], lineRefs = false, scoped = true): string {
  const takes = inherited.length ? `,\n      ${inherited.map((c) => `${c} = OLD.${c}`).join(', ')}` : '';
  const heir = '(SELECT min(id) FROM memory_chunks WHERE copy_of = OLD.id)';
  // Migration 26 on: lines name no thread.
  const scope = scoped ? "CASE WHEN h.privileged = 1 AND coalesce(h.owner, '') <> '' THEN h.thread_id || char(0) || h.owner ELSE h.thread_id END" : "''";
  const refers = lineRefs
    ? `
    UPDATE memory_chunks SET lines_a = ${heir} WHERE lines_a = OLD.id;
    UPDATE memory_chunks SET lines_b = ${heir} WHERE lines_b = OLD.id;`
    : '';
  return `CREATE TRIGGER memory_copy_heir BEFORE DELETE ON memory_chunks
  WHEN OLD.copy_of IS NULL AND EXISTS (SELECT 1 FROM memory_chunks WHERE copy_of = OLD.id)
  BEGIN${refers}
    -- The line slots one by one (16 = MEMORY_LINES_PER_CHUNK): FTS5 answers a rowid range by scanning everything.
    INSERT INTO memory_lines (rowid, text, scope)
      SELECT h.id * 16 + (l.rowid - OLD.id * 16), l.text,
        ${scope}
      FROM memory_chunks h, memory_lines l
      WHERE h.id = (SELECT min(id) FROM memory_chunks WHERE copy_of = OLD.id)
        AND l.rowid IN (OLD.id * 16 + 0, OLD.id * 16 + 1, OLD.id * 16 + 2, OLD.id * 16 + 3, OLD.id * 16 + 4, OLD.id * 16 + 5, OLD.id * 16 + 6, OLD.id * 16 + 7,
          OLD.id * 16 + 8, OLD.id * 16 + 9, OLD.id * 16 + 10, OLD.id * 16 + 11, OLD.id * 16 + 12, OLD.id * 16 + 13, OLD.id * 16 + 14, OLD.id * 16 + 15);
    UPDATE memory_chunks SET copy_of = (SELECT min(id) FROM memory_chunks WHERE copy_of = OLD.id)
      WHERE copy_of = OLD.id AND id > (SELECT min(id) FROM memory_chunks WHERE copy_of = OLD.id);
    UPDATE memory_chunks SET vector = coalesce(vector, OLD.vector),
      vector_model = CASE WHEN vector IS NULL THEN OLD.vector_model ELSE vector_model END, copy_of = NULL${takes}
      WHERE copy_of = OLD.id;
  END;`;
}
