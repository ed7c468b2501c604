/**
 * In an item's room the item comes first among the sources, whatever the reranker picked: a
 * question asked there is about that item before anything else.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { RagPipeline } from '../../src/rag/pipeline.js';
import { roomItemFirst } from '../../src/rag/rerank.js';
import type { Candidate } from '../../src/rag/types.js';
import { tempStore } from '../helpers.js';
import { item } from '../store/contract.js';
import { MemorySearch, ScriptedChat } from './fakes.js';

let temp: ReturnType<typeof tempStore>;
beforeEach(() => {
  temp = tempStore();
});
afterEach(async () => {
  await temp.close();
});

describe('the room’s own item', () => {
  const candidate = (key: string) => ({ key, itemId: key.split('#')[0] }) as Candidate;

  it('goes first, the selection keeping its size; an empty selection stays empty', () => {
    const [a, b, c, own, comment] = ['news_a', 'news_b', 'news_c', 'news_own', 'news_own#comment:ann'].map(candidate);
    const all = [a, b, c, comment, own];
    expect(roomItemFirst([a, b, c], all, 'news_own')).toEqual([own, a, b]);
    expect(roomItemFirst([a, own, c], all, 'news_own')).toEqual([own, a, c]);
    expect(roomItemFirst([own, a], all, 'news_own')).toEqual([own, a]);
    expect(roomItemFirst([], all, 'news_own')).toEqual([]);
    // A comment on the item is not the item; a topic room has no item.
    expect(roomItemFirst([comment, a], [comment, a], 'news_own')).toEqual([comment, a]);
    expect(roomItemFirst([a, b], all, 'topic_tech')).toEqual([a, b]);
  });

  it('leads the prompt’s sources when the reranker left it out', async () => {
    const items = createItemPipeline({ store: temp.store, bodyMaxChars: 100_000, chunk: { size: 400, overlap: 50 } });
    for (let i = 0; i < 7; i++)
      await items.put(item(`news_o${i}`, { title: `Outage ${i}`, description: '', body: `The company listed ${i + 2} changes after outage ${i}.` }));
    await items.put(item('news_pilot', { title: 'Triage pilot', description: '', body: 'The pilot changed how nurses sort patients at the door.' }));
    const chat = new ScriptedChat({ rerank: async (_q, snippets) => snippets.map((s, i) => (s.startsWith('Triage') ? -1 : i)).filter((i) => i >= 0) });
    const pipeline = new RagPipeline({ store: temp.store, search: new MemorySearch(temp.store, new LocalEmbedder()), chat });
    const prepared = await pipeline.prepare({ id: 'news_pilot', title: 'Triage pilot', context: 'Triage pilot' }, 'what did the pilot change?');
    expect(prepared.stages.rerank.method).toBe('model');
    expect(prepared.selected.map((c) => c.itemId)[0]).toBe('news_pilot');
    expect(prepared.selected.length).toBeLessThanOrEqual(5);
    expect(prepared.sources[0]).toMatchObject({ n: 1, id: 'news_pilot' });
  });
});
