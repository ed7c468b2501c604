/**
 * Two app nodes on one Redis and one store: a room whose SUBSCRIBE fails on a node while Redis
 * stays up (a timeout, a refusal) is resynced alone once it is heard again, not every room of the
 * node as after an outage; /metrics says meanwhile that it is not heard, and /readyz fails for a timeout.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import type { RedisRoomBus } from '../../src/rooms/redis-bus.js';
import type { Store } from '../../src/store/types.js';
import { tempStore } from '../helpers.js';
import { describeRedis, redisNetwork } from '../redis/gate.js';
import { OTHER_ROOM, ROOM, item, joined } from './helpers.js';

const ADMIN = { authorization: 'Bearer unheard-room-admin-token' };
/** How long a wait for the nodes to agree may take on a loaded machine (a bound, not a measure). */
const WAIT_MS = 10_000;

describeRedis('a room the bus does not hear while Redis stays up', () => {
  let nodes: FastifyInstance[];
  let buses: RedisRoomBus[];
  let store: Store;
  let closeStore: () => Promise<void>;
  let network: ReturnType<typeof redisNetwork>;

  beforeEach(async () => {
    const temp = tempStore();
    store = temp.store;
    closeStore = temp.close;
    await store.upsertItem(item(ROOM));
    await store.upsertItem(item(OTHER_ROOM));
    // The nodes share the store; each closing app must not close it under the others.
    const shared = new Proxy(store, { get: (t, p) => (p === 'close' ? async () => {} : Reflect.get(t, p)) });
    network = redisNetwork();
    const config = testConfig({ DATA_DIR: temp.dir, ADMIN_TOKEN: 'unheard-room-admin-token', IDENTITY_SECRET: 'one secret for both nodes of this test' });
    nodes = [];
    buses = [];
    for (let i = 0; i < 2; i++) {
      // Long-lived entries and a patient command timeout: no test here is about a slow machine.
      const bus = await network.bus({ nodeId: `node-${i}`, presenceTtlMs: 60_000, commandTimeoutMs: 10_000 });
      buses.push(bus);
      const app = await buildApp(config, { store: shared, roomBus: bus, roomOptions: { shutdownGraceMs: 50 } });
      await app.ready();
      nodes.push(app);
    }
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await Promise.all(nodes.map((n) => n.close()));
    await network.cleanup();
    await closeStore();
  });

  const gauge = async (node: FastifyInstance) => {
    const body = (await node.inject('/metrics')).body;
    return Number(/^salon_bus_rooms_unheard (\S+)$/m.exec(body)?.[1]);
  };

  it('resyncs only the room whose SUBSCRIBE failed once it is heard again, and delivers what it missed and what follows', async () => {
    // Node 1 hears ROOM; its SUBSCRIBE of OTHER_ROOM fails, as long as `refusing`, on a link that stays up.
    const ana = await joined(nodes[1], 'Ana', ROOM);
    const cy = await joined(nodes[0], 'Cy', ROOM);
    await ana.client.next('presence', (f) => (f.members as { name: string }[]).length === 2, WAIT_MS);
    const sub = buses[1].link.sub;
    const subscribe = sub.subscribe.bind(sub) as (...channels: string[]) => Promise<unknown>;
    let refusing = true;
    const tried = vi
      .spyOn(sub, 'subscribe')
      .mockImplementation(((...channels: string[]) =>
        refusing && channels.some((c) => c.endsWith(OTHER_ROOM)) ? Promise.reject(new Error('Command timed out')) : subscribe(...channels)) as never);
    // What the rooms core of either node reads from the store, by room.
    const read: string[] = [];
    const messagesAfter = store.messagesAfter.bind(store);
    vi.spyOn(store, 'messagesAfter').mockImplementation(async (roomId, ...rest) => (read.push(roomId), messagesAfter(roomId, ...rest)));

    const ben = await joined(nodes[1], 'Ben', OTHER_ROOM);
    expect(tried.mock.calls.some((c) => String(c[0]).endsWith(OTHER_ROOM))).toBe(true);
    expect(buses[1].link.isUp).toBe(true);
    // Said on node 0 while node 1 does not hear the room.
    const dan = await joined(nodes[0], 'Dan', OTHER_ROOM);
    dan.client.send({ type: 'say', text: 'said while unheard', clientId: 'd1' });
    await dan.client.next('message', (f) => f.message.text === 'said while unheard');
    // Operators see it: one room not heard, and the node not ready (a new member of the room here
    // would miss the other nodes' messages), the admin's detail saying which room and why.
    expect(await gauge(nodes[1])).toBe(1);
    const unready = await nodes[1].inject({ url: '/readyz', headers: ADMIN });
    expect(unready.statusCode).toBe(503);
    expect(unready.json().checks.bus).toEqual({
      ok: false,
      detail: expect.stringMatching(new RegExp(`1 room\\(s\\) not heard.*${OTHER_ROOM}: Command timed out`)),
    });
    expect((await nodes[0].inject('/readyz')).statusCode).toBe(200);
    // ROOM is heard all along.
    cy.client.send({ type: 'say', text: 'heard all along', clientId: 'c1' });
    expect((await ana.client.next('message', () => true, WAIT_MS)).message.text).toBe('heard all along');

    // Loading the rooms read the store; from here on only a resync does.
    read.length = 0;
    refusing = false;
    // The missed message comes from the store once the room is heard again, then live ones.
    expect((await ben.client.next('message', () => true, WAIT_MS)).message).toMatchObject({ seq: 1, text: 'said while unheard' });
    dan.client.send({ type: 'say', text: 'said once heard again', clientId: 'd2' });
    expect((await ben.client.next('message', () => true, WAIT_MS)).message).toMatchObject({ seq: 2, text: 'said once heard again' });
    await expect.poll(() => gauge(nodes[1]), { timeout: WAIT_MS }).toBe(0);
    expect((await nodes[1].inject('/readyz')).statusCode).toBe(200);
    // Only the room that was not heard was read again from the store; ROOM was not resynced.
    expect(read).toContain(OTHER_ROOM);
    expect(read).not.toContain(ROOM);
    await new Promise((r) => setTimeout(r, 200));
    expect(read).not.toContain(ROOM);
    expect(ben.client.all('message').map((f) => f.message.seq)).toEqual([1, 2]);
    expect(ana.client.all('message').map((f) => f.message.text)).toEqual(['heard all along']);
  });
});
