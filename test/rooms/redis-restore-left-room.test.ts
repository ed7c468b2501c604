/**
 * A node back on Redis subscribes its rooms again a batch of channels at a time; a room left while
 * the batches before its own were answered stays unsubscribed. Its leave's UNSUBSCRIBE went before
 * the SUBSCRIBE of its batch, and the node heard the channel (every message of a room it has no
 * member in) until the next outage.
 */
import { Redis } from 'ioredis';
import { afterEach, expect, it, vi } from 'vitest';
import { describeRedis, redisNetwork, REDIS_URL } from '../redis/gate.js';
import { tcpProxy, type TcpProxy } from '../redis/tcp-proxy.js';
import { until } from './helpers.js';

describeRedis('a room bus restoring its rooms after an outage', () => {
  let network: ReturnType<typeof redisNetwork>;
  let proxy: TcpProxy;
  let admin: Redis;
  afterEach(async () => {
    vi.restoreAllMocks();
    admin?.disconnect();
    await proxy?.close();
    await network?.cleanup();
  });

  it('does not subscribe a room left while the batches before its own were answered', async () => {
    network = redisNetwork();
    proxy = await tcpProxy(REDIS_URL);
    admin = new Redis(REDIS_URL);
    const bus = await network.bus({ url: proxy.url, commandTimeoutMs: 10_000 });
    const changes: boolean[] = [];
    bus.onConnectionChange((connected) => changes.push(connected));
    await proxy.cut();
    await until(() => changes.includes(false), 5_000);
    // More rooms than one SUBSCRIBE carries: the last one is in the second batch.
    const rooms = Array.from({ length: 1_001 }, (_, i) => `news_${i}`);
    for (const room of rooms) await bus.join(room);
    const last = rooms.at(-1)!;
    // The last room is left once the first batch is sent, before it is answered.
    const sub = bus.link.sub;
    const subscribe = sub.subscribe.bind(sub) as (...channels: string[]) => Promise<unknown>;
    let batches = 0;
    vi.spyOn(sub, 'subscribe').mockImplementation(((...channels: string[]) => {
      const sent = subscribe(...channels);
      if (++batches === 1) bus.leave(last);
      return sent;
    }) as never);
    await proxy.restore();
    await until(() => changes.at(-1) === true, 10_000);
    const subscribers = async (room: string) => ((await admin.pubsub('NUMSUB', `${network.prefix}room:${room}`)) as [string, number])[1];
    expect(await subscribers(rooms[0])).toBe(1);
    expect(await subscribers(rooms[999])).toBe(1);
    expect(await subscribers(last)).toBe(0);
  });
});
