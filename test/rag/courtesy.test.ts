/** Thanks, a greeting or "who are you?" put to the assistant: answered as such, with nothing searched or cited. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { courtesyOf } from '../../src/ai/courtesy.js';
import { testApp } from '../helpers.js';
import { item } from '../store/contract.js';

describe('a courtesy put to the assistant', () => {
  it.each([
    ['thanks!', 'thanks'],
    ['Great, thank you so much', 'thanks'],
    ['thx ai', 'thanks'],
    ['Hello', 'greeting'],
    ['hi there!', 'greeting'],
    ['Good morning, Salon AI', 'greeting'],
    ['Who are you?', 'identity'],
    ['what can you do?', 'identity'],
  ])('"%s" is %s', (message, courtesy) => {
    expect(courtesyOf(message)).toBe(courtesy);
  });

  it.each([
    'Thanks, what about the cost target?',
    'Hi, how many cycles did the cell last?',
    'Who are the founders?',
    'help me understand the budget',
    `thanks${'!'.repeat(100)}`,
  ])('"%s" is a question', (message) => {
    expect(courtesyOf(message)).toBeNull();
  });
});

describe('the assistant asked a courtesy', () => {
  let t: Awaited<ReturnType<typeof testApp>>;
  beforeAll(async () => {
    t = await testApp({ ASK_LIMIT_USER: '1000', ASK_LIMIT_ROOM: '1000', ASK_LIMIT_IP: '1000' } as never);
    await t.app.ready();
    await t.app.salon.ingest!.pipeline.put(
      item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday. Thanks go to 400 contributors.' }),
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const ask = async (text: string, roomId = 'news_1') => {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/rooms/${roomId}/ask`, payload: { text } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('answers thanks and a greeting as such, searching and citing nothing', async () => {
    // "thanks!" was "The sources I found do not answer this question."; a remote model's answer listed every source searched.
    const thanks = await ask('thanks!');
    expect(thanks).toMatchObject({ answer: 'You are welcome.', sources: [] });
    expect(thanks.abstained).toBeUndefined();
    expect(thanks.stages.search).toMatchObject({ hits: [], candidates: 0 });
    expect((await ask('hello')).answer).toBe('Hello! Ask me anything about this article or about what has been said here.');
    expect((await ask('who are you?')).answer).toMatch(/^I am Salon AI, the room's assistant\. I answer questions about this article /);
  });

  it('answers a question that opens with thanks from the sources', async () => {
    const answer = await ask('Thanks! When was Rust 2.0 shipped?');
    expect(answer.answer).toMatch(/Tuesday/);
    expect(answer.sources.length).toBeGreaterThan(0);
  });
});
