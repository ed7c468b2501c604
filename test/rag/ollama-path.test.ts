/**
 * The whole ask through the ollama provider against the loopback fake Ollama server: rerank by
 * prompt, the grounded prompt with nonce-fenced sources, a streamed answer, a failing model and
 * recovery.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOT_COVERED, parseGroundedPrompt } from '../../src/ai/grounded-prompt.js';
import { item } from '../store/contract.js';
import { testApp } from '../helpers.js';
import { joined } from '../rooms/helpers.js';
import { startFakeOllama, type FakeServer } from '../fakes/ollama-server.js';

type Turn = { role: string; content: string };

let ollama: FakeServer;
let close: (() => Promise<void>) | undefined;
/** The model's answers mark no citations. */
let citeNothing = false;

beforeEach(async () => {
  ollama = await startFakeOllama({
    chunkChars: 3,
    reply: (messages: Turn[]) => {
      const system = messages.find((m) => m.role === 'system')?.content ?? '';
      if (/rank text snippets/i.test(system)) return 'The most relevant are [7, 2] and 4.';
      const prompt = parseGroundedPrompt(messages.find((m) => m.role === 'user')?.content ?? '');
      if (!prompt) return 'not grounded';
      // As the system instructions ask when the sources do not hold the answer.
      if (/story one about again/.test(prompt.question)) return `${NOT_COVERED.toLowerCase().slice(0, -1)}`;
      if (citeNothing) return `Answer about "${prompt.question}" without citations.`;
      return `Answer about "${prompt.question}" from ${prompt.sources.length} sources [1], [3].`;
    },
  });
});

afterEach(async () => {
  citeNothing = false;
  await close?.();
  close = undefined;
  await ollama.close();
});

async function ollamaApp() {
  const t = await testApp({ AI_PROVIDER: 'ollama', OLLAMA_HOST: ollama.url, AI_TIMEOUT_MS: '5000' } as never, { roomOptions: { shutdownGraceMs: 100 } });
  close = t.close;
  await t.app.ready();
  for (let i = 1; i <= 8; i++) {
    await t.app.salon.ingest!.pipeline.put(
      item(`news_${i}`, { title: `Story number ${i}`, body: `Story ${i} is about topic ${i}. It has a second sentence.` }),
    );
  }
  return t.app;
}

describe('the ollama path', () => {
  it('reranks by prompt, sends the grounded prompt and streams the model answer to the room', async () => {
    const app = await ollamaApp();
    const { client } = await joined(app, 'Ada', 'news_1');
    client.send({ type: 'say', text: '@ai What is story one about?', clientId: 'q1' });
    const done = await client.next('assistant.done', () => true, 10_000);
    expect(done.message.text).toMatch(/^Answer about "What is story one about\?" from \d sources \[1\], \[3\]\.$/);
    expect(client.all('assistant.delta').length).toBeGreaterThan(0);

    const chats = ollama.requests.filter((r) => r.path === '/api/chat').map((r) => r.body as { messages: Turn[] });
    const rerank = chats.find((c) => /rank text snippets/i.test(c.messages[0].content));
    expect(rerank).toBeDefined();
    const answer = chats.find((c) => parseGroundedPrompt(c.messages.at(-1)!.content))!;
    const [system, user] = answer.messages;
    const nonce = /<data-([0-9a-f]+)>/.exec(user.content)![1];
    expect(system.content).toContain(`<data-${nonce}>`);
    const grounded = parseGroundedPrompt(user.content)!;
    expect(grounded.question).toBe('What is story one about?');
    // The model named 7, 2 and 4 (1-based) of the candidates: those, in that order, are the sources
    // it was given; the answer lists the two it cites.
    expect(grounded.sources).toHaveLength(3);
    expect(done.message.sources.map((s: { n: number }) => s.n)).toEqual([1, 3]);
    expect(done.abstained).toBeUndefined();
    expect(system.content).toContain(`reply with exactly this sentence and nothing else: "${NOT_COVERED}"`);
  });

  it('lists no sources and says abstained when the model declines, and every source when it cites none', async () => {
    const app = await ollamaApp();
    const { client } = await joined(app, 'Ada', 'news_1');
    client.send({ type: 'say', text: '@ai What is story one about again?', clientId: 'q1' });
    const declined = await client.next('assistant.done', () => true, 10_000);
    expect(declined.message.text).toBe(NOT_COVERED.toLowerCase().slice(0, -1));
    expect(declined.abstained).toBe(true);
    expect(declined.message.sources).toEqual([]);

    citeNothing = true;
    client.send({ type: 'say', text: '@ai What is story one about?', clientId: 'q2' });
    const uncited = await client.next('assistant.done', (f) => f.message.text.includes('without citations'), 10_000);
    citeNothing = false;
    expect(uncited.abstained).toBeUndefined();
    const prompts = ollama.requests
      .filter((r) => r.path === '/api/chat')
      .map((r) => parseGroundedPrompt((r.body as { messages: Turn[] }).messages.at(-1)!.content));
    const given = prompts
      .filter((p) => p !== null)
      .at(-1)!
      .sources.map((s) => s.n);
    expect(given.length).toBeGreaterThanOrEqual(3);
    expect(uncited.message.sources.map((s: { n: number }) => s.n)).toEqual(given);

    const http = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', payload: { text: 'What is story one about again?' } });
    expect(http.json()).toMatchObject({ abstained: true, sources: [] });
  });

  it('gives the room an AI error when the model fails, and the next ask works', async () => {
    const app = await ollamaApp();
    const { client } = await joined(app, 'Ada', 'news_1');
    ollama.setBehaviour({ failWith: 500 });
    client.send({ type: 'say', text: '@ai What is story two about?', clientId: 'q1' });
    const error = await client.next('error', () => true, 10_000);
    expect(error.code).toMatch(/^ERR_AI_|^ERR_ASSISTANT_FAILED$/);
    expect(error.clientId).toBe('q1');

    ollama.setBehaviour({ failWith: null });
    client.send({ type: 'say', text: '@ai What is story three about?', clientId: 'q2' });
    const done = await client.next('assistant.done', () => true, 10_000);
    expect(done.message.text).toContain('story three');
  });

  it('reports a stream dropped mid-answer as an error and stores no partial answer', async () => {
    const app = await ollamaApp();
    const { client } = await joined(app, 'Ada', 'news_1');
    ollama.setBehaviour({ dropAfterChunks: 3 });
    client.send({ type: 'say', text: '@ai What is story four about?', clientId: 'q1' });
    const error = await client.next('error', () => true, 10_000);
    expect(error.code).toMatch(/^ERR_AI_|^ERR_ASSISTANT_FAILED$/);
    const stored = await app.salon.store.recentMessages('news_1', 5);
    expect(stored.filter((m) => m.author.kind === 'assistant')).toEqual([]);
  });
});
