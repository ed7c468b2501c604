/** The pipeline never serves an item's old text after it is re-ingested, and topic rooms' context is reused only briefly. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { createItemPipeline, type ItemPipeline } from '../../src/content/ingest/pipeline.js';
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

beforeEach(() => {
  const temp = tempStore();
  store = temp.store;
  closeStore = temp.close;
  items = createItemPipeline({ store, bodyMaxChars: 100_000, chunk: { size: 400, overlap: 50 } });
});

afterEach(async () => {
  await closeStore();
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
