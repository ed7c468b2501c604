/**
 * Questions asked in an item's room: the item comes first among the sources, whatever the
 * reranker picked (a question asked there is about that item before anything else), and "what do
 * commenters think?" is answered from that item's comments (their words rarely share the
 * question's, so relevance by words would abstain). In a topic room, from its category's items,
 * and "what is this room about?" from the room's own description.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newNonce, renderGroundedPrompt, type GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { asksAboutComments } from '../../src/ai/questions.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { RagPipeline } from '../../src/rag/pipeline.js';
import { roomViews } from '../../src/rag/room-context.js';
import { storeResolver } from '../../src/rooms/resolver.js';
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
    // The prompt marks it as the room's own item, by its id, and no other source.
    const user = prepared.messages.find((m) => m.role === 'user')!.content;
    expect(user.match(/^\[Source \d+\].*$/gm)).toEqual(['[Source 1] (primary topic)', ...prepared.sources.slice(1).map((s) => `[Source ${s.n}]`)]);
  });
});

describe('questions about the comments', () => {
  it('are told by their words', () => {
    for (const q of ['what do commenters think?', 'What does HN say about it?', 'any good comments?', 'how did Hacker News react?', 'what do redditors say?'])
      expect(asksAboutComments(q), q).toBe(true);
    for (const q of ['what did the pilot change?', 'how did the nurses react?', 'who commented out the code?']) expect(asksAboutComments(q), q).toBe(false);
  });

  it('are answered from the room item’s commenters, not abstained on', async () => {
    const items = createItemPipeline({ store: temp.store, bodyMaxChars: 100_000, chunk: { size: 400, overlap: 50 } });
    const comments = [
      { by: 'brisk_tern', text: 'A stablecoin that pauses redemptions is an IOU with a website.', time: 1 },
      { by: 'oxkelp', text: 'The auditor resigning is the first time anybody read the footnotes.', time: 2 },
    ];
    await items.put(
      item('news_coin', { title: 'Stablecoin falls after auditor resigns', description: '', body: 'The token fell to 91 cents on Sunday.', comments }),
    );
    await items.put(
      item('news_other', {
        title: 'Tram line approved',
        description: '',
        body: 'The council approved the tram.',
        comments: [{ by: 'tramfan', text: 'Finally a tram.', time: 3 }],
      }),
    );
    const pipeline = new RagPipeline({
      store: temp.store,
      search: new MemorySearch(temp.store, new LocalEmbedder()),
      chat: new ScriptedChat(),
      relevanceThreshold: 0.99,
    });
    const room = { id: 'news_coin', title: 'Stablecoin falls after auditor resigns', context: 'Stablecoin falls after auditor resigns' };
    const prepared = await pipeline.prepare(room, 'what do commenters think?');
    expect(prepared.abstained).toBe(false);
    expect(prepared.selected.map((c) => c.key).sort()).toEqual(['news_coin#comment:brisk_tern', 'news_coin#comment:oxkelp']);
    // The same form without the comments asked about abstains at this threshold when it names
    // something the room does not hold ("what do analysts think?" alone asks the room's story).
    expect((await pipeline.prepare(room, 'what do analysts think of the ferry?')).abstained).toBe(true);
  });

  it('are answered from the room item’s commenters even when search finds only other items’ comments', async () => {
    const items = createItemPipeline({ store: temp.store, bodyMaxChars: 100_000, chunk: { size: 400, overlap: 50 } });
    // Forty other items whose commenters use the question's words; the room's commenters do not.
    for (let i = 0; i < 40; i++) {
      await items.put(
        item(`news_o${i}`, {
          title: `Other story ${i}`,
          description: '',
          body: `Story ${i} happened.`,
          comments: [{ by: `chatty${i}`, text: 'What do commenters think? Commenters think people say a lot in comments.', time: i }],
        }),
      );
    }
    await items.put(
      item('news_quiet', {
        title: 'Harbour crane repaired',
        description: '',
        body: 'The crane was repaired in March.',
        comments: [
          { by: 'dockhand', text: 'Welded brackets hold better than bolts.', time: 1 },
          { by: 'gullwatch', text: 'Seagulls nested on the jib again.', time: 2 },
        ],
      }),
    );
    const pipeline = new RagPipeline({
      store: temp.store,
      search: new MemorySearch(temp.store, new LocalEmbedder()),
      chat: new ScriptedChat(),
      relevanceThreshold: 0.99,
    });
    const room = { id: 'news_quiet', title: 'Harbour crane repaired', context: 'Harbour crane repaired' };
    const prepared = await pipeline.prepare(room, 'what do the commenters think?');
    expect(prepared.abstained).toBe(false);
    expect(prepared.selected.map((c) => c.key).sort()).toEqual(['news_quiet#comment:dockhand', 'news_quiet#comment:gullwatch']);
    expect(prepared.sources.map((s) => s.title).sort()).toEqual(['Comment by dockhand', 'Comment by gullwatch']);

    // An item nobody commented on: other items' commenters are not its comments.
    await items.put(item('news_plain', { title: 'Ferry timetable changes', description: '', body: 'Ferries leave hourly from May.' }));
    const lenient = new RagPipeline({ store: temp.store, search: new MemorySearch(temp.store, new LocalEmbedder()), chat: new ScriptedChat() });
    const plain = await lenient.prepare(
      { id: 'news_plain', title: 'Ferry timetable changes', context: 'Ferry timetable changes' },
      'what do the commenters think?',
    );
    expect(plain.candidates.filter((c) => c.kind === 'comment')).toEqual([]);
  });

  it('get what each commenter said, with their name and source', async () => {
    const sources: GroundedSource[] = [
      { n: 1, label: 'Stablecoin falls', content: 'The token fell to 91 cents.' },
      { n: 2, label: 'HN comment by brisk_tern', content: 'A stablecoin that pauses redemptions is an IOU with a website. I sold mine' },
      { n: 3, label: 'HN comment by oxkelp', content: 'The auditor resigning is the first time anybody read the footnotes.' },
    ];
    const messages = [
      { role: 'user' as const, content: renderGroundedPrompt({ topic: 'Stablecoin falls', sources, question: 'what do commenters think?' }, newNonce()) },
    ];
    let answer = '';
    for await (const piece of new LocalChatModel(new LocalEmbedder()).stream(messages)) answer += piece;
    expect(answer).toMatch(/^Commenters said: brisk\\_tern: .+ \[2\] oxkelp: The auditor resigning is the first time anybody read the footnotes\. \[3\]$/);
  });
});

describe('a topic room', () => {
  it('answers from its category’s items, and says what it holds when asked what it is about', async () => {
    const items = createItemPipeline({ store: temp.store, bodyMaxChars: 100_000, chunk: { size: 400, overlap: 50 } });
    const at = (day: number) => `2026-10-0${day}T09:00:00.000Z`;
    await items.put(
      item('news_k1', { title: 'Kestrel K1 laptop ships', category: 'Tech', publishedAt: at(3), body: 'The RISC-V laptop ships with nurses of silicon.' }),
    );
    await items.put(item('news_db', { title: 'TesseraDB changes its licence', category: 'Tech', publishedAt: at(2), body: 'The database forks.' }));
    await items.put(
      item('news_tri', {
        title: 'Triage pilot cuts waits',
        category: 'Health',
        publishedAt: at(1),
        body: 'Nurses overrode the software in 6 per cent of cases.',
      }),
    );
    const room = (await roomViews(storeResolver(temp.store))('topic_tech'))!;
    expect(room).toMatchObject({ title: 'Topic: Tech', category: 'Tech' });
    const pipeline = new RagPipeline({ store: temp.store, search: new MemorySearch(temp.store, new LocalEmbedder()), chat: new ScriptedChat() });
    const prepared = await pipeline.prepare(room, 'what did the nurses decide?');
    expect(prepared.candidates.length).toBeGreaterThan(0);
    expect(new Set(prepared.candidates.map((c) => c.chunk.category))).toEqual(new Set(['Tech']));

    const chat = new LocalChatModel(new LocalEmbedder());
    let answer = '';
    for await (const piece of chat.stream((await pipeline.prepare(room, 'what is this room about?')).messages)) answer += piece;
    expect(answer).toBe('Recent in Tech: Kestrel K1 laptop ships; TesseraDB changes its licence.');
  });
});
