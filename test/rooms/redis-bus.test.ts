/**
 * The RoomBus and RoomPresence contracts against a real Redis (three nodes on one prefix), then
 * what only Redis does: a node that dies without closing, and Redis going away and coming back
 * (through a loopback proxy the test cuts).
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RedisRoomBus, RedisRoomBusOptions } from '../../src/rooms/redis-bus.js';
import { describeRedis, redisNetwork, REDIS_URL } from '../redis/gate.js';
import { tcpProxy, type TcpProxy } from '../redis/tcp-proxy.js';
import { busContract, presenceContract, type BusNetwork } from './bus-contract.js';
import { until } from './helpers.js';

const redis = (): BusNetwork => redisNetwork();

/** Reads until `ok` holds for what was read (or fails after `timeoutMs`). */
async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describeRedis('Redis room bus', () => {
  busContract('redis', redis);
  presenceContract('redis', redis);

  describe('failures', () => {
    let network: ReturnType<typeof redisNetwork>;
    let proxy: TcpProxy;
    afterEach(async () => {
      await proxy?.close();
      await network?.cleanup();
    });

    /** Node a on Redis directly (with `aOptions`), node b through the proxy the test can cut. */
    async function twoNodes(aOptions: Partial<RedisRoomBusOptions> = {}): Promise<{ a: RedisRoomBus; b: RedisRoomBus }> {
      network = redisNetwork();
      proxy = await tcpProxy(REDIS_URL);
      return { a: await network.bus(aOptions), b: await network.bus({ url: proxy.url }) };
    }

    it('lets the members of a node that dies expire, and says which rooms to read again', async () => {
      // Node a's own entries live a minute: on a loaded machine a heartbeat 400 ms late would let
      // them expire too, and a's heartbeat would delete b's expired entry before it is seen.
      const { a, b } = await twoNodes({ presenceTtlMs: 60_000 });
      await a.presence.set('news_1', { id: 'u1', name: 'Ana' }, 1);
      await b.presence.set('news_1', { id: 'u2', name: 'Ben' }, 2);
      expect((await a.presence.list('news_1')).map((e) => e.id)).toEqual(['u1', 'u2']);
      await proxy.cut();
      const stale = await eventually(
        () => a.presence.stale(['news_1', 'post_2']),
        (rooms) => rooms.length > 0,
      );
      expect(stale).toEqual(['news_1']);
      expect((await a.presence.list('news_1')).map((e) => e.id)).toEqual(['u1']);
    });

    it('hears a room whose SUBSCRIBE failed on a link that stayed up, from the next heartbeat, and says it is back', async () => {
      network = redisNetwork();
      const [a, b] = await network.nodes(2);
      const got: string[] = [];
      b.subscribe((room, payload) => got.push(`${room}:${payload}`));
      const changes: boolean[] = [];
      b.onConnectionChange((connected) => changes.push(connected));
      // A timeout or a refusal of this one command; the connection stays up.
      const subscribe = vi.spyOn(b.link.sub, 'subscribe').mockRejectedValueOnce(new Error('Command timed out'));
      await b.join('news_1');
      expect(subscribe).toHaveBeenCalledTimes(1);
      expect(b.link.isUp).toBe(true);
      await eventually(
        async () => {
          await a.publish('news_1', 'hello');
          return got;
        },
        (heard) => heard.includes('news_1:hello'),
      );
      // The rooms core is told, and reads from the store what the room missed meanwhile.
      expect(changes).toContain(true);
    });

    it('renews its entries without waiting for its connections’ probe or a reading of the clock', async () => {
      network = redisNetwork();
      const [a, b] = await network.nodes(2);
      await b.presence.set('news_1', { id: 'u2', name: 'Ben' }, 2);
      const expiry = async () => Number((await a.link.cmd.zrange(`${network.prefix}presence:news_1`, '0', '0', 'WITHSCORES'))[1]);
      const first = await expiry();
      // A stalled connection's ping, and TIME, waiting up to the command timeout each.
      vi.spyOn(b.link, 'probe').mockReturnValue(new Promise<void>(() => {}));
      vi.spyOn(b.link, 'syncClock').mockReturnValue(new Promise<void>(() => {}));
      await eventually(expiry, (score) => score > first);
      expect((await a.presence.list('news_1')).map((e) => e.id)).toEqual(['u2']);
    });

    it('drops publishes while cut off, reports it, and comes back hearing its rooms with its presence rewritten', async () => {
      const { a, b } = await twoNodes();
      const changes: boolean[] = [];
      b.onConnectionChange((connected) => changes.push(connected));
      const got: string[] = [];
      b.subscribe((_room, payload) => got.push(payload));
      await b.join('news_1');
      await b.presence.set('news_1', { id: 'u2', name: 'Ben' }, 2);

      await proxy.cut();
      await until(() => changes.includes(false));
      expect((await b.health()).ok).toBe(false);
      expect((await b.health()).detail).toMatch(/unreachable.*reconnecting/);
      await expect(b.publish('news_1', 'lost')).resolves.toBeUndefined();
      await expect(b.presence.list('news_1')).rejects.toThrow(/unreachable/);
      await b.join('post_2');
      await b.presence.set('post_2', { id: 'u2', name: 'Ben' }, 3);
      await a.publish('news_1', 'missed');

      await proxy.restore();
      await until(() => changes.at(-1) === true, 5_000);
      expect((await b.health()).ok).toBe(true);
      expect((await a.presence.list('post_2')).map((e) => e.id)).toEqual(['u2']);
      await a.publish('news_1', 'heard');
      await a.publish('post_2', 'heard too');
      await until(() => got.length === 2);
      expect(got).toEqual(['heard', 'heard too']);
    });

    it('deletes, once back, the entries of members who left or took another name while Redis was away', async () => {
      // Entries live a minute: only the node deleting them takes them out of the list in time.
      network = redisNetwork();
      proxy = await tcpProxy(REDIS_URL);
      const a = await network.bus();
      const b = await network.bus({ url: proxy.url, presenceTtlMs: 60_000 });
      const changes: boolean[] = [];
      b.onConnectionChange((connected) => changes.push(connected));
      await b.presence.set('news_1', { id: 'u1', name: 'Ana' }, 1);
      await b.presence.set('news_1', { id: 'u2', name: 'Ben' }, 2);
      await b.presence.set('post_2', { id: 'u3', name: 'Cy' }, 3);
      await proxy.cut();
      await until(() => changes.includes(false));
      await b.presence.remove('news_1', 'u1');
      await b.presence.set('news_1', { id: 'u2', name: 'Benjamin' }, 2);
      await b.presence.remove('post_2', 'u3');
      await proxy.restore();
      await until(() => changes.at(-1) === true, 5_000);
      expect((await a.presence.list('news_1')).map((e) => e.name)).toEqual(['Benjamin']);
      expect(await a.presence.list('post_2')).toEqual([]);
    });

    it('notices a Redis that stops answering without closing, fails its commands instead of waiting, and comes back', async () => {
      const { a, b } = await twoNodes();
      const changes: boolean[] = [];
      b.onConnectionChange((connected) => changes.push(connected));
      const got: string[] = [];
      b.subscribe((_room, payload) => got.push(payload));
      await b.join('news_1');

      const drops = vi.spyOn(Redis.prototype, 'disconnect');
      proxy.freeze();
      // Within a command timeout or two (1 s here), not a TCP timeout of minutes.
      await until(() => changes.includes(false), 10_000);
      // Each frozen connection is dropped once, however many heartbeats probe it while its socket
      // waits to be destroyed (each drop had added a listener to that socket).
      expect(drops.mock.calls.filter(([reconnect]) => reconnect === true).length).toBeLessThanOrEqual(4);
      drops.mockRestore();
      expect((await b.health()).ok).toBe(false);
      await expect(b.publish('news_1', 'lost')).resolves.toBeUndefined();
      await expect(b.presence.list('news_1')).rejects.toThrow();

      await proxy.cut();
      await proxy.restore();
      await until(() => changes.at(-1) === true, 10_000);
      await a.publish('news_1', 'heard');
      await until(() => got.length === 1);
      expect(got).toEqual(['heard']);
    });
  });
});
