/**
 * MemoryService.realign between two nodes' memories on one store, each storing its windows when
 * told to (a runner run by hand): what a refused window reopens or files on its own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { MemoryService } from '../../src/memory/memory-service.js';
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

function node(store: SqliteStore): { memory: MemoryService; runner: ByHand } {
  const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 1, threshold: 1_000_000, hnswMode: 'off' });
  const runner = new ByHand();
  const memory = new MemoryService({ store, embedder, index, background: runner, windows: { maxMessages: 4 } });
  cleanups.push(async () => {
    memory.close();
    await runner.drain();
    await index.close();
  });
  return { memory, runner };
}

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
