/**
 * A chunk the memory service just stored, moved or deleted by a thread operation (here, or on
 * another node, followed through applyStored) after the write committed and before the service
 * indexed it: the index ends up holding the chunk as the store does, not as it was filed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { MemoryService, type MemoryOptions } from '../../src/memory/memory-service.js';
import type { Message } from '../../src/protocol/messages.js';
import type { AskRequest, AskResult } from '../../src/rooms/types.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { MemoryFiling } from '../../src/store/types.js';
import { createThread } from '../store/new-thread.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const embedder = new LocalEmbedder();

async function setup(options: Partial<MemoryOptions> = {}) {
  const store = new SqliteStore({ filename: ':memory:' });
  const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 1, threshold: 1_000_000, hnswMode: 'off' });
  const memory = new MemoryService({ store, embedder, index, ...options });
  cleanups.push(async () => {
    await memory.close();
    await index.close();
    await store.close();
  });
  const thread = await store.ensureMainThread('news_1');
  const other = await createThread(store, { id: 'thr_other', roomId: 'news_1', title: 'Other' }, 'u_Ann');
  return { store, memory, index, thread, other };
}

/**
 * Runs `between(id)` once, right after the store commits the next chunk the service files and
 * before the service hears back (a thread operation whose reindex wins the race to the index).
 */
function betweenCommitAndIndex(store: SqliteStore, between: (id: number) => Promise<void>): void {
  const file = store.fileMemoryChunk.bind(store);
  store.fileMemoryChunk = async (...args): Promise<MemoryFiling> => {
    const filed = await file(...args);
    store.fileMemoryChunk = file;
    if ('stored' in filed) await between(filed.stored.id);
    return filed;
  };
}

function answered(threadId: string, isPrivate = false): [AskRequest, AskResult] {
  const message: Message = {
    id: 'a1',
    seq: 2,
    roomId: 'news_1',
    threadId,
    author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' },
    text: 'The ferry leaves at noon.',
    ts: new Date(Date.UTC(2026, 10, 24, 12)).toISOString(),
  };
  return [
    {
      roomId: 'news_1',
      threadId,
      text: 'When does the ferry leave?',
      asker: { id: 'u_Ann', name: 'Ann' },
      private: isPrivate,
      ...(isPrivate ? {} : { questionId: 'q1' }),
    },
    { message, sources: [], abstained: false, stages: {} },
  ];
}

/** Ann's question when the ferry leaves and its answer, filed into `threadId`. */
function ferryExchange(threadId: string) {
  return {
    threadId,
    roomId: 'news_1',
    kind: 'exchange' as const,
    text: 'Q: When does the ferry leave?\nA: The ferry leaves at noon.',
    messageIds: [],
    authors: ['Ann', 'Salon AI'],
    firstTs: '2026-11-24T12:00:00.000Z',
    lastTs: '2026-11-24T12:00:00.000Z',
    privileged: false,
    owner: 'u_Ann',
  };
}

/** A window of Ann's saying when the pier opens, filed into `threadId`. */
function pierWindow(threadId: string) {
  return {
    threadId,
    roomId: 'news_1',
    kind: 'window' as const,
    text: 'Ann: The pier opens in May.',
    messageIds: [],
    authors: ['Ann'],
    firstTs: '2026-11-24T12:00:00.000Z',
    lastTs: '2026-11-24T12:00:00.000Z',
    privileged: false,
    owner: null,
  };
}

/** The threads whose scope holds the chunk in the index. */
async function scopesHolding(index: SearchIndex, threadIds: string[]): Promise<string[]> {
  const [query] = await embedder.embed(['When does the ferry leave? The ferry leaves at noon.']);
  const out: string[] = [];
  for (const id of threadIds) if ((await index.search(query, 5, { scopes: [id], includePrivileged: false })).length) out.push(id);
  return out;
}

describe('memory index against thread operations racing a chunk being filed', () => {
  it('indexes a chunk a split moved (and reindexed) before the service indexed it under the thread it was filed in', async () => {
    const { store, memory, index, thread, other } = await setup();
    betweenCommitAndIndex(store, async (id) => {
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMemory: [{ ids: [id], threadId: other.id, roomId: 'news_1' }] });
      await memory.reindex([id]);
    });
    memory.onAnswer(...answered(thread.id));
    await memory.idle();
    expect((await store.scanMemoryChunks(0, 10)).map((c) => c.threadId)).toEqual([other.id]);
    // The service's upsert of the chunk as filed landed after the reindex: it stayed in the old thread's scope.
    expect(await scopesHolding(index, [thread.id, other.id])).toEqual([other.id]);
  });

  it('follows another node’s move of the chunk, applied here before the service indexed it', async () => {
    const { store, memory, index, thread, other } = await setup();
    const told: string[] = [];
    memory.onIndexed((chunk) => told.push(chunk.threadId));
    betweenCommitAndIndex(store, async (id) => {
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMemory: [{ ids: [id], threadId: other.id, roomId: 'news_1' }] });
      await memory.applyStored([id]);
    });
    memory.onAnswer(...answered(thread.id));
    await memory.idle();
    expect(await scopesHolding(index, [thread.id, other.id])).toEqual([other.id]);
    // applyStored told the bridges of the chunk, new to this node's index, where it is now; the
    // service had told them again, of the thread it left.
    expect(told).toEqual([other.id]);
  });

  it('finds a chunk moved to a thread whose memory is off by no ask, in the thread it left either', async () => {
    const { store, memory, thread, other } = await setup();
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: other.id, memoryEnabled: false }] });
    betweenCommitAndIndex(store, async (id) => {
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMemory: [{ ids: [id], threadId: other.id, roomId: 'news_1' }] });
      await memory.reindex([id]);
    });
    memory.onAnswer(...answered(thread.id));
    await memory.idle();
    const ask = (threadId: string) => memory.search('When does the ferry leave?', { threadId, userId: 'u_Cy', private: false }, 5);
    // Left in the old thread's scope, it was cited to that thread's asks: another thread's memory, and one switched off.
    expect(await ask(thread.id)).toEqual([]);
    expect(await ask(other.id)).toEqual([]);
  });

  it('keeps a private exchange moved while it was filed its asker’s alone, in the thread it went to', async () => {
    const { store, memory, index, thread, other } = await setup();
    betweenCommitAndIndex(store, async (id) => {
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMemory: [{ ids: [id], threadId: other.id, roomId: 'news_1' }] });
      await memory.reindex([id]);
    });
    memory.onAnswer(...answered(thread.id, true));
    await memory.idle();
    expect((await store.scanMemoryChunks(0, 10)).map((c) => [c.threadId, c.privileged, c.owner])).toEqual([[other.id, true, 'u_Ann']]);
    expect(await scopesHolding(index, [thread.id, other.id])).toEqual([]);
    const ask = (threadId: string, userId: string) => memory.search('When does the ferry leave?', { threadId, userId, private: true }, 5);
    expect(await ask(thread.id, 'u_Ann')).toEqual([]);
    expect(await ask(other.id, 'u_Cy')).toEqual([]);
    expect((await ask(other.id, 'u_Ann')).map((h) => h.chunk.threadId)).toEqual([other.id]);
  });

  it('leaves out of the index a chunk deleted (and dropped from it) before the service indexed it', async () => {
    const { store, memory, index, thread, other } = await setup();
    betweenCommitAndIndex(store, async (id) => {
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], deleteMemory: [id] });
      await memory.forget([id]);
    });
    memory.onAnswer(...answered(thread.id));
    await memory.idle();
    expect(await store.scanMemoryChunks(0, 10)).toEqual([]);
    expect(index.size).toBe(0);
    expect(await scopesHolding(index, [thread.id, other.id])).toEqual([]);
  });

  it('indexes the chunks a thread operation stored where they are after another moved them before they were indexed', async () => {
    const { store, memory, index, thread, other } = await setup();
    const [vector] = await embedder.embed(['When does the ferry leave? The ferry leaves at noon.']);
    const chunk = ferryExchange(thread.id);
    // A fusion or compaction begins the watch before its change commits (ThreadService.indexCommitted).
    const watch = memory.watchIndex();
    const { addedMemoryIds } = await store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      addMemory: [{ chunk, vector, model: memory.vectorModel }],
    });
    // A merge of the new thread commits and is indexed while the operation waits (for the index's reserve).
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMemory: [{ ids: addedMemoryIds, threadId: other.id, roomId: 'news_1' }] });
    await memory.reindex(addedMemoryIds);
    await memory.indexStored(addedMemoryIds, [{ chunk, vector }], watch);
    expect(await scopesHolding(index, [thread.id, other.id])).toEqual([other.id]);
  });

  it('reads again only the new chunks another change touched, not all of them whenever any change ran meanwhile', async () => {
    const { store, memory, thread } = await setup();
    const [vector] = await embedder.embed(['The pier opens in May.']);
    const chunk = pierWindow(thread.id);
    const watch = memory.watchIndex();
    const { addedMemoryIds } = await store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      addMemory: [1, 2, 3].map(() => ({ chunk, vector, model: memory.vectorModel })),
    });
    // Another node's change to other rows, followed meanwhile (a busy room's windows, one notice each).
    await memory.applyStored([addedMemoryIds[2] + 100]);
    const read = store.getMemoryChunks.bind(store);
    const reads: number[][] = [];
    store.getMemoryChunks = (ids) => (reads.push(ids), read(ids));
    await memory.indexStored(
      addedMemoryIds,
      [chunk, chunk, chunk].map((c) => ({ chunk: c, vector })),
      watch,
    );
    expect(reads).toEqual([]);
    // One of them moved meanwhile: that one alone is read again.
    const again = memory.watchIndex();
    await memory.reindex([addedMemoryIds[1]]);
    reads.length = 0;
    await memory.indexStored(
      addedMemoryIds,
      [chunk, chunk, chunk].map((c) => ({ chunk: c, vector })),
      again,
    );
    expect(reads).toEqual([[addedMemoryIds[1]]]);
  });

  it('leaves out of the index the new chunks retention deleted before they were indexed', async () => {
    const { store, memory, index, thread } = await setup({ retentionDays: 1, now: () => Date.UTC(2026, 10, 30) });
    const [vector] = await embedder.embed(['The pier opens in May.']);
    const chunk = pierWindow(thread.id);
    const watch = memory.watchIndex();
    // A fusion's copy keeps its source's last use, six days ago: past the retention.
    const { addedMemoryIds } = await store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      addMemory: [{ chunk, vector, model: memory.vectorModel, updatedAt: '2026-11-24T12:00:00.000Z' }],
    });
    // A sweep (here the load's) runs while the fusion waits for the index's reserve.
    await memory.load();
    expect(await store.scanMemoryChunks(0, 10)).toEqual([]);
    await memory.indexStored(addedMemoryIds, [{ chunk, vector }], watch);
    expect(index.size).toBe(0);
  });

  it('indexes a chunk where the later of two changes put it when the earlier one’s reindex lands last (its embedding was slower)', async () => {
    // The first embedding waits for `release`; the others go through.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const embedding = new Promise<void>((r) => (started = r));
    let calls = 0;
    class FirstHeld extends LocalEmbedder {
      override async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
        if (calls++ === 0) {
          started();
          await held;
        }
        return super.embed(texts, signal);
      }
    }
    const { store, memory, index, thread, other } = await setup({ embedder: new FirstHeld() });
    const third = await createThread(store, { id: 'thr_third', roomId: 'news_1', title: 'Third' }, 'u_Ann');
    // Stored while the embedder was down: the chunk has no vector, and each reindex embeds it.
    const at = '2026-11-24T12:00:00.000Z';
    const stored = await store.addMemoryChunk(
      {
        threadId: thread.id,
        roomId: 'news_1',
        kind: 'window',
        text: 'Ann: The pier opens in May.',
        messageIds: [],
        authors: ['Ann'],
        firstTs: at,
        lastTs: at,
        privileged: false,
        owner: null,
      },
      at,
    );
    const move = (threadId: string) =>
      store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMemory: [{ ids: [stored.id], threadId, roomId: 'news_1' }] });
    await move(other.id);
    const first = memory.reindex([stored.id]);
    await embedding;
    // Another node merges it on meanwhile; this node follows that change while its own reindex embeds.
    await move(third.id);
    await memory.applyStored([stored.id]);
    release();
    await first;
    const [query] = await embedder.embed(['Ann: The pier opens in May.']);
    const holding: string[] = [];
    for (const id of [thread.id, other.id, third.id]) if ((await index.search(query, 5, { scopes: [id], includePrivileged: false })).length) holding.push(id);
    expect(holding).toEqual([third.id]);
  });
  it('indexes a chunk where the store holds it after more changes moved it while it was being settled than one read of it used to follow', async () => {
    const { store, memory, index, thread, other } = await setup();
    const third = await createThread(store, { id: 'thr_third', roomId: 'news_1', title: 'Third' }, 'u_Ann');
    const [vector] = await embedder.embed(['When does the ferry leave? The ferry leaves at noon.']);
    const chunk = ferryExchange(thread.id);
    const watch = memory.watchIndex();
    const { addedMemoryIds } = await store.applyThreadChange({
      at: new Date().toISOString(),
      expect: [],
      addMemory: [{ chunk, vector, model: memory.vectorModel }],
    });
    const [id] = addedMemoryIds;
    const move = (threadId: string) =>
      store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMemory: [{ ids: [id], threadId, roomId: 'news_1' }] });
    // A merge moves it and is followed before the operation indexes it: the settle reads it again.
    await move(other.id);
    await memory.reindex([id]);
    // Each of the settle's reads of the chunk is followed, before its write, by a move of the chunk
    // and that move's reindex (which lands first): six in a row, then the changes stop.
    const read = store.getMemoryChunks.bind(store);
    let inside = false;
    let moves = 0;
    store.getMemoryChunks = async (ids) => {
      const found = await read(ids);
      if (inside || moves >= 6 || !ids.includes(id)) return found;
      inside = true;
      try {
        await move(moves++ % 2 ? other.id : third.id);
        await memory.reindex([id]);
      } finally {
        inside = false;
      }
      return found;
    };
    await memory.indexStored(addedMemoryIds, [{ chunk, vector }], watch);
    const [held] = await read([id]);
    expect(held.threadId).toBe(other.id);
    // The settle stopped after four reads, the last of them older than the moves that followed it:
    // the index held the chunk in the third thread's scope, where the store no longer had it.
    expect(await scopesHolding(index, [thread.id, other.id, third.id])).toEqual([other.id]);
    expect(moves).toBe(6);
  });
});
