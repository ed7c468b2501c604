/**
 * A member forgets their private asks (`/forget private`, the browser's "Forget them"): what the
 * assistant remembered of them in the room goes from the store, the line search and the memory
 * index, wherever thread operations took it (a fusion's copy in another room), and an exchange
 * still waiting to be stored is not stored, nor one whose answer is still being written (it reaches
 * its asker all the same); nobody else's memory, and none of theirs in other rooms, is touched.
 * On SQLite (the line search on its reader thread) and on PostgreSQL.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import type { EmbedPurpose, Embedder } from '../../src/ai/types.js';
import { MemoryService } from '../../src/memory/memory-service.js';
import { privateScope } from '../../src/memory/scopes.js';
import { newChunkOf } from '../../src/memory/threads/fusion.js';
import { TURN_MS } from '../../src/memory/threads/turns.js';
import type { Message } from '../../src/protocol/messages.js';
import type { AskRequest, AskResult } from '../../src/rooms/types.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/types.js';
import { holdPrivateScans } from './held-scan.js';
import { tempDir, testApp } from '../helpers.js';
import { heldLocalChat } from '../rag/fakes.js';
import { holdThreadRead, joined, listen, member } from '../rooms/helpers.js';
import { item } from '../store/contract.js';
import { describePostgres, freshPostgresStore } from '../store/postgres-harness.js';
import { createThread } from '../store/new-thread.js';

const AT = '2026-11-24T12:00:00.000Z';
const embedder: Embedder = new LocalEmbedder();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An embedder that holds its first query embedding (a private exchange's) until `release`. */
function heldEmbedder(): { embedder: Embedder; held: Promise<void>; release: () => void } {
  let reached!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  let first = true;
  const wrapped: Embedder = {
    model: embedder.model,
    dimensions: embedder.dimensions,
    similarityThreshold: embedder.similarityThreshold,
    relevanceThreshold: embedder.relevanceThreshold,
    async embed(texts: string[], signal?: AbortSignal, purpose?: EmbedPurpose) {
      if (purpose === 'query' && first) {
        first = false;
        reached();
        await gate;
      }
      return embedder.embed(texts, signal, purpose);
    },
  };
  return { embedder: wrapped, held, release };
}

function memoryOf(store: Store, over: Embedder = embedder): { memory: MemoryService; index: SearchIndex } {
  const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 1, threshold: 1_000_000, hnswMode: 'off' });
  const memory = new MemoryService({ store, embedder: over, index });
  cleanups.push(
    () => index.close(),
    () => memory.close(),
  );
  return { memory, index };
}

let n = 0;
function answered(threadId: string, roomId: string, asker: string, question: string, answer: string, isPrivate = true): [AskRequest, AskResult] {
  n++;
  const message: Message = {
    id: isPrivate ? `private_${n}` : `a${n}`,
    seq: isPrivate ? 0 : n,
    roomId,
    threadId,
    author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' },
    text: answer,
    ts: AT,
  };
  return [
    { roomId, threadId, text: question, asker: { id: `u_${asker}`, name: asker }, private: isPrivate, ...(isPrivate ? {} : { questionId: `q${n}` }) },
    { message, sources: [], abstained: false, stages: {} },
  ];
}

const privateAsk = (threadId: string, user: string) => ({ threadId, userId: `u_${user}`, private: true });

/** The texts a private ask of `user` in `threadId` recalls for `question`. */
async function recalled(memory: MemoryService, question: string, threadId: string, user: string): Promise<string[]> {
  return (await memory.search(question, privateAsk(threadId, user), 5)).map((h) => h.chunk.text);
}

/** `owner`'s private chunks stored in `threadIds`. */
async function privateRows(store: Store, owner: string, threadIds: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const t of threadIds) ids.push(...(await store.scanThreadMemory(t, 0, 100, false)).filter((c) => c.privileged && c.owner === owner).map((c) => c.id));
  return ids;
}

function forgets(name: string, open: () => Promise<Store>): void {
  describe(`forgetting a member's private memory (${name})`, () => {
    it('deletes their private exchanges of the room from the store, the line search and the index, a fusion’s copy elsewhere too, and nothing else', async () => {
      const store = await open();
      const { memory, index } = memoryOf(store);
      const main = await store.ensureMainThread('news_1');
      const elsewhere = await store.ensureMainThread('news_2');
      await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 'thr_side', roomId: 'news_1', title: 'Side' }] });
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'What is my locker code?', 'Your locker code is 4417.'));
      memory.onAnswer(...answered('thr_side', 'news_1', 'Ann', 'Where did I park the heron van?', 'The heron van is on level 3.'));
      memory.onAnswer(...answered(main.id, 'news_1', 'Bo', 'What is my locker code?', 'Your locker code is 9031.'));
      memory.onAnswer(...answered(elsewhere.id, 'news_2', 'Ann', 'What is my locker code?', 'Your locker code is 5520.'));
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'When does the ferry leave?', 'The ferry leaves at noon.', false));
      await memory.idle();
      // A fusion in the other room took a copy of Ann's first private exchange (SQLite stores it as a reference to the row).
      const [original] = (await store.scanThreadMemory(main.id, 0, 10)).filter((c) => c.privileged && c.owner === 'u_Ann');
      const { addedMemoryIds } = await store.applyThreadChange({
        at: AT,
        expect: [],
        createThreads: [{ id: 'thr_fused', roomId: 'news_2', title: 'Fused' }],
        addMemory: [
          {
            chunk: {
              ...newChunkOf(original),
              threadId: 'thr_fused',
              roomId: 'news_2',
              fusion: 'kept',
              lineage: { chunkIds: [original.id], threadIds: [main.id] },
            },
            vector: original.vector!,
            model: memory.vectorModel,
            copyOf: original.id,
          },
        ],
      });
      await memory.reindex(addedMemoryIds);
      const held = ['thr_side', main.id, 'thr_fused'];
      const theirs = await privateRows(store, 'u_Ann', held);
      expect(theirs).toHaveLength(3);
      expect(index.heads(theirs).every(Boolean)).toBe(true);
      expect(await recalled(memory, 'what is my locker code', 'thr_fused', 'Ann')).toEqual([expect.stringContaining('4417')]);

      expect(await memory.forgetPrivate('u_Ann', 'news_1', held)).toBe(3);

      expect(await privateRows(store, 'u_Ann', held)).toEqual([]);
      expect(await store.getMemoryChunks(theirs)).toEqual([]);
      expect(index.heads(theirs)).toEqual(theirs.map(() => undefined));
      const lines = [main.id, 'thr_side', 'thr_fused'].map((t) => privateScope(t, 'u_Ann'));
      expect(await store.searchMemoryLines('locker code 4417', lines, 5)).toEqual([]);
      expect(await store.searchMemoryLines('heron van level', lines, 5)).toEqual([]);
      // (A search returns its best k whatever they score: the public exchange is among them.)
      expect((await recalled(memory, 'what is my locker code', main.id, 'Ann')).join('\n')).not.toMatch(/4417|9031/);
      expect(await recalled(memory, 'what is my locker code', 'thr_fused', 'Ann')).toEqual([]);
      expect(await recalled(memory, 'where is the heron van', 'thr_side', 'Ann')).toEqual([]);
      // Another member's, Ann's in another room, and the public exchange stay.
      expect((await recalled(memory, 'what is my locker code', main.id, 'Bo')).join('\n')).toContain('9031');
      expect(await recalled(memory, 'what is my locker code', elsewhere.id, 'Ann')).toEqual([expect.stringContaining('5520')]);
      expect((await memory.search('when does the ferry leave', { threadId: main.id, userId: 'u_Cy', private: false }, 5)).map((h) => h.chunk.text)).toEqual([
        expect.stringContaining('noon'),
      ]);
      expect(await memory.forgetPrivate('u_Ann', 'news_1', held)).toBe(0);
    });

    it('deletes what a merge moved between the read of their memory and its deletion, where it went', async () => {
      const store = await open();
      const { memory } = memoryOf(store);
      const main = await store.ensureMainThread('news_1');
      await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 'thr_side', roomId: 'news_1', title: 'Side' }] });
      memory.onAnswer(...answered('thr_side', 'news_1', 'Ann', 'What is my locker code?', 'Your locker code is 4417.'));
      await memory.idle();
      // The merge of Side into Main commits once Ann's memory has been read.
      const scan = store.scanPrivateMemory.bind(store);
      let merged = false;
      store.scanPrivateMemory = async (...args) => {
        const page = await scan(...args);
        if (page.length && !merged) {
          merged = true;
          await store.applyThreadChange({
            at: AT,
            expect: [],
            updateThreads: [{ id: main.id }, { id: 'thr_side', status: 'archived', mergedInto: main.id }],
            moveThreadMemory: [{ fromThreadId: 'thr_side', threadId: main.id, roomId: 'news_1' }],
          });
        }
        return page;
      };
      expect(await memory.forgetPrivate('u_Ann', 'news_1', [main.id, 'thr_side'])).toBe(1);
      expect(merged).toBe(true);
      expect(await privateRows(store, 'u_Ann', [main.id, 'thr_side'])).toEqual([]);
      expect(await store.searchMemoryLines('locker code 4417', [privateScope(main.id, 'u_Ann')], 5)).toEqual([]);
    });

    it('does not store a private exchange of theirs that was waiting, or being embedded, when they forgot', async () => {
      const store = await open();
      const slow = heldEmbedder();
      const { memory } = memoryOf(store, slow.embedder);
      const main = await store.ensureMainThread('news_1');
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'What is my locker code?', 'Your locker code is 4417.'));
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'Where did I park the heron van?', 'The heron van is on level 3.'));
      // The first is being embedded, the second waits behind it.
      await slow.held;
      // Both are told forgotten, once: a second forget meanwhile finds nothing more.
      expect(await memory.forgetPrivate('u_Ann', 'news_1', [main.id])).toBe(2);
      expect(await memory.forgetPrivate('u_Ann', 'news_1', [main.id])).toBe(0);
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'What is my bike lock code?', 'Your bike lock code is 1234.'));
      slow.release();
      await memory.idle();
      // Asked after the forgetting, the third is remembered.
      expect((await store.scanThreadMemory(main.id, 0, 10, false)).map((c) => c.text)).toEqual([expect.stringContaining('1234')]);
    });

    it('keeps a private exchange asked just after the forget began, under the mark it moved, though it is ready to be filed while the forget still reads the store', async () => {
      const store = await open();
      let embedded!: () => void;
      const bikeEmbedded = new Promise<void>((resolve) => (embedded = resolve));
      const watching: Embedder = {
        ...embedder,
        async embed(texts: string[], signal?: AbortSignal, purpose?: EmbedPurpose) {
          const vectors = await embedder.embed(texts, signal, purpose);
          if (texts.some((t) => t.includes('bike lock'))) embedded();
          return vectors;
        },
      };
      const { memory } = memoryOf(store, watching);
      const main = await store.ensureMainThread('news_1');
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'What is my locker code?', 'Your locker code is 4417.'));
      await memory.idle();
      // The forget's read of her memory is held; every filing is watched.
      const { reached: scanReached, release } = holdPrivateScans(store);
      const filings: Promise<unknown>[] = [];
      const file = store.fileMemoryChunk.bind(store);
      store.fileMemoryChunk = (...args) => {
        const filing = file(...args);
        filings.push(filing.catch(() => {}));
        return filing;
      };

      // The ask her next frame makes reads her mark as the forget's call returns (no await between).
      const forgetting = memory.forgetPrivate('u_Ann', 'news_1', Promise.resolve([main.id]));
      const mark = await store.privateForgetMark('u_Ann', 'news_1');
      expect(mark).toBe(1);
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'What is my bike lock code?', 'Your bike lock code is 1234.'), mark);
      // Embedded while the forget reads the store, and filed then, under the moved mark.
      await Promise.all([scanReached, bikeEmbedded]);
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(filings);
      expect(filings).toHaveLength(1);
      release();

      expect(await forgetting).toBe(1);
      await memory.idle();
      expect((await store.scanPrivateMemory('u_Ann', 0, 10)).map((c) => c.text)).toEqual([expect.stringContaining('1234')]);
    });

    it('keeps, and does not count, an exchange another node files under the mark the forget moved while the forget reads the store; older ones still go', async () => {
      const store = await open();
      const { memory } = memoryOf(store);
      // Another node's memory on the same store: it knows nothing of this node's forget.
      const { memory: otherNode } = memoryOf(store);
      const main = await store.ensureMainThread('news_1');
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'What is my locker code?', 'Your locker code is 4417.'), 0);
      // Filed before marks were kept, or by a thread operation: no mark.
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'Where did I park the heron van?', 'The heron van is on level 3.'));
      await memory.idle();
      const { reached: scanReached, release, scan } = holdPrivateScans(store);

      const forgetting = memory.forgetPrivate('u_Ann', 'news_1', [main.id]);
      await scanReached;
      // Asked on the other node once the mark had moved, and filed there while the scan is held.
      const mark = await store.privateForgetMark('u_Ann', 'news_1');
      expect(mark).toBe(1);
      otherNode.onAnswer(...answered(main.id, 'news_1', 'Ann', 'What is my bike lock code?', 'Your bike lock code is 1234.'), mark);
      await otherNode.idle();
      expect(await scan('u_Ann', 0, 10)).toHaveLength(3);
      release();

      expect(await forgetting).toBe(2);
      expect((await store.scanPrivateMemory('u_Ann', 0, 10)).map((c) => c.text)).toEqual([expect.stringContaining('1234')]);
      expect(await recalled(otherNode, 'what is my bike lock code', main.id, 'Ann')).toEqual([expect.stringContaining('1234')]);
      // A later forget takes it.
      expect(await memory.forgetPrivate('u_Ann', 'news_1', [main.id])).toBe(1);
      expect(await store.scanPrivateMemory('u_Ann', 0, 10)).toEqual([]);
    });
  });
}

forgets('SQLite', async () => {
  const { dir, cleanup } = tempDir();
  const store = new SqliteStore({ filename: join(dir, 'salon.db'), readerThread: true });
  cleanups.push(cleanup, () => store.close());
  return store;
});

describePostgres('PostgreSQL', () => {
  forgets('PostgreSQL', () => freshPostgresStore(cleanups));
});

/**
 * Whether `word` is in the SQLite file `filename` or its WAL, as raw bytes. A full-text index
 * stores a term without the letters it shares with the term before it: `word` is checked without
 * its first letter too (the exchange's `Q:` line makes the term `q`).
 */
function onDisk(filename: string, word: string): boolean {
  const files = [filename, `${filename}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f));
  return files.some((bytes) => bytes.includes(word.slice(1)));
}

describe('a forgotten private exchange in the SQLite files', () => {
  for (const [name, settings] of [
    ['the server’s settings: checkpoints on a worker, line searches on a reader thread', { backgroundCheckpoints: true, readerThread: true }],
    ['one connection', {}],
  ] as const) {
    it(`leaves none of its words in the database file or the WAL, open or closed (${name})`, async () => {
      const { dir, cleanup } = tempDir();
      const filename = join(dir, 'salon.db');
      const store = new SqliteStore({ filename, ...settings });
      cleanups.push(cleanup, () => store.close());
      const { memory } = memoryOf(store);
      const main = await store.ensureMainThread('news_1');
      await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 'thr_side', roomId: 'news_1', title: 'Side' }] });
      // No other term starts with its first two letters; the stemmer leaves it whole.
      const secret = 'qjxvorpak';
      // Long enough to spill onto overflow pages, freed whole (more than the deletion's own writes reuse).
      const answer = `${'Your locker is in the east hall, second row. '.repeat(160)}The code is ${secret}.`;
      memory.onAnswer(...answered('thr_side', 'news_1', 'Ann', `Remember my locker code ${secret}, please.`, answer));
      memory.onAnswer(...answered(main.id, 'news_1', 'Bo', 'What is my locker code?', 'Your locker code is 9031.'));
      memory.onAnswer(...answered(main.id, 'news_1', 'Ann', 'When does the ferry leave?', 'The ferry leaves at noon.', false));
      await memory.idle();
      // A merge moves it: its lines are written again under their new scope.
      await store.applyThreadChange({
        at: AT,
        expect: [],
        updateThreads: [{ id: main.id }, { id: 'thr_side', status: 'archived', mergedInto: main.id }],
        moveThreadMemory: [{ fromThreadId: 'thr_side', threadId: main.id, roomId: 'news_1' }],
      });
      expect(onDisk(filename, secret)).toBe(true);

      expect(await memory.forgetPrivate('u_Ann', 'news_1', [main.id, 'thr_side'])).toBe(1);
      expect(onDisk(filename, secret)).toBe(false);
      store.db.exec("INSERT INTO memory_lines (memory_lines) VALUES ('integrity-check')");
      // The others' stay, readable.
      expect((await recalled(memory, 'what is my locker code', main.id, 'Bo')).join('\n')).toContain('9031');
      await memory.close();
      await store.close();
      expect(onDisk(filename, secret)).toBe(false);
    });
  }
});

describe('/forget private in a room', () => {
  it('makes the assistant forget what the sender told it privately, and only that', async () => {
    const t = await testApp({ ASK_LIMIT_USER: '100' } as never, { roomOptions: { shutdownGraceMs: 100 } });
    cleanups.push(t.close);
    await t.app.ready();
    await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
    const ann = (await joined(t.app, 'Ann', 'news_1')).client;
    const bo = (await joined(t.app, 'Bo', 'news_1')).client;
    for (const [client, word] of [
      [ann, 'zqann'],
      [bo, 'zqbo'],
    ] as const) {
      client.send({ type: 'ask', text: `My secret word is ${word}; is Rust 2.0 out?`, clientId: 'p1', private: true });
      await client.next('assistant.done', () => true, 10_000);
    }
    await t.app.salon.memory.idle();

    ann.send({ type: 'say', text: '/forget private', clientId: 'f1' });
    const reply = await ann.next('message', (f) => f.message.clientId === 'f1');
    expect(reply.message).toMatchObject({ author: { kind: 'system' } });
    expect(reply.message.text).toContain('no longer remembers 1 private exchange');
    ann.send({ type: 'say', text: '/forget everything', clientId: 'f2' });
    expect((await ann.next('error', (f) => f.clientId === 'f2')).code).toBe('ERR_BAD_MESSAGE');

    ann.send({ type: 'ask', text: 'What is my secret word?', clientId: 'p2', private: true });
    expect((await ann.next('assistant.done', () => true, 10_000)).message.text).not.toContain('zqann');
    bo.send({ type: 'ask', text: 'What is my secret word?', clientId: 'p2', private: true });
    expect((await bo.next('assistant.done', () => true, 10_000)).message.text).toContain('zqbo');
  });
  it('reads the histories of the room’s threads with turns of the event loop between them (SQLite answers each at once)', async () => {
    const t = await testApp({} as never, { roomOptions: { shutdownGraceMs: 100 } });
    cleanups.push(t.close);
    await t.app.ready();
    await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
    const { store, threads } = t.app.salon;
    for (const title of ['One', 'Two', 'Three']) await threads.create('news_1', title, 'admin');
    const ann = (await joined(t.app, 'Ann', 'news_1')).client;
    const history = store.threadHistory.bind(store);
    let turned = false;
    const turnedAtReads: boolean[] = [];
    store.threadHistory = (...args) => {
      // Set at the first read: it runs once the event loop has a turn.
      if (!turnedAtReads.length) setImmediate(() => (turned = true));
      turnedAtReads.push(turned);
      return history(...args);
    };
    // Every look at the clock finds TURN_MS gone by: a turn is due before each read.
    let clock = performance.now();
    vi.spyOn(performance, 'now').mockImplementation(() => (clock += TURN_MS));
    try {
      ann.send({ type: 'say', text: '/forget private', clientId: 'f1' });
      expect((await ann.next('message', (f) => f.message.clientId === 'f1')).message.text).toContain('remembers no private exchange');
    } finally {
      vi.mocked(performance.now).mockRestore();
      store.threadHistory = history;
    }
    // A room's thousands of archived threads were read back to back.
    expect(turnedAtReads).toEqual([false, true, true, true]);
  });
  /** An app whose next answer is held while written, with news_1's main thread (made privileged if asked) and Ann in its room. */
  async function annWithHeldAnswer(privileged: boolean) {
    const { chat, writing, release } = heldLocalChat();
    const t = await testApp({ ASK_LIMIT_USER: '100' } as never, { chat, roomOptions: { shutdownGraceMs: 100 } });
    cleanups.push(t.close);
    await t.app.ready();
    await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
    const { store, memory } = t.app.salon;
    const thread = await store.ensureMainThread('news_1');
    if (privileged) await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: thread.id, privileged: true }] });
    const { client: ann, welcome } = await joined(t.app, 'Ann', 'news_1');
    const annId = welcome.you.id as string;
    const stored = async () => (await store.scanPrivateMemory(annId, 0, 100)).map((c) => c.text);
    return { store, memory, thread, ann, annId, stored, writing, release };
  }

  it('leaves unremembered a private answer still being written when the command arrives, which reaches its asker; a private ask after it is remembered', async () => {
    const { store, memory, thread, ann, annId, stored, writing, release } = await annWithHeldAnswer(false);

    ann.send({ type: 'ask', text: 'My secret word is zqheld; is Rust 2.0 out?', clientId: 'p1', private: true });
    // Its search is done and its answer is being written (held) when the command arrives.
    await writing;
    ann.send({ type: 'say', text: '/forget private', clientId: 'f1' });
    const reply = (await ann.next('message', (f) => f.message.clientId === 'f1')).message.text as string;
    release();
    const answered = await ann.next('assistant.done', () => true, 10_000);
    expect(answered.message.text).not.toBe('');
    await memory.idle();

    // No trace of it: not in the store, its lines, or what a later ask recalls.
    expect(await stored()).toEqual([]);
    expect(await store.searchMemoryLines('secret word zqheld', [privateScope(thread.id, annId)], 5)).toEqual([]);
    expect((await memory.search('what is my secret word zqheld', { threadId: thread.id, userId: annId, private: true }, 5)).map((h) => h.chunk.text)).toEqual(
      [],
    );
    expect(reply).toContain('no longer remembers 1 private exchange of yours in this room (1 still being answered');
    ann.send({ type: 'ask', text: 'What is my secret word?', clientId: 'p2', private: true });
    expect((await ann.next('assistant.done', () => true, 10_000)).message.text).not.toContain('zqheld');
    await memory.idle();
    expect(await stored()).toEqual([]);

    // Asked after the command, a private question is remembered as before.
    ann.send({ type: 'ask', text: 'My locker code is zqlater; is Rust 2.0 out?', clientId: 'p3', private: true });
    await ann.next('assistant.done', () => true, 10_000);
    await memory.idle();
    expect(await stored()).toEqual([expect.stringContaining('zqlater')]);
  });

  /**
   * An app with news_1's main thread and a side thread the room has not used yet: the first frame
   * naming it reads the store, and that read is held until `release`. Ann is in the room over a
   * real socket; `pong` tells her every frame she sent before has been dispatched.
   */
  async function annBesideUnreadThread() {
    const t = await testApp({ ASK_LIMIT_USER: '100' } as never, { roomOptions: { shutdownGraceMs: 100 } });
    cleanups.push(t.close);
    await t.app.ready();
    await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
    const { store, memory } = t.app.salon;
    await store.ensureMainThread('news_1');
    await createThread(store, { id: 'thr_side', roomId: 'news_1', title: 'Side' }, 'admin');
    const { client: ann, welcome } = await member((await listen(t.app))('news_1'), 'Ann');
    const annId = welcome.you.id as string;
    const stored = async () => (await store.scanPrivateMemory(annId, 0, 100)).map((c) => c.text);
    const dispatched = async () => {
      ann.send({ type: 'ping' });
      await ann.next('pong');
    };
    return { memory, ann, stored, dispatched, ...holdThreadRead(store, 'thr_side') };
  }

  it('forgets a private ask sent just before the command, though its thread was still being read when the command arrived', async () => {
    const { memory, ann, stored, dispatched, reached, release } = await annBesideUnreadThread();

    ann.send({ type: 'ask', text: 'My secret word is zqfirst; is Rust 2.0 out?', clientId: 'p1', private: true, threadId: 'thr_side' });
    await reached;
    ann.send({ type: 'say', text: '/forget private', clientId: 'f1' });
    await dispatched();
    release();
    const reply = (await ann.arrived('message', (f) => f.message.clientId === 'f1', 0)).message.text as string;
    expect((await ann.arrived('assistant.done', () => true, 0, 10_000)).message.text).not.toBe('');
    await memory.idle();

    expect(reply).toContain('no longer remembers 1 private exchange of yours in this room (1 still being answered');
    expect(await stored()).toEqual([]);
  });

  it('does not take for forgotten a private ask sent just after the command, though the command’s thread was still being read when the ask arrived', async () => {
    const { memory, ann, stored, dispatched, reached, release } = await annBesideUnreadThread();

    ann.send({ type: 'say', text: '/forget private', clientId: 'f1', threadId: 'thr_side' });
    await reached;
    ann.send({ type: 'ask', text: 'My locker code is zqafter; is Rust 2.0 out?', clientId: 'p1', private: true });
    await dispatched();
    release();
    const reply = (await ann.arrived('message', (f) => f.message.clientId === 'f1', 0)).message.text as string;
    await ann.arrived('assistant.done', () => true, 0, 10_000);

    // The command ran before the ask was asked: it neither counts nor marks it (before, the ask ran
    // first, and the command took it for one of those it forgot). Its exchange is remembered: the
    // command moved the store's forget mark before its first await, so the ask read the new one
    // (before, the mark moved once the room's threads were read, and the store refused the exchange).
    expect(reply).toBe('The assistant remembers no private exchange of yours in this room.');
    await memory.idle();
    expect(await stored()).toEqual([expect.stringContaining('zqafter')]);
  });

  it('leaves unremembered a public answer still being written in a privileged thread (its asker’s alone) when the command arrives; one asked after it is remembered for them', async () => {
    const { store, memory, thread, ann, annId, stored, writing, release } = await annWithHeldAnswer(true);

    // A public ask: its question is posted to the room, and its exchange is remembered for Ann alone.
    ann.send({ type: 'ask', text: 'My secret word is zqheld; is Rust 2.0 out?', clientId: 'q1' });
    await writing;
    ann.send({ type: 'say', text: '/forget private', clientId: 'f1' });
    const reply = (await ann.next('message', (f) => f.message.clientId === 'f1')).message.text as string;
    release();
    expect((await ann.next('assistant.done', () => true, 10_000)).message.text).toMatch(/Rust 2\.0/);
    await memory.idle();

    expect(await stored()).toEqual([]);
    expect(await store.searchMemoryLines('secret word zqheld', [privateScope(thread.id, annId), thread.id], 5)).toEqual([]);
    expect((await memory.search('what is my secret word zqheld', { threadId: thread.id, userId: annId, private: true }, 5)).map((h) => h.chunk.text)).toEqual(
      [],
    );
    expect(reply).toContain('no longer remembers 1 private exchange of yours in this room (1 still being answered');

    // Asked after the command, it is remembered for her as before.
    ann.send({ type: 'ask', text: 'My locker code is zqlater; is Rust 2.0 out?', clientId: 'q2' });
    await ann.next('assistant.done', () => true, 10_000);
    await memory.idle();
    expect(await stored()).toEqual([expect.stringContaining('zqlater')]);
  });
});
