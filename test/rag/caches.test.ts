/** The pipeline's caches (item heads) never serve an item's old title or text after it is re-ingested. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local-embedder.js';
import { createItemPipeline, type ItemPipeline } from '../../src/content/pipeline.js';
import type { ChunkRow } from '../../src/content/types.js';
import { ItemMetaCache } from '../../src/rag/item-meta.js';
import { RagPipeline } from '../../src/rag/pipeline.js';
import { roomViews } from '../../src/rag/room-context.js';
import type { RoomInfo } from '../../src/protocol/messages.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { tempStore } from '../helpers.js';
import { item } from '../store/contract.js';
import { MemorySearch, ScriptedChat } from './fakes.js';

let store: SqliteStore;
let closeStore: () => Promise<void>;
let items: ItemPipeline;
let reads: string[][];

beforeEach(() => {
  const temp = tempStore();
  store = temp.store;
  closeStore = temp.close;
  items = createItemPipeline({ store, bodyMaxChars: 100_000, chunk: { size: 400, overlap: 50 } });
  reads = [];
  const heads = store.getItemHeads.bind(store);
  store.getItemHeads = async (ids) => {
    reads.push(ids);
    return heads(ids);
  };
});

afterEach(async () => {
  await closeStore();
});

const titleChunk = (chunks: ChunkRow[]) => chunks.find((c) => c.part === 'title')!;

describe('ItemMetaCache', () => {
  it('reads each item once in a minute, in one read for all of them, and leaves out unknown items', async () => {
    await items.put(item('news_a', { title: 'Alpha' }));
    await items.put(item('news_b', { title: 'Beta' }));
    const chunks = [...(await store.chunksOfItem('news_a')), ...(await store.chunksOfItem('news_b'))];
    let now = 0;
    const cache = new ItemMetaCache(store, { now: () => now });
    const ghost = { itemId: 'news_gone', part: 'body' as const, text: 'x' };
    const first = await cache.get([...chunks, ghost]);
    expect([...first.values()].map((m) => m.title)).toEqual(['Alpha', 'Beta']);
    expect(reads).toEqual([['news_a', 'news_b', 'news_gone']]);
    now = 59_000;
    await cache.get(chunks);
    expect(reads).toHaveLength(1);
    now = 61_000;
    await cache.get(chunks.slice(0, 1));
    expect(reads.at(-1)).toEqual(['news_a']);
  });

  it('reads an item again at once when a hit shows it was re-ingested with a new title', async () => {
    await items.put(item('news_a', { title: 'Old title' }));
    const cache = new ItemMetaCache(store);
    expect((await cache.get(await store.chunksOfItem('news_a'))).get('news_a')?.title).toBe('Old title');
    await items.put(item('news_a', { title: 'New title' }));
    const fresh = await store.chunksOfItem('news_a');
    expect(titleChunk(fresh).text.startsWith('New title')).toBe(true);
    // A body hit alone cannot tell; the new title chunk can.
    expect((await cache.get(fresh.filter((c) => c.part === 'body'))).get('news_a')?.title).toBe('Old title');
    expect((await cache.get(fresh)).get('news_a')?.title).toBe('New title');
    expect(reads).toHaveLength(2);
  });

  it('keeps about its capacity', async () => {
    const cache = new ItemMetaCache(store, { capacity: 10 });
    for (let i = 0; i < 30; i++) {
      await items.put(item(`news_${i}`));
      await cache.get(await store.chunksOfItem(`news_${i}`));
    }
    expect(cache.size).toBeLessThanOrEqual(10);
    expect(cache.size).toBeGreaterThanOrEqual(5);
  });
});

describe('the pipeline after a re-ingest', () => {
  const filler = (n: number, topic: string) => Array.from({ length: n }, (_, i) => `Sentence ${i} says little about ${topic}.`).join(' ');

  it('quotes the new text after a re-ingest, not the old one', async () => {
    const before = `${filler(30, 'harbours')} The lighthouse keeper was named Tomas Berg. ${filler(30, 'harbours')}`;
    const after = `${filler(30, 'harbours')} The lighthouse keeper was named Ingrid Sol. ${filler(30, 'harbours')}`;
    await items.put(item('news_l', { title: 'The lighthouse', description: '', body: before }));
    const pipeline = new RagPipeline({ store, search: new MemorySearch(store, new LocalEmbedder()), chat: new ScriptedChat() });
    const room = { id: 'news_l', title: 'The lighthouse', context: 'The lighthouse' };
    const question = 'What was the name of the lighthouse keeper?';
    // Asked three times, so the item's head is cached.
    for (let i = 0; i < 3; i++) {
      const p = await pipeline.prepare(room, question);
      expect(p.messages[1].content).toContain('Tomas Berg');
    }
    await items.put(item('news_l', { title: 'The lighthouse', description: '', body: after }));
    const p = await pipeline.prepare(room, question);
    expect(p.messages[1].content).toContain('Ingrid Sol');
    expect(p.messages[1].content).not.toContain('Tomas Berg');
    expect(p.sources[0].snippet).not.toContain('Tomas Berg');
  });
});

describe('roomViews', () => {
  it('reuses a topic room for half a minute, and reads content rooms and unknown rooms every time', async () => {
    const calls: string[] = [];
    let summary = 'Old summary';
    const resolve = async (id: string): Promise<RoomInfo | null> => {
      calls.push(id);
      if (id === 'topic_nope') return null;
      const topic = id.startsWith('topic_');
      return { id, kind: topic ? 'topic' : 'news', title: id, url: null, context: topic ? `${id}\n\n${summary}` : `${id} ${'x'.repeat(3000)}` };
    };
    let now = 0;
    const views = roomViews(resolve, { now: () => now });
    expect((await views('topic_tech'))?.context).toContain('Old summary');
    summary = 'New summary';
    now = 29_000;
    expect((await views('topic_tech'))?.context).toContain('Old summary');
    now = 31_000;
    expect((await views('topic_tech'))?.context).toContain('New summary');
    const content = await views('news_a');
    await views('news_a');
    expect(content?.context).toHaveLength(2000);
    expect(await views('topic_nope')).toBeNull();
    expect(await views('topic_nope')).toBeNull();
    expect(calls).toEqual(['topic_tech', 'topic_tech', 'news_a', 'news_a', 'topic_nope', 'topic_nope']);
  });
});
