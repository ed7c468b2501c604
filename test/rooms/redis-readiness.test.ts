/**
 * One app node on Redis, through a loopback proxy the test cuts: what /readyz and /metrics say
 * about Redis from the node's start on, a start while Redis is away included.
 */
import { afterEach, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { RedisRoomBus } from '../../src/rooms/redis-bus.js';
import { tempStore } from '../helpers.js';
import { deleteKeys, describeRedis, FAST, REDIS_URL, testPrefix } from '../redis/gate.js';
import { tcpProxy, type TcpProxy } from '../redis/tcp-proxy.js';

const ADMIN = { authorization: 'Bearer redis-readiness-admin-token' };
/** How long a wait for the node to notice may take on a loaded machine (a bound, not a measure). */
const WAIT_MS = 10_000;

describeRedis('a node’s readiness and metrics on Redis', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  /** A node whose bus reaches Redis at `url`, built at once (not waiting for Redis). */
  async function node(url: string, prefix = testPrefix()): Promise<{ app: FastifyInstance; bus: RedisRoomBus }> {
    const temp = tempStore();
    closers.push(temp.close, () => deleteKeys(prefix));
    // A patient command timeout: no test here is about a slow machine.
    const bus = new RedisRoomBus({ url, prefix, ...FAST, commandTimeoutMs: 10_000 });
    closers.push(() => bus.close());
    const config = testConfig({
      DATA_DIR: temp.dir,
      ADMIN_TOKEN: 'redis-readiness-admin-token',
      IDENTITY_SECRET: 'a secret of this test, thirty-two characters or more',
    });
    const app = await buildApp(config, { store: temp.store, roomBus: bus, roomOptions: { shutdownGraceMs: 50 } });
    closers.push(() => app.close());
    await app.ready();
    return { app, bus };
  }

  const busMetrics = async (app: FastifyInstance) => {
    const body = (await app.inject('/metrics')).body;
    const read = (series: string) => Number(new RegExp(`^${series} (\\S+)$`, 'm').exec(body)?.[1]);
    return { connected: read('salon_bus_connected'), outages: read('salon_bus_outages_total') };
  };

  it('counts a start while Redis is away as an outage, once, and no more when Redis comes', async () => {
    const proxy = await tcpProxy(REDIS_URL);
    closers.push(() => proxy.close());
    await proxy.cut();
    const { app } = await node(proxy.url);
    await expect.poll(() => busMetrics(app), { timeout: WAIT_MS }).toEqual({ connected: 0, outages: 1 });
    const down = await app.inject({ url: '/readyz', headers: ADMIN });
    expect(down.statusCode).toBe(503);
    expect(down.json().checks.bus.detail).toContain('unreachable');

    await proxy.restore();
    await expect.poll(async () => (await app.inject('/readyz')).statusCode, { timeout: WAIT_MS }).toBe(200);
    expect(await busMetrics(app)).toEqual({ connected: 1, outages: 1 });
  });

  it('counts no outage for a start that reaches Redis', async () => {
    const proxy = await tcpProxy(REDIS_URL);
    closers.push(() => proxy.close());
    const { app, bus } = await node(proxy.url);
    await bus.ready();
    expect(await busMetrics(app)).toEqual({ connected: 1, outages: 0 });
  });
});
