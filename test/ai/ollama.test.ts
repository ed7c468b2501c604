/** Ollama specifics: tag matching, a host that is not Ollama, option validation. */
import { afterEach, describe, expect, it } from 'vitest';
import { hasOllamaModel, OllamaChatModel, OllamaEmbedder, ollamaHealth } from '../../src/ai/remote/ollama.js';
import type { FakeServer } from '../fakes/common.js';
import { startFakeOllama } from '../fakes/ollama-server.js';
import { rejection } from './remote-cases.js';

const limits = { timeoutMs: 5_000, idleTimeoutMs: 5_000 };

describe('Ollama provider', () => {
  let fake: FakeServer | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('matches models with and without tags', () => {
    expect(hasOllamaModel(['llama3.2:latest'], 'llama3.2')).toBe(true);
    expect(hasOllamaModel(['llama3.2:latest'], 'llama3.2:latest')).toBe(true);
    expect(hasOllamaModel(['llama3.2:1b'], 'llama3.2')).toBe(false);
    expect(hasOllamaModel(['llama3.2:1b'], 'llama3.2:1b')).toBe(true);
  });

  it('knows nomic-embed-text has 768 dimensions before the first call', () => {
    expect(new OllamaEmbedder('nomic-embed-text', { host: 'http://127.0.0.1:1', ...limits }).dimensions).toBe(768);
  });

  it('reports the Ollama version when healthy', async () => {
    fake = await startFakeOllama();
    const h = await ollamaHealth(fake.url, ['nomic-embed-text', 'llama3.2']);
    expect(h.ok).toBe(true);
    expect(h.detail).toContain('0.9.0-fake');
    expect(fake.requests.map((r) => r.path)).toEqual(['/api/version', '/api/tags']);
  });

  it('shows a version the server made up on one short line, and none that is not a string', async () => {
    fake = await startFakeOllama();
    const tags = { models: [{ name: 'llama3.2:latest' }] };
    for (const version of [`9.9\u001b]8;;http://evil/\u0007\n\u202eWARN ${'x'.repeat(200_000)}`, { major: 1 }]) {
      fake.setBehaviour({
        raw: (req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(req.path === '/api/version' ? { version } : tags));
        },
      });
      const h = await ollamaHealth(fake.url, ['llama3.2']);
      expect(h.ok).toBe(true);
      expect(h.detail.length).toBeLessThan(300);
      expect(h.detail).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
      expect(h.detail).not.toContain('[object');
    }
  });

  it('reports a host that answers 404 to the API as a wrong URL, not a missing model', async () => {
    fake = await startFakeOllama();
    const err = await rejection(new OllamaEmbedder('nomic-embed-text', { host: `${fake.url}/nope`, ...limits }).embed(['a']));
    expect(err.code).toBe('ERR_AI_UNAVAILABLE');
    expect(err.message).toContain('check the URL');
  });

  it('sends the user name and password of OLLAMA_HOST as Basic credentials, and never shows the password', async () => {
    fake = await startFakeOllama();
    const host = fake.url.replace('://', '://ann:s3cret%2Fpw@');
    const basic = `Basic ${Buffer.from('ann:s3cret/pw').toString('base64')}`;
    expect(await new OllamaEmbedder('nomic-embed-text', { host, ...limits }).embed(['a'])).toHaveLength(1);
    const healthy = await ollamaHealth(host, ['nomic-embed-text', 'llama3.2']);
    expect(healthy.ok).toBe(true);
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual([basic, basic, basic]);
    fake.setBehaviour({
      raw: (req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `refused ${req.headers.authorization} (ann:s3cret/pw, ann:s3cret%2Fpw)` }));
      },
    });
    const failed = [
      (await rejection(new OllamaEmbedder('nomic-embed-text', { host, ...limits }).embed(['a']))).message,
      (await ollamaHealth(host, ['llama3.2'])).detail,
    ];
    for (const text of [healthy.detail, ...failed]) {
      expect(text).not.toContain('s3cret');
      expect(text).not.toContain(basic.slice(6));
    }
    expect(failed[0]).toContain('answered HTTP 500');
  });

  it('follows no redirect: the prompt goes nowhere else and the answer is an error', async () => {
    const elsewhere = await startFakeOllama();
    try {
      fake = await startFakeOllama({
        raw: (_req, res) => {
          res.writeHead(307, { location: `${elsewhere.url}/api/chat` });
          res.end();
        },
      });
      const chat = new OllamaChatModel('llama3.2', { host: fake.url, ...limits });
      const err = await rejection(chat.summarize('the private question'));
      expect(err.code).toBe('ERR_AI_UNAVAILABLE');
      expect(err.message).toContain('HTTP 307');
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it('validates options at construction, naming the option', () => {
    expect(() => new OllamaEmbedder('m', { host: 'nope', ...limits })).toThrow(/host/);
    expect(() => new OllamaChatModel('m', { host: 'http://127.0.0.1:1', timeoutMs: 10, idleTimeoutMs: -1 })).toThrow(/idleTimeoutMs/);
    expect(() => new OllamaEmbedder('m', { host: 'http://127.0.0.1:1', ...limits, batchSize: 1.5 })).toThrow(/batchSize/);
  });
});
