/**
 * A node that stops heartbeating leaves every other node's lists for certain, however late they
 * recheck: its entries are seen expired only until the room's next writer deletes them (a TTL
 * later), and a node whose rechecks all missed that window listed its members for good. Two
 * presences on a real Redis, on one clock the test moves (the link's reading of Redis's clock).
 */
import { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RedisLink } from '../../src/rooms/redis-link.js';
import { RedisPresence } from '../../src/rooms/redis-presence.js';
import { deleteKeys, describeRedis, REDIS_URL, testPrefix } from '../redis/gate.js';

const HEARTBEAT_MS = 2_000;
const TTL_MS = 6_000;
const ROOM = 'news_1';

describeRedis('RedisPresence: a dead node’s members', () => {
  let redis: Redis;
  let prefix: string;
  let clock: number;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    prefix = testPrefix();
    clock = 1_000_000;
  });
  afterEach(async () => {
    redis.disconnect();
    await deleteKeys(prefix);
  });

  /** One node's presence on the shared Redis, reading the test's clock. */
  function node(nodeId: string): RedisPresence {
    const link = { isUp: true, clockKnown: true, now: () => clock, syncClock: async () => {}, cmd: redis, where: 'test' };
    return new RedisPresence({ link: link as unknown as RedisLink, nodeId, prefix, heartbeatMs: HEARTBEAT_MS, ttlMs: TTL_MS });
  }

  it('finds the room stale once a listed entry expired, though the room’s writer has deleted it since', async () => {
    const dead = node('n-dead');
    const live = node('n-live');
    await dead.set(ROOM, { id: 'u_dead', name: 'Dee' }, 1);
    await live.set(ROOM, { id: 'u_live', name: 'Liv' }, 2);
    expect((await live.list(ROOM)).map((e) => e.id)).toEqual(['u_dead', 'u_live']);
    // The dead node stops; the live one goes on heartbeating, and its rechecks fail or stall
    // (Redis errors, a busy loop) for longer than the dead entry stays visible as expired.
    for (let t = 0; t < 3 * TTL_MS; t += HEARTBEAT_MS) {
      clock += HEARTBEAT_MS;
      await live.heartbeat();
    }
    expect(await redis.zcard(`${prefix}presence:${ROOM}`)).toBe(1);
    // The recheck that finally runs: the room must be read again, and then lists Liv alone.
    expect(await live.stale([ROOM])).toEqual([ROOM]);
    expect((await live.list(ROOM)).map((e) => e.id)).toEqual(['u_live']);
    expect(await live.stale([ROOM])).toEqual([]);
  });

  it('keeps watching a node another listing of the room no longer shows, until a recheck finds it gone', async () => {
    const dead = node('n-dead');
    const live = node('n-live');
    await dead.set(ROOM, { id: 'u_dead', name: 'Dee' }, 1);
    await live.set(ROOM, { id: 'u_live', name: 'Liv' }, 2);
    await live.list(ROOM);
    for (let t = 0; t < 3 * TTL_MS; t += HEARTBEAT_MS) {
      clock += HEARTBEAT_MS;
      await live.heartbeat();
    }
    // Read for something else (a private asker's return): the room's members still came from the first.
    expect((await live.list(ROOM)).map((e) => e.id)).toEqual(['u_live']);
    expect(await live.stale([ROOM])).toEqual([ROOM]);
    // Found gone once: no read again for it at every recheck.
    expect(await live.stale([ROOM])).toEqual([]);
  });

  it('finds nothing stale while the other node renews its entries', async () => {
    const other = node('n-other');
    const live = node('n-live');
    await other.set(ROOM, { id: 'u_other', name: 'Oto' }, 1);
    await live.set(ROOM, { id: 'u_live', name: 'Liv' }, 2);
    await live.list(ROOM);
    for (let t = 0; t < 3 * TTL_MS; t += HEARTBEAT_MS) {
      clock += HEARTBEAT_MS;
      await other.heartbeat();
      await live.heartbeat();
      expect(await live.stale([ROOM])).toEqual([]);
    }
  });

  it('finds the room stale when the watched room key expired whole', async () => {
    const dead = node('n-dead');
    const live = node('n-live');
    await dead.set(ROOM, { id: 'u_dead', name: 'Dee' }, 1);
    await live.list(ROOM);
    await redis.del(`${prefix}presence:${ROOM}`);
    clock += TTL_MS + 1;
    expect(await live.stale([ROOM])).toEqual([ROOM]);
    expect(await live.list(ROOM)).toEqual([]);
  });
});
