/** The providers factory and its wiring into the app (/readyz, services, overrides). */
import { afterEach, describe, expect, it } from 'vitest';
import { CachedEmbedder } from '../../src/ai/cached-embedder.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { INDEX_EMBEDDER_META_KEY } from '../../src/ai/model-check.js';
import { OllamaChatModel, OllamaEmbedder } from '../../src/ai/remote/ollama.js';
import { OpenAIChatModel, OpenAIEmbedder } from '../../src/ai/remote/openai.js';
import { createAi } from '../../src/parts.js';
import { testConfig } from '../../src/config.js';
import type { FakeServer } from '../fakes/common.js';
import { startFakeOllama } from '../fakes/ollama-server.js';
import { ADMIN, testApp } from '../helpers.js';
import { closedPortUrl } from './remote-cases.js';
import { joined } from '../rooms/helpers.js';
import { item } from '../store/contract.js';

describe('createAi', () => {
  it('builds the local pair by default, at LOCAL_EMBED_DIM', async () => {
    const p = createAi(testConfig({ LOCAL_EMBED_DIM: '256' }));
    expect(p.embedder).toBeInstanceOf(LocalEmbedder);
    expect(p.embedder.dimensions).toBe(256);
    expect(p.chat).toBeInstanceOf(LocalChatModel);
    expect(await p.health()).toMatchObject({ ok: true, provider: 'local' });
  });

  it('builds Ollama and OpenAI models from their settings', () => {
    const o = createAi(testConfig({ AI_PROVIDER: 'ollama', OLLAMA_EMBED_MODEL: 'mxbai-embed-large', OLLAMA_CHAT_MODEL: 'qwen2.5' }));
    expect(o.embedder).toBeInstanceOf(OllamaEmbedder);
    expect(o.embedder.model).toBe('ollama:mxbai-embed-large');
    expect(o.embedder.dimensions).toBe(1024);
    expect(o.chat).toBeInstanceOf(OllamaChatModel);
    expect(o.chat.model).toBe('qwen2.5');
    const a = createAi(testConfig({ AI_PROVIDER: 'openai', OPENAI_CHAT_MODEL: 'local-model' }));
    expect(a.embedder).toBeInstanceOf(OpenAIEmbedder);
    expect(a.chat).toBeInstanceOf(OpenAIChatModel);
  });

  it('caches a remote embedder in the store, not the local one', () => {
    const store = {} as never;
    expect(createAi(testConfig({ AI_PROVIDER: 'ollama' }), store).embedder).toBeInstanceOf(CachedEmbedder);
    expect(createAi(testConfig(), store).embedder).toBeInstanceOf(LocalEmbedder);
  });
});

describe('AI in the app', () => {
  let close: (() => Promise<void>) | undefined;
  let fake: FakeServer | undefined;
  afterEach(async () => {
    await close?.();
    await fake?.close();
    close = undefined;
    fake = undefined;
  });

  it('fills services and reports ai and index-model in /readyz', async () => {
    const t = await testApp();
    close = t.close;
    expect(t.app.salon.embedder).toBeInstanceOf(LocalEmbedder);
    expect(t.app.salon.chat).toBeInstanceOf(LocalChatModel);
    const res = await t.app.inject({ method: 'GET', url: '/readyz', headers: ADMIN });
    expect(res.json().checks.ai).toMatchObject({ ok: true });
    expect(res.json().checks['index-model']).toMatchObject({ ok: true });
  });

  it('takes embedder and chat overrides', async () => {
    const embedder = new LocalEmbedder({ dimensions: 64 });
    const chat = new LocalChatModel(embedder);
    const t = await testApp({}, { embedder, chat });
    close = t.close;
    expect(t.app.salon.embedder).toBe(embedder);
    expect(t.app.salon.chat).toBe(chat);
  });

  it('is ready with Ollama reachable and its models pulled', async () => {
    fake = await startFakeOllama();
    const t = await testApp({ AI_PROVIDER: 'ollama', OLLAMA_HOST: fake.url });
    close = t.close;
    const res = await t.app.inject({ method: 'GET', url: '/readyz', headers: ADMIN });
    expect(res.json().checks.ai).toMatchObject({ ok: true });
  });

  it('is not ready, with the fix in the detail, when Ollama is down', async () => {
    const url = await closedPortUrl();
    const t = await testApp({ AI_PROVIDER: 'ollama', OLLAMA_HOST: url });
    close = t.close;
    const res = await t.app.inject({ method: 'GET', url: '/readyz', headers: ADMIN });
    expect(res.statusCode).toBe(503);
    expect(res.json().checks.ai.detail).toContain(`is Ollama running at ${url}? start it with \`ollama serve\``);
    // Without the admin token: which check fails, not the host it failed to reach.
    const stranger = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(stranger.statusCode).toBe(503);
    expect(stranger.json()).toEqual({ ok: false, checks: expect.objectContaining({ ai: { ok: false } }) });
    expect(stranger.body).not.toContain(url);
  });

  it('tells askers and the room which failure and which fix, not the model server’s address or its own error text', async () => {
    fake = await startFakeOllama();
    const t = await testApp({ AI_PROVIDER: 'ollama', OLLAMA_HOST: fake.url, AI_TIMEOUT_MS: '5000' }, { roomOptions: { shutdownGraceMs: 100 } });
    close = t.close;
    await t.app.ready();
    await t.app.salon.ingest!.pipeline.put(item('news_1', { title: 'Story one', body: 'Story one is about batteries. It has a second sentence.' }));
    const { client: bystander } = await joined(t.app, 'Bo', 'news_1');
    fake.setBehaviour({ failWith: 500 });
    const asked = await t.app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', payload: { text: 'What is story one about?' } });
    const frame = await bystander.next('error', () => true, 10_000);
    expect(asked.statusCode).toBe(503);
    expect(asked.json().error).toEqual({ code: 'ERR_AI_UNAVAILABLE', message: 'AI provider unavailable: Ollama answered HTTP 500' });
    expect(frame).toMatchObject({ code: 'ERR_AI_UNAVAILABLE', message: 'AI provider unavailable: Ollama answered HTTP 500' });
    for (const told of [asked.body, JSON.stringify(frame)]) {
      expect(told).not.toContain(new URL(fake.url).host);
      expect(told).not.toContain('llama runner');
    }
  });

  it('is not ready when the index was built by another embedder, and says to reindex', async () => {
    const t = await testApp();
    close = t.close;
    await t.app.salon.store.setMeta(INDEX_EMBEDDER_META_KEY, JSON.stringify({ model: 'ollama:nomic-embed-text', dimensions: 768 }));
    const res = await t.app.inject({ method: 'GET', url: '/readyz', headers: ADMIN });
    expect(res.statusCode).toBe(503);
    expect(res.json().checks['index-model'].detail).toContain('salon reindex');
  });
});
