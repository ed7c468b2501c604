/**
 * The PostgreSQL store against a real PostgreSQL: the Store contract, each store in a schema of
 * its own; then what only a shared store must get right with several nodes on one schema:
 * migrations once, demo seeding once, gapless seqs, thread operations that cannot both land.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { defaultDemoDir, demoEntries, putDemoEntries, seedDemo } from '../../src/content/ingest/seed.js';
import { privateScope } from '../../src/memory/scopes.js';
import { openStore } from '../../src/parts.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres-schema.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { ensureMainThreadIn } from '../../src/store/postgres-threads.js';
import type { Store } from '../../src/store/types.js';
import { testApp } from '../helpers.js';
import { storeContract } from './contract.js';
import { POSTGRES_URL, adminQuery, describePostgres, dropSchema, freshSchema, schemaName, urlWithSchema } from './postgres-harness.js';
import { createThread } from './new-thread.js';

const schemas = new WeakMap<Store, string>();

describePostgres('PostgreSQL store', () => {
  storeContract(
    'postgres',
    async () => {
      const schema = schemaName();
      const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
      schemas.set(store, schema);
      return store;
    },
    async (store) => {
      await store.close();
      await dropSchema(schemas.get(store)!);
    },
  );

  describe('several nodes on one schema', () => {
    let schema: string;
    const opened: Store[] = [];
    const open = async () => {
      const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema, poolSize: 4 });
      opened.push(store);
      return store;
    };

    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      if (schema) await dropSchema(schema);
    });

    it('migrates a fresh schema once when several stores open it at the same time', async () => {
      schema = schemaName();
      const stores = await Promise.all([open(), open(), open()]);
      const { rows } = await adminQuery(`SELECT version FROM ${schema}.salon_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual(POSTGRES_MIGRATIONS.map((_, i) => i + 1));
      await stores[0].upsertItem({ ...demoItem('news_a') });
      expect(await stores[2].getItem('news_a')).not.toBeNull();
      // Reopening finds the work done and keeps the data.
      const again = await open();
      expect(await again.countItems()).toBe(1);
    });

    it('lets only one of two nodes seed the demo, creating each item once', async () => {
      schema = schemaName();
      const [a, b] = await Promise.all([open(), open()]);
      const results = await Promise.all([a, b].map((store) => seedDemo({ store, pipeline: pipelineFor(store), dir: defaultDemoDir() })));
      expect(results.filter((r) => r.seeded)).toHaveLength(1);
      const entries = (await demoEntries(defaultDemoDir())).filter((e) => !('error' in e));
      expect(await b.countItems()).toBe(entries.length);
      await expectOneSetOfChunks(a);
    });

    it('creates each item once even when two nodes write the same items at once', async () => {
      schema = schemaName();
      const [a, b] = await Promise.all([open(), open()]);
      const [ea, eb] = await Promise.all([demoEntries(defaultDemoDir()), demoEntries(defaultDemoDir())]);
      const [ra, rb] = await Promise.all([putDemoEntries(pipelineFor(a), ea), putDemoEntries(pipelineFor(b), eb)]);
      expect(ra.failures).toEqual(rb.failures);
      const n = ea.filter((e) => !('error' in e)).length;
      expect(ra.created + rb.created).toBe(n);
      expect(ra.created + ra.updated + ra.unchanged).toBe(n);
      expect(await a.countItems()).toBe(n);
      await expectOneSetOfChunks(b);
    });

    it('numbers a room’s messages without gaps or repeats when nodes append at once, resends included', async () => {
      schema = schemaName();
      const [a, b] = await Promise.all([open(), open()]);
      const thread = await a.ensureMainThread('news_1');
      expect(await b.ensureMainThread('news_1')).toEqual(thread);
      const say = (store: Store, i: number, clientId?: string) =>
        store.appendMessage({ roomId: 'news_1', threadId: thread.id, author: { id: 'u1', name: 'Ann', kind: 'user' }, text: `m${i}`, clientId });
      const results = await Promise.all([
        ...Array.from({ length: 30 }, (_, i) => say(i % 2 ? a : b, i)),
        ...Array.from({ length: 6 }, (_, i) => say(i % 2 ? a : b, 100 + i, 'resent')),
      ]);
      expect(results.filter((r) => r.duplicate)).toHaveLength(5);
      expect(new Set(results.filter((r) => r.duplicate).map((r) => r.message.id)).size).toBe(1);
      const seqs = (await a.messagesAfter('news_1', 0, 100)).map((m) => m.seq);
      expect(seqs).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
      expect(await b.lastSeq('news_1')).toBe(31);
    });

    it('writes two nodes’ overlapping batches of items given in opposite orders, without a deadlock, and answers each in its caller’s order', async () => {
      schema = schemaName();
      const [a, b] = await Promise.all([open(), open()]);
      const batch = (tag: string) =>
        Array.from({ length: 30 }, (_, i) => ({
          item: { ...demoItem(`news_i${i}`), body: `${tag} ${i}` },
          chunks: [{ ord: 0, part: 'body' as const, text: `${tag} ${i}` }],
        }));
      for (const tag of ['first', 'second', 'second']) {
        const items = batch(tag);
        const reversed = [...items].reverse();
        const [ra, rb] = await Promise.all([a.putItems(items), b.putItems(reversed)]);
        expect(ra.map((r) => r.id)).toEqual(items.map((e) => e.item.id));
        expect(rb.map((r) => r.id)).toEqual(reversed.map((e) => e.item.id));
      }
      await expectOneSetOfChunks(a);
    });

    it('creates a room’s main thread again when another node deletes it between ensureMainThread’s statements', async () => {
      schema = schemaName();
      const other = await open();
      const main = await other.ensureMainThread('news_1');
      const pool = new pg.Pool({ connectionString: urlWithSchema(schema), max: 2 });
      try {
        let deleted = false;
        const sql = {
          async query(text: string, values?: unknown[]) {
            const result = await pool.query(text, values);
            // The other node's deletion lands right after this node's insert found the main thread there.
            if (!deleted && text.trimStart().startsWith('INSERT INTO threads')) {
              deleted = true;
              await other.deleteThread(main.id);
            }
            return result;
          },
        };
        const again = await ensureMainThreadIn(sql, 'news_1', 'thr_again');
        expect(deleted).toBe(true);
        expect(again).toMatchObject({ id: 'thr_again', roomId: 'news_1' });
        expect((await other.ensureMainThread('news_1')).id).toBe('thr_again');
      } finally {
        await pool.end();
      }
    });

    it('lets only one of two thread operations that read the same version land', async () => {
      schema = schemaName();
      const [a, b] = await Promise.all([open(), open()]);
      const t = await createThread(a, { id: 'thr_t', roomId: 'news_1', title: 'T' }, 'admin');
      const change = (title: string) => ({ at: '2026-11-02T10:00:00.000Z', expect: [{ id: t.id, version: t.version }], updateThreads: [{ id: t.id, title }] });
      const outcomes = await Promise.allSettled([a.applyThreadChange(change('from a')), b.applyThreadChange(change('from b'))]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: { code: 'ERR_THREAD_CHANGED' } });
      expect(await b.getThread(t.id)).toMatchObject({ version: 1 });
    });
  });

  describe('text PostgreSQL cannot hold as it is', () => {
    let store: PostgresStore;
    let schema: string;
    afterEach(async () => {
      await store.close();
      await dropSchema(schema);
    });

    it('keeps a message with a NUL and searches private memory, whose scope holds one', async () => {
      schema = schemaName();
      store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
      const t = await store.ensureMainThread('news_1');
      const { message } = await store.appendMessage({ roomId: 'news_1', threadId: t.id, author: { id: 'u', name: 'U', kind: 'user' }, text: 'a\u0000b' });
      expect((await store.messagesAfter('news_1', 0, 1))[0]).toMatchObject({ id: message.id, text: 'a\uFFFDb' });
      const secret = await store.addMemoryChunk(
        {
          threadId: t.id,
          roomId: 'news_1',
          kind: 'exchange',
          text: 'Q: where is the key?\nA: under the blue flowerpot',
          messageIds: [],
          authors: ['Ann', 'Salon AI'],
          firstTs: '2026-11-01T10:00:00.000Z',
          lastTs: '2026-11-01T10:00:01.000Z',
          privileged: true,
          owner: 'u_ann',
        },
        '2026-11-01T10:00:01.000Z',
      );
      expect(await store.searchMemoryLines('flowerpot', [t.id], 5)).toEqual([]);
      expect(await store.searchMemoryLines('flowerpot', [t.id, privateScope(t.id, 'u_ann')], 5)).toMatchObject([
        { chunkId: secret.id, line: 'A: under the blue flowerpot' },
      ]);
    });

    it('ranks a line by its rarer words, as bm25 does', async () => {
      schema = schemaName();
      store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
      await createThread(store, { id: 't1', roomId: 'news_1', title: 'T' }, 'admin');
      const chunk = (text: string) => ({
        threadId: 't1',
        roomId: 'news_1',
        kind: 'window' as const,
        text,
        messageIds: [],
        authors: ['Bob'],
        firstTs: '2026-11-01T10:00:00.000Z',
        lastTs: '2026-11-01T10:00:00.000Z',
        privileged: false,
        owner: null,
      });
      for (let i = 0; i < 8; i++) await store.addMemoryChunk(chunk(`Bob said hello to Ann number ${i}`), '2026-11-01T10:00:00.000Z');
      const casino = await store.addMemoryChunk(chunk('Ann won at the casino'), '2026-11-01T10:00:00.000Z');
      const bob = await store.addMemoryChunk(chunk('Bob waved'), '2026-11-01T10:00:00.000Z');
      const hits = await store.searchMemoryLines('Did Bob go to the casino?', ['t1'], 3);
      expect(hits[0].chunkId).toBe(casino.id);
      expect(hits.map((h) => h.chunkId)).toContain(bob.id);
    });
  });

  describe('in a database whose locale is not bytes (collation, character classes)', () => {
    // Made once and kept, each run in a schema of its own: PostgreSQL 15's DROP DATABASE forces a
    // checkpoint, which fsynced every file the suite's schemas had written (7–16 s in a full run).
    let schema: { database: string; name: string } | undefined;
    afterEach(async () => {
      if (schema) await queryIn(schema.database, `DROP SCHEMA IF EXISTS ${schema.name} CASCADE`);
      schema = undefined;
    });

    it('finds a word whose capital is not ASCII by its lower case where the database’s LC_CTYPE is C, as SQLite does', async () => {
      const url = await cCtypeDatabase();
      // The premise: this database's parser leaves a non-ASCII capital as it is.
      expect((await queryIn(C_CTYPE_DATABASE, `SELECT to_tsvector('english', 'Москве')::text AS v`)).rows[0].v).toBe("'Москве':1");
      schema = { database: C_CTYPE_DATABASE, name: schemaName() };
      const store = await PostgresStore.open({ connectionString: url, schema: schema.name });
      try {
        await store.upsertItem(demoItem('news_ru'));
        const { added } = await store.replaceChunks('news_ru', [{ ord: 0, part: 'body', text: 'Встреча в Москве, ÉCOLE' }]);
        const main = await store.ensureMainThread('news_ru');
        const line = await store.addMemoryChunk(
          {
            threadId: main.id,
            roomId: 'news_ru',
            kind: 'window',
            text: 'Ann: Встреча в Москве, ÉCOLE',
            messageIds: ['m1'],
            authors: ['Ann'],
            firstTs: 'a',
            lastTs: 'a',
            privileged: false,
            owner: null,
          },
          '2026-01-01T00:00:00.000Z',
        );
        for (const query of ['москве', 'встреча', 'école']) {
          expect(
            (await store.searchText(query, 5)).map((h) => h.rowId),
            query,
          ).toEqual([added[0].rowId]);
          expect(
            (await store.searchMemoryLines(query, [main.id], 5)).map((h) => h.chunkId),
            query,
          ).toEqual([line.id]);
        }
      } finally {
        await store.close();
      }
    });

    it('lists sources added at the same moment in byte order, as SQLite does', async () => {
      const url = await icuDatabase();
      // ICU's English collation puts "a" before "B"; bytes put "B" (0x42) first.
      expect((await queryIn(ICU_DATABASE, `SELECT 'a' < 'B' AS icu`)).rows[0].icu).toBe(true);
      schema = { database: ICU_DATABASE, name: schemaName() };
      const store = await PostgresStore.open({ connectionString: url, schema: schema.name });
      try {
        const at = '2026-01-01T00:00:00.000Z';
        for (const [id, feed] of [
          ['src_1', 'https://a.example/feed'],
          ['src_2', 'https://B.example/feed'],
        ]) {
          await store.addSource({ id, kind: 'feed', url: feed, list: null, limit: 50, everyMinutes: 30, origin: 'api', createdAt: at, nextDueAt: at });
        }
        expect((await store.listSources()).map((s) => s.url)).toEqual(['https://B.example/feed', 'https://a.example/feed']);
      } finally {
        await store.close();
      }
    });
  });

  describe('chosen by DATABASE_URL', () => {
    it('opens the PostgreSQL store the URL names, its search_path included', async () => {
      const { url, schema, drop } = await freshSchema();
      try {
        const store = openStore(testConfig({ DATABASE_URL: url }));
        expect(store.kind).toBe('postgres');
        await store.upsertItem(demoItem('news_url'));
        await store.close();
        expect((await adminQuery(`SELECT count(*)::int AS n FROM ${schema}.items`)).rows[0].n).toBe(1);
      } finally {
        await drop();
      }
    });

    it('names DATABASE_URL when PostgreSQL cannot be reached, and a command that reads a store refuses an empty one', async () => {
      const down = openStore(testConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' }));
      await expect(down.ping()).rejects.toThrow(/^DATABASE_URL: cannot open the PostgreSQL store at 127\.0\.0\.1:1\/test/);
      await down.close();
      const { url, drop } = await freshSchema();
      try {
        const empty = openStore(testConfig({ DATABASE_URL: url }), { mustExist: true });
        await expect(empty.ping()).rejects.toThrow(/^DATABASE_URL: .*no Salon data/);
        await empty.close();
      } finally {
        await drop();
      }
    });

    it('serves the app from PostgreSQL: demo seeded, content listed, a ready store', async () => {
      const { url, drop } = await freshSchema();
      const { app, close } = await testApp({ DATABASE_URL: url, SEED_DEMO: 'true' });
      try {
        const ready = await app.inject({ url: '/readyz', headers: { authorization: 'Bearer test-admin-token' } });
        expect(ready.json().checks.store).toEqual({ ok: true, detail: 'postgres' });
        const list = (await app.inject('/api/v1/content?limit=100')).json();
        expect(list.items.length).toBeGreaterThanOrEqual(40);
        const hits = (await app.inject(`/api/v1/search?q=${encodeURIComponent(list.items[0].title)}`)).json();
        expect(hits.hits.map((h: { id: string }) => h.id)).toContain(list.items[0].id);
      } finally {
        await close();
        await drop();
      }
    });

    it('stops an app from starting when DATABASE_URL names no reachable PostgreSQL', async () => {
      const start = async () => {
        const { app, close } = await testApp({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' });
        try {
          await app.ready();
        } finally {
          await close();
        }
      };
      await expect(start()).rejects.toThrow(/^DATABASE_URL: cannot open the PostgreSQL store/);
    });
  });
});

/** A database of the test server whose default collation is ICU's English, kept between runs. */
const ICU_DATABASE = 'salon_test_icu_en';
/** A database of the test server whose LC_CTYPE is C (`initdb --no-locale`), kept between runs. */
const C_CTYPE_DATABASE = 'salon_test_c_ctype';

/** The URL of ICU_DATABASE, created first where it is missing (by whichever process gets there first). */
function icuDatabase(): Promise<string> {
  return keptDatabase(ICU_DATABASE, "LOCALE_PROVIDER icu ICU_LOCALE 'en' LOCALE 'C.UTF-8'");
}

/** The URL of C_CTYPE_DATABASE, created first where it is missing. */
function cCtypeDatabase(): Promise<string> {
  return keptDatabase(C_CTYPE_DATABASE, "ENCODING 'UTF8' LOCALE 'C'");
}

/** The URL of `database`, created with `locale` first where it is missing (by whichever process gets there first). */
async function keptDatabase(database: string, locale: string): Promise<string> {
  try {
    await adminQuery(`CREATE DATABASE ${database} TEMPLATE template0 ${locale}`);
  } catch (err) {
    // 42P04: it exists; 23505: another process created it at the same moment.
    if (!['42P04', '23505'].includes((err as { code?: string }).code ?? '')) throw err;
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs one statement in `database` of the test server. */
async function queryIn(database: string, text: string): Promise<pg.QueryResult> {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

function demoItem(id: string) {
  return {
    id,
    kind: 'news' as const,
    title: `Title of ${id}`,
    url: null,
    description: '',
    body: 'Body.',
    comments: [],
    category: null,
    publishedAt: null,
    image: null,
    author: null,
    channel: null,
    thumbnail: null,
    siteName: null,
    source: 'api',
  };
}

function pipelineFor(store: Store) {
  return createItemPipeline({ store, bodyMaxChars: 200_000, chunk: { size: 800, overlap: 160 } });
}

/** Every item has one chunk per position: no two writers' chunks side by side. */
async function expectOneSetOfChunks(store: Store): Promise<void> {
  const chunks = await store.scanChunks(0, 100_000);
  expect(chunks.length).toBeGreaterThan(0);
  expect(new Set(chunks.map((c) => `${c.itemId}:${c.ord}`)).size).toBe(chunks.length);
}
