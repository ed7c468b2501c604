/**
 * One app node on Redis (through a loopback proxy the test cuts, or as a Redis user whose ACL
 * refuses a channel): what /readyz and /metrics say about Redis from the node's start on, a start
 * while Redis is away included, and the index change feed's channel holding /readyz while its
 * SUBSCRIBE times out (not while Redis refuses it).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, expect, it, vi } from 'vitest';
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
    // The index change feed rides on the same link: it does not hear the other nodes either.
    expect(down.json().checks['index-feed']).toEqual({ ok: false, detail: expect.stringContaining('unreachable') });

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

  /** A Redis user that may use every key but, of the channels, only those matching `allowed`; deleted after the test. */
  async function restrictedUser(allowed: string) {
    const admin = new Redis(REDIS_URL);
    const name = `salon-test-${randomUUID()}`;
    const password = randomUUID();
    await admin.call('ACL', 'SETUSER', name, 'on', `>${password}`, '~*', 'resetchannels', `&${allowed}`, '+@all');
    closers.push(async () => {
      await admin.call('ACL', 'DELUSER', name);
      admin.disconnect();
    });
    const url = new URL(REDIS_URL);
    url.username = name;
    url.password = password;
    return { url: url.toString(), allow: (pattern: string) => admin.call('ACL', 'SETUSER', name, `&${pattern}`) };
  }

  it('stays ready while Redis refuses the index change channel, says why to the admin, and hears the channel once allowed', async () => {
    const prefix = testPrefix();
    // The rooms' channels are allowed, the index change feed's is not.
    const user = await restrictedUser(`${prefix}room:*`);
    const { app, bus } = await node(user.url, prefix);
    await bus.ready();
    const feedDetail = async () => (await app.inject({ url: '/readyz', headers: ADMIN })).json().checks['index-feed']?.detail;
    await expect.poll(feedDetail, { timeout: WAIT_MS }).toMatch(/SUBSCRIBE failed/);
    // An ACL refuses the channel on every node alike: failing them all would shut every room.
    const refused = await app.inject({ url: '/readyz', headers: ADMIN });
    expect(refused.statusCode).toBe(200);
    expect(refused.json().checks['index-feed']).toEqual({
      ok: true,
      detail: expect.stringMatching(new RegExp(`channel ${prefix}index not subscribed: its SUBSCRIBE failed \\(NOPERM.*; tried again in \\d+ s\\)`)),
    });

    await user.allow(`${prefix}index`);
    await expect
      .poll(async () => (await app.inject({ url: '/readyz', headers: ADMIN })).json().checks['index-feed'], { timeout: WAIT_MS })
      .toEqual({ ok: true, detail: `channel ${prefix}index subscribed` });
  });

  it("is not ready while the index change channel's SUBSCRIBE times out, and is once it is heard", async () => {
    const prefix = testPrefix();
    const { app, bus } = await node(REDIS_URL, prefix);
    await bus.ready();
    await expect.poll(async () => (await app.inject('/readyz')).statusCode, { timeout: WAIT_MS }).toBe(200);
    // The feed's SUBSCRIBE goes unanswered while `timingOut`; the rooms' channels are heard.
    const sub = bus.link.sub;
    const subscribe = sub.subscribe.bind(sub) as (...channels: string[]) => Promise<unknown>;
    let timingOut = true;
    vi.spyOn(sub, 'subscribe').mockImplementation(((...channels: string[]) =>
      timingOut && channels.includes(`${prefix}index`) ? Promise.reject(new Error('Command timed out')) : subscribe(...channels)) as never);
    // A dropped connection makes the feed subscribe again when it is back.
    sub.disconnect(true);
    const checks = async () => (await app.inject({ url: '/readyz', headers: ADMIN })).json().checks;
    await expect.poll(async () => (await checks())['index-feed'].detail, { timeout: WAIT_MS }).toMatch(/SUBSCRIBE failed \(Command timed out/);
    await expect.poll(async () => (await checks()).bus.ok, { timeout: WAIT_MS }).toBe(true);
    const timedOut = await app.inject({ url: '/readyz', headers: ADMIN });
    expect(timedOut.statusCode).toBe(503);
    expect(timedOut.json().checks['index-feed']).toEqual({
      ok: false,
      detail: expect.stringMatching(/not subscribed: its SUBSCRIBE failed \(Command timed out; tried again in \d+ s\)/),
    });
    // Anyone is told which check fails, without its detail.
    expect((await app.inject('/readyz')).json().checks['index-feed']).toEqual({ ok: false });

    timingOut = false;
    await expect.poll(async () => (await app.inject('/readyz')).statusCode, { timeout: WAIT_MS }).toBe(200);
  });
});
