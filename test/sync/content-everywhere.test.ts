/**
 * Content everywhere: two app nodes, each with its own PostgreSQL store on one schema and its own
 * bus on one Redis. What one node ingests or remembers reaches the other's vector indexes through
 * the change feed without a restart, and a node cut off from Redis catches up from the store's
 * change log when it is back.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADMIN, testApp } from '../helpers.js';
import { describeRedis, redisNetwork, REDIS_URL } from '../redis/gate.js';
import { tcpProxy, type TcpProxy } from '../redis/tcp-proxy.js';
import { describePostgres, freshSchema } from '../store/postgres-harness.js';

/** Polls `check` until it holds; fails after `timeoutMs`. */
async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const item = (id: string, body: string) => ({ id, kind: 'news', title: `The ${id} story`, url: `https://example.com/${id}`, body });

async function putItem(node: FastifyInstance, content: unknown): Promise<void> {
  const res = await node.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: content as object });
  expect(res.statusCode, res.body).toBe(200);
}

async function hitIds(node: FastifyInstance, q: string): Promise<string[]> {
  const res = await node.inject(`/api/v1/search?q=${encodeURIComponent(q)}&k=5`);
  return (res.json().hits as { id: string }[]).map((h) => h.id);
}

const WHALES = 'Humpback whales sing long songs that travel across whole ocean basins at night.';
const VOLCANO = 'A volcano on the island erupted, sending glowing lava rivers into the sea.';

describePostgres('content everywhere (PostgreSQL)', () => {
  describeRedis('two nodes on one store and one Redis', () => {
    let nodes: { app: FastifyInstance; close: () => Promise<void> }[];
    let dropSchema: () => Promise<void>;
    let network: ReturnType<typeof redisNetwork>;
    let proxy: TcpProxy;

    beforeEach(async () => {
      const schema = await freshSchema();
      dropSchema = schema.drop;
      network = redisNetwork();
      proxy = await tcpProxy(REDIS_URL);
      nodes = [];
      for (let i = 0; i < 2; i++) {
        // Node 1 reaches Redis through the proxy, so the test can cut it off alone.
        const bus = await network.bus({ nodeId: `node-${i}`, ...(i === 1 ? { url: proxy.url } : {}) });
        const node = await testApp(
          { DATABASE_URL: schema.url, SEED_DEMO: 'false', IDENTITY_SECRET: 'one secret for every node of this test' },
          // No periodic read of the change log during a test: catching up is the reconnection's doing.
          { roomBus: bus, indexResyncMs: 3_600_000 },
        );
        nodes.push(node);
        await node.app.ready();
        // One item both index at start: a node's search falls back to the store's text search while its index is empty.
        if (i === 0) await putItem(node.app, item('seed', 'Farmers planted wheat early this spring.'));
      }
    });
    afterEach(async () => {
      await Promise.all((nodes ?? []).map((n) => n.close()));
      await proxy?.close();
      await network?.cleanup();
      await dropSchema?.();
    });

    it('makes an item put on one node searchable on the other without a restart', async () => {
      const [a, b] = nodes.map((n) => n.app);
      expect(b.salon.index.size).toBeGreaterThan(0);
      await putItem(a, item('whales', WHALES));
      expect(await hitIds(a, 'humpback whales songs ocean')).toContain('news_whales');
      await eventually(async () => (await hitIds(b, 'humpback whales songs ocean')).includes('news_whales'), 'node 1 finds the item');
      expect(b.salon.index.size).toBe(a.salon.index.size);

      const del = await a.inject({ method: 'DELETE', url: '/api/v1/content/news_whales', headers: ADMIN });
      expect(del.statusCode).toBeLessThan(300);
      await eventually(async () => !(await hitIds(b, 'humpback whales songs ocean')).includes('news_whales'), 'node 1 forgets the deleted item');
    });

    it('makes memory remembered on one node searchable by the other’s memory search', async () => {
      const [a, b] = nodes.map((n) => n.app);
      const imported = await a.inject({
        method: 'POST',
        url: '/api/v1/rooms/news_seed/import',
        headers: ADMIN,
        payload: { messages: [{ author: { name: 'Bob' }, text: 'I lost 4000 dollars on Meridian shares last week', ts: '2026-11-01T10:00:00.000Z' }] },
      });
      expect(imported.statusCode).toBe(200);
      const { threadId } = imported.json();
      await a.salon.memory.idle();
      expect(a.salon.memoryIndex.size).toBeGreaterThan(0);
      await eventually(() => b.salon.memoryIndex.size === a.salon.memoryIndex.size, 'node 1 indexed the memory chunk');
      const hits = await b.salon.memory.search('how much money did Bob lose on Meridian?', { threadId, userId: 'u_cy', private: false }, 3);
      expect(hits[0]?.chunk.text).toContain('4000 dollars');
      // A vector match, not only the store's line search.
      expect(hits[0].score).toBeGreaterThan(0);
    });

    it('lets a node cut off from Redis catch up from the store when it is back', async () => {
      const [a, b] = nodes.map((n) => n.app);
      // A node still loading its memory applies what was logged meanwhile when it starts following.
      await eventually(async () => a.salon.indexSync.following && b.salon.indexSync.following, 'both nodes follow the feed');
      expect(b.salon.index.size).toBeGreaterThan(0);
      const before = b.salon.index.size;
      await proxy.cut();
      await eventually(async () => !(await b.salon.readiness.get('bus')!()).ok, 'node 1 knows it is cut off');
      const logged = await a.salon.store.lastIndexChange();
      await putItem(a, item('volcano', VOLCANO));
      await eventually(async () => (await a.salon.store.lastIndexChange()) > logged, 'node 0 logged the change');
      expect(b.salon.index.size).toBe(before);

      await proxy.restore();
      await eventually(async () => (await hitIds(b, 'volcano erupted lava island')).includes('news_volcano'), 'node 1 caught up');
      expect(b.salon.index.size).toBe(a.salon.index.size);
    });
  });
});
