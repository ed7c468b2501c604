/**
 * The RoomBus and RoomPresence contracts against a real Redis (three nodes on one prefix), then
 * what only Redis does: a node that dies without closing, and Redis going away and coming back
 * (through a loopback proxy the test cuts).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RedisRoomBus, RedisRoomBusOptions } from '../../src/rooms/redis-bus.js';
import { describeRedis, FAST, redisNetwork, REDIS_URL } from '../redis/gate.js';
import { tcpProxy, type TcpProxy } from '../redis/tcp-proxy.js';
import { busContract, presenceContract, type BusNetwork } from './bus-contract.js';
import { until } from './helpers.js';
import { linesLog } from '../helpers.js';
import type { Logger } from '../../src/logger.js';

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
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      vi.useRealTimers();
      vi.restoreAllMocks();
      await proxy?.close();
      await network?.cleanup();
      for (const cleanup of cleanups.splice(0)) await cleanup();
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

    it('hears a room whose SUBSCRIBE failed on a link that stayed up, from the next heartbeat, and tells the rooms core of that room alone', async () => {
      network = redisNetwork();
      const [a, b] = await network.nodes(2);
      const got: string[] = [];
      b.subscribe((room, payload) => got.push(`${room}:${payload}`));
      const changes: boolean[] = [];
      b.onConnectionChange((connected) => changes.push(connected));
      const rooms: string[] = [];
      b.onRoomHeard((roomId, heard) => rooms.push(`${roomId}:${heard}`));
      await b.join('post_2');
      // A timeout or a refusal of this one command; the connection stays up.
      const subscribe = vi.spyOn(b.link.sub, 'subscribe').mockRejectedValueOnce(new Error('Command timed out'));
      await b.join('news_1');
      expect(subscribe).toHaveBeenCalledTimes(1);
      expect(b.link.isUp).toBe(true);
      expect(rooms).toEqual(['news_1:false']);
      expect(b.unheardRooms).toBe(1);
      await eventually(
        async () => {
          await a.publish('news_1', 'hello');
          return got;
        },
        (heard) => heard.includes('news_1:hello'),
      );
      // The rooms core is told that this room is heard again, and reads from the store what it
      // missed meanwhile; the bus was never cut off, and the other rooms need no resync.
      await until(() => rooms.length === 2);
      expect(rooms).toEqual(['news_1:false', 'news_1:true']);
      expect(changes).toEqual([]);
      expect(b.unheardRooms).toBe(0);
      // Only the failed room was subscribed again.
      expect(subscribe.mock.calls.map((c) => c.map(String))).toEqual([[`${network.prefix}room:news_1`], [`${network.prefix}room:news_1`]]);
    });

    /**
     * A Redis user (ACL) that may use every key but, of the channels, only those matching `allowed`:
     * its URL, a way to allow more, and its connections' end (an outage). Deleted after the test.
     */
    async function restrictedUser(allowed: string) {
      const admin = new Redis(REDIS_URL);
      const name = `salon-test-${randomUUID()}`;
      const password = randomUUID();
      await admin.call('ACL', 'SETUSER', name, 'on', `>${password}`, '~*', 'resetchannels', `&${allowed}`, '+@all');
      cleanups.push(async () => {
        await admin.call('ACL', 'DELUSER', name);
        admin.disconnect();
      });
      const url = new URL(REDIS_URL);
      url.username = name;
      url.password = password;
      return {
        url: url.toString(),
        allow: (pattern: string) => admin.call('ACL', 'SETUSER', name, `&${pattern}`),
        cut: () => admin.call('CLIENT', 'KILL', 'USER', name),
      };
    }

    function lines(): { log: Logger; lines: string[] } {
      const written: string[] = [];
      const log: Logger = {
        debug() {},
        info: (_d, m) => void written.push(`INFO ${m}`),
        warn: (_d, m) => void written.push(`WARN ${m}`),
        error: (_d, m) => void written.push(`ERROR ${m}`),
      };
      return { log, lines: written };
    }

    it('backs off a SUBSCRIBE refused for good (a Redis ACL), logs it once, reports it, and hears the room once allowed', async () => {
      network = redisNetwork();
      const user = await restrictedUser(`${network.prefix}room:news_*`);
      const a = await network.bus();
      const { log, lines: written } = lines();
      // The heartbeats on a fake clock (the connections keep their real timers).
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      // A patient command timeout: a probe timing out on a loaded machine would be an outage.
      const b = await network.bus({ url: user.url, log, commandTimeoutMs: 10_000 });
      written.length = 0;
      const got: string[] = [];
      b.subscribe((room, payload) => got.push(`${room}:${payload}`));
      // The heartbeat each SUBSCRIBE of post_2 was sent at, and every SUBSCRIBE not answered yet.
      let beat = 0;
      const tried: number[] = [];
      const pending = new Set<Promise<unknown>>();
      const sub = b.link.sub;
      const subscribe = sub.subscribe.bind(sub) as (...channels: string[]) => Promise<unknown>;
      vi.spyOn(sub, 'subscribe').mockImplementation(((...channels: string[]) => {
        if (channels.some((c) => c.endsWith('post_2'))) tried.push(beat);
        const sent = subscribe(...channels);
        pending.add(sent);
        void sent.catch(() => {}).finally(() => pending.delete(sent));
        return sent;
      }) as never);
      /** One heartbeat, and what it sent answered. */
      const heartbeat = async () => {
        beat++;
        await vi.advanceTimersByTimeAsync(FAST.heartbeatMs!);
        while (pending.size) await Promise.allSettled([...pending]);
        await new Promise((r) => setTimeout(r, 5));
      };

      await b.join('news_1');
      await b.join('post_2');
      expect(b.unheardRooms).toBe(1);
      for (let i = 0; i < 16; i++) await heartbeat();
      // Tried again at the next heartbeat, then after 2, 4 and 8 of them; logged once.
      expect(tried).toEqual([0, 1, 3, 7, 15]);
      expect(written).toEqual(['WARN room bus could not hear a room; subscribing it again at the next heartbeat, then less often while it fails']);
      expect(b.unheardRooms).toBe(1);
      // Still ready: an ACL refuses the channel on every node alike, and the detail says which room and why.
      const health = await b.health();
      expect(health.ok).toBe(true);
      expect(health.detail).toMatch(/1 room\(s\) heard on this node; 1 room\(s\) not heard, their SUBSCRIBE failed \(post_2: NOPERM.*; tried again in \d+ s\)/);
      // The other room is heard.
      await eventually(
        async () => {
          await a.publish('news_1', 'hello');
          return got;
        },
        (heard) => heard.includes('news_1:hello'),
      );

      // Allowed: heard from the next try on, and that is logged once.
      await user.allow(`${network.prefix}room:*`);
      for (let i = 0; i < 32 && b.unheardRooms > 0; i++) await heartbeat();
      expect(b.unheardRooms).toBe(0);
      expect(tried).toHaveLength(6);
      expect(written.slice(1)).toEqual([expect.stringMatching(/^INFO subscribing rooms on the room bus works again after 5 failure\(s\) in \d+ s$/)]);
      expect(await b.health()).toMatchObject({ ok: true, detail: expect.stringMatching(/2 room\(s\) heard on this node$/) });
      await eventually(
        async () => {
          await a.publish('post_2', 'allowed');
          return got;
        },
        (heard) => heard.includes('post_2:allowed'),
      );
    });

    /** Makes `bus`'s SUBSCRIBE of the rooms `refused` names fail with NOPERM, the link staying up. */
    function refuse(bus: RedisRoomBus, refused: (roomId: string) => boolean) {
      const sub = bus.link.sub;
      const subscribe = sub.subscribe.bind(sub) as (...channels: string[]) => Promise<unknown>;
      return vi
        .spyOn(sub, 'subscribe')
        .mockImplementation(((...channels: string[]) =>
          channels.some((c) => refused(c.slice(c.lastIndexOf(':') + 1)))
            ? Promise.reject(new Error('NOPERM this user has no permissions to access one of the channels'))
            : subscribe(...channels)) as never);
    }

    it('says nothing works again when the rooms it could not hear are left: it ends their failures', async () => {
      network = redisNetwork();
      const { lines: written, log } = linesLog();
      // No heartbeat tries a room again meanwhile.
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const b = await network.bus({ log });
      written.length = 0;
      const rooms: string[] = [];
      b.onRoomHeard((roomId, heard) => rooms.push(`${roomId}:${heard}`));
      refuse(b, (roomId) => roomId.startsWith('post_'));
      await b.join('post_2');
      await b.join('post_3');
      expect(b.unheardRooms).toBe(2);
      expect(written).toEqual(['WARN room bus could not hear a room; subscribing it again at the next heartbeat, then less often while it fails']);
      b.leave('post_2');
      b.leave('post_3');
      // The failure not logged yet is summarised; nothing was heard again.
      expect(b.unheardRooms).toBe(0);
      expect(written.slice(1)).toEqual([
        'WARN subscribing rooms on the room bus failed 1 more time(s) before it ended; the last: NOPERM this user has no permissions to access one of the channels',
      ]);
      expect(rooms).toEqual(['post_2:false', 'post_3:false']);
      // A room refused later is a new failure, logged at once.
      await b.join('post_4');
      expect(written.slice(2)).toEqual([expect.stringMatching(/^WARN room bus could not hear a room/)]);
    });

    it('counts no room unheard while Redis is away (every room is, for the outage), and the refused ones again once back', async () => {
      const { b } = await twoNodes();
      const events: string[] = [];
      b.onConnectionChange((connected) => events.push(`connected:${connected}`));
      b.onRoomHeard((roomId, heard) => events.push(`${roomId}:${heard}`));
      refuse(b, (roomId) => roomId === 'post_2');
      await b.join('news_1');
      await b.join('post_2');
      expect(b.unheardRooms).toBe(1);
      await proxy.cut();
      await until(() => events.includes('connected:false'));
      // The outage is what /readyz reports; the gauge counts rooms refused on a link that is up.
      expect(b.unheardRooms).toBe(0);
      expect((await b.health()).ok).toBe(false);
      await proxy.restore();
      await until(() => events.includes('connected:true'), 5_000);
      // The reconnection's SUBSCRIBE is refused again for post_2 alone.
      await until(() => events.at(-1) === 'post_2:false');
      expect(b.unheardRooms).toBe(1);
      expect((await b.health()).detail).toContain('1 room(s) heard on this node; 1 room(s) not heard');
    });

    it('ignores the answer to a retry sent before the room was left and joined again', async () => {
      network = redisNetwork();
      const [a, b] = await network.nodes(2);
      const got: string[] = [];
      b.subscribe((room, payload) => got.push(`${room}:${payload}`));
      const rooms: string[] = [];
      b.onRoomHeard((roomId, heard) => rooms.push(`${roomId}:${heard}`));
      // post_2's join is refused, the heartbeat's retry waits for `answerRetry`, the next join goes through.
      const sub = b.link.sub;
      const subscribe = sub.subscribe.bind(sub) as (...channels: string[]) => Promise<unknown>;
      let tries = 0;
      let answerRetry: (err: Error) => void = () => {};
      vi.spyOn(sub, 'subscribe').mockImplementation(((...channels: string[]) => {
        if (!channels.some((c) => c.endsWith('post_2'))) return subscribe(...channels);
        tries++;
        if (tries === 1) return Promise.reject(new Error('NOPERM this user has no permissions to access one of the channels'));
        if (tries === 2) return new Promise((_resolve, reject) => (answerRetry = reject));
        return subscribe(...channels);
      }) as never);
      const probe = vi.spyOn(b.link, 'probe');
      await b.join('post_2');
      expect(b.unheardRooms).toBe(1);
      await until(() => tries === 2);
      b.leave('post_2');
      await b.join('post_2');
      expect(tries).toBe(3);
      // The retry fails now: it was for the room left, not the one joined since, which is heard.
      answerRetry(new Error('Command timed out'));
      await new Promise((r) => setImmediate(r));
      expect(b.unheardRooms).toBe(0);
      expect(rooms).toEqual(['post_2:false']);
      await eventually(
        async () => {
          await a.publish('post_2', 'heard');
          return got;
        },
        (heard) => heard.includes('post_2:heard'),
      );
      // Nothing is tried again at the next heartbeats, and the rooms core resyncs nothing.
      const beats = probe.mock.calls.length;
      await until(() => probe.mock.calls.length >= beats + 3, 5_000);
      expect(tries).toBe(3);
      expect(rooms).toEqual(['post_2:false']);
    });

    it('hears every room it may again after an outage, though one of them stays refused', async () => {
      network = redisNetwork();
      const user = await restrictedUser(`${network.prefix}room:news_*`);
      const a = await network.bus();
      const b = await network.bus({ url: user.url });
      const got: string[] = [];
      b.subscribe((room, payload) => got.push(`${room}:${payload}`));
      const changes: boolean[] = [];
      b.onConnectionChange((connected) => changes.push(connected));
      await b.join('news_1');
      await b.join('news_2');
      await b.join('post_2');
      expect(b.unheardRooms).toBe(1);
      // Redis drops the node's connections; they come back, and every room is subscribed again
      // (one SUBSCRIBE for all, which the refused channel fails as a whole).
      await user.cut();
      await until(() => changes.length >= 2, 5_000);
      expect(changes).toEqual([false, true]);
      for (const room of ['news_1', 'news_2'])
        await eventually(
          async () => {
            await a.publish(room, 'after');
            return got;
          },
          (heard) => heard.includes(`${room}:after`),
        );
      expect(b.unheardRooms).toBe(1);
      expect((await b.health()).detail).toContain('2 room(s) heard on this node; 1 room(s) not heard');
    });

    it('keeps trying a room joined while its rooms are restored whose own SUBSCRIBE failed, and tells the rooms core after the reconnection', async () => {
      const { a, b } = await twoNodes();
      const got: string[] = [];
      b.subscribe((room, payload) => got.push(`${room}:${payload}`));
      const events: string[] = [];
      b.onConnectionChange((connected) => events.push(`connected:${connected}`));
      b.onRoomHeard((roomId, heard) => events.push(`${roomId}:${heard}`));
      await b.join('news_1');
      // The restore's SUBSCRIBE of every room waits until `release`; post_2's own one is refused while `refusing`.
      let refusing = true;
      let restoring: () => void = () => {};
      const seen = new Promise<void>((resolve) => (restoring = resolve));
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      const sub = b.link.sub;
      const subscribe = sub.subscribe.bind(sub) as (...channels: string[]) => Promise<unknown>;
      vi.spyOn(sub, 'subscribe').mockImplementation(((...channels: string[]) => {
        if (channels.some((c) => c.endsWith('post_2'))) {
          return refusing ? Promise.reject(new Error('NOPERM this user has no permissions to access one of the channels')) : subscribe(...channels);
        }
        if (channels.some((c) => c.endsWith('news_1'))) {
          restoring();
          return gate.then(() => subscribe(...channels));
        }
        return subscribe(...channels);
      }) as never);

      await proxy.cut();
      await until(() => events.includes('connected:false'));
      await proxy.restore();
      // The rooms are being subscribed again (the restore took its list of rooms) when post_2 is joined.
      await seen;
      await b.join('post_2');
      expect(b.unheardRooms).toBe(1);
      release();
      await until(() => events.includes('connected:true'), 5_000);
      // Still not heard, and said so after the reconnection (which told the rooms core every room is heard).
      expect(b.unheardRooms).toBe(1);
      expect(events.slice(events.indexOf('connected:true'))).toContain('post_2:false');
      // Tried again: heard once allowed.
      refusing = false;
      await eventually(
        async () => {
          await a.publish('post_2', 'heard at last');
          return got;
        },
        (heard) => heard.includes('post_2:heard at last'),
      );
      await until(() => events.at(-1) === 'post_2:true');
      expect(b.unheardRooms).toBe(0);
    });

    it('subscribes its rooms again when the link dropped and came back while it restored them, and only then says it is back', async () => {
      const { a, b } = await twoNodes();
      const got: string[] = [];
      b.subscribe((room, payload) => got.push(`${room}:${payload}`));
      const changes: boolean[] = [];
      b.onConnectionChange((connected) => changes.push(connected));
      await b.join('news_1');
      await proxy.cut();
      await until(() => changes.includes(false));
      // The restore's presence rewrite, after its SUBSCRIBEs, waits until `release`.
      const heartbeat = b.presence.heartbeat.bind(b.presence);
      let rewriting: () => void = () => {};
      const seen = new Promise<void>((resolve) => (rewriting = resolve));
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      vi.spyOn(b.presence, 'heartbeat').mockImplementationOnce(async () => {
        rewriting();
        await gate;
        return heartbeat();
      });
      await proxy.restore();
      await seen;
      // The link drops and comes back meanwhile: the room was subscribed on a connection now gone.
      await proxy.cut();
      await until(() => !b.link.isUp);
      await proxy.restore();
      await until(() => b.link.isUp, 5_000);
      release();
      await eventually(
        async () => {
          await a.publish('news_1', 'heard');
          return got;
        },
        (heard) => heard.includes('news_1:heard'),
      );
      expect(changes.at(-1)).toBe(true);
      expect((await b.health()).ok).toBe(true);
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

    it('fails a presence write that Redis refused command by command (a pipeline resolves with the errors), logs it once, then that it works again', async () => {
      network = redisNetwork();
      const { log, lines: written } = linesLog();
      const a = await network.bus({ log });
      await a.presence.set('news_1', { id: 'u1', name: 'Ana' }, 1);
      // Another program's key where the entries go: every ZADD of the rewrite is refused.
      const roomKey = `${network.prefix}presence:news_1`;
      await a.link.cmd.del(roomKey);
      await a.link.cmd.set(roomKey, 'not a sorted set');
      await expect(a.presence.heartbeat()).rejects.toThrow(/WRONGTYPE/);
      await expect(a.presence.set('news_1', { id: 'u2', name: 'Ben' }, 2)).rejects.toThrow(/WRONGTYPE/);
      await until(() => written.some((l) => l.startsWith('WARN') && l.includes('presence')), 10_000);
      await a.link.cmd.del(roomKey);
      await until(() => written.some((l) => l.startsWith('INFO') && l.includes('presence')), 10_000);
      expect(written.filter((l) => l.startsWith('WARN'))).toHaveLength(1);
      expect((await a.presence.list('news_1')).map((e) => e.id)).toEqual(['u1', 'u2']);
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
