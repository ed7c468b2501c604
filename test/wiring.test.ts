/**
 * The wiring: src/parts.ts alone picks the seams, src/services.ts builds every part before any
 * plugin runs, and the plugins declare what they need, so a wrong order fails loudly.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../src/ai/local/local-embedder.js';
import { testConfig } from '../src/config.js';
import { createAi, createRoomBus, openStore } from '../src/parts.js';
import assistantPlugin from '../src/plugins/assistant.js';
import contentPlugin from '../src/plugins/content.js';
import { InProcessBus } from '../src/rooms/in-process-bus.js';
import { RedisRoomBus } from '../src/rooms/redis-bus.js';
import { SearchIndex } from '../src/search/search-index.js';
import { IdleGate } from '../src/idle-gate.js';
import { tempDir, testApp } from './helpers.js';
import { clustered, entries } from './search/helpers.js';

describe('parts', () => {
  it('opens SQLite in DATA_DIR, and refuses to invent a store a command only reads', async () => {
    const { dir, cleanup } = tempDir();
    try {
      expect(() => openStore(testConfig({ DATA_DIR: dir }), { mustExist: true })).toThrow(/no Salon data in .*DATA_DIR/);
      const store = openStore(testConfig({ DATA_DIR: dir }));
      expect(store.kind).toBe('sqlite');
      await store.close();
    } finally {
      cleanup();
    }
  });

  it('opens PostgreSQL for DATABASE_URL, whose failure to connect names the variable', async () => {
    const store = openStore(testConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' }));
    expect(store.kind).toBe('postgres');
    await expect(store.ping()).rejects.toThrow(/^DATABASE_URL:/);
    await store.close();
  });

  it('chooses the in-process bus and the local models by default', () => {
    expect(createRoomBus(testConfig())).toBeInstanceOf(InProcessBus);
    expect(createAi(testConfig({ LOCAL_EMBED_DIM: '64' })).embedder).toBeInstanceOf(LocalEmbedder);
  });

  it('chooses the Redis bus for REDIS_URL, which reports where it cannot reach', async () => {
    const bus = createRoomBus(testConfig({ REDIS_URL: 'redis://127.0.0.1:1', IDENTITY_SECRET: 'x'.repeat(32) }));
    try {
      expect(bus).toBeInstanceOf(RedisRoomBus);
      expect(await bus.health()).toMatchObject({ ok: false, provider: 'redis', detail: expect.stringContaining('127.0.0.1:1') });
    } finally {
      await bus.close();
    }
  });
});

describe('plugins', () => {
  it('refuse to register before the plugins they need', async () => {
    for (const plugin of [assistantPlugin, contentPlugin]) {
      const app = Fastify({ logger: false });
      await expect(app.register(plugin).ready()).rejects.toThrow(/dependency/);
      await app.close();
    }
  });

  it('serve an app whose every part is present before it is ready', async () => {
    const t = await testApp();
    try {
      for (const part of ['store', 'embedder', 'chat', 'index', 'search', 'searchStack', 'ingest', 'rooms', 'assistant', 'topics'] as const) {
        expect(t.app.salon[part], part).toBeTruthy();
      }
      expect([...t.app.salon.readiness.keys()].sort()).toEqual(['ai', 'bus', 'index-model', 'search']);
    } finally {
      await t.close();
    }
  });

  it('hold the gate conversation memory stores through while the assistant prepares an answer', async () => {
    const t = await testApp();
    try {
      const gate = (t.app.salon.memory as unknown as { background: unknown }).background;
      expect(gate).toBeInstanceOf(IdleGate);
      expect((t.app.salon.assistant as unknown as { options: { background?: unknown } }).options.background).toBe(gate);
    } finally {
      await t.close();
    }
  });

  it('give the assistant the room line ASK_WAITING_PER_ROOM sets (0: none)', async () => {
    const t = await testApp({ ASK_WAITING_PER_ROOM: '0' } as never);
    try {
      expect((t.app.salon.assistant as unknown as { options: { maxWaitingPerRoom?: number } }).options.maxWaitingPerRoom).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('scan documents and conversation memory on one pool, started by the first vectors either gets', async () => {
    const t = await testApp({ LOCAL_EMBED_DIM: '32' });
    try {
      const documents = t.app.salon.index as SearchIndex;
      const memory = t.app.salon.memoryIndex as SearchIndex;
      expect(documents.scanPool).toBeNull();
      expect(memory.scanPool).toBeNull();
      await memory.upsert(entries(clustered(4, 32, 2, 1)));
      expect(memory.scanPool).not.toBeNull();
      expect(documents.scanPool).toBe(memory.scanPool);
    } finally {
      await t.close();
    }
  });

  it('search the graphs of documents and memory with HNSW_EF_SEARCH', async () => {
    const t = await testApp({ LOCAL_EMBED_DIM: '32', HNSW_EF_SEARCH: '96' });
    try {
      const documents = t.app.salon.index as SearchIndex;
      const memory = t.app.salon.memoryIndex as SearchIndex;
      await documents.upsert(entries(clustered(4, 32, 2, 1)));
      await memory.upsert(entries(clustered(4, 32, 2, 2)));
      expect(documents.current?.efSearch).toBe(96);
      expect(memory.current?.efSearch).toBe(96);
    } finally {
      await t.close();
    }
  });
});
