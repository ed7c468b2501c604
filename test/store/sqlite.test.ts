import { join } from 'node:path';
import { COMMON_TERM_LINES } from '../../src/store/memory-lines.js';
import { describe, expect, it, vi } from 'vitest';
import Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite-schema.js';
import { SqliteStore, TEXT_SEARCH_MAX_POSTINGS } from '../../src/store/sqlite.js';
import { DELETION_STARTED_AT, STAGE_MIN_CHUNKS, STAGE_MIN_MESSAGES, STAGE_SLICE, STAGE_SLICE_MS } from '../../src/store/sqlite-staging.js';
import type { NewMemoryChunk } from '../../src/memory/types.js';
import type { NewMemoryEntry, ThreadChange } from '../../src/store/types.js';
import { sha256 } from '../../src/store/hashing.js';
import { tempDir } from '../helpers.js';
import { item, storeContract } from './contract.js';
import { privateExchange } from './memory-chunk.js';
import { createThread } from './new-thread.js';

/** A memory window of one line, said by Ann on 1 Nov 2026 (message `m<n>`). */
function memoryWindow(threadId: string, text: string, n: number): NewMemoryChunk {
  return {
    threadId,
    roomId: 'news_1',
    kind: 'window',
    text: `Ann (1 Nov 2026, 10:00): ${text}`,
    messageIds: [`m${n}`],
    authors: ['Ann'],
    firstTs: '2026-11-01T10:00:00.000Z',
    lastTs: '2026-11-01T10:00:00.000Z',
    privileged: false,
    owner: null,
  };
}

/** Creates threads `ids`: a chunk is only stored in a thread that exists. */
async function newThreads(store: SqliteStore, ...ids: string[]): Promise<void> {
  await store.applyThreadChange({ at: '2026-11-01T10:00:00.000Z', expect: [], createThreads: ids.map((id) => ({ id, roomId: 'news_1', title: id })) });
}

storeContract(
  'sqlite (memory)',
  async () => new SqliteStore({ filename: ':memory:' }),
  async (s) => s.close(),
);

describe('SqliteStore on disk', () => {
  it('looks many client ids up in slices, giving the event loop turns between them, and answers in order', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    try {
      const thread = await store.ensureMainThread('news_1');
      const author = { id: 'imported_ann', name: 'Ann', kind: 'user' as const };
      for (const clientId of ['k3', 'k40']) await store.appendMessage({ roomId: 'news_1', threadId: thread.id, author, text: clientId, clientId });
      const keys = Array.from({ length: 50 }, (_, i) => ({ authorId: author.id, clientId: `k${i}` }));
      // Each lookup seems to take a millisecond: a slice (10 ms) holds about ten of them.
      let clock = 0;
      vi.spyOn(performance, 'now').mockImplementation(() => clock++);
      let turns = 0;
      const tick = () => {
        turns++;
        if (!done) setImmediate(tick);
      };
      let done = false;
      setImmediate(tick);
      const found = await store.storedClientIds('news_1', keys);
      done = true;
      expect(found).toEqual(keys.map((k) => k.clientId === 'k3' || k.clientId === 'k40'));
      expect(turns).toBeGreaterThanOrEqual(3);
    } finally {
      vi.restoreAllMocks();
      await store.close();
    }
  });

  it('uses WAL and NORMAL sync and survives a reopen', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'nested', 'salon.db');
      const a = new SqliteStore({ filename: file });
      expect(a.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(a.db.pragma('synchronous', { simple: true })).toBe(1);
      expect(a.db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
      await a.upsertItem(item('news_1'));
      await a.close();
      const b = new SqliteStore({ filename: file });
      expect(b.db.pragma('user_version', { simple: true })).toBeGreaterThan(0);
      expect((await b.getItem('news_1'))?.title).toBe('Title of news_1');
      await b.close();
    } finally {
      cleanup();
    }
  });

  it('leaves a term out of line searches once it is common, also when another connection made it so', async () => {
    const { dir, cleanup } = tempDir();
    const file = join(dir, 'salon.db');
    const a = new SqliteStore({ filename: file });
    const b = new SqliteStore({ filename: file });
    try {
      const line = (n: number, text: string) => memoryWindow('thr_1', `${text} ${n}`, n);
      await newThreads(a, 'thr_1');
      await a.addMemoryChunk(line(0, 'the harbour pier opens'), '2026-11-01T10:00:00.000Z');
      expect(await a.searchMemoryLines('harbour', ['thr_1'], 5)).toHaveLength(1);
      // Another connection (a CLI command beside the server) makes `harbour` common.
      b.db.transaction(() => {
        for (let n = 1; n <= COMMON_TERM_LINES; n++)
          b.db.prepare('INSERT INTO memory_lines (rowid, text, scope) VALUES (?, ?, ?)').run(1_000_000 + n, `harbour ${n}`, 'thr_other');
      })();
      expect(await a.searchMemoryLines('harbour', ['thr_1'], 5)).toEqual([]);
      // And this connection's own writes: `pier` is rare until it is on more than COMMON_TERM_LINES lines.
      expect(await a.searchMemoryLines('pier', ['thr_1'], 5)).toHaveLength(1);
      for (let n = 1; n < COMMON_TERM_LINES; n++) await a.addMemoryChunk(line(n, 'pier'), '2026-11-01T10:00:00.000Z');
      expect(await a.searchMemoryLines('pier', ['thr_1'], 5)).toHaveLength(5);
      await a.addMemoryChunk(line(COMMON_TERM_LINES, 'pier'), '2026-11-01T10:00:00.000Z');
      expect(await a.searchMemoryLines('pier', ['thr_1'], 5)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      cleanup();
    }
  });

  it('searches text by its rarer terms only, within a bound of chunks ranked, however long the query', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    try {
      // Every chunk says "battery"; a few also say rarer words.
      const per = 100;
      const items = Math.ceil((TEXT_SEARCH_MAX_POSTINGS + 1) / per);
      for (let i = 0; i < items; i++) {
        const chunks = Array.from({ length: per }, (_, j) => ({
          ord: j,
          part: 'body' as const,
          text: `battery report ${i}-${j}${j === 0 ? ` sodium cathode marker${i}` : ''}`,
        }));
        await store.putItems([{ item: item(`news_b${i}`), chunks }]);
      }
      // A term on more chunks than one search may rank is left out; alone, it finds nothing.
      expect(await store.searchText('battery', 10)).toEqual([]);
      const rare = await store.searchText('battery sodium', 10);
      expect(rare).toHaveLength(10);
      const rows = await store.getChunks(rare.map((h) => h.rowId));
      expect(rows.every((c) => c.text.includes('sodium'))).toBe(true);
      // A query of 250 distinct terms searches with its 32 longest.
      const many = [...Array.from({ length: 218 }, (_, i) => `z${i}`), ...Array.from({ length: 32 }, (_, i) => `marker${i}`)].join(' ');
      const found = await store.getChunks((await store.searchText(many, 50)).map((h) => h.rowId));
      expect(found.map((c) => /marker(\d+)/.exec(c.text)?.[1]).sort()).toEqual(Array.from({ length: 32 }, (_, i) => String(i)).sort());
    } finally {
      await store.close();
    }
  });

  it('moves the messages of a first-version database into a rowid table, keeping every message and its seq', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v1.db');
      const old = new Database(file);
      old.pragma('foreign_keys = ON');
      old.exec(SQLITE_MIGRATIONS[0]);
      old.pragma('user_version = 1');
      old
        .prepare(
          `INSERT INTO messages (room_id, seq, id, thread_id, author_id, author_name, author_kind, text, ts, client_id, reply_to, sources)
         VALUES ('news_1', ?, ?, 'thr_1', 'u1', 'Ann', 'user', ?, '2026-11-01T00:00:00.000Z', ?, NULL, ?)`,
        )
        .run(1, 'msg_a', 'first', 'c1', null);
      old
        .prepare(
          'INSERT INTO messages (room_id, seq, id, thread_id, author_id, author_name, author_kind, text, ts, client_id, reply_to, sources) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)',
        )
        .run(
          'news_1',
          2,
          'msg_b',
          'thr_1',
          'assistant',
          'Assistant',
          'assistant',
          'an answer',
          '2026-11-01T00:00:01.000Z',
          'ans_1',
          'msg_a',
          JSON.stringify([{ n: 1, title: 'T' }]),
        );
      old.exec(`INSERT INTO room_seq (room_id, seq) VALUES ('news_1', 2)`);
      old.close();

      const store = new SqliteStore({ filename: file });
      try {
        expect(store.db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
        const ddl = store.db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'`).pluck().get() as string;
        expect(ddl).not.toMatch(/WITHOUT ROWID/i);
        const indexes = store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' ORDER BY name`).pluck().all();
        expect(indexes).toEqual(expect.arrayContaining(['messages_client', 'messages_thread']));
        const kept = await store.messagesAfter('news_1', 0, 10);
        expect(kept.map((m) => [m.seq, m.id, m.text, m.clientId, m.replyTo])).toEqual([
          [1, 'msg_a', 'first', 'c1', undefined],
          [2, 'msg_b', 'an answer', 'ans_1', 'msg_a'],
        ]);
        expect(kept[1].sources).toEqual([{ n: 1, title: 'T' }]);
        // Threads came later (the first version had none): a message goes to one that exists.
        await store.applyThreadChange({
          at: '2026-11-02T10:00:00.000Z',
          expect: [],
          createThreads: [{ id: 'thr_1', roomId: 'news_1', title: 'T', origin: 'original' }],
        });
        const { message, duplicate } = await store.appendMessage({
          roomId: 'news_1',
          threadId: 'thr_1',
          author: { id: 'u1', name: 'Ann', kind: 'user' },
          text: 'third',
          clientId: 'c3',
        });
        expect([message.seq, duplicate]).toEqual([3, false]);
        expect(
          (await store.appendMessage({ roomId: 'news_1', threadId: 'thr_1', author: { id: 'u1', name: 'Ann', kind: 'user' }, text: 'first', clientId: 'c1' }))
            .duplicate,
        ).toBe(true);
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });

  it('refuses a file a newer Salon wrote, naming its version, and leaves it as it was', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'newer.db');
      await new SqliteStore({ filename: file }).close();
      const newer = SQLITE_MIGRATIONS.length + 1;
      const raw = new Database(file);
      raw.pragma(`user_version = ${newer}`);
      raw.close();
      expect(() => new SqliteStore({ filename: file })).toThrow(
        `written by a newer Salon (schema version ${newer}; this one knows up to ${SQLITE_MIGRATIONS.length})`,
      );
      const after = new Database(file);
      expect(after.pragma('user_version', { simple: true })).toBe(newer);
      after.close();
    } finally {
      cleanup();
    }
  });

  it('puts back the items an undated update had moved to the top (migration 22)', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v21.db');
      const old = new Database(file);
      SQLITE_MIGRATIONS.slice(0, 21).forEach((sql) => old.exec(sql));
      old.pragma('user_version = 21');
      const insert = old.prepare(
        `INSERT INTO items (id, kind, title, description, body, comments, published_at, source, hash, sort_key, created_at, updated_at)
         VALUES (?, 'news', 'T', '', 'Body.', '[]', ?, 'api', 'h', ?, ?, ?)`,
      );
      insert.run('news_moved', null, '2026-03-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z');
      insert.run('news_dated', '2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-02-05T00:00:00.000Z', '2026-02-05T00:00:00.000Z');
      old.close();
      const store = new SqliteStore({ filename: file });
      try {
        expect((await store.listItems({ limit: 10 })).items.map((i) => i.id)).toEqual(['news_dated', 'news_moved']);
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });

  it('dates when every source entry was last listed by its last update (migration 23), keeping every entry, and sweeps by it', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v22.db');
      const old = new Database(file);
      SQLITE_MIGRATIONS.slice(0, 22).forEach((sql) => old.exec(sql));
      old.pragma('user_version = 22');
      old
        .prepare(
          `INSERT INTO sources (id, kind, url, list, max_entries, every_minutes, origin, created_at, next_due_at, state)
           VALUES ('src_1', 'feed', 'https://feed.example/rss', NULL, 50, 60, 'api', '2026-01-01T00:00:00.000Z', '2026-06-01T00:00:00.000Z', '{}')`,
        )
        .run();
      const entry = old.prepare(`INSERT INTO source_entries (source_id, key, hash, item_id, updated_at) VALUES ('src_1', ?, ?, ?, ?)`);
      entry.run('guid-old', 'h-old', 'news_old', '2026-01-02T00:00:00.000Z');
      entry.run('guid-relisted', 'h-relisted', 'news_relisted', '2026-01-03T00:00:00.000Z');
      entry.run('guid-recent', 'h-recent', 'news_recent', '2026-05-20T00:00:00.000Z');
      old.close();
      const store = new SqliteStore({ filename: file });
      try {
        expect(store.db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
        expect(store.db.prepare('SELECT key, hash, item_id, updated_at, seen_at FROM source_entries ORDER BY key').all()).toEqual([
          { key: 'guid-old', hash: 'h-old', item_id: 'news_old', updated_at: '2026-01-02T00:00:00.000Z', seen_at: '2026-01-02T00:00:00.000Z' },
          { key: 'guid-recent', hash: 'h-recent', item_id: 'news_recent', updated_at: '2026-05-20T00:00:00.000Z', seen_at: '2026-05-20T00:00:00.000Z' },
          { key: 'guid-relisted', hash: 'h-relisted', item_id: 'news_relisted', updated_at: '2026-01-03T00:00:00.000Z', seen_at: '2026-01-03T00:00:00.000Z' },
        ]);
        // A poll on 1 June listing one old entry: the other old one, unlisted since January, goes; the recent one stays.
        expect(await store.sweepSourceEntries('src_1', ['guid-relisted'], '2026-06-01T00:00:00.000Z', '2026-05-02T00:00:00.000Z')).toBe(1);
        const left = await store.sourceEntryHashes('src_1', ['guid-old', 'guid-relisted', 'guid-recent']);
        expect(Object.fromEntries(left)).toEqual({ 'guid-relisted': 'h-relisted', 'guid-recent': 'h-recent' });
        expect(store.db.prepare("SELECT seen_at FROM source_entries WHERE key = 'guid-relisted'").pluck().get()).toBe('2026-06-01T00:00:00.000Z');
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });

  it('gives jobs written before migration 19 their status and runner, and a restart fails the unfinished server ones', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v18.db');
      const old = new Database(file);
      SQLITE_MIGRATIONS.slice(0, 18).forEach((sql) => old.exec(sql));
      old.pragma('user_version = 18');
      const job = (id: string, status: string, extra: object = {}) => ({
        id,
        request: { url: 'https://example.com/' },
        status,
        total: 1,
        done: 0,
        failed: 0,
        itemIds: [],
        failures: [{ ref: 'bad\u0000id \ud800', code: 'ERR_BAD_ITEM', message: 'no' }],
        createdAt: 'a',
        updatedAt: 'b',
        ...extra,
      });
      const insert = old.prepare("INSERT INTO jobs (id, data, updated_at) VALUES (?, ?, 'b')");
      for (const j of [job('j_legacy', 'queued'), job('j_cli', 'running', { runner: 'cli' }), job('j_done', 'done', { runner: 'server' })]) {
        insert.run(j.id, JSON.stringify(j));
      }
      old.close();
      const store = new SqliteStore({ filename: file });
      try {
        const failure = { ref: 'restart', code: 'ERR_JOB_CANCELLED', message: 'the server stopped' };
        expect(await store.failUnfinishedJobs('server', failure, '2030-01-01T00:00:00.000Z')).toEqual(['j_legacy']);
        expect(await store.getJob('j_legacy')).toMatchObject({ status: 'failed', failures: [{ ref: 'bad\uFFFDid \uFFFD' }, failure] });
        expect(await store.getJob('j_cli')).toMatchObject({ status: 'running' });
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });

  it('moves an item’s comments and body to the end of its row (migration 18), keeping every item, chunk and cascade', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v17.db');
      const old = new Database(file);
      SQLITE_MIGRATIONS.slice(0, 17).forEach((sql) => old.exec(sql));
      old.pragma('user_version = 17');
      const body = 'The harbour pier opens in May. '.repeat(600);
      const comments = JSON.stringify([{ by: 'ann', text: 'About time. '.repeat(300), time: 1764000000 }]);
      old
        .prepare(
          `INSERT INTO items (id, kind, title, url, description, body, comments, category, published_at, image, author, channel, thumbnail,
             site_name, source, hash, sort_key, created_at, updated_at)
           VALUES ('news_pier', 'news', 'The pier', 'https://example.com/pier', 'A pier.', ?, ?, 'Local', '2026-11-01T10:00:00.000Z', NULL, 'Ada',
             NULL, NULL, 'Example', 'rss', 'h1', '2026-11-01T10:00:00.000Z', '2026-11-01T10:00:00.000Z', '2026-11-01T10:00:00.000Z')`,
        )
        .run(body, comments);
      old.prepare(`INSERT INTO chunks (item_id, ord, part, text, text_hash) VALUES ('news_pier', 0, 'body', 'The harbour pier opens in May.', 'h')`).run();
      old.close();

      const store = new SqliteStore({ filename: file });
      try {
        expect(store.db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
        const columns = store.db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('items') as string[];
        expect(columns.slice(-2)).toEqual(['comments', 'body']);
        expect(columns.filter((c) => c.endsWith('_before_18'))).toEqual([]);
        expect(await store.getItem('news_pier')).toMatchObject({ title: 'The pier', body, comments: JSON.parse(comments), category: 'Local', source: 'rss' });
        const [chunk] = await store.chunksOfItem('news_pier');
        expect(chunk).toMatchObject({ itemId: 'news_pier', itemTitle: 'The pier', category: 'Local', text: 'The harbour pier opens in May.' });
        // The chunks' foreign key still names the item: deleting it deletes them.
        await store.deleteItem('news_pier');
        expect(await store.getChunks([chunk.rowId])).toEqual([]);
        // New items are written and read whole.
        await store.upsertItem(item('news_next', { body: 'Another body.' }));
        expect(await store.getItem('news_next')).toMatchObject({ body: 'Another body.', comments: [] });
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });

  it('drops the embedding cache’s vectors of texts no document chunk has (migration 17): those memory put there before d4c95a4', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v16.db');
      const document = 'The harbour pier opens in May.';
      const remembered = 'Ann (1 Nov 2026, 10:00): my new address is 4 Elm Street';
      const [kept, dropped] = [sha256(document), sha256(remembered)];
      const old = new Database(file);
      SQLITE_MIGRATIONS.slice(0, 16).forEach((sql) => old.exec(sql));
      old.pragma('user_version = 16');
      old.exec(
        `INSERT INTO items (id, kind, title, url, description, body, comments, category, published_at, image, author, channel, thumbnail,
           site_name, source, hash, sort_key, created_at, updated_at)
         VALUES ('news_1', 'news', 'The pier', NULL, 'A pier.', 'The harbour pier opens in May.', '[]', NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, 'rss', 'h1', '2026-11-01T10:00:00.000Z', '2026-11-01T10:00:00.000Z', '2026-11-01T10:00:00.000Z')`,
      );
      old.prepare(`INSERT INTO chunks (item_id, ord, part, text, text_hash) VALUES ('news_1', 0, 'body', ?, ?)`).run(document, kept);
      const vector = Buffer.from(new Float32Array([0.6, 0.8]).buffer);
      const cache = old.prepare(`INSERT INTO embeddings (model, text_hash, dimensions, vector, stored_at) VALUES ('m@2', ?, 2, ?, 1)`);
      for (const hash of [kept, dropped]) cache.run(hash, vector);
      old.close();

      const store = new SqliteStore({ filename: file });
      try {
        expect(store.db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
        expect([...(await store.getEmbeddings('m@2', [kept, dropped])).keys()]).toEqual([kept]);
        expect(await store.embeddingModels()).toEqual([{ model: 'm@2', dimensions: 2, count: 1 }]);
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });

  it('moves a memory chunk’s vector to the end of its row (migration 15), keeping every vector, copy and heir', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v14.db');
      const old = new Database(file);
      SQLITE_MIGRATIONS.slice(0, 14).forEach((sql) => old.exec(sql));
      old.pragma('user_version = 14');
      const insert = old.prepare(
        `INSERT INTO memory_chunks (id, thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, privileged, owner, words_key,
           created_at, updated_at, vector, vector_model, fusion, lineage, copy_of)
         VALUES (?, ?, 'news_1', 'window', ?, '["m1"]', '["Ann"]', '2026-11-01T10:00:00.000Z', '2026-11-01T10:00:00.000Z', 0, NULL, ?,
           '2026-11-01T10:00:00.000Z', '2026-11-01T10:00:00.000Z', ?, ?, NULL, NULL, ?)`,
      );
      const vector = Float32Array.from({ length: 2048 }, (_, i) => Math.sin(i) / 32);
      insert.run(1, 'thr_a', 'the harbour pier opens in May', 'k1', Buffer.from(vector.buffer), 'm@2048', null);
      insert.run(2, 'thr_b', '', '', null, null, 1);
      insert.run(3, 'thr_a', 'not embedded yet', 'k3', null, null, null);
      old.close();

      const store = new SqliteStore({ filename: file });
      try {
        expect(store.db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
        const columns = store.db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('memory_chunks') as string[];
        // Only migration 30's forget mark comes after it, which no read but a forget's scan reads.
        expect(columns.slice(columns.indexOf('vector') + 1)).toEqual(['forget_mark']);
        expect(columns).not.toContain('vector_before_15');
        const read = async () =>
          Object.fromEntries((await store.getMemoryChunks([1, 2, 3])).map((c) => [c.id, [c.vector && Array.from(c.vector), c.vectorModel]]));
        expect(await read()).toEqual({ 1: [Array.from(vector), 'm@2048'], 2: [Array.from(vector), 'm@2048'], 3: [null, null] });
        // The heir trigger came back with the move: the copy takes the original's vector and text.
        await store.applyThreadChange({ at: '2026-11-02T10:00:00.000Z', expect: [], deleteMemory: [1] });
        const [heir] = await store.getMemoryChunks([2]);
        expect([heir.text, heir.vectorModel, Array.from(heir.vector!)]).toEqual(['the harbour pier opens in May', 'm@2048', Array.from(vector)]);
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });

  it('requires a filename', () => {
    expect(() => new SqliteStore({ filename: '' })).toThrow(/filename/);
  });
});

describe('SqliteStore: a new thread’s large memory, written in slices (sqlite-staging.ts)', () => {
  const entry = (threadId: string, n: number): NewMemoryEntry => ({
    // Old enough for retention: staged rows must still survive it.
    chunk: memoryWindow(threadId, `staged line ${n}`, n),
    vector: Float32Array.from([1, 0, 0]),
    model: 'm@3',
    updatedAt: '2020-01-01T00:00:00.000Z',
  });
  const fusion = (source: { id: string; version: number }, threadId: string): ThreadChange => ({
    at: '2026-11-02T10:00:00.000Z',
    expect: [{ id: source.id, version: source.version }],
    createThreads: [{ id: threadId, roomId: 'news_1', title: 'Fused', origin: 'fused' }],
    updateThreads: [{ id: source.id }],
    addMemory: Array.from({ length: STAGE_MIN_CHUNKS + STAGE_SLICE }, (_, n) => entry(threadId, n)),
  });
  const rows = (store: SqliteStore, sql: string) => (store.db.prepare(sql).get() as { n: number }).n;

  it('applies the change whole, and no reader sees the staged rows before it commits', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const source = await createThread(store, { id: 'thr_src', roomId: 'news_1', title: 'Source' }, 'admin');
    const applying = store.applyThreadChange(fusion(source, 'thr_fused'));
    // The first slices are written; the thread is not there yet. A turn between slices is two immediates (sqlite-staging.ts).
    for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(rows(store, "SELECT count(*) AS n FROM memory_chunks WHERE thread_id = 'thr_fused'")).toBeGreaterThan(0);
    expect(await store.getThread('thr_fused')).toBeNull();
    expect(await store.scanMemoryChunks(0, 10_000)).toEqual([]);
    expect(await store.pruneMemory(null, 1, '2026-01-01T00:00:00.000Z')).toEqual([]);
    const { addedMemoryIds } = await applying;
    expect(addedMemoryIds).toHaveLength(STAGE_MIN_CHUNKS + STAGE_SLICE);
    expect(await store.getThread('thr_fused')).toMatchObject({ origin: 'fused' });
    expect(await store.countMemoryChunks('thr_fused')).toBe(addedMemoryIds.length);
    expect((await store.scanThreadMemory('thr_fused', 0, 3)).map((c) => c.id)).toEqual(addedMemoryIds.slice(0, 3));
    expect(await store.searchMemoryLines('staged', ['thr_fused'], 5)).toHaveLength(5);
    expect(rows(store, 'SELECT count(*) AS n FROM memory_staging')).toBe(0);
    await store.close();
  });

  it('ends a slice once its time is spent, whatever its count: a slow machine writes fewer chunks a slice', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const source = await createThread(store, { id: 'thr_src', roomId: 'news_1', title: 'Source' }, 'admin');
    // Every look at the clock finds half a slice's time gone.
    let clock = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (clock += STAGE_SLICE_MS / 2));
    let done = false;
    const applying = store.applyThreadChange(fusion(source, 'thr_fused')).finally(() => (done = true));
    const seen: number[] = [];
    while (!done) {
      seen.push(rows(store, "SELECT count(*) AS n FROM memory_chunks WHERE thread_id = 'thr_fused'"));
      await new Promise((resolve) => setImmediate(resolve));
    }
    vi.restoreAllMocks();
    expect((await applying).addedMemoryIds).toHaveLength(STAGE_MIN_CHUNKS + STAGE_SLICE);
    const slices = seen.map((n, i) => n - (seen[i - 1] ?? 0)).filter((added) => added > 0);
    expect(Math.max(...slices)).toBeLessThan(STAGE_SLICE);
    expect(await store.countMemoryChunks('thr_fused')).toBe(STAGE_MIN_CHUNKS + STAGE_SLICE);
    await store.close();
  });

  it('lets the event loop run between the staging entry and the first slice', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const source = await createThread(store, { id: 'thr_src', roomId: 'news_1', title: 'Source' }, 'admin');
    let seen: { staging: number; chunks: number } | undefined;
    // Queued before the call: it runs at the first turn the change gives the event loop.
    setImmediate(() => {
      seen = {
        staging: rows(store, 'SELECT count(*) AS n FROM memory_staging'),
        chunks: rows(store, "SELECT count(*) AS n FROM memory_chunks WHERE thread_id = 'thr_fused'"),
      };
    });
    await store.applyThreadChange(fusion(source, 'thr_fused'));
    expect(seen).toEqual({ staging: 1, chunks: 0 });
    await store.close();
  });

  it('lets a change being written in slices finish when the store closes meanwhile', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'staged.db');
      const store = new SqliteStore({ filename: file });
      const source = await createThread(store, { id: 'thr_src', roomId: 'news_1', title: 'Source' }, 'admin');
      const applying = store.applyThreadChange(fusion(source, 'thr_fused'));
      await new Promise((resolve) => setImmediate(resolve));
      await store.close();
      expect((await applying).addedMemoryIds).toHaveLength(STAGE_MIN_CHUNKS + STAGE_SLICE);
      const again = new SqliteStore({ filename: file });
      try {
        expect(await again.countMemoryChunks('thr_fused')).toBe(STAGE_MIN_CHUNKS + STAGE_SLICE);
        expect(rows(again, 'SELECT count(*) AS n FROM memory_staging')).toBe(0);
      } finally {
        await again.close();
      }
    } finally {
      cleanup();
    }
  });

  it('copies a chunk whose message ids and lineage hold characters JSON escapes (the check compares them as stored)', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const messageIds = ['m"1', 'back\\slash', 'é ✓ 🎉', '\u0001ctl', 'line\u2028sep', '</script>'];
    const original = entry('thr_src', 0);
    await newThreads(store, 'thr_src');
    const stored = await store.addMemoryChunk({ ...original.chunk, messageIds }, '2026-11-01T10:00:00.000Z', original);
    const lineage = { chunkIds: [stored.id], threadIds: ['thr_"src\\é'] };
    const { addedMemoryIds } = await store.applyThreadChange({
      at: '2026-11-02T10:00:00.000Z',
      expect: [],
      createThreads: [{ id: 'thr_copy', roomId: 'news_1', title: 'Copy' }],
      addMemory: [
        { ...original, chunk: { ...original.chunk, threadId: 'thr_copy', messageIds, fusion: 'kept', lineage }, copyOf: stored.id },
        { ...original, chunk: { ...original.chunk, threadId: 'thr_copy', messageIds }, copyOf: stored.id },
      ],
    });
    const copyOf = (id: number) => (store.db.prepare('SELECT copy_of AS copyOf FROM memory_chunks WHERE id = ?').get(id) as { copyOf: number | null }).copyOf;
    expect(addedMemoryIds.map(copyOf)).toEqual([stored.id, stored.id]);
    const [withLineage, without] = await store.getMemoryChunks(addedMemoryIds);
    expect(withLineage).toMatchObject({ messageIds, lineage, fusion: 'kept' });
    expect(without.messageIds).toEqual(messageIds);
    expect(without).not.toHaveProperty('lineage');
    await store.close();
  });

  it('writes copies and full chunks mixed across slices in the entries’ order, each copy only of a chunk that is still what it was', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const source = await createThread(store, { id: 'thr_src', roomId: 'news_1', title: 'Source' }, 'admin');
    const originals: number[] = [];
    for (let n = 0; n < 4; n++) originals.push((await store.addMemoryChunk(entry('thr_src', n).chunk, '2026-11-01T10:00:00.000Z', entry('thr_src', n))).id);
    const change = fusion(source, 'thr_fused');
    // Every third entry copies an original; one copies a chunk that is gone, one names other messages than its chunk's.
    const planned = change.addMemory!.map((e, n) => {
      if (n % 3) return e;
      const from = originals[n % 4];
      return { ...e, chunk: { ...entry('thr_fused', n % 4).chunk, fusion: 'kept' as const }, copyOf: from };
    });
    planned[3] = { ...planned[3], copyOf: 999_999 };
    planned[6] = { ...planned[6], chunk: { ...planned[6].chunk, messageIds: ['m_other'] } };
    const { addedMemoryIds } = await store.applyThreadChange({ ...change, addMemory: planned });
    expect(addedMemoryIds).toEqual([...addedMemoryIds].sort((x, y) => x - y));
    expect(new Set(addedMemoryIds).size).toBe(planned.length);
    const written = await store.scanThreadMemory('thr_fused', 0, planned.length, false);
    expect(written.map((c) => c.id)).toEqual(addedMemoryIds);
    expect(written.map((c) => [c.text, c.messageIds, c.fusion ?? null])).toEqual(
      planned.map((e) => [e.chunk.text, e.chunk.messageIds, e.chunk.fusion ?? null]),
    );
    const stored = (id: number) => store.db.prepare('SELECT copy_of AS copyOf, vector IS NOT NULL AS own FROM memory_chunks WHERE id = ?').get(id);
    expect(stored(addedMemoryIds[0])).toEqual({ copyOf: originals[0], own: 0 });
    expect(stored(addedMemoryIds[3])).toEqual({ copyOf: null, own: 1 });
    expect(stored(addedMemoryIds[6])).toEqual({ copyOf: null, own: 1 });
    expect(stored(addedMemoryIds[1])).toEqual({ copyOf: null, own: 1 });
    // Copies have no lines of their own: a line search finds their originals' lines for them.
    expect(rows(store, `SELECT count(*) AS n FROM memory_lines WHERE rowid >= ${addedMemoryIds[0] * 16} AND rowid < ${addedMemoryIds[0] * 16 + 16}`)).toBe(0);
    // Nor text, messages or authors (migration 12): they read their originals', and the heir of a deleted original takes them.
    const own = (id: number) =>
      store.db.prepare('SELECT text, message_ids AS messageIds, authors, words_key AS wordsKey FROM memory_chunks WHERE id = ?').get(id);
    expect(own(addedMemoryIds[0])).toEqual({ text: '', messageIds: '', authors: '', wordsKey: '' });
    const before = (await store.getMemoryChunkTexts([addedMemoryIds[0]]))[0];
    expect(before).toMatchObject({ text: entry('thr_src', 0).chunk.text, messageIds: entry('thr_src', 0).chunk.messageIds });
    await store.applyThreadChange({ at: '2026-11-02T10:00:00.000Z', expect: [], deleteMemory: [originals[0]] });
    expect(own(addedMemoryIds[0])).toMatchObject({ text: before.text, messageIds: JSON.stringify(before.messageIds) });
    expect((await store.getMemoryChunkTexts([addedMemoryIds[0]]))[0]).toEqual(before);
    // The heir is found on its own words: filed again, its chunk is that heir's repeat.
    expect(await store.fileMemoryChunk(entry('thr_fused', 0).chunk, '2026-11-02T10:00:00.000Z', undefined, [])).toEqual({
      repeat: expect.objectContaining({ id: addedMemoryIds[0] }),
    });
    // New chunks after the change take ids after the batch's.
    const next = await store.addMemoryChunk(entry('thr_src', 9).chunk, '2026-11-03T10:00:00.000Z');
    expect(next.id).toBeGreaterThan(addedMemoryIds[addedMemoryIds.length - 1]);
    await store.close();
  });

  it('writes nothing when a racing operation changed a source meanwhile: ERR_THREAD_CHANGED', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const source = await createThread(store, { id: 'thr_src', roomId: 'news_1', title: 'Source' }, 'admin');
    const applying = store.applyThreadChange(fusion(source, 'thr_lost'));
    await new Promise((resolve) => setImmediate(resolve));
    await store.applyThreadChange({ at: '2026-11-02T10:00:00.000Z', expect: [source], updateThreads: [{ id: source.id, title: 'Renamed' }] });
    await expect(applying).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
    expect(await store.getThread('thr_lost')).toBeNull();
    expect(rows(store, "SELECT count(*) AS n FROM memory_chunks WHERE thread_id = 'thr_lost'")).toBe(0);
    expect(rows(store, 'SELECT count(*) AS n FROM memory_lines')).toBe(0);
    expect(rows(store, 'SELECT count(*) AS n FROM memory_staging')).toBe(0);
    expect(await store.getThread(source.id)).toMatchObject({ title: 'Renamed', version: 1 });
    // An operation that has already lost stages nothing.
    await expect(store.applyThreadChange(fusion(source, 'thr_late'))).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
    expect(rows(store, 'SELECT count(*) AS n FROM memory_chunks')).toBe(0);
    await store.close();
  });

  /** A thread of STAGE_MIN_CHUNKS + STAGE_SLICE chunks, two of which another thread copies (as a fusion would). */
  const bigThreadCopied = async (store: SqliteStore) => {
    const source = await createThread(store, { id: 'thr_src', roomId: 'news_1', title: 'Source' }, 'admin');
    const { addedMemoryIds: big } = await store.applyThreadChange(fusion(source, 'thr_big'));
    const copied = [big[0], big[big.length - 1]];
    const { addedMemoryIds: copies } = await store.applyThreadChange({
      at: '2026-11-02T11:00:00.000Z',
      expect: [],
      createThreads: [{ id: 'thr_copy', roomId: 'news_1', title: 'Copy' }],
      addMemory: copied.map((id) => {
        const n = big.indexOf(id);
        // Recent, unlike the rows they copy: retention may take only what it can see.
        return { ...entry('thr_copy', n), updatedAt: '2026-11-02T11:00:00.000Z', copyOf: id };
      }),
    });
    return { big, copies };
  };

  /** What a process that died after deleteThread's first transaction leaves in `file`: the thread gone, its rows listed. */
  const diedMidDeletion = (file: string, threadId: string) => {
    const raw = new Database(file);
    raw.prepare('DELETE FROM threads WHERE id = ?').run(threadId);
    raw.prepare('INSERT INTO memory_staging (thread_id, started_at) VALUES (?, ?)').run(threadId, DELETION_STARTED_AT);
    raw.close();
  };

  /** Runs `fn` with the path of a database file in a fresh directory, removed after. */
  const withFile = async (fn: (file: string) => Promise<void>) => {
    const { dir, cleanup } = tempDir();
    try {
      await fn(join(dir, 'salon.db'));
    } finally {
      cleanup();
    }
  };

  it('deletes a thread with a large memory at once for readers, its rows after in slices, copies elsewhere keeping their lines', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { big, copies } = await bigThreadCopied(store);
    const texts = (await store.getMemoryChunkTexts(copies)).map((c) => c.text);
    // A clock on which each look at the time comes 1 ms after the last: slices end by time, not by count.
    let clock = 0;
    const now = vi.spyOn(performance, 'now').mockImplementation(() => (clock += 1));
    // The reply comes once the thread is gone for readers; its rows follow.
    expect(await store.deleteThread('thr_big')).toEqual({ messages: 0, memoryIds: big });
    const left = () => rows(store, "SELECT count(*) AS n FROM memory_chunks WHERE thread_id = 'thr_big'");
    expect(left()).toBe(big.length);
    // The first slice runs in the next turn (two immediates: sqlite-staging.ts), the others one turn after another.
    for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    now.mockRestore();
    expect(left()).toBeGreaterThan(0);
    expect(left()).toBeLessThan(big.length);
    expect(await store.getThread('thr_big')).toBeNull();
    expect((await store.scanMemoryChunks(0, 10_000)).map((c) => c.threadId)).toEqual(['thr_copy', 'thr_copy']);
    expect(await store.pruneMemory(null, 1, '2026-01-01T00:00:00.000Z')).toEqual([]);
    for (let turn = 0; turn < 400 && rows(store, 'SELECT count(*) AS n FROM memory_staging') > 0; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(rows(store, 'SELECT count(*) AS n FROM memory_staging')).toBe(0);
    expect(rows(store, 'SELECT count(*) AS n FROM memory_chunks')).toBe(copies.length);
    expect((await store.getMemoryChunkTexts(copies)).map((c) => c.text)).toEqual(texts);
    const found = await store.searchMemoryLines(`staged line ${big.length - 1}`, ['thr_copy'], 5);
    expect(found.map((h) => h.chunkId)).toContain(copies[1]);
    // Only the copies' lines are left (each an heir's), under their own scope.
    expect(rows(store, 'SELECT count(*) AS n FROM memory_lines')).toBe(copies.length);
    await store.close();
  });

  it('deletes a thread with many messages at once for its room’s history, the messages after in slices', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    for (const id of ['thr_talk', 'thr_keep']) await createThread(store, { id, roomId: 'news_1', title: id }, 'admin');
    const say = (threadId: string, n: number) =>
      store.appendMessage({ roomId: 'news_1', threadId, author: { id: 'u1', name: 'Ann', kind: 'user' }, text: `line ${n}`, clientId: `c${n}` });
    const kept: string[] = [];
    for (let n = 0; n < STAGE_MIN_MESSAGES; n++) {
      await say('thr_talk', n);
      if (n % 1_024 === 0) kept.push((await say('thr_keep', STAGE_MIN_MESSAGES + n)).message.id);
    }
    const talk = () => rows(store, "SELECT count(*) AS n FROM messages WHERE thread_id = 'thr_talk'");
    // A clock on which every statement seems to take a whole slice's time.
    let clock = 0;
    const now = vi.spyOn(performance, 'now').mockImplementation(() => (clock += 20));
    expect(await store.deleteThread('thr_talk')).toEqual({ messages: STAGE_MIN_MESSAGES, memoryIds: [] });
    // Gone for the room at once, in every read of its history; the rows go after, a slice a turn.
    expect(talk()).toBe(STAGE_MIN_MESSAGES);
    const ids = (list: { id: string }[]) => list.map((m) => m.id);
    expect(ids(await store.recentMessages('news_1', 50))).toEqual(kept);
    expect(ids(await store.messagesAfter('news_1', 0, 50))).toEqual(kept);
    expect(ids(await store.messagesBefore('news_1', 1_000_000, 50))).toEqual(kept);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    now.mockRestore();
    expect(talk()).toBeGreaterThan(0);
    expect(talk()).toBeLessThan(STAGE_MIN_MESSAGES);
    for (let turn = 0; turn < 100 && rows(store, 'SELECT count(*) AS n FROM memory_staging') > 0; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(rows(store, 'SELECT count(*) AS n FROM memory_staging')).toBe(0);
    expect(talk()).toBe(0);
    expect(ids(await store.recentMessages('news_1', 50))).toEqual(kept);
    // The room's newest seqs were the deleted thread's: none is given again.
    const last = STAGE_MIN_MESSAGES + kept.length;
    expect(await store.lastSeq('news_1')).toBe(last);
    expect((await say('thr_keep', 1_000_000)).message.seq).toBe(last + 1);
    await store.close();
  });

  it('goes on above a room’s counter from before migration 16, whose newest messages are gone', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const thread = await store.ensureMainThread('news_1');
    const say = (text: string) => store.appendMessage({ roomId: 'news_1', threadId: thread.id, author: { id: 'u1', name: 'Ann', kind: 'user' }, text });
    await say('one');
    await say('two');
    // Before migration 16 every append raised the counter, so a room whose messages 3–7 were deleted has 7 there.
    store.db.exec(`INSERT INTO room_seq (room_id, seq) VALUES ('news_1', 7) ON CONFLICT (room_id) DO UPDATE SET seq = 7`);
    expect(await store.lastSeq('news_1')).toBe(7);
    expect((await say('three')).message.seq).toBe(8);
    // Appends no longer write the counter: one page fewer in each commit.
    expect(rows(store, `SELECT seq AS n FROM room_seq WHERE room_id = 'news_1'`)).toBe(7);
    await store.close();
  });

  it('deletes, when it opens, the messages of a thread whose deletion a process stopped in the middle of', () =>
    withFile(async (file) => {
      const a = new SqliteStore({ filename: file });
      for (const id of ['thr_talk', 'thr_keep']) await createThread(a, { id, roomId: 'news_1', title: id }, 'admin');
      const author = { id: 'u1', name: 'Ann', kind: 'user' as const };
      for (let n = 0; n < 5; n++) await a.appendMessage({ roomId: 'news_1', threadId: 'thr_talk', author, text: `line ${n}` });
      const { message } = await a.appendMessage({ roomId: 'news_1', threadId: 'thr_keep', author, text: 'kept' });
      await a.close();
      diedMidDeletion(file, 'thr_talk');
      const b = new SqliteStore({ filename: file });
      // Hidden from readers at once, deleted in slices.
      expect((await b.recentMessages('news_1', 10)).map((m) => m.id)).toEqual([message.id]);
      await b.staleCleanup;
      expect(rows(b, 'SELECT count(*) AS n FROM messages')).toBe(1);
      await b.close();
    }));

  it('finishes a deletion before it closes, and refuses a chunk stored under the thread meanwhile', () =>
    withFile(async (file) => {
      const a = new SqliteStore({ filename: file });
      const { copies } = await bigThreadCopied(a);
      let clock = 0;
      const now = vi.spyOn(performance, 'now').mockImplementation(() => (clock += 1));
      await a.deleteThread('thr_big');
      now.mockRestore();
      // Work begun before the thread went (a window closing) would store a chunk under it.
      await expect(a.addMemoryChunk(entry('thr_big', 9_999).chunk, '2026-11-02T12:00:00.000Z')).rejects.toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
      await a.close();
      // Read as the file is (opening a store would finish a deletion left behind).
      const raw = new Database(file, { readonly: true });
      const count = (sql: string) => (raw.prepare(sql).get() as { n: number }).n;
      expect(count('SELECT count(*) AS n FROM memory_staging')).toBe(0);
      expect(count('SELECT count(*) AS n FROM memory_chunks')).toBe(copies.length);
      expect(count('SELECT count(*) AS n FROM memory_lines')).toBe(copies.length);
      raw.close();
    }));

  it('finishes, when it opens, a deletion that a process stopped in the middle of', () =>
    withFile(async (file) => {
      const a = new SqliteStore({ filename: file });
      const { copies } = await bigThreadCopied(a);
      await a.close();
      diedMidDeletion(file, 'thr_big');
      const b = new SqliteStore({ filename: file });
      await b.staleCleanup;
      expect(rows(b, 'SELECT count(*) AS n FROM memory_staging')).toBe(0);
      expect(rows(b, 'SELECT count(*) AS n FROM memory_chunks')).toBe(copies.length);
      expect((await b.searchMemoryLines('staged line 0', ['thr_copy'], 5)).map((h) => h.chunkId)).toContain(copies[0]);
      await b.close();
    }));

  it('deletes, after it opens, what a stopped deletion left in slices, so another process writes between them (it held the write lock for the whole thread)', () =>
    withFile(async (file) => {
      const a = new SqliteStore({ filename: file });
      const { copies } = await bigThreadCopied(a);
      const author = { id: 'u_ann', name: 'Ann', kind: 'user' as const };
      await a.appendMessages(Array.from({ length: 3 }, (_, i) => ({ roomId: 'news_1', threadId: 'thr_big', author, text: `old ${i}` })));
      await a.close();
      diedMidDeletion(file, 'thr_big');
      // A clock on which each look at the time comes 1 ms after the last: slices end by time, not by count.
      let clock = 0;
      const now = vi.spyOn(performance, 'now').mockImplementation(() => (clock += 1));
      const b = new SqliteStore({ filename: file });
      try {
        const left = () => rows(b, "SELECT count(*) AS n FROM memory_chunks WHERE thread_id = 'thr_big'");
        const before = left();
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setImmediate(resolve));
        // Between two slices the write lock is free: a writer that does not wait at all gets in.
        const other = new Database(file);
        other.pragma('busy_timeout = 0');
        other.prepare("INSERT INTO meta (key, value) VALUES ('between', 'slices')").run();
        other.close();
        expect(left()).toBeGreaterThan(0);
        expect(left()).toBeLessThan(before);
        await b.staleCleanup;
        now.mockRestore();
        expect(left()).toBe(0);
        expect(rows(b, "SELECT count(*) AS n FROM messages WHERE thread_id = 'thr_big'")).toBe(0);
        expect(rows(b, 'SELECT count(*) AS n FROM memory_staging')).toBe(0);
        expect(rows(b, 'SELECT count(*) AS n FROM memory_chunks')).toBe(copies.length);
      } finally {
        now.mockRestore();
        await b.close();
      }
    }));

  it('stops the clean-up begun at open when it closes, and the next open finishes it', () =>
    withFile(async (file) => {
      const a = new SqliteStore({ filename: file });
      const { copies } = await bigThreadCopied(a);
      await a.close();
      diedMidDeletion(file, 'thr_big');
      let clock = 0;
      const now = vi.spyOn(performance, 'now').mockImplementation(() => (clock += 1));
      const b = new SqliteStore({ filename: file });
      await new Promise((resolve) => setImmediate(resolve));
      await b.close();
      now.mockRestore();
      const raw = new Database(file, { readonly: true });
      expect((raw.prepare('SELECT count(*) AS n FROM memory_staging').get() as { n: number }).n).toBe(1);
      raw.close();
      const c = new SqliteStore({ filename: file });
      await c.staleCleanup;
      expect(rows(c, 'SELECT count(*) AS n FROM memory_chunks')).toBe(copies.length);
      expect(rows(c, 'SELECT count(*) AS n FROM memory_staging')).toBe(0);
      await c.close();
    }));

  it('deletes, when it opens, what a process that died while staging left', () =>
    withFile(async (file) => {
      const a = new SqliteStore({ filename: file });
      await newThreads(a, 'thr_kept', 'thr_dead');
      await a.addMemoryChunk({ ...entry('thr_kept', 1).chunk }, '2026-11-01T10:00:00.000Z');
      await a.addMemoryChunk({ ...entry('thr_dead', 2).chunk }, '2026-11-01T10:00:00.000Z');
      // A staged thread has no row yet: the change that creates it had not committed.
      a.db.prepare("DELETE FROM threads WHERE id = 'thr_dead'").run();
      a.db.prepare("INSERT INTO memory_staging (thread_id, started_at) VALUES ('thr_dead', '2020-01-01T00:00:00.000Z')").run();
      await a.close();
      const b = new SqliteStore({ filename: file });
      await b.staleCleanup;
      expect((await b.scanMemoryChunks(0, 10)).map((c) => c.threadId)).toEqual(['thr_kept']);
      expect(rows(b, 'SELECT count(*) AS n FROM memory_chunks')).toBe(1);
      expect(rows(b, 'SELECT count(*) AS n FROM memory_lines')).toBe(1);
      expect(rows(b, 'SELECT count(*) AS n FROM memory_staging')).toBe(0);
      await b.close();
    }));
});

describe('SqliteStore: a fused pair’s lines and vector are its sources’ (migration 13)', () => {
  const AT = '2026-11-02T10:00:00.000Z';
  const vector = Float32Array.from([0, 1, 0]);
  const harbourVector = Float32Array.from([0.6, 0.8, 0]);
  const ferryVector = Float32Array.from([0, 0.28, 0.96]);
  /** normalize(harbour + ferry), in float64: what a fusion plans for the pair, to float32's precision. */
  const pairVector = (() => {
    const sum = harbourVector.map((x, i) => x + ferryVector[i]);
    const norm = Math.hypot(...sum);
    return Array.from(sum, (x) => x / norm);
  })();
  const storesVector = (store: SqliteStore, id: number) =>
    (store.db.prepare("SELECT typeof(vector) <> 'null' AS own FROM memory_chunks WHERE id = ?").get(id) as { own: number }).own === 1;
  const readVector = async (store: SqliteStore, id: number) => {
    const [c] = await store.getMemoryChunks([id]);
    return { vector: Array.from(c.vector ?? []), model: c.vectorModel };
  };
  const expectPairVector = async (store: SqliteStore, id: number) => {
    const { vector: got, model } = await readVector(store, id);
    expect(model).toBe('m@3');
    expect(got).toHaveLength(3);
    got.forEach((x, i) => expect(x).toBeCloseTo(pairVector[i], 6));
  };
  const lineCount = (store: SqliteStore, id: number) =>
    (store.db.prepare(`SELECT count(*) AS n FROM memory_lines WHERE rowid >= ${id * 16} AND rowid < ${id * 16 + 16}`).get() as { n: number }).n;
  const refs = (store: SqliteStore, id: number) => store.db.prepare('SELECT lines_a AS a, lines_b AS b FROM memory_chunks WHERE id = ?').get(id);
  const hits = async (store: SqliteStore, query: string, threadId: string) => (await store.searchMemoryLines(query, [threadId], 5)).map((h) => h.chunkId);

  /** Harbour talk in thr_a, ferry talk in thr_b, a copy of the ferry chunk in thr_c, and thr_f fusing the harbour chunk with that copy. */
  const fusedPair = async (store: SqliteStore) => {
    const add = async (threadId: string, text: string, n: number, v: Float32Array) =>
      (await store.addMemoryChunk(memoryWindow(threadId, text, n), AT, { vector: v, model: 'm@3' })).id;
    for (const id of ['thr_a', 'thr_b']) await createThread(store, { id, roomId: 'news_1', title: id }, 'admin');
    const a = await add('thr_a', 'the harbour pier opens in May', 1, harbourVector);
    const b = await add('thr_b', 'the ferry timetable changes too', 2, ferryVector);
    const [copyOfB] = await create(store, 'thr_c', [
      { chunk: memoryWindow('thr_c', 'the ferry timetable changes too', 2), vector: ferryVector, model: 'm@3', copyOf: b },
    ]);
    const texts = await store.getMemoryChunkTexts([a, b]);
    const pair = { ...memoryWindow('thr_f', '', 1), text: `[A]: ${texts[0].text}\n[B]: ${texts[1].text}`, messageIds: ['m1', 'm2'], fusion: 'fused' as const };
    const planned = Float32Array.from(pairVector);
    const [fused] = await create(store, 'thr_f', [{ chunk: pair, vector: planned, model: 'm@3', linesOf: [a, copyOfB] }]);
    return { a, b, copyOfB, fused, pair };
  };
  const create = async (store: SqliteStore, threadId: string, addMemory: NewMemoryEntry[]) =>
    (await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: threadId, roomId: 'news_1', title: threadId }], addMemory })).addedMemoryIds;

  it('writes no lines for a fused pair, and finds it by either source’s words, in its own thread only, and so its copies', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { a, b, fused, pair } = await fusedPair(store);
    // A source that is a copy stands for its original, whose lines are the ones there are.
    expect(refs(store, fused)).toEqual({ a, b });
    expect(lineCount(store, fused)).toBe(0);
    expect(await hits(store, 'harbour', 'thr_f')).toEqual([fused]);
    expect(await hits(store, 'ferry', 'thr_f')).toEqual([fused]);
    expect(await hits(store, 'harbour', 'thr_a')).toEqual([a]);
    expect(await hits(store, 'harbour', 'thr_b')).toEqual([]);
    expect(await hits(store, 'harbour', 'thr_c')).toEqual([]);
    // The text read back is the pair's, whatever its lines are.
    expect((await store.getMemoryChunkTexts([fused]))[0].text).toBe(pair.text);
    // A copy of the pair (its thread fused again) takes its references.
    const [copy] = await create(store, 'thr_x', [{ chunk: { ...pair, threadId: 'thr_x' }, vector, model: 'm@3', copyOf: fused }]);
    expect(refs(store, copy)).toEqual({ a, b });
    expect(await hits(store, 'ferry', 'thr_x')).toEqual([copy]);
    // A pair whose source has no lines of its own, or is gone, writes its lines in full.
    const [again, orphan] = await create(store, 'thr_y', [
      { chunk: { ...pair, threadId: 'thr_y' }, vector, model: 'm@3', linesOf: [fused, a] },
      { chunk: { ...pair, threadId: 'thr_y' }, vector, model: 'm@3', linesOf: [999_999, a] },
    ]);
    for (const id of [again, orphan]) {
      expect(refs(store, id)).toEqual({ a: null, b: null });
      expect(lineCount(store, id)).toBe(2);
    }
    expect((await hits(store, 'harbour', 'thr_y')).sort()).toEqual([again, orphan].sort());
    await store.close();
  });

  it('writes a batch of copies, pairs and chunks in full under ids in the entries’ order, each with its lines or references', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { a, b, copyOfB, pair } = await fusedPair(store);
    const at = (threadId: string, text: string, n: number) => ({ ...memoryWindow(threadId, text, n), threadId: 'thr_m' });
    const ids = await create(store, 'thr_m', [
      { chunk: at('thr_a', 'the harbour pier opens in May', 1), vector: harbourVector, model: 'm@3', copyOf: a },
      { chunk: { ...pair, threadId: 'thr_m' }, vector, model: 'm@3', linesOf: [a, copyOfB] },
      { chunk: at('thr_m', 'the lighthouse is repainted', 3), vector, model: 'm@3' },
      // Planned from other messages than its original's: written in full, with its lines.
      { chunk: { ...at('thr_b', 'the ferry timetable changes too', 2), messageIds: ['m9'] }, vector: ferryVector, model: 'm@3', copyOf: b },
      { chunk: at('thr_c', 'the ferry timetable changes too', 2), vector: ferryVector, model: 'm@3', copyOf: copyOfB },
    ]);
    expect(ids.slice(1).map((id, i) => id - ids[i])).toEqual([1, 1, 1, 1]);
    const rows = store.db.prepare('SELECT id, copy_of AS copyOf, lines_a AS la, lines_b AS lb FROM memory_chunks WHERE thread_id = ? ORDER BY id').all('thr_m');
    expect(rows).toEqual([
      { id: ids[0], copyOf: a, la: null, lb: null },
      { id: ids[1], copyOf: null, la: a, lb: b },
      { id: ids[2], copyOf: null, la: null, lb: null },
      { id: ids[3], copyOf: null, la: null, lb: null },
      { id: ids[4], copyOf: b, la: null, lb: null },
    ]);
    expect(ids.map((id) => lineCount(store, id))).toEqual([0, 0, 1, 1, 0]);
    const read = await store.getMemoryChunkTexts(ids);
    expect(read.map((c) => [c.id, c.text, c.messageIds])).toEqual([
      [ids[0], 'Ann (1 Nov 2026, 10:00): the harbour pier opens in May', ['m1']],
      [ids[1], pair.text, ['m1', 'm2']],
      [ids[2], 'Ann (1 Nov 2026, 10:00): the lighthouse is repainted', ['m3']],
      [ids[3], 'Ann (1 Nov 2026, 10:00): the ferry timetable changes too', ['m9']],
      [ids[4], 'Ann (1 Nov 2026, 10:00): the ferry timetable changes too', ['m2']],
    ]);
    expect((await hits(store, 'harbour', 'thr_m')).sort()).toEqual([ids[0], ids[1]].sort());
    expect((await hits(store, 'ferry', 'thr_m')).sort()).toEqual([ids[1], ids[3], ids[4]].sort());
    expect(await hits(store, 'lighthouse', 'thr_m')).toEqual([ids[2]]);
    await expectPairVector(store, ids[1]);
    await store.close();
  });

  it('gives a fused pair and its copies lines of their own when a source goes, with each found once', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { a, b, fused, pair } = await fusedPair(store);
    const [copy] = await create(store, 'thr_x', [{ chunk: { ...pair, threadId: 'thr_x' }, vector, model: 'm@3', copyOf: fused }]);
    expect(await store.deleteThread('thr_a')).toEqual({ messages: 0, memoryIds: [a] });
    expect(refs(store, fused)).toEqual({ a: null, b: null });
    expect(refs(store, copy)).toEqual({ a: null, b: null });
    expect(lineCount(store, fused)).toBe(2);
    expect(lineCount(store, copy)).toBe(0);
    for (const [query, threadId, id] of [
      ['harbour', 'thr_f', fused],
      ['ferry', 'thr_f', fused],
      ['harbour', 'thr_x', copy],
      ['ferry', 'thr_x', copy],
    ] as const) {
      expect(await hits(store, query, threadId)).toEqual([id]);
    }
    // The pair deleted in turn: its copy is its heir, lines and all.
    await store.applyThreadChange({ at: AT, expect: [], deleteMemory: [fused] });
    expect(lineCount(store, copy)).toBe(2);
    expect(await hits(store, 'harbour', 'thr_x')).toEqual([copy]);
    expect(await hits(store, 'ferry', 'thr_b')).toEqual([b]);
    await store.close();
  });

  it('refers a fused pair to the heir of a source that had copies, and writes no lines for it', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { a, b, copyOfB, fused } = await fusedPair(store);
    await store.applyThreadChange({ at: AT, expect: [], deleteMemory: [b] });
    expect(refs(store, fused)).toEqual({ a, b: copyOfB });
    expect(lineCount(store, fused)).toBe(0);
    expect(await hits(store, 'ferry', 'thr_f')).toEqual([fused]);
    expect(await hits(store, 'ferry', 'thr_c')).toEqual([copyOfB]);
    await store.close();
  });

  it('keeps a thread fused with its own copy (both references one row) through retention and the copy’s deletion', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    for (const id of ['thr_a', 'thr_b']) await createThread(store, { id, roomId: 'news_1', title: id }, 'admin');
    const said = memoryWindow('thr_a', 'the harbour pier opens in May', 1);
    const a = (await store.addMemoryChunk(said, '2026-10-01T10:00:00.000Z', { vector, model: 'm@3' })).id;
    const [copy] = await store
      .applyThreadChange({ at: AT, expect: [], addMemory: [{ chunk: { ...said, threadId: 'thr_b' }, vector, model: 'm@3', copyOf: a, updatedAt: AT }] })
      .then((r) => r.addedMemoryIds);
    const pair = { ...said, threadId: 'thr_f', text: `[A]: ${said.text}\n[B]: ${said.text}`, fusion: 'fused' as const };
    const [fused] = await create(store, 'thr_f', [{ chunk: pair, vector, model: 'm@3', updatedAt: AT, linesOf: [a, copy] }]);
    expect(refs(store, fused)).toEqual({ a, b: a });
    expect(await hits(store, 'harbour', 'thr_f')).toEqual([fused]);
    // Retention takes the source; its copy is its heir, and the pair's lines are the heir's.
    expect(await store.pruneMemory(null, 1_000, '2026-10-15T00:00:00.000Z')).toEqual([a]);
    expect(refs(store, fused)).toEqual({ a: copy, b: copy });
    expect(lineCount(store, fused)).toBe(0);
    expect(await hits(store, 'harbour', 'thr_f')).toEqual([fused]);
    expect(await hits(store, 'harbour', 'thr_b')).toEqual([copy]);
    // The heir goes with its thread, and has no copies: the pair writes its own lines.
    await store.deleteThread('thr_b');
    expect(refs(store, fused)).toEqual({ a: null, b: null });
    expect(lineCount(store, fused)).toBe(2);
    expect(await hits(store, 'harbour', 'thr_f')).toEqual([fused]);
    await store.close();
  });

  it('gives a fused pair lines of its own when its source goes with a large thread, in slices', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const entries = Array.from({ length: STAGE_MIN_CHUNKS }, (_, n) => ({
      chunk: memoryWindow('thr_big', n === 7 ? 'the harbour pier opens in May' : `filler line ${n}`, n),
      vector,
      model: 'm@3',
    }));
    const big = await create(store, 'thr_big', entries);
    await newThreads(store, 'thr_b');
    const other = (await store.addMemoryChunk(memoryWindow('thr_b', 'the ferry timetable changes too', 9_999), AT, { vector, model: 'm@3' })).id;
    const pair = {
      ...memoryWindow('thr_f', '', 1),
      text: `[A]: ${entries[7].chunk.text}\n[B]: ${memoryWindow('thr_b', 'the ferry timetable changes too', 9_999).text}`,
    };
    const [fused] = await create(store, 'thr_f', [{ chunk: pair, vector, model: 'm@3', linesOf: [big[7], other] }]);
    expect(lineCount(store, fused)).toBe(0);
    await store.deleteThread('thr_big');
    const staged = () => (store.db.prepare('SELECT count(*) AS n FROM memory_staging').get() as { n: number }).n;
    for (let turn = 0; turn < 1_000 && staged() > 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(staged()).toBe(0);
    expect(refs(store, fused)).toEqual({ a: null, b: null });
    expect(lineCount(store, fused)).toBe(2);
    expect(await hits(store, 'harbour', 'thr_f')).toEqual([fused]);
    expect(await hits(store, 'ferry', 'thr_f')).toEqual([fused]);
    await store.close();
  });

  it('deletes a fused source in slices whose lines leave and arrive in rowid order (FTS5 writes a segment out each time a rowid goes down)', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const entries = Array.from({ length: STAGE_MIN_CHUNKS }, (_, n) => ({
      chunk: memoryWindow('thr_big', `filler line ${n} about the pier`, n),
      vector,
      model: 'm@3',
    }));
    const big = await create(store, 'thr_big', entries);
    await newThreads(store, 'thr_b');
    const other = (await store.addMemoryChunk(memoryWindow('thr_b', 'the ferry timetable changes too', 9_999), AT, { vector, model: 'm@3' })).id;
    // Every fourth chunk of thr_big fused with the ferry chunk, in two fused threads: their lines are thr_big's.
    const fusedOf = (threadId: string) =>
      create(
        store,
        threadId,
        big
          .filter((_, i) => i % 4 === 0)
          .map((id, k) => ({
            chunk: { ...memoryWindow(threadId, '', k), text: `[A]: ${entries[k * 4].chunk.text}\n[B]: ferry` },
            vector,
            model: 'm@3',
            linesOf: [id, other],
          })),
      );
    const pairs = [...(await fusedOf('thr_f')), ...(await fusedOf('thr_g'))];
    const run = vi.spyOn(Object.getPrototypeOf(store.db.prepare('SELECT 1')), 'run');
    await store.deleteThread('thr_big');
    const staged = () => (store.db.prepare('SELECT count(*) AS n FROM memory_staging').get() as { n: number }).n;
    for (let turn = 0; turn < 1_000 && staged() > 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(staged()).toBe(0);
    // Within each transaction, the rowids of the lines deleted and written never go down.
    let last = -1;
    let descents = 0;
    let written = 0;
    run.mock.calls.forEach((args, i) => {
      const source = (run.mock.contexts[i] as { source: string }).source;
      if (/^(BEGIN|COMMIT)/.test(source)) last = -1;
      else if (/^(DELETE FROM|INSERT INTO) memory_lines \(?rowid/i.test(source) || /^DELETE FROM memory_lines WHERE rowid/.test(source)) {
        const rowid = args[0] as number;
        if (rowid <= last) descents++;
        last = rowid;
        if (source.startsWith('INSERT')) written++;
      }
    });
    run.mockRestore();
    expect(written).toBeGreaterThan(0);
    expect(descents).toBe(0);
    // And the pairs have lines of their own, found by their words.
    for (const id of pairs) expect(refs(store, id)).toEqual({ a: null, b: null });
    expect(lineCount(store, pairs[0])).toBe(2);
    expect(await hits(store, 'ferry', 'thr_g')).toHaveLength(5);
    await store.close();
  });

  it('stores no vector for a fused pair, and reads normalize(a + b) for it and its copies, by id, by thread and in a scan', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { fused, pair } = await fusedPair(store);
    expect(storesVector(store, fused)).toBe(false);
    await expectPairVector(store, fused);
    const [copy] = await create(store, 'thr_x', [
      { chunk: { ...pair, threadId: 'thr_x' }, vector: Float32Array.from(pairVector), model: 'm@3', copyOf: fused },
    ]);
    await expectPairVector(store, copy);
    const [inThread] = await store.scanThreadMemory('thr_x', 0, 10);
    expect(Array.from(inThread.vector!)).toEqual((await readVector(store, copy)).vector);
    const scanned = (await store.scanMemoryChunks(0, 100)).find((c) => c.id === fused)!;
    expect(Array.from(scanned.vector!)).toEqual((await readVector(store, fused)).vector);
    // Read without vectors, it derives none.
    expect((await store.scanThreadMemory('thr_f', 0, 10, false))[0].vector).toBeNull();
    await store.close();
  });

  it('stores a fused pair’s vector when its sources’ are not its sources’ rows’ own, or of another model', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { a, b, copyOfB, pair } = await fusedPair(store);
    const unowned = (await store.addMemoryChunk(memoryWindow('thr_a', 'a window not embedded yet', 3), AT)).id;
    const planned = Float32Array.from(pairVector);
    const [otherModel, notEmbedded] = await create(store, 'thr_y', [
      { chunk: { ...pair, threadId: 'thr_y' }, vector: planned, model: 'm@4', linesOf: [a, b] },
      { chunk: { ...pair, threadId: 'thr_y' }, vector: planned, model: 'm@3', linesOf: [a, unowned] },
    ]);
    // A copy given a vector of its own since: the pair was planned from that one, not its original's.
    await store.setMemoryVector(copyOfB, Float32Array.from([0, 0, 1]), 'm@3');
    const [ownedCopy] = await create(store, 'thr_z', [{ chunk: { ...pair, threadId: 'thr_z' }, vector: planned, model: 'm@3', linesOf: [a, copyOfB] }]);
    for (const id of [otherModel, notEmbedded, ownedCopy]) {
      expect(storesVector(store, id)).toBe(true);
      expect(refs(store, id)).not.toEqual({ a: null, b: null });
    }
    expect((await readVector(store, otherModel)).model).toBe('m@4');
    await expectPairVector(store, ownedCopy);
    await store.close();
  });

  it('writes a fused pair’s vector out before a source goes or changes its own, so that it never changes', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { a, b, copyOfB, fused, pair } = await fusedPair(store);
    const [copy] = await create(store, 'thr_x', [
      { chunk: { ...pair, threadId: 'thr_x' }, vector: Float32Array.from(pairVector), model: 'm@3', copyOf: fused },
    ]);
    const before = (await readVector(store, fused)).vector;
    // A source with copies goes: its heir takes its lines, and the pair keeps the vector it had.
    await store.applyThreadChange({ at: AT, expect: [], deleteMemory: [b] });
    expect(storesVector(store, fused)).toBe(true);
    expect((await readVector(store, fused)).vector).toEqual(before);
    expect((await readVector(store, copy)).vector).toEqual(before);
    // A second pair over the heir, whose source is then given another vector.
    const [second] = await create(store, 'thr_y', [
      { chunk: { ...pair, threadId: 'thr_y' }, vector: Float32Array.from(pairVector), model: 'm@3', linesOf: [a, copyOfB] },
    ]);
    expect(storesVector(store, second)).toBe(false);
    const derived = (await readVector(store, second)).vector;
    await store.setMemoryVector(copyOfB, Float32Array.from([1, 0, 0]), 'm@5');
    expect(storesVector(store, second)).toBe(true);
    expect(await readVector(store, second)).toEqual({ vector: derived, model: 'm@3' });
    expect((await readVector(store, copyOfB)).model).toBe('m@5');
    await store.close();
  });

  it('writes a fused pair’s vector out when its source goes with its thread, at once or in slices', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { fused, pair } = await fusedPair(store);
    const before = (await readVector(store, fused)).vector;
    await store.deleteThread('thr_a');
    expect(storesVector(store, fused)).toBe(true);
    expect((await readVector(store, fused)).vector).toEqual(before);

    const entries = Array.from({ length: STAGE_MIN_CHUNKS }, (_, n) => ({
      chunk: memoryWindow('thr_big', n === 7 ? 'the harbour pier opens in May' : `filler line ${n}`, n),
      vector: harbourVector,
      model: 'm@3',
    }));
    const big = await create(store, 'thr_big', entries);
    const other = (await store.addMemoryChunk(memoryWindow('thr_b', 'the ferry timetable changes too', 9_999), AT, { vector: ferryVector, model: 'm@3' })).id;
    const [sliced] = await create(store, 'thr_g', [
      { chunk: { ...pair, threadId: 'thr_g' }, vector: Float32Array.from(pairVector), model: 'm@3', linesOf: [big[7], other] },
    ]);
    expect(storesVector(store, sliced)).toBe(false);
    await expectPairVector(store, sliced);
    await store.deleteThread('thr_big');
    const staged = () => (store.db.prepare('SELECT count(*) AS n FROM memory_staging').get() as { n: number }).n;
    for (let turn = 0; turn < 1_000 && staged() > 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(staged()).toBe(0);
    expect(storesVector(store, sliced)).toBe(true);
    await expectPairVector(store, sliced);
    await store.close();
  });

  it('lets the copy that inherits a fused pair derive its vector as the pair did', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const { a, b, fused, pair } = await fusedPair(store);
    const [copy] = await create(store, 'thr_x', [
      { chunk: { ...pair, threadId: 'thr_x' }, vector: Float32Array.from(pairVector), model: 'm@3', copyOf: fused },
    ]);
    await store.applyThreadChange({ at: AT, expect: [], deleteMemory: [fused] });
    expect(refs(store, copy)).toEqual({ a, b });
    expect(storesVector(store, copy)).toBe(false);
    await expectPairVector(store, copy);
    await store.close();
  });
});

describe('SqliteStore: a chunk that moves keeps its full-text lines as they are (migration 26)', () => {
  const AT = '2026-11-02T10:00:00.000Z';
  const harbourVector = Float32Array.from([0.6, 0.8, 0]);
  /** Every row of the full-text index's own tables: what a transaction that touches none of its lines leaves as it was. */
  function fullText(store: SqliteStore): string {
    const rows = (table: string) => store.db.prepare(`SELECT * FROM ${table} ORDER BY 1`).all();
    return JSON.stringify(['memory_lines_data', 'memory_lines_idx', 'memory_lines_content', 'memory_lines_docsize', 'memory_lines_config'].map(rows), (_, v) =>
      Buffer.isBuffer(v) ? v.toString('hex') : v,
    );
  }
  const secret = (threadId: string, owner: string, text: string, n: number): NewMemoryChunk => ({
    ...memoryWindow(threadId, text, n),
    kind: 'exchange',
    text: `Q: ${text}?\nA: ${'It is in the east hall, second row. '.repeat(140)}${text}.`,
    messageIds: [],
    privileged: true,
    owner,
  });

  it('merges a thread holding private exchanges without writing a line: the full-text index is the same after its transaction', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    try {
      await newThreads(store, 'thr_a', 'thr_b');
      const kept = await store.addMemoryChunk(memoryWindow('thr_a', 'the harbour pier opens in May', 1), AT);
      const moved = await store.addMemoryChunk(memoryWindow('thr_b', 'the harbour ferry leaves at noon', 2), AT);
      const ann = await Promise.all([0, 1, 2].map((i) => store.addMemoryChunk(secret('thr_b', 'u_ann', `harbour locker ${i} code`, 3 + i), AT)));
      const bo = await store.addMemoryChunk(secret('thr_b', 'u_bo', 'harbour bike code', 9), AT);
      // A copy of one in a third thread (its lines are its original's).
      await newThreads(store, 'thr_c');
      await store.applyThreadChange({
        at: AT,
        expect: [],
        addMemory: [{ chunk: secret('thr_c', 'u_ann', 'harbour locker 0 code', 3), vector: harbourVector, model: 'm@3', copyOf: ann[0].id }],
      });
      const before = fullText(store);

      await store.applyThreadChange({
        at: AT,
        expect: [],
        updateThreads: [{ id: 'thr_a' }, { id: 'thr_b', status: 'archived', mergedInto: 'thr_a' }],
        moveMemory: [{ ids: [moved.id, ann[0].id, ann[1].id], threadId: 'thr_a', roomId: 'news_1' }],
        moveThreadMemory: [{ fromThreadId: 'thr_b', threadId: 'thr_a', roomId: 'news_1' }],
      });
      expect(fullText(store)).toBe(before);
      // Lines name no thread.
      expect(store.db.prepare("SELECT count(*) FROM memory_lines WHERE scope <> ''").pluck().get()).toBe(0);

      // Each line is found where its chunk is now, by whoever may see it there only.
      const found = async (scopes: string[]) => (await store.searchMemoryLines('harbour', scopes, 20)).map((h) => h.chunkId).sort((x, y) => x - y);
      const ids = (...chunks: { id: number }[]) => chunks.map((c) => c.id).sort((x, y) => x - y);
      expect(await found(['thr_a'])).toEqual(ids(kept, moved));
      expect(await found(['thr_a', 'thr_a\u0000u_ann'])).toEqual(ids(kept, moved, ...ann));
      expect(await found(['thr_a\u0000u_bo'])).toEqual(ids(bo));
      expect(await found(['thr_b', 'thr_b\u0000u_ann', 'thr_b\u0000u_bo'])).toEqual([]);
      expect(await found(['thr_c\u0000u_ann'])).toHaveLength(1);
      expect(await found(['thr_c'])).toEqual([]);
      // Forgotten where it went, its lines go with it, and the index stays whole.
      await store.applyThreadChange({ at: AT, expect: [], deleteMemory: ids(...ann) });
      expect(await found(['thr_a', 'thr_a\u0000u_ann', 'thr_c\u0000u_ann'])).toEqual(
        ids(kept, moved, { id: (await store.scanThreadMemory('thr_c', 0, 5))[0].id }),
      );
      store.db.exec("INSERT INTO memory_lines (memory_lines) VALUES ('integrity-check')");
    } finally {
      await store.close();
    }
  });

  it('finds the lines written before it by their chunks, whatever scope they were written under', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v25.db');
      const old = new Database(file);
      SQLITE_MIGRATIONS.slice(0, 25).forEach((sql) => old.exec(sql));
      old.pragma('user_version = 25');
      old.exec(`INSERT INTO threads (id, room_id, title, created_at) VALUES ('thr_a', 'news_1', 'A', '${AT}'), ('thr_b', 'news_1', 'B', '${AT}')`);
      const insert = old.prepare(
        `INSERT INTO memory_chunks (id, thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, privileged, owner, words_key, created_at, updated_at)
         VALUES (?, 'thr_b', 'news_1', 'exchange', ?, '[]', '["Ann"]', '${AT}', '${AT}', ?, ?, ?, '${AT}', '${AT}')`,
      );
      insert.run(1, 'Q: where is the harbour pier?', 0, null, 'k1');
      insert.run(2, 'Q: my harbour locker code?', 1, 'u_ann', 'k2');
      old.prepare('INSERT INTO memory_lines (rowid, text, scope) VALUES (?, ?, ?)').run(16, 'Q: where is the harbour pier?', 'thr_b');
      old.prepare('INSERT INTO memory_lines (rowid, text, scope) VALUES (?, ?, ?)').run(32, 'Q: my harbour locker code?', 'thr_b\u0000u_ann');
      old.close();

      const store = new SqliteStore({ filename: file });
      try {
        await store.applyThreadChange({ at: AT, expect: [], moveThreadMemory: [{ fromThreadId: 'thr_b', threadId: 'thr_a', roomId: 'news_1' }] });
        const found = async (scopes: string[]) => (await store.searchMemoryLines('harbour', scopes, 5)).map((h) => h.chunkId).sort();
        expect(await found(['thr_a'])).toEqual([1]);
        expect(await found(['thr_a', 'thr_a\u0000u_ann'])).toEqual([1, 2]);
        expect(await found(['thr_b', 'thr_b\u0000u_ann'])).toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });
});

describe('SqliteStore: a private chunk’s lineage from before lineages named rooms (migration 27)', () => {
  const AT = '2026-11-02T10:00:00.000Z';
  it('names the rooms of its threads when every one stands, and is left as it was when one is gone', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v26.db');
      const old = new Database(file);
      SQLITE_MIGRATIONS.slice(0, 26).forEach((sql) => old.exec(sql));
      old.pragma('user_version = 26');
      old.exec(
        `INSERT INTO threads (id, room_id, title, created_at) VALUES ('thr_f', 'news_1', 'F', '${AT}'), ('thr_a', 'post_2', 'A', '${AT}'), ('thr_b', 'news_1', 'B', '${AT}')`,
      );
      const insert = old.prepare(
        `INSERT INTO memory_chunks (id, thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, privileged, owner, words_key, created_at, updated_at, fusion, lineage)
         VALUES (?, 'thr_f', 'news_1', 'exchange', ?, '[]', '["Ann"]', '${AT}', '${AT}', ?, ?, ?, '${AT}', '${AT}', 'fused', ?)`,
      );
      const lineage = (threadIds: string[], more = {}) => JSON.stringify({ chunkIds: [7, 8], threadIds, ...more });
      insert.run(1, 'Q: my locker code?', 1, 'u_ann', 'k1', lineage(['thr_a', 'thr_b']));
      insert.run(2, 'Q: my bike lock code?', 1, 'u_ann', 'k2', lineage(['thr_a', 'thr_gone']));
      insert.run(3, 'Q: where is the pier?', 0, null, 'k3', lineage(['thr_a']));
      insert.run(4, 'Q: my door code?', 1, 'u_ann', 'k4', lineage(['thr_a'], { roomIds: ['elsewhere'] }));
      old.close();

      const store = new SqliteStore({ filename: file });
      try {
        const lineages = (await store.getMemoryChunks([1, 2, 3, 4])).map((c) => c.lineage);
        expect(lineages[0]).toEqual({ chunkIds: [7, 8], threadIds: ['thr_a', 'thr_b'], roomIds: expect.arrayContaining(['post_2', 'news_1']) });
        expect(lineages[0]!.roomIds).toHaveLength(2);
        // A thread gone: its room cannot be told (any forget of its asker takes it).
        expect(lineages[1]).toEqual({ chunkIds: [7, 8], threadIds: ['thr_a', 'thr_gone'] });
        // Public chunks are no one's to forget; lineages that name rooms already are left alone.
        expect(lineages[2]).toEqual({ chunkIds: [7, 8], threadIds: ['thr_a'] });
        expect(lineages[3]).toEqual({ chunkIds: [7, 8], threadIds: ['thr_a'], roomIds: ['elsewhere'] });
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });
});

describe('SqliteStore: a private exchange’s row keeps the forget mark it was filed under (migration 30)', () => {
  const AT = '2026-11-02T10:00:00.000Z';
  it('gives rows from before none, so a forget from any mark reads them, while one filed since under the room’s mark is left out', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'v29.db');
      const old = new Database(file);
      SQLITE_MIGRATIONS.slice(0, 29).forEach((sql) => old.exec(sql));
      old.pragma('user_version = 29');
      old.exec(`INSERT INTO threads (id, room_id, title, created_at) VALUES ('thr_a', 'news_1', 'A', '${AT}')`);
      // Ann forgot twice in the room, then asked again: her exchange was filed under mark 2.
      old.exec(`INSERT INTO private_forgets (owner, room_id, mark) VALUES ('u_ann', 'news_1', 2)`);
      old.exec(
        `INSERT INTO memory_chunks (id, thread_id, room_id, kind, text, message_ids, authors, first_ts, last_ts, privileged, owner, words_key, created_at, updated_at)
         VALUES (1, 'thr_a', 'news_1', 'exchange', 'Q: my locker code? A: 4417.', '[]', '["Ann"]', '${AT}', '${AT}', 1, 'u_ann', 'k1', '${AT}', '${AT}')`,
      );
      old.close();

      const store = new SqliteStore({ filename: file });
      try {
        expect(store.db.prepare('SELECT forget_mark FROM memory_chunks WHERE id = 1').pluck().get()).toBeNull();
        const since = await store.addMemoryChunk(privateExchange('Q: my bike lock code? A: 1234.', AT, 2), AT);
        const ids = async (mark: number) => (await store.scanPrivateMemory('u_ann', 0, 10, { roomId: 'news_1', mark })).map((c) => c.id);
        // The row from before keeps no mark: even the scan of the forget that moved her mark to 2
        // reads it (nothing tells it from one filed before that forget), and leaves out the
        // exchange filed under 2 since. Her next forget reads both.
        expect(await ids(2)).toEqual([1]);
        expect(await store.markPrivateForget('u_ann', 'news_1')).toBe(3);
        expect(await ids(3)).toEqual([1, since.id]);
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });
});

describe('SqliteStore: the repeat lookup is compiled once', () => {
  it('binds no value its plan depends on: a bound privilege, compared with a partial index’s condition, had SQLite compile it again at every call', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    try {
      // An index a lookup of private chunks can use only once it knows the privilege. Were the
      // privilege bound, the plan would follow the value, which SQLite gets by compiling the
      // statement again whenever it is bound (memory_private_owner's `privileged = 1` made every
      // lookup do so, ten times the cost of running it).
      store.db.exec('CREATE INDEX test_private_words ON memory_chunks (words_key, thread_id) WHERE privileged = 1');
      await newThreads(store, 'thr_a');
      const prepare = store.db.prepare.bind(store.db);
      const prepared: string[] = [];
      vi.spyOn(store.db, 'prepare').mockImplementation((sql: string) => {
        prepared.push(sql);
        return prepare(sql);
      });
      const chunk = memoryWindow('thr_a', 'the pier opens in June', 1);
      const at = '2026-11-01T10:00:00.000Z';
      // Filed twice in each scope: the second filing finds the first (the public lookup, then the private one).
      for (const c of [chunk, { ...chunk, privileged: true, owner: 'u_ann' }]) {
        expect(await store.fileMemoryChunk(c, at, undefined, [])).toHaveProperty('stored');
        expect(await store.fileMemoryChunk(c, at, undefined, [])).toHaveProperty('repeat');
      }
      vi.restoreAllMocks();
      const planWith = (sql: string, value: number) =>
        store.db
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => value))
          .map((r) => (r as { detail: string }).detail);
      for (const sql of prepared) expect(planWith(sql, 1)).toEqual(planWith(sql, 0));
      // Both lookups were among them, one for public chunks, one for private ones; each finds the
      // words through an index, and scans no table.
      const lookups = prepared.filter((sql) => sql.includes('words_key = ?'));
      expect(lookups).toHaveLength(2);
      for (const sql of lookups) {
        const plan = planWith(sql, 1);
        expect(plan.filter((step) => step.startsWith('SCAN'))).toEqual([]);
        expect(plan).toContainEqual(expect.stringMatching(/^SEARCH c USING (COVERING )?INDEX \w+ \(words_key=\?/));
      }
    } finally {
      await store.close();
    }
  });
});
