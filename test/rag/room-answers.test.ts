/**
 * The assistant inside a real app (local providers, real search and rooms): answers streamed to
 * every member over injectWS, a late joiner mid-answer, the HTTP ask route.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ABSTAIN_TEXT } from '../../src/rag/answer-run.js';
import type { AppOverrides } from '../../src/app.js';
import { item } from '../store/contract.js';
import { ADMIN, testApp } from '../helpers.js';
import { joined } from '../rooms/helpers.js';
import { ScriptedChat } from './fakes.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function appWithContent(env: Record<string, string> = {}, overrides: AppOverrides = {}) {
  const t = await testApp(env as never, { ...overrides, roomOptions: { shutdownGraceMs: 100 } });
  close = t.close;
  await t.app.ready();
  const pipeline = t.app.salon.ingest!.pipeline;
  await pipeline.put(
    item('news_1', {
      title: 'Rust 2.0 released',
      description: 'The Rust team shipped a new edition.',
      body: 'The Rust team shipped Rust 2.0 on Tuesday. The new edition makes compile times twice as fast. The borrow checker got smarter error messages.',
      comments: [{ by: 'pg', text: 'Compile times were the main complaint for years.', time: 1 }],
    }),
  );
  await pipeline.put(
    item('news_2', { title: 'Volcano erupts in Iceland', description: '', body: 'Lava reached the town of Grindavik. Flights were cancelled for two days.' }),
  );
  return t.app;
}

describe('answers in a live room', () => {
  it('streams the answer to every member and stores it with its sources', async () => {
    const app = await appWithContent();
    const { client: ada } = await joined(app, 'Ada', 'news_1');
    const { client: bob } = await joined(app, 'Bob', 'news_1');
    ada.send({ type: 'say', text: '@ai How much faster are compile times?', clientId: 'q1' });
    for (const c of [ada, bob]) {
      const question = await c.next('message', (f) => f.message.clientId === 'q1');
      const stages: string[] = [];
      for (let i = 0; i < 3; i++) stages.push((await c.next('assistant.progress')).stage);
      expect(stages).toEqual(['searching', 'reranking', 'writing']);
      const done = await c.next('assistant.done', () => true, 10_000);
      const text = c
        .all('assistant.delta')
        .map((d) => d.text)
        .join('');
      expect(done.message.text).toBe(text.trim());
      expect(done.message.text).toContain('twice as fast');
      expect(done.message.text).toMatch(/\[\d\]/);
      expect(done.message.replyTo).toBe(question.message.id);
      expect(done.message.author).toEqual({ id: 'assistant', name: 'Salon AI', kind: 'assistant' });
      const cited = Number(/\[(\d)\]/.exec(done.message.text)![1]);
      expect(done.message.sources.find((s: { n: number }) => s.n === cited)).toMatchObject({
        id: 'news_1',
        title: 'Rust 2.0 released',
        url: 'https://example.com/news_1',
      });
    }
    const stored = await app.salon.store.recentMessages('news_1', 5);
    expect(stored.map((m) => m.author.kind)).toEqual(['user', 'assistant']);
    expect(stored[1].sources?.length).toBeGreaterThan(0);
  });

  it('gives a member who joins mid-answer the text so far, then the rest live', async () => {
    const pieces = Array.from({ length: 12 }, (_, i) => `part${i} `);
    const app = await appWithContent({}, { chat: new ScriptedChat({ pieces, pieceDelayMs: 40 }) });
    const { client: ada } = await joined(app, 'Ada', 'news_1');
    ada.send({ type: 'ask', text: 'What happened?', clientId: 'q1' });
    await ada.next('assistant.delta', () => true, 5000);
    await ada.next('assistant.delta', () => true, 5000);
    const { client: late, welcome } = await joined(app, 'Late', 'news_1');
    expect(welcome.pending).toHaveLength(1);
    const [pending] = welcome.pending;
    expect(pending.stage).toBe('writing');
    expect(pending.text.length).toBeGreaterThan(0);
    const done = await late.next('assistant.done', () => true, 10_000);
    const rest = late
      .all('assistant.delta')
      .map((d) => d.text)
      .join('');
    expect(pending.text + rest).toBe(pieces.join(''));
    expect(done.message.text).toBe(pieces.join('').trim());
  });
});

describe('private asks in a live room', () => {
  it('answers the asker alone and keeps the answer out of the room history', async () => {
    const app = await appWithContent();
    const { client: ada } = await joined(app, 'Ada', 'news_1');
    const { client: bob } = await joined(app, 'Bob', 'news_1');
    ada.send({ type: 'ask', text: 'How much faster are compile times?', clientId: 'p1', private: true });
    const done = await ada.next('assistant.done', () => true, 10_000);
    expect(done.message.text).toContain('twice as fast');
    bob.send({ type: 'ping' });
    await bob.next('pong');
    expect(bob.frames.filter((f) => f.type.startsWith('assistant.') || f.type === 'message')).toEqual([]);
    expect(await app.salon.store.recentMessages('news_1', 5)).toEqual([]);
  });
});

describe('POST /api/v1/rooms/:id/ask', () => {
  it('answers over HTTP and broadcasts the question and the answer in the room', async () => {
    const app = await appWithContent();
    const { client } = await joined(app, 'Watcher', 'news_2');
    const res = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_2/ask', payload: { text: 'Which town did the lava reach?', name: 'Curl' } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.answer).toContain('Grindavik');
    expect(body.sources[0]).toMatchObject({ n: 1, id: 'news_2', kind: 'news', sourceType: 'document' });
    expect(body.stages).toMatchObject({ search: { candidates: expect.any(Number) }, rerank: { selected: expect.any(Number) } });
    expect(body.position).toBe(0);
    const question = await client.next('message');
    expect(question.message).toMatchObject({ text: '@ai Which town did the lava reach?', author: { name: 'Curl', kind: 'user' } });
    const done = await client.next('assistant.done');
    expect(done.message).toMatchObject({ text: body.answer, replyTo: question.message.id });
  });

  it('says plainly when neither the indexed content nor the discussion covers the question, citing nothing', async () => {
    const app = await appWithContent();
    const res = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', payload: { text: 'What is the capital of Mongolia?' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ answer: ABSTAIN_TEXT, abstained: true, sources: [] });
    const [, answer] = await app.salon.store.recentMessages('news_1', 2);
    expect(answer).toMatchObject({ text: ABSTAIN_TEXT, author: { kind: 'assistant' } });
    expect(answer.sources).toEqual([]);
  });

  it('answers unknown rooms with ERR_ROOM_NOT_FOUND, unknown threads with ERR_THREAD_NOT_FOUND and bad bodies with ERR_BAD_REQUEST, writing nothing', async () => {
    const app = await appWithContent();
    const missing = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_404/ask', payload: { text: 'hi' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('ERR_ROOM_NOT_FOUND');
    for (const payload of [
      {},
      { text: '' },
      { text: 'x'.repeat(2001) },
      { text: `a${'\u0301'.repeat(100)}` },
      { text: 'ok', extra: 1 },
      { text: 'ok', threadId: (await app.salon.store.ensureMainThread('news_2')).id },
    ]) {
      const res = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', payload, headers: ADMIN });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.code).toBe('ERR_BAD_REQUEST');
    }
    // A thread no room has is not found, as the store and a room socket say.
    const unknown = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', payload: { text: 'ok', threadId: 'thr_none' } });
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, 'ERR_THREAD_NOT_FOUND']);
    expect(await app.salon.store.recentMessages('news_1', 5)).toEqual([]);
  });

  it('names an HTTP asker by a keyed hash of its address, never a plain hash, and cleans the name like a socket name', async () => {
    const app = await appWithContent();
    const ask = (payload: Record<string, unknown>, remoteAddress = '203.0.113.7') =>
      app.inject({ method: 'POST', url: '/api/v1/rooms/news_2/ask', payload, remoteAddress });
    expect((await ask({ text: 'Which town did the lava reach?', name: '  Curl  ' })).statusCode).toBe(200);
    expect((await ask({ text: 'And the flights?' }, '2001:db8:1:2:aaaa::1')).statusCode).toBe(200);
    expect((await ask({ text: 'Anything else?' }, '2001:db8:1:2:bbbb::2')).statusCode).toBe(200);
    const askers = (await app.salon.store.recentMessages('news_2', 10)).filter((m) => m.author.kind === 'user').map((m) => m.author);
    expect(askers[0].name).toBe('Curl');
    expect(askers[0].id).toBe(app.salon.rooms!.identity.addressId('203.0.113.7'));
    expect(askers[0].id).not.toContain(createHash('sha256').update('203.0.113.7').digest('hex').slice(0, 16));
    // One IPv6 subscriber's /64 is one asker, whichever address of it they use.
    expect(askers[1].id).toBe(askers[2].id);
    expect(askers[1].id).not.toBe(askers[0].id);
    for (const name of ['Salon AI', 'ＡＩ', 'a s s i s t a n t', 'ѕystem', 'S.Y.S.T.E.M']) {
      const res = await ask({ text: 'hi', name });
      expect(res.statusCode, name).toBe(400);
      expect(res.json().error.code, name).toBe('ERR_NAME_RESERVED');
    }
    for (const name of ['x'.repeat(33), 'a\u202eb', ' ']) {
      const res = await ask({ text: 'hi', name });
      expect(res.statusCode, name).toBe(400);
      expect(res.json().error.code, name).toBe('ERR_BAD_REQUEST');
    }
  });

  it('sends a question naming a merged thread to the thread that absorbed it, as a socket’s', async () => {
    const app = await appWithContent();
    const main = await app.salon.store.ensureMainThread('news_2');
    const side = await app.salon.threads.create('news_2', 'Lava', 'admin');
    await app.salon.threads.merge(main.id, side.id, 'admin');
    const res = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_2/ask', payload: { text: 'Which town did the lava reach?', threadId: side.id } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().message.threadId).toBe(main.id);
    const [question] = await app.salon.store.threadMessages(main.id, 1, 2);
    expect(question).toMatchObject({ text: '@ai Which town did the lava reach?', threadId: main.id });
  });

  it('answers in a topic room from the category summary context', async () => {
    const app = await appWithContent();
    await app.salon.topics!.refreshAll();
    const res = await app.inject({ method: 'POST', url: '/api/v1/rooms/topic_tech/ask', payload: { text: 'Where did the lava flow?' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().answer).toContain('Grindavik');
  });
});

describe('the discussion in the answer', () => {
  /** Ann and Cy chat in the Rust room, then ask; returns the answer's done frame. */
  async function chatThenAsk(questions: string[]) {
    const app = await appWithContent();
    const { client: ann } = await joined(app, 'Ann', 'news_1');
    const { client: cy } = await joined(app, 'Cy', 'news_1');
    ann.send({ type: 'say', text: 'My cousin Bob lost 4000 dollars on Meridian last week', clientId: 'c1' });
    const bob = (await cy.next('message', (f) => f.message.clientId === 'c1')).message;
    cy.send({ type: 'say', text: 'That is rough, he should have sold when the peg wobbled', clientId: 'c2' });
    await ann.next('message', (f) => f.message.clientId === 'c2');
    const done: { message: { text: string; sources?: Record<string, unknown>[] }; abstained?: boolean }[] = [];
    for (const [i, q] of questions.entries()) {
      ann.send({ type: 'say', text: `@ai ${q}`, clientId: `q${i}` });
      // One answer at a time: each question's answer comes before the next is asked.
      done.push((await ann.next('assistant.done', () => true, 10_000)) as (typeof done)[number]);
    }
    return { app, bob, done };
  }

  it('answers a question about what someone said from the recent chat, citing the messages', async () => {
    const { bob, done } = await chatThenAsk(['how much money did Bob lose?']);
    const [answer] = done;
    expect(answer.abstained).toBeUndefined();
    expect(answer.message.text).toContain('4000 dollars');
    const cited = Number(/\[(\d)\]/.exec(answer.message.text)![1]);
    const source = answer.message.sources!.find((s) => s.n === cited)!;
    expect(source).toMatchObject({ sourceType: 'conversation', kind: 'thread', authors: ['Ann', 'Cy'] });
    expect(source.title).toMatch(/^From this discussion — Ann, Cy, \d{1,2} \w{3} \d{4}$/);
    expect(source.messageIds).toContain(bob.id);
  });

  it('summarises what was discussed from the chat, and abstains on what nobody covered', async () => {
    const { app, done } = await chatThenAsk(['can you summarise what we discussed so far?', 'what is the capital of France?']);
    const [summary, france] = done;
    expect(summary.abstained).toBeUndefined();
    expect(summary.message.text).toContain('4000 dollars');
    expect(summary.message.text).toContain('peg wobbled');
    expect(summary.message.sources!.some((s) => s.sourceType === 'conversation')).toBe(true);
    expect(france.abstained).toBe(true);
    expect(france.message.text).toBe(ABSTAIN_TEXT);
    expect(france.message.sources).toEqual([]);
    // The abstention is stored like any answer, so the room's history shows it.
    const stored = await app.salon.store.recentMessages('news_1', 1);
    expect(stored[0].text).toBe(ABSTAIN_TEXT);
  });

  it('still answers from the room’s item when the chat is silent on it', async () => {
    const { done } = await chatThenAsk(['How much faster are compile times?']);
    expect(done[0].message.text).toContain('twice as fast');
    expect(done[0].message.sources!.some((s) => s.id === 'news_1' && s.sourceType === 'document')).toBe(true);
  });
});
