/** OpenAI-compatible specifics: the bearer key is sent, never shown; a base URL without /v1 is named. */
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIChatModel, OpenAIEmbedder, openaiHealth } from '../../src/ai/remote/openai.js';
import type { FakeServer } from '../fakes/common.js';
import { startFakeOpenAI } from '../fakes/openai-server.js';
import { collect, rejection } from './remote-cases.js';

const KEY = 'sk-live-abcdef0123456789';
const limits = { timeoutMs: 5_000, idleTimeoutMs: 5_000 };

describe('OpenAI-compatible provider', () => {
  let fake: FakeServer;
  afterEach(() => fake.close());

  it('sends the API key as a bearer token on every call', async () => {
    fake = await startFakeOpenAI({ apiKey: KEY });
    const options = { baseUrl: `${fake.url}/v1`, apiKey: KEY, ...limits };
    await new OpenAIEmbedder('text-embedding-3-small', options).embed(['a']);
    await collect(new OpenAIChatModel('gpt-4o-mini', options).stream([{ role: 'user', content: 'hi' }]));
    expect((await openaiHealth(options, ['gpt-4o-mini'])).ok).toBe(true);
    expect(fake.requests).toHaveLength(3);
    for (const r of fake.requests) expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('never puts a rejected key in the error, even when the server echoes it', async () => {
    fake = await startFakeOpenAI({ apiKey: 'sk-the-right-one' });
    const options = { baseUrl: `${fake.url}/v1`, apiKey: KEY, ...limits };
    const errors = [
      await rejection(new OpenAIEmbedder('text-embedding-3-small', options).embed(['a'])),
      await rejection(collect(new OpenAIChatModel('gpt-4o-mini', options).stream([{ role: 'user', content: 'hi' }]))),
    ];
    for (const err of errors) {
      expect(err.code).toBe('ERR_AI_UNAVAILABLE');
      expect(err.message).toContain('HTTP 401');
      expect(err.message).not.toContain(KEY);
      expect(JSON.stringify(err)).not.toContain(KEY);
    }
    const h = await openaiHealth(options, ['gpt-4o-mini']);
    expect(h.ok).toBe(false);
    expect(h.detail).not.toContain(KEY);
  });

  it('tells the status of an error answer whose message is not a string', async () => {
    const bodies = [{ error: { message: 123 } }, { error: { message: { text: 'no' } } }, { error: 42 }, null];
    fake = await startFakeOpenAI({
      raw: (req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify(bodies[Number(req.body.input[0])]));
      },
    });
    for (let i = 0; i < bodies.length; i++) {
      const err = await rejection(new OpenAIEmbedder('text-embedding-3-small', { baseUrl: `${fake.url}/v1`, apiKey: KEY, ...limits }).embed([String(i)]));
      expect(err.code).toBe('ERR_AI_UNAVAILABLE');
      expect(err.message).toContain('check the API key');
    }
  });

  it('takes a finish_reason as the end of a stream that leaves [DONE] out, and reads nothing after [DONE]', async () => {
    const piece = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const bodies = [piece({ content: 'Hi' }) + piece({}, 'stop'), piece({ content: 'Hi' }) + 'data: [DONE]\n\n' + piece({ content: ' late' })];
    fake = await startFakeOpenAI({
      raw: (req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(bodies[Number(req.body.messages[0].content)]);
      },
    });
    const chat = new OpenAIChatModel('gpt-4o-mini', { baseUrl: `${fake.url}/v1`, ...limits });
    for (let i = 0; i < bodies.length; i++) expect((await collect(chat.stream([{ role: 'user', content: String(i) }]))).join('')).toBe('Hi');
  });

  it('names a base URL without the password it may carry', async () => {
    fake = await startFakeOpenAI();
    const h = await openaiHealth({ baseUrl: `${fake.url.replace('://', '://ann:s3cret@')}/v1`, ...limits }, ['gpt-4o-mini']);
    expect(h.ok).toBe(true);
    expect(h.detail).not.toContain('s3cret');
  });

  it('sends no Authorization header without a key (local servers)', async () => {
    fake = await startFakeOpenAI();
    await new OpenAIEmbedder('text-embedding-3-small', { baseUrl: `${fake.url}/v1`, ...limits }).embed(['a']);
    expect(fake.requests[0].headers.authorization).toBeUndefined();
  });

  it('tells a wrong base URL (no /v1) from a missing model', async () => {
    fake = await startFakeOpenAI();
    const err = await rejection(new OpenAIEmbedder('text-embedding-3-small', { baseUrl: fake.url, ...limits }).embed(['a']));
    expect(err.code).toBe('ERR_AI_UNAVAILABLE');
    expect(err.message).toContain('answered 404');
    expect(err.message).toContain('check the URL');
  });

  it('orders embeddings by their index (from 0, or from 1 throughout), and refuses rows whose indices do not name each text once', async () => {
    const row = (embedding: number[], index?: number) => ({ object: 'embedding', embedding, ...(index === undefined ? {} : { index }) });
    const answers: Record<string, object[]> = {
      ordered: [row([0, 1], 1), row([1, 0], 0)],
      plain: [row([1, 0]), row([0, 1])],
      // Gemini's OpenAI-compatible endpoint leaves out an index of 0, as protobuf does a default.
      zeroLeftOut: [row([0, 1], 1), row([1, 0])],
      // xinference numbers the texts from 1.
      fromOne: [row([0, 1], 2), row([1, 0], 1)],
      fromOneGap: [row([1, 0], 1), row([0, 1], 3)],
      fromOneLeftOut: [row([0, 1], 2), row([1, 0])],
      twice: [row([1, 0], 1), row([0, 1], 1)],
      mixed: [row([1, 0], 0), row([0, 1])],
      outside: [row([1, 0], 0), row([0, 1], 2)],
      fraction: [row([1, 0], 0), row([0, 1], 0.5)],
    };
    fake = await startFakeOpenAI({
      raw: (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: answers[req.body.input[0]] }));
      },
    });
    const embedder = new OpenAIEmbedder('my-embedder', { baseUrl: `${fake.url}/v1`, ...limits });
    for (const name of ['ordered', 'plain', 'zeroLeftOut', 'fromOne'])
      expect((await embedder.embed([name, 'b'])).map((v) => [...v])).toEqual([
        [1, 0],
        [0, 1],
      ]);
    for (const name of ['twice', 'mixed', 'outside', 'fraction', 'fromOneGap', 'fromOneLeftOut']) {
      const err = await rejection(embedder.embed([name, 'b']));
      expect(err.code, name).toBe('ERR_AI_BAD_RESPONSE');
      expect(err.message, name).toContain('index');
    }
  });

  it('validates options at construction, naming the option', () => {
    expect(() => new OpenAIEmbedder('m', { baseUrl: 'not a url', ...limits })).toThrow(/baseUrl/);
    expect(() => new OpenAIChatModel('m', { baseUrl: 'http://x.test/v1', timeoutMs: 0, idleTimeoutMs: 1 })).toThrow(/timeoutMs/);
    expect(() => new OpenAIEmbedder('m', { baseUrl: 'http://x.test/v1', ...limits, batchSize: 0 })).toThrow(/batchSize/);
    expect(() => new OpenAIEmbedder('', { baseUrl: 'http://x.test/v1', ...limits })).toThrow(/model/);
  });
});
