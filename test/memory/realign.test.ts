/**
 * MemoryService.realign between two nodes' memories on one store, each storing its windows when
 * told to (a runner run by hand): what a refused window reopens or files on its own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { CLAIM_KEEP_MS, MemoryService } from '../../src/memory/memory-service.js';
import type { BackgroundRunner } from '../../src/idle-gate.js';
import type { Message } from '../../src/protocol/messages.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { SqliteStore } from '../../src/store/sqlite.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const embedder = new LocalEmbedder();

/** Runs the tasks given to it only when stepped, one at a time, in order. */
class ByHand implements BackgroundRunner {
  private readonly tasks: (() => Promise<void>)[] = [];
  run<T>(task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => this.tasks.push(() => task().then(resolve, reject)));
  }
  async step(): Promise<void> {
    await this.tasks.shift()?.();
  }
  async drain(): Promise<void> {
    while (this.tasks.length) await this.step();
  }
}

function node(store: SqliteStore, now?: () => number): { memory: MemoryService; runner: ByHand } {
  const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 1, threshold: 1_000_000, hnswMode: 'off' });
  const runner = new ByHand();
  const memory = new MemoryService({ store, embedder, index, background: runner, windows: { maxMessages: 4 }, now });
  cleanups.push(async () => {
    memory.close();
    await runner.drain();
    await index.close();
  });
  return { memory, runner };
}

/** `n` messages of Ann and Bo in `threadId`, a minute apart, the last said a minute ago (claims of them are kept). */
async function said(store: SqliteStore, threadId: string, n: number): Promise<Message[]> {
  const out: Message[] = [];
  for (let i = 0; i < n; i++) {
    const author = { id: `u_${i % 2}`, name: i % 2 ? 'Bo' : 'Ann', kind: 'user' as const };
    const ts = new Date(Date.now() - (n - i) * 60_000).toISOString();
    out.push((await store.appendMessage({ roomId: 'news_1', threadId, author, text: `line ${i} about the ferry`, ts })).message);
  }
  return out;
}

/** Splits `ids` off into a new thread in the store, as ThreadService.split does, and tells `memory`: the new thread's id. */
async function splitOff(store: SqliteStore, memory: MemoryService, ids: string[]): Promise<string> {
  const child = 'thr_split_child';
  await store.applyThreadChange({
    at: new Date().toISOString(),
    expect: [],
    createThreads: [{ id: child, roomId: 'news_1', title: 'Split', origin: 'split' }],
    moveMessages: [{ ids, threadId: child }],
  });
  memory.messagesMoved([{ ids, threadId: child }]);
  return child;
}

async function filedIn(store: SqliteStore, threadId: string): Promise<string[][]> {
  return (await store.scanThreadMemory(threadId, 0, 100, false)).filter((c) => c.kind === 'window').map((c) => c.messageIds);
}

describe('a live window waiting to be filed when a split moves some of its messages', () => {
  it('files each message in the thread it is in now, the window cut by thread, when the split came while it was queued', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    cleanups.push(async () => store.close());
    const thread = await store.ensureMainThread('news_1');
    const b = node(store);
    const ids = (await said(store, thread.id, 4)).map((m) => m.id);
    const messages = await store.threadMessages(thread.id, 10);
    for (const m of messages) b.memory.onMessage(m);
    // The window of 0–3 closed and waits in the queue; the split takes 2 and 3.
    const child = await splitOff(store, b.memory, ids.slice(2));
    await b.runner.drain();
    expect(await filedIn(store, thread.id)).toEqual([ids.slice(0, 2)]);
    expect(await filedIn(store, child)).toEqual([ids.slice(2)]);
  });

  it('files the moved part in its new thread when the split came while the window was being filed and another node had filed some of it', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    cleanups.push(async () => store.close());
    const thread = await store.ensureMainThread('news_1');
    const b = node(store);
    const messages = await said(store, thread.id, 8);
    const ids = messages.map((m) => m.id);
    // Another node filed a window of 0 alone (it had heard nothing before it).
    await store.addMemoryChunk(
      {
        threadId: thread.id,
        roomId: 'news_1',
        kind: 'window',
        text: 'Ann: line 0 about the ferry',
        messageIds: [ids[0]],
        authors: ['Ann'],
        firstTs: messages[0].ts,
        lastTs: messages[0].ts,
        privileged: false,
        owner: null,
        live: true,
      },
      messages[0].ts,
    );
    for (const m of messages) b.memory.onMessage(m);
    // B's window of 0–3 is refused (0 is claimed), its window of 4–7 queued behind it; the split of
    // 2–3 commits while the first is being filed.
    let child = '';
    const file = store.fileMemoryChunk.bind(store);
    store.fileMemoryChunk = async (...args) => {
      if (!child) child = await splitOff(store, b.memory, ids.slice(2, 4));
      return file(...args);
    };
    await b.runner.drain();
    for (let round = 0; round < 3; round++) {
      b.memory.flush();
      await b.runner.drain();
    }
    expect(await filedIn(store, child)).toEqual([ids.slice(2, 4)]);
    const parent = await filedIn(store, thread.id);
    expect(parent.flat().sort()).toEqual([ids[0], ids[1], ...ids.slice(4)].sort());
  });
});

describe('a live window being filed when a split on another node moves some of its messages', () => {
  it('is refused by the store and filed as a window per thread, where each message is now, though no notice of the split came', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    cleanups.push(async () => store.close());
    const thread = await store.ensureMainThread('news_1');
    const b = node(store);
    const ids = (await said(store, thread.id, 4)).map((m) => m.id);
    for (const m of await store.threadMessages(thread.id, 10)) b.memory.onMessage(m);
    // The split commits on another node while B embeds the window of 0–3 (past followMoves); its notice has not come.
    const child = 'thr_split_child';
    const file = store.fileMemoryChunk.bind(store);
    store.fileMemoryChunk = async (...args) => {
      if (!(await store.getThread(child))) {
        await store.applyThreadChange({
          at: new Date().toISOString(),
          expect: [],
          createThreads: [{ id: child, roomId: 'news_1', title: 'Split', origin: 'split' }],
          moveMessages: [{ ids: ids.slice(2), threadId: child }],
        });
      }
      return file(...args);
    };
    await b.runner.drain();
    // Before, the window of 0–3 was stored in the parent, citing there what is said in the child.
    expect(await filedIn(store, thread.id)).toEqual([ids.slice(0, 2)]);
    expect(await filedIn(store, child)).toEqual([ids.slice(2)]);
  });
});

describe('an exchange waiting to be filed when a split moves its question', () => {
  it('is filed whole in the thread its question is in now, as a split sends the exchanges it finds stored', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    cleanups.push(async () => store.close());
    const thread = await store.ensureMainThread('news_1');
    const b = node(store);
    const [question, answer] = await said(store, thread.id, 2);
    b.memory.onAnswer(
      { roomId: 'news_1', threadId: thread.id, text: question.text, asker: { id: question.author.id, name: question.author.name }, questionId: question.id },
      { message: { ...answer, author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' } }, sources: [], abstained: false, stages: {} },
    );
    // The split takes the question and leaves the answer (its notice rewrites queued windows only).
    const child = await splitOff(store, b.memory, [question.id]);
    await b.runner.drain();
    const exchanges = async (threadId: string) =>
      (await store.scanThreadMemory(threadId, 0, 10, false)).filter((c) => c.kind === 'exchange').map((c) => c.messageIds);
    // Before, it was stored in the parent, its question said in the child.
    expect(await exchanges(thread.id)).toEqual([]);
    expect(await exchanges(child)).toEqual([[question.id, answer.id]]);
  });
});

describe('realigning a refused live window', () => {
  it('files the part after what another node filed as a window of its own when a later window of the thread closed meanwhile, so no window skips messages', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    cleanups.push(async () => store.close());
    const thread = await store.ensureMainThread('news_1');
    const a = node(store);
    const b = node(store);
    const said: Message[] = [];
    for (let i = 0; i < 12; i++) {
      const author = { id: `u_${i % 2}`, name: i % 2 ? 'Bo' : 'Ann', kind: 'user' as const };
      const ts = new Date(Date.UTC(2026, 10, 24, 9, i)).toISOString();
      said.push((await store.appendMessage({ roomId: 'news_1', threadId: thread.id, author, text: `line ${i} about the ferry`, ts })).message);
    }
    // A hears all twelve: windows 0–3, 4–7, 8–11. B got its first member at 2: windows 2–5, 6–9, and 10–11 open.
    for (const m of said) a.memory.onMessage(m);
    for (const m of said.slice(2)) b.memory.onMessage(m);
    // A files 0–3 first; B's 2–5 is refused while its 6–9 waits behind it.
    await a.runner.step();
    await b.runner.drain();
    for (let round = 0; round < 3; round++)
      for (const n of [a, b]) {
        n.memory.flush();
        await n.runner.drain();
      }
    const ids = said.map((m) => m.id);
    const windows = (await store.scanThreadMemory(thread.id, 0, 100, false)).filter((c) => c.kind === 'window');
    const filed = windows.flatMap((w) => w.messageIds);
    expect([...filed].sort()).toEqual([...ids].sort());
    expect(new Set(filed).size).toBe(filed.length);
    // Each window is a run of the conversation: no messages of another window between its lines.
    for (const w of windows) {
      const at = w.messageIds.map((id) => ids.indexOf(id));
      expect(at).toEqual(at.map((_, i) => at[0] + i));
    }
  });

  it('files the messages another node did not file between those it filed as a window per run, never one joining them across a filed message', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    cleanups.push(async () => store.close());
    const thread = await store.ensureMainThread('news_1');
    const b = node(store);
    const said: Message[] = [];
    for (let i = 0; i < 4; i++) {
      const author = { id: `u_${i % 2}`, name: i % 2 ? 'Bo' : 'Ann', kind: 'user' as const };
      const ts = new Date(Date.UTC(2026, 10, 24, 9, i)).toISOString();
      said.push((await store.appendMessage({ roomId: 'news_1', threadId: thread.id, author, text: `line ${i} about the ferry`, ts })).message);
    }
    const ids = said.map((m) => m.id);
    // Another node filed windows holding 1 and 3 (it never heard 0 and 2).
    for (const i of [1, 3]) {
      const other = { threadId: thread.id, roomId: 'news_1', kind: 'window' as const, text: `Bo: line ${i} about the ferry`, messageIds: [ids[i]] };
      await store.addMemoryChunk(
        { ...other, authors: ['Bo'], firstTs: said[i].ts, lastTs: said[i].ts, privileged: false, owner: null, live: true },
        said[i].ts,
      );
    }
    for (const m of said) b.memory.onMessage(m);
    await b.runner.drain();
    const windows = (await store.scanThreadMemory(thread.id, 0, 100, false)).filter((c) => c.kind === 'window');
    expect(windows.map((w) => w.messageIds).sort()).toEqual([[ids[0]], [ids[1]], [ids[2]], [ids[3]]].sort());
    // The one of 2 reads the line before it (1's) as its context.
    expect(windows.find((w) => w.messageIds[0] === ids[2])!.text.split('\n')).toEqual([expect.stringContaining('line 1'), expect.stringContaining('line 2')]);
  });
});

describe('a live window held back longer than claims are kept', () => {
  it('files none of the messages another node filed two days before, though their claims were pruned, and files the rest', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    cleanups.push(async () => store.close());
    const thread = await store.ensureMainThread('news_1');
    const twoDaysAgo = Date.now() - 2 * 86_400_000;
    const messages: Message[] = [];
    for (let i = 0; i < 6; i++) {
      const author = { id: `u_${i % 2}`, name: i % 2 ? 'Bo' : 'Ann', kind: 'user' as const };
      const ts = new Date(twoDaysAgo + i * 60_000).toISOString();
      messages.push((await store.appendMessage({ roomId: 'news_1', threadId: thread.id, author, text: `line ${i} about the ferry`, ts })).message);
    }
    const ids = messages.map((m) => m.id);
    // A, whose first member came at 1, filed 1–4 then, as they were said; B closed a window of 0–3,
    // and its queue stalled.
    const a = node(store, () => twoDaysAgo + 10 * 60_000);
    const b = node(store);
    for (const m of messages.slice(1, 5)) a.memory.onMessage(m);
    await a.runner.drain();
    for (const m of messages) b.memory.onMessage(m);
    // A day on, a retention sweep anywhere pruned A's claims.
    expect(await store.pruneMemoryClaims(new Date(Date.now() - CLAIM_KEEP_MS).toISOString())).toBe(4);
    for (let round = 0; round < 3; round++) {
      b.memory.flush();
      await b.runner.drain();
    }
    const filed = await filedIn(store, thread.id);
    expect(filed.flat().sort()).toEqual([...ids].sort());
    expect(filed[0]).toEqual(ids.slice(1, 5));
  });
});
