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

  it('reports a host that answers 404 to the API as a wrong URL, not a missing model', async () => {
    fake = await startFakeOllama();
    const err = await rejection(new OllamaEmbedder('nomic-embed-text', { host: `${fake.url}/nope`, ...limits }).embed(['a']));
    expect(err.code).toBe('ERR_AI_UNAVAILABLE');
    expect(err.message).toContain('check the URL');
  });

  it('validates options at construction, naming the option', () => {
    expect(() => new OllamaEmbedder('m', { host: 'nope', ...limits })).toThrow(/host/);
    expect(() => new OllamaChatModel('m', { host: 'http://127.0.0.1:1', timeoutMs: 10, idleTimeoutMs: -1 })).toThrow(/idleTimeoutMs/);
    expect(() => new OllamaEmbedder('m', { host: 'http://127.0.0.1:1', ...limits, batchSize: 1.5 })).toThrow(/batchSize/);
  });
});
