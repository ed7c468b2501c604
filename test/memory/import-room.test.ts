/**
 * An import reaches a room's members whole, once the store holds all of it, and never in part as
 * the room's history: SQLite writes a large one in slices, and a room loading (or catching up) from
 * the store between two of them sent its members the first part, with a live message said meanwhile
 * in the middle of it once the rest came. Nothing published imported messages either: members in
 * the room saw them only after a reload. Now the import, once readable, has every node's room
 * deliver what its members lack (RoomHub.storedUnpublished), on SQLite and on PostgreSQL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { IMPORT_MAX_MESSAGES } from '../../src/memory/import.js';
import { InProcessBusNetwork } from '../../src/rooms/in-process-bus.js';
import { DEFAULT_SEQ_WINDOW } from '../../src/rooms/seq-window.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { ADMIN, testApp, withTurnsDue } from '../helpers.js';
import { joined, until, type Client } from '../rooms/helpers.js';
import { item } from '../store/contract.js';
import { describePostgres } from '../store/postgres-harness.js';
import { postgresSchema, sharedSqlite, type StoreSource } from './one-store.js';

const SECRET = 'one identity secret for both nodes of this test';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function node(source: StoreSource, bus?: InProcessBusNetwork, name = 'node-a'): Promise<FastifyInstance> {
  const t = await testApp({ SEED_DEMO: 'false', IDENTITY_SECRET: SECRET, ...source.env } as never, {
    store: source.store,
    ...(bus ? { roomBus: bus.node(name) } : {}),
    roomOptions: { shutdownGraceMs: 100 },
  });
  cleanups.push(t.close);
  await t.app.ready();
  return t.app;
}

const minute = (m: number) => new Date(Date.UTC(2023, 4, 8, 13, m)).toISOString();
const history = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ author: { name: i % 2 ? 'Melanie' : 'Caroline' }, text: `Imported line ${i}.`, ts: minute(i) }));

type Frame = Client['frames'][number];

/** The imported messages `client` was sent, in the order it got them. */
/**
 * An import of `n` messages into news_1 that fails at its third message: each slice writes one
 * message, the first takes the seqs of all of them, two are stored, the third fails.
 */
async function failedImport(a: FastifyInstance, store: SqliteStore, n: number): Promise<void> {
  store.db.exec("CREATE TRIGGER planted BEFORE INSERT ON messages WHEN NEW.text = 'Imported line 2.' BEGIN SELECT RAISE(ABORT, 'planted failure'); END");
  const failed = await withTurnsDue(() => a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: ADMIN, payload: { messages: history(n) } }));
  expect(failed.statusCode).toBe(500);
  store.db.exec('DROP TRIGGER planted');
}

function importedFrames(client: Client): Frame[] {
  return client.all('message').filter((f) => String(f.message.text).startsWith('Imported line'));
}

/** Waits until `client` has `n` imported messages; checks they came in seq order, one after another, each once. */
async function gotWhole(client: Client, n: number): Promise<Frame[]> {
  await until(() => importedFrames(client).length >= n);
  const frames = importedFrames(client);
  expect(frames.map((f) => f.message.text)).toEqual(history(n).map((m) => m.text));
  const seqs = frames.map((f) => f.message.seq as number);
  expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i));
  return frames;
}

function acrossNodes(name: string, open: () => Promise<StoreSource>): void {
  describe(`an import and the rooms (${name})`, () => {
    it('reaches the members on every node once stored, whole, in seq order', async () => {
      const source = await open();
      const network = new InProcessBusNetwork();
      const a = await node(source, network, 'node-a');
      const b = await node(source, network, 'node-b');
      await a.salon.ingest.pipeline.put(item('news_1', { title: 'Ferries of the bay', body: 'The ferry leaves from pier 3.' }));
      const { client: ann } = await joined(a, 'Ann', 'news_1');
      const { client: bo } = await joined(b, 'Bo', 'news_1');
      ann.send({ type: 'say', text: 'Before the import.', clientId: 'c1' });
      await bo.next('message', (f) => f.message.clientId === 'c1');
      const imported = await a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: ADMIN, payload: { messages: history(30) } });
      expect(imported.statusCode, imported.body).toBe(200);
      for (const client of [ann, bo]) {
        const frames = await gotWhole(client, 30);
        expect(frames.map((f) => f.message.id)).toEqual(imported.json().messageIds);
      }
    });
  });
}

acrossNodes('SQLite', async () => sharedSqlite(cleanups));
describePostgres('PostgreSQL', () => acrossNodes('PostgreSQL', () => postgresSchema(cleanups)));

describe('an import written in slices (SQLite)', () => {
  it('is in no welcome before it is whole, and a live message said meanwhile follows all of it', async () => {
    const a = await node({ env: {} });
    await a.salon.ingest.pipeline.put(item('news_1', { title: 'Ferries of the bay', body: 'The ferry leaves from pier 3.' }));
    const store = a.salon.store as SqliteStore;
    const importedRows = () => store.db.prepare("SELECT count(*) FROM messages WHERE client_id LIKE 'import_%'").pluck().get() as number;
    const n = 200;
    let done = false;
    const seen = await withTurnsDue(async () => {
      // Every look at the clock finds a turn due: each slice of the import writes one message.
      const importing = a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: ADMIN, payload: { messages: history(n) } });
      void importing.then(() => (done = true));
      await until(() => importedRows() > 0, 10_000);
      // The room loads from the store while part of the import is written.
      const { client: bo, welcome } = await joined(a, 'Bo', 'news_1');
      bo.send({ type: 'say', text: 'Live, during the import.', clientId: 'c1' });
      const live = await bo.next('message', (f) => f.message.clientId === 'c1');
      const between = done;
      const response = await importing;
      return { bo, welcome, live, between, response };
    });
    expect(seen.between).toBe(false);
    expect(seen.response.statusCode, seen.response.body).toBe(200);
    expect(seen.welcome.history).toEqual([]);
    const frames = await gotWhole(seen.bo, n);
    // No live message lands among the import's seqs.
    expect(seen.live.message.seq).toBeGreaterThan(frames[n - 1].message.seq);
    // The import reached Bo after the live message, once whole.
    expect(seen.bo.frames.indexOf(frames[0])).toBeGreaterThan(seen.bo.frames.indexOf(seen.live));
    // A newcomer's welcome holds the room as stored: the import's end, then the live message.
    const { welcome } = await joined(a, 'Cy', 'news_1');
    const texts = (welcome.history as { text: string }[]).map((m) => m.text);
    expect(texts.at(-1)).toBe('Live, during the import.');
    expect(texts.at(-2)).toBe(`Imported line ${n - 1}.`);
  });

  it('is given whole to a member who rejoins past the live message said during it (more than the 64 late seqs a room kept)', async () => {
    const a = await node({ env: {} });
    await a.salon.ingest.pipeline.put(item('news_1', { title: 'Ferries of the bay', body: 'The ferry leaves from pier 3.' }));
    const store = a.salon.store as SqliteStore;
    const importedRows = () => store.db.prepare("SELECT count(*) FROM messages WHERE client_id LIKE 'import_%'").pluck().get() as number;
    const { client: bo } = await joined(a, 'Bo', 'news_1');
    const n = 200;
    const seen = await withTurnsDue(async () => {
      const importing = a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: ADMIN, payload: { messages: history(n) } });
      await until(() => importedRows() > 0, 10_000);
      bo.send({ type: 'say', text: 'Live, during the import.', clientId: 'c1' });
      const live = await bo.next('message', (f) => f.message.clientId === 'c1');
      return { live, response: await importing };
    });
    expect(seen.response.statusCode, seen.response.body).toBe(200);
    await gotWhole(bo, n);
    // Di got the live message, and her socket dropped before the import, delivered after it, reached her.
    const { welcome } = await joined(a, 'Di', 'news_1', { lastSeq: seen.live.message.seq });
    const texts = (welcome.history as { text: string }[]).map((m) => m.text);
    expect(texts).toEqual(history(n).map((m) => m.text));
    expect(welcome.truncated).toBeUndefined();
    // Eve's socket was open past the import (she got a message said after it): she gets none of it again.
    bo.send({ type: 'say', text: 'After the import.', clientId: 'c2' });
    const after = await bo.next('message', (f) => f.message.clientId === 'c2');
    const eve = await joined(a, 'Eve', 'news_1', { lastSeq: after.message.seq });
    expect(eve.welcome.history).toEqual([]);
    expect(eve.welcome.truncated).toBeUndefined();
  });

  it('lists the seqs a failed import left unreadable in the room until the same import runs again', async () => {
    const a = await node({ env: {} });
    await a.salon.ingest.pipeline.put(item('news_1', { title: 'Ferries of the bay', body: 'The ferry leaves from pier 3.' }));
    const store = a.salon.store as SqliteStore;
    const n = 20;
    await failedImport(a, store, n);
    const room = (await a.inject('/api/v1/rooms/news_1')).json();
    expect(room.unsettledImports).toEqual([{ fromSeq: 1, toSeq: n, startedAt: expect.any(String) }]);
    // A thread's count says which ranges it leaves out: the page counts their messages as they arrive, below its seq.
    const main = await store.ensureMainThread('news_1');
    const counted = (await a.inject(`/api/v1/threads/${main.id}`)).json();
    expect(counted).toMatchObject({ messages: 0, seq: n, unsettledImports: [{ fromSeq: 1, toSeq: n, startedAt: expect.any(String) }] });
    const again = await a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: ADMIN, payload: { messages: history(n) } });
    expect(again.statusCode, again.body).toBe(200);
    expect((await a.inject('/api/v1/rooms/news_1')).json().unsettledImports).toEqual([]);
    expect((await a.inject(`/api/v1/threads/${main.id}`)).json()).toMatchObject({ messages: n, unsettledImports: [] });
  });

  it('reaches a member live since before a failed import once its re-run makes it readable, past a window of live messages between', async () => {
    const a = await node({ env: {} });
    await a.salon.ingest.pipeline.put(item('news_1', { title: 'Ferries of the bay', body: 'The ferry leaves from pier 3.' }));
    const store = a.salon.store as SqliteStore;
    const { client: bo } = await joined(a, 'Bo', 'news_1');
    const n = 20;
    await failedImport(a, store, n);
    expect(await store.unsettledSeqs('news_1')).toEqual([{ fromSeq: 1, toSeq: n, startedAt: expect.any(String) }]);
    // More messages than the room's window after the first run's seqs, each delivered to Bo.
    const live = DEFAULT_SEQ_WINDOW + 100;
    const thread = await store.ensureMainThread('news_1');
    await store.appendMessages(
      Array.from({ length: live }, (_, i) => ({
        roomId: 'news_1',
        threadId: thread.id,
        author: { id: 'u_liv', name: 'Liv', kind: 'user' as const },
        text: `Live ${i}.`,
        ts: new Date().toISOString(),
        clientId: `live_${i}`,
      })),
    );
    a.salon.rooms.storedUnpublished('news_1', n);
    const lives = () => bo.all('message').filter((f) => String(f.message.text).startsWith('Live '));
    await until(() => lives().length >= live, 20_000);
    const again = await a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: ADMIN, payload: { messages: history(n) } });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().stored).toBe(n - 2);
    // The first run's two messages (seqs 1–2, below the window now) and the re-run's eighteen, in order.
    await until(() => importedFrames(bo).length >= n);
    const frames = importedFrames(bo);
    expect(frames.map((f) => f.message.text)).toEqual(history(n).map((m) => m.text));
    expect(frames.map((f) => f.message.id)).toEqual(again.json().messageIds);
    expect(frames.slice(0, 2).map((f) => f.message.seq)).toEqual([1, 2]);
    // The same notice again (another node's `sync`, the change log read twice) delivers nothing more.
    a.salon.rooms.storedUnpublished('news_1', 0, true, [[1, n]]);
    bo.send({ type: 'say', text: 'After the re-run.', clientId: 'c1' });
    await bo.next('message', (f) => f.message.clientId === 'c1');
    expect(importedFrames(bo)).toHaveLength(n);
    expect(lives()).toHaveLength(live);
  }, 60_000);

  it('reaches a member whole when a live message passed an import of more seqs than an old room window (4,096)', async () => {
    const a = await node({ env: {} });
    await a.salon.ingest.pipeline.put(item('news_1', { title: 'Ferries of the bay', body: 'The ferry leaves from pier 3.' }));
    const store = a.salon.store as SqliteStore;
    const importedRows = () => store.db.prepare("SELECT count(*) FROM messages WHERE client_id LIKE 'import_%'").pluck().get() as number;
    const { client: bo } = await joined(a, 'Bo', 'news_1');
    const n = 4_200;
    const seen = await withTurnsDue(async () => {
      const importing = a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: ADMIN, payload: { messages: history(n) } });
      await until(() => importedRows() > 0, 20_000);
      bo.send({ type: 'say', text: 'Live, during the import.', clientId: 'c1' });
      const live = await bo.next('message', (f) => f.message.clientId === 'c1', 20_000);
      return { live, response: await importing };
    });
    expect(seen.response.statusCode, seen.response.body).toBe(200);
    const frames = await gotWhole(bo, n);
    expect(seen.live.message.seq).toBeGreaterThan(frames[n - 1].message.seq);
    // So with the largest import, and a live message or two said meanwhile.
    expect(DEFAULT_SEQ_WINDOW).toBeGreaterThan(IMPORT_MAX_MESSAGES + 1_000);
  });
});
