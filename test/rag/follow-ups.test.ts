/**
 * Follow-up questions that point back with a pronoun ("what did she say about density?" after
 * "@ai who is Ingrid Aasvold?"): the earlier question's names go with them into the searches, the
 * rerank and the built-in model's choice of sentences, not into the prompt's question.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newNonce, renderGroundedPrompt, type GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { leansBack, pointsBack, withAntecedent } from '../../src/ai/questions.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { RagPipeline } from '../../src/rag/pipeline.js';
import { chatLine } from '../../src/rag/recent-chat.js';
import type { Message } from '../../src/protocol/messages.js';
import { tempStore } from '../helpers.js';
import { item } from '../store/contract.js';
import { MemorySearch, ScriptedChat } from './fakes.js';

/** Chat lines as recentChat renders them: `Ann (24 Nov 2026, 19:00): text`. */
const lines = (...said: [name: string, text: string][]) =>
  said.map(([name, text], i) =>
    chatLine({
      author: { id: `u_${name}`, name, kind: name === 'Salon AI' ? 'assistant' : 'user' },
      text,
      ts: new Date(Date.UTC(2026, 10, 24, 19, i)).toISOString(),
    } as Message),
  );

describe('withAntecedent', () => {
  const asked = lines(['Ann', '@ai who is Ingrid Aasvold?'], ['Salon AI', 'She is the chief executive of Veldra.'], ['Bob', 'nice']);

  it('appends the names of the last question put to the assistant when the question points back', () => {
    expect(pointsBack('what did she say about density?')).toBe(true);
    expect(withAntecedent('what did she say about density?', asked)).toBe('what did she say about density? (Ingrid Aasvold)');
    expect(withAntecedent('where is its factory?', lines(['Cy', '/ask what happened to TesseraDB?']))).toBe('where is its factory? (TesseraDB)');
  });

  it('leaves a question that points nowhere, or has nothing to point at, as it is', () => {
    expect(pointsBack('what did the nurses decide?')).toBe(false);
    expect(withAntecedent('what did the nurses decide?', asked)).toBe('what did the nurses decide?');
    expect(withAntecedent('what did she say?', [])).toBe('what did she say?');
    // Chat that was not put to the assistant is no antecedent.
    expect(withAntecedent('what did she say?', lines(['Ann', 'Ingrid Aasvold spoke today']))).toBe('what did she say?');
  });

  it('looks past earlier follow-ups to the question they followed, and takes a new subject from the question that brought it', () => {
    const chain = [...asked, ...lines(['Ann', '@ai what did she say about density?'], ['Salon AI', 'That it was poor.'])];
    expect(withAntecedent('and what does she run?', chain)).toBe('and what does she run? (Ingrid Aasvold)');
    const shifted = [...asked, ...lines(['Bob', '@ai how dense is the cell?'])];
    expect(withAntecedent('how long does it last?', shifted)).toBe('how long does it last? (cell)');
  });

  it('lends the subject of a question that named nobody: the words after its determiners', () => {
    const about = (earlier: string) => withAntecedent('how long does it last?', lines(['Bob', `@ai ${earlier}`]));
    expect(about('how dense is the new battery cell?')).toBe('how long does it last? (new battery cell)');
    // After an auxiliary, the phrase is the subject and the verb after it is no part of it.
    expect(about('what did the nurses think of this pilot?')).toBe('how long does it last? (nurses pilot)');
    expect(about('how will the new cells perform?')).toBe('how long does it last? (new cells)');
    // No noun phrase: nothing to lend, and no guess from the other words ("dense" would draw density sentences).
    expect(about('how dense?')).toBe('how long does it last?');
    // A run of letters longer than any word is lent by neither path.
    expect(about(`what is the ${'ab'.repeat(30)}?`)).toBe('how long does it last?');
    expect(about(`who is ${'Ab'.repeat(30)}?`)).toBe('how long does it last?');
    // Words the question or the room's title already holds are not lent again.
    expect(withAntecedent('how long does the cell last, and is it safe?', lines(['Bob', '@ai how dense is the cell?']))).toBe(
      'how long does the cell last, and is it safe?',
    );
    expect(withAntecedent('how long does it last?', lines(['Bob', '@ai how dense is the cell?']), 'Veldra cell reaches 168 Wh/kg')).toBe(
      'how long does it last?',
    );
  });

  it('reads a question that goes on from the exchange, or says too little alone, as a follow-up too', () => {
    for (const q of ['and the cost?', 'what about the budget?', 'why?', 'how much?']) expect(leansBack(q), q).toBe(true);
    for (const q of ['what did the nurses decide?', 'what is this about?', 'what did we discuss?']) expect(leansBack(q), q).toBe(false);
    expect(withAntecedent('and why?', asked)).toBe('and why? (Ingrid Aasvold)');
    expect(withAntecedent('what about the budget?', lines(['Ann', '@ai how dense is the cell?']))).toBe('what about the budget? (cell)');
    // A thing put in the place of a yes-or-no question's subject is asked what was asked of it;
    // a pronoun still stands for the subject, without what was asked of it.
    const good = lines(['Bo', '@ai Is the battery life good?'], ['Salon AI', 'Battery life is excellent.']);
    expect(withAntecedent('what about the keyboard?', good)).toBe('what about the keyboard? (good)');
    expect(withAntecedent('and how long does it last?', good)).toBe('and how long does it last? (battery life)');
  });

  it('reads "they" after a "who" or "which" question as whom its answer named first', () => {
    const voted = lines(
      ['Ann', '@ai Who voted against the Harbour Line budget?'],
      ['Salon AI', "The Lowmark Liberals and the Citizens' Alliance voted against, arguing that the cost had grown too fast. Others abstained."],
    );
    expect(withAntecedent('and what did they argue?', voted)).toBe("and what did they argue? (Harbour Line Lowmark Liberals Citizens' Alliance)");
    // Without a pronoun, the question goes on from the earlier question's subject, not the answer's names.
    expect(withAntecedent('what about the budget?', voted)).toBe('what about the budget? (Harbour Line)');
    // "Who is Ingrid Aasvold?" names whom "she" stands for; its answer's names are not lent.
    expect(withAntecedent('what did she say?', asked)).toBe('what did she say? (Ingrid Aasvold)');
  });

  it('appends no name the question or the room’s title already holds', () => {
    expect(withAntecedent('what did Ingrid say about her company?', asked)).toBe('what did Ingrid say about her company? (Aasvold)');
    expect(withAntecedent('who forked it?', lines(['Ann', '@ai why did TesseraDB change its licence?']), 'TesseraDB drops Apache licence')).toBe(
      'who forked it?',
    );
  });
});

const ARTICLE = [
  'The cell reached an energy density of 168 watt-hours per kilogram in the tests.',
  'The density figure puts the chemistry within reach of small electric cars.',
  '"People quietly added that the density is poor," said Ingrid Aasvold, the chief executive.',
].join(' ');

describe('the built-in model', () => {
  const answer = (recent: string[], topic = 'Veldra cell reaches 168 Wh/kg') => {
    const sources: GroundedSource[] = [{ n: 1, label: 'Veldra cell reaches 168 Wh/kg', content: ARTICLE }];
    if (recent.length) sources.push({ n: 2, label: 'From this discussion', content: recent.join('\n'), section: 'recent' });
    const prompt = renderGroundedPrompt({ topic, sources, question: 'what did she say about density?' }, newNonce());
    return new LocalChatModel(new LocalEmbedder()).answer([{ role: 'user', content: prompt }]);
  };

  it('quotes the person an earlier question named', async () => {
    expect(await answer(lines(['Ann', '@ai who is Ingrid Aasvold?']))).toMatch(/^"People quietly added.*said Ingrid Aasvold/);
    // Without the earlier question, "she" names nobody, and the wordier density sentences lead.
    expect(await answer([])).not.toMatch(/^"People quietly added/);
  });

  it('answers a follow-up about the thing an earlier question was about', async () => {
    const sources: GroundedSource[] = [
      { n: 1, label: 'Veldra cell reaches 168 Wh/kg', content: `${ARTICLE} The plant's lease lasts ten years. The cell lasts 2,000 charge cycles.` },
      { n: 2, label: 'From this discussion', content: lines(['Ann', '@ai how dense is the cell?']).join('\n'), section: 'recent' },
    ];
    const ask = (question: string) =>
      new LocalChatModel(new LocalEmbedder()).answer([
        { role: 'user', content: renderGroundedPrompt({ topic: 'Topic: Tech', sources, question }, newNonce()) },
      ]);
    expect(await ask('how long does it last?')).toMatch(/^"?The cell lasts 2,000 charge cycles/);
    // The same question without the earlier one names nothing, and the lease's sentence comes first.
    sources.pop();
    expect(await ask('how long does it last?')).toMatch(/^"?The plant's lease lasts ten years/);
  });

  it('does not quote the same words twice when an earlier answer in the chat said them', async () => {
    const said = '"People quietly added that the density is poor," said Ingrid Aasvold, the chief executive.';
    // In a topic room, where no document is the room's own and chat lines may follow a document's.
    const text = await answer(lines(['Ann', '@ai who is Ingrid Aasvold?'], ['Salon AI', said]), 'Topic: Tech');
    expect(text.split('People quietly added')).toHaveLength(2);
  });
});

describe('the pipeline', () => {
  let temp: ReturnType<typeof tempStore>;
  beforeEach(() => {
    temp = tempStore();
  });
  afterEach(async () => {
    await temp.close();
  });

  it('searches and reranks a follow-up with its antecedent’s names, and keeps the asked question in the prompt', async () => {
    const items = createItemPipeline({ store: temp.store, bodyMaxChars: 100_000, chunk: { size: 400, overlap: 50 } });
    await items.put(item('news_cell', { title: 'Veldra cell reaches 168 Wh/kg', description: '', body: ARTICLE }));
    // More candidates than the reranker's selection, so the model is asked.
    for (let i = 0; i < 6; i++)
      await items.put(item(`news_o${i}`, { title: `Outage ${i}`, description: '', body: `What she said about outage ${i} was brief.` }));
    const thread = await temp.store.ensureMainThread('topic_tech');
    const said = async (name: string, text: string) =>
      (await temp.store.appendMessage({ roomId: 'topic_tech', threadId: thread.id, author: { id: `u_${name}`, name, kind: 'user' }, text })).message;
    await said('Ann', '@ai who is Ingrid Aasvold?');
    const question = await said('Ann', '@ai what did she say?');
    const search = new MemorySearch(temp.store, new LocalEmbedder());
    const reranked: string[] = [];
    const chat = new ScriptedChat({ rerank: async (q, snippets) => (reranked.push(q), snippets.map((_, i) => i)) });
    const pipeline = new RagPipeline({ store: temp.store, search, chat });
    const room = { id: 'topic_tech', title: 'Tech', context: 'Tech' };
    const prepared = await pipeline.prepare(room, 'what did she say?', {}, { id: thread.id, beforeSeq: question.seq });
    expect(search.queries).toContain('what did she say? (Ingrid Aasvold)');
    expect(reranked).toEqual(['what did she say? (Ingrid Aasvold)']);
    const user = prepared.messages.at(-1)!.content;
    expect(user).toContain('what did she say?');
    expect(user).not.toContain('what did she say? (Ingrid Aasvold)');
  });
});
