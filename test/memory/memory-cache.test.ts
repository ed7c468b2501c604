/**
 * Conversation memory leaves nothing in the embedding cache: a remote embedder's document vectors
 * are kept there by the hash of their text, beyond the reach of a thread's deletion and of memory
 * retention, so a deleted discussion's windows would stay behind as vectors (which say much of
 * their text) and as hashes (which confirm a guess of it). A chunk keeps its vector in its own row.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CachedEmbedder, embeddingCacheKey } from '../../src/ai/cached-embedder.js';
import { sha256 } from '../../src/store/hashing.js';
import { ADMIN, testApp } from '../helpers.js';
import { item } from '../store/contract.js';
import { startFakeOllama, type FakeServer } from '../fakes/ollama-server.js';

let ollama: FakeServer;
let close: (() => Promise<void>) | undefined;

beforeEach(async () => {
  ollama = await startFakeOllama({ reply: () => 'ok' });
});

afterEach(async () => {
  await close?.();
  close = undefined;
  await ollama.close();
});

describe('conversation memory and the embedding cache', () => {
  it('stores no window of a thread in the cache, so deleting the thread leaves none behind', async () => {
    const t = await testApp({ AI_PROVIDER: 'ollama', OLLAMA_HOST: ollama.url, AI_TIMEOUT_MS: '5000' } as never, { roomOptions: { shutdownGraceMs: 100 } });
    close = t.close;
    const app = t.app;
    await app.ready();
    const { store, memory, embedder } = app.salon;
    await app.salon.ingest!.pipeline.put(item('news_1', { title: 'Night trains', body: 'Night trains cross Europe again. Sleeper cars are back.' }));
    const created = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/threads', headers: ADMIN, payload: { title: 'Health' } });
    expect(created.statusCode, created.body).toBe(200);
    const threadId = created.json().thread.id as string;
    const start = Date.UTC(2026, 10, 1, 10);
    const lines = ['My biopsy results come on Friday.', 'I hope it is benign, my father had melanoma.', 'Fingers crossed for you, Ann.'];
    const messages = lines.map((text, i) => ({ author: { name: i === 2 ? 'Cy' : 'Ann' }, text, ts: new Date(start + i * 60_000).toISOString() }));
    const imported = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/import', headers: ADMIN, payload: { threadId, messages } });
    expect(imported.statusCode, imported.body).toBe(200);
    await memory.idle();

    const chunks = await store.scanThreadMemory(threadId, 0, 100);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.vector)).toBe(true);
    const key = embeddingCacheKey(embedder);
    const cached = async () =>
      (
        await store.getEmbeddings(
          key,
          chunks.map((c) => sha256(c.text)),
        )
      ).size;
    // The remote embedder's cache is on (documents use it); the memory's chunks are not in it.
    expect(embedder).toBeInstanceOf(CachedEmbedder);
    expect(await cached()).toBe(0);

    const deleted = await app.inject({ method: 'DELETE', url: `/api/v1/threads/${threadId}`, headers: ADMIN });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await cached()).toBe(0);
  });
});
