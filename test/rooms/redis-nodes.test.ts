/**
 * Three app nodes in one process on one Redis (their own key prefix) and one shared store: rooms,
 * presence and typing span the nodes; a node that dies takes its members with it; Redis going
 * away for one node (a loopback proxy the test cuts) leaves its members served locally, shows in
 * its /readyz and salon_bus_connected until it hears its rooms again, and everything missed is
 * delivered once it is back; a node late with its heartbeat gets its members back on the others; a
 * thread deleted on one node is told to the members on the others.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import type { Store } from '../../src/store/types.js';
import { tempStore } from '../helpers.js';
import { describeRedis, redisNetwork, REDIS_URL } from '../redis/gate.js';
import { tcpProxy, type TcpProxy } from '../redis/tcp-proxy.js';
import { ACTIVE_ROOMS_FRESH_MS } from '../../src/rooms/node-sync.js';
import type { RedisRoomBus } from '../../src/rooms/redis-bus.js';
import { ROOM, item, joined, listen, member, until } from './helpers.js';

const ADMIN = { authorization: 'Bearer redis-nodes-admin-token' };
type Joined = Awaited<ReturnType<typeof joined>>;
const names = (frame: { members: { name: string }[] }) => frame.members.map((m) => m.name);
/**
 * Presence TTL of nodes 0 and 1, whose death no test is about: with the 400-ms TTL of the test
 * timings, a loaded machine that runs a heartbeat late lets their members expire on the others.
 * Node 2 keeps the short TTL: the tests cut it off (or stop its heartbeats) to see it go.
 */
const LIVE_TTL_MS = 60_000;
/**
 * Redis command timeout of every node here. The test timings' 1 s is for a Redis that hangs, which
 * no test here plays (the proxy is cut, which fails commands at once); on a loaded machine a
 * process paused that long times out a reply that came meanwhile, and a join read nobody elsewhere.
 */
const COMMAND_TIMEOUT_MS = 10_000;
/** How long a wait for the nodes to agree may take on a loaded machine (a bound, not a measure). */
const WAIT_MS = 10_000;

describeRedis('rooms across three nodes on one Redis', () => {
  let nodes: FastifyInstance[];
  let buses: RedisRoomBus[];
  let closeStore: () => Promise<void>;
  let network: ReturnType<typeof redisNetwork>;
  let proxy: TcpProxy;

  beforeEach(async () => {
    const temp = tempStore();
    const store: Store = temp.store;
    closeStore = temp.close;
    await store.upsertItem(item(ROOM));
    // The nodes share the store; each closing app must not close it under the others.
    const shared = new Proxy(store, { get: (t, p) => (p === 'close' ? async () => {} : Reflect.get(t, p)) });
    network = redisNetwork();
    proxy = await tcpProxy(REDIS_URL);
    const config = testConfig({ DATA_DIR: temp.dir, ADMIN_TOKEN: 'redis-nodes-admin-token', IDENTITY_SECRET: 'one secret for every node of this test' });
    nodes = [];
    buses = [];
    for (let i = 0; i < 3; i++) {
      // The third node reaches Redis through the proxy, so a test can cut it off alone.
      const bus = await network.bus({
        nodeId: `node-${i}`,
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        ...(i === 2 ? { url: proxy.url } : { presenceTtlMs: LIVE_TTL_MS }),
      });
      buses.push(bus);
      const app = await buildApp(config, { store: shared, roomBus: bus, roomOptions: { shutdownGraceMs: 50 } });
      await app.ready();
      nodes.push(app);
    }
  });
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.close()));
    await proxy.close();
    await network.cleanup();
    await closeStore();
  });

  /** Waits until `who` got a presence frame listing exactly `expected`. */
  const sees = (who: Joined, expected: string[]) => who.client.next('presence', (f) => names(f as never).join() === expected.join(), WAIT_MS);

  it('lets users on different nodes chat, see one presence list and see each other type', async () => {
    const ana = await joined(nodes[0], 'Ana');
    const ben = await joined(nodes[1], 'Ben');
    const cy = await joined(nodes[2], 'Cy');
    expect(names(ben.welcome as never)).toEqual(['Ana', 'Ben']);
    expect(names(cy.welcome as never)).toEqual(['Ana', 'Ben', 'Cy']);
    expect(cy.welcome.memberCount).toBe(3);
    await sees(ana, ['Ana', 'Ben', 'Cy']);
    await sees(ben, ['Ana', 'Ben', 'Cy']);
    for (const node of nodes) {
      expect((await node.inject(`/api/v1/rooms/${ROOM}`)).json()).toMatchObject({
        memberCount: 3,
        members: [{ name: 'Ana' }, { name: 'Ben' }, { name: 'Cy' }],
      });
    }

    ana.client.send({ type: 'say', text: 'hello from node 0', clientId: 'a1' });
    for (const who of [ben, cy]) expect((await who.client.next('message')).message).toMatchObject({ seq: 1, text: 'hello from node 0' });
    cy.client.send({ type: 'say', text: 'and from node 2', clientId: 'c1' });
    for (const who of [ana, ben]) expect((await who.client.next('message', (f) => f.message.seq === 2)).message.text).toBe('and from node 2');

    ben.client.send({ type: 'typing', active: true });
    for (const who of [ana, cy]) expect(await who.client.next('typing')).toMatchObject({ user: { name: 'Ben' }, active: true });

    // A second Ana on another node gets a suffix there too; Ana's own token works on every node,
    // and Ana connected to two nodes is one member.
    const other = await joined(nodes[2], 'ana');
    expect(other.welcome.you.name).toBe('ana (2)');
    await sees(ben, ['Ana', 'Ben', 'Cy', 'ana (2)']);
    const again = await joined(nodes[1], 'Ana', ROOM, { token: ana.welcome.you.token });
    expect(again.welcome.you.id).toBe(ana.welcome.you.id);
    expect(names(again.welcome as never)).toEqual(['Ana', 'Ben', 'Cy', 'ana (2)']);
    expect(again.welcome.memberCount).toBe(4);

    await new Promise((r) => setTimeout(r, 100));
    for (const who of [ana, ben, cy]) expect(who.client.all('message').map((f) => f.message.seq)).toEqual([1, 2]);
    expect(ben.client.all('typing')).toEqual([]);
    expect(cy.client.all('presence').filter((f) => f.joined?.id === ana.welcome.you.id)).toEqual([]);
    expect(cy.client.all('presence').every((f) => f.count <= 4)).toBe(true);
  });

  it('lists a room with members on another node in GET /api/v1/rooms of every node, and drops it when they leave', async () => {
    const rooms = async (node: FastifyInstance, query = '') => (await node.inject(`/api/v1/rooms${query}`)).json().rooms as { id: string; members: number }[];
    // Other nodes' rooms are read once a second (ACTIVE_ROOMS_FRESH_MS) for every caller: a listing may lag that long.
    const lists = async (node: FastifyInstance, members: number, query = '') => {
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const got = await rooms(node, query);
        if (got.length === 1 && got[0].id === ROOM && got[0].members === members) return;
        if (Date.now() > deadline) throw new Error(`node lists ${JSON.stringify(got)}, not ${members} member(s)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    for (const node of nodes) expect(await rooms(node)).toEqual([]);
    const ana = await joined(nodes[0], 'Ana');
    // Ben over a real socket, so closing it is a real leave.
    const ben = await member((await listen(nodes[0]))(), 'Ben');
    for (const node of nodes) await lists(node, 2);
    await lists(nodes[2], 2, `?ids=${ROOM}`);
    expect(await rooms(nodes[2], '?ids=news_other')).toEqual([]);
    // Ana on a second node is still one member, in a reading of every node's rooms made after
    // node 1 wrote her entry (an earlier one serves for ACTIVE_ROOMS_FRESH_MS).
    await joined(nodes[1], 'Ana', ROOM, { token: ana.welcome.you.token });
    while (!(await buses[2].presence.list(ROOM)).some((e) => e.node === 'node-1')) await new Promise((r) => setTimeout(r, 20));
    const readings = vi.spyOn(buses[2].presence, 'activeRooms');
    let got = await rooms(nodes[2]);
    while (!readings.mock.calls.length) {
      await new Promise((r) => setTimeout(r, ACTIVE_ROOMS_FRESH_MS / 10));
      got = await rooms(nodes[2]);
    }
    expect(got).toEqual([expect.objectContaining({ id: ROOM, members: 2 })]);
    ben.client.close();
    await until(() => nodes[0].salon.rooms.listRooms()[0]?.members === 1, WAIT_MS);
    await lists(nodes[2], 1);
  });

  it('keeps every node’s room in step with a merge made on one node: messages sent to the absorbed thread go on to the survivor', async () => {
    const ana = await joined(nodes[0], 'Ana');
    const ben = await joined(nodes[1], 'Ben');
    const main = ana.welcome.threadId;
    const side = await nodes[0].salon.threads.create(ROOM, 'Side', 'admin');
    ben.client.send({ type: 'say', text: 'on the side', clientId: 'b1', threadId: side.id });
    expect((await ana.client.next('message', (f) => f.message.text === 'on the side')).message.threadId).toBe(side.id);

    await nodes[0].salon.threads.merge(main, side.id, 'admin');
    // The announcement follows the thread move on the room's channel: node 1 has applied it.
    await ben.client.next('message', (f) => f.message.author.kind === 'system' && f.message.text.includes('was merged'));
    ben.client.send({ type: 'say', text: 'still on the side?', clientId: 'b2', threadId: side.id });
    expect((await ana.client.next('message', (f) => f.message.text === 'still on the side?')).message.threadId).toBe(main);
    // A newcomer on node 1 sees the earlier message in the survivor.
    const cy = await joined(nodes[1], 'Cy');
    const earlier = (cy.welcome.history as { text: string; threadId: string }[]).find((m) => m.text === 'on the side');
    expect(earlier?.threadId).toBe(main);
  });

  it('brings back on every node the members of a node whose heartbeat came after they expired', async () => {
    const ana = await joined(nodes[0], 'Ana');
    await joined(nodes[2], 'Cy');
    await sees(ana, ['Ana', 'Cy']);
    // Node 2 stays connected but stops renewing, as when its process stalls: node 0 drops Cy.
    const beat = vi.spyOn(buses[2].presence, 'heartbeat').mockResolvedValue();
    const gone = await sees(ana, ['Ana']);
    expect(gone.left).toMatchObject({ name: 'Cy' });
    beat.mockRestore();
    const back = await sees(ana, ['Ana', 'Cy']);
    expect(back.joined).toMatchObject({ name: 'Cy' });
    const newcomer = await joined(nodes[0], 'Dan');
    expect(names(newcomer.welcome as never)).toEqual(['Ana', 'Cy', 'Dan']);
  });

  it('hears a room’s channel on a node only while the room has members there', async () => {
    const redis = new Redis(REDIS_URL);
    const subscribers = async () => ((await redis.pubsub('NUMSUB', `${network.prefix}room:${ROOM}`)) as [string, number])[1];
    try {
      const url = await listen(nodes[1]);
      expect(await subscribers()).toBe(0);
      const ben = await member(url(), 'Ben');
      await joined(nodes[0], 'Ana');
      expect(await subscribers()).toBe(2);
      ben.client.close();
      await until(() => nodes[1].salon.rooms.listRooms().length === 0);
      const deadline = Date.now() + 3_000;
      while ((await subscribers()) !== 1) {
        if (Date.now() > deadline) throw new Error('node 1 still subscribed after its last member left');
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      redis.disconnect();
    }
  });

  it('takes the members of a node that dies off every list within seconds', async () => {
    const ana = await joined(nodes[0], 'Ana');
    await joined(nodes[2], 'Cy');
    await sees(ana, ['Ana', 'Cy']);
    // The node stops reaching Redis without closing anything: its heartbeats stop, as in a crash.
    await proxy.cut();
    const gone = await sees(ana, ['Ana']);
    expect(gone.left).toMatchObject({ name: 'Cy' });
    expect(gone.count).toBe(1);
    expect((await nodes[1].inject(`/api/v1/rooms/${ROOM}`)).json()).toMatchObject({ memberCount: 1, members: [{ name: 'Ana' }] });
  });

  it('drops from a cut-off node’s history the messages of a thread deleted meanwhile, once Redis is back', async () => {
    const { thread } = (
      await nodes[0].inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/threads`, headers: ADMIN, payload: { title: 'Gone soon' } })
    ).json();
    const ana = await joined(nodes[0], 'Ana');
    const cy = await joined(nodes[2], 'Cy');
    await sees(ana, ['Ana', 'Cy']);
    ana.client.send({ type: 'say', text: 'kept in the main thread', clientId: 'a1' });
    ana.client.send({ type: 'say', text: 'said in the thread deleted later', clientId: 'a2', threadId: thread.id });
    await cy.client.next('message', (f) => f.message.clientId === 'a2');

    await proxy.cut();
    expect((await nodes[0].inject({ method: 'DELETE', url: `/api/v1/threads/${thread.id}`, headers: ADMIN })).statusCode).toBe(200);
    await proxy.restore();

    // A newcomer on the node that was cut off is not served the deleted thread's message.
    let texts: string[] = [];
    for (let attempt = 0; attempt < 50; attempt++) {
      const { client, welcome } = await joined(nodes[2], 'Eve');
      client.close();
      texts = (welcome.history as { text: string }[]).map((m) => m.text);
      if (!texts.includes('said in the thread deleted later')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(texts).toContain('kept in the main thread');
    expect(texts).not.toContain('said in the thread deleted later');
  });

  it('tells a member on another node that a thread was deleted, and drops its messages there', async () => {
    const { thread } = (await nodes[0].inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/threads`, headers: ADMIN, payload: { title: 'Side' } })).json();
    const ana = await joined(nodes[0], 'Ana');
    const ben = await joined(nodes[1], 'Ben');
    await sees(ana, ['Ana', 'Ben']);
    ana.client.send({ type: 'say', text: 'on the side', clientId: 'a1', threadId: thread.id });
    await ben.client.next('message', (f) => f.message.clientId === 'a1', WAIT_MS);

    expect((await nodes[0].inject({ method: 'DELETE', url: `/api/v1/threads/${thread.id}`, headers: ADMIN })).statusCode).toBe(200);
    const told = await ben.client.next('message', (f) => f.message.author.kind === 'system', WAIT_MS);
    expect(told.message).toMatchObject({ seq: 0, threadId: thread.id, text: '“Side” was deleted with its messages.' });
    // The deletion went ahead of its announcement on the room's channel: node 1's room dropped the thread's messages.
    const newcomer = await joined(nodes[1], 'Cy');
    expect((newcomer.welcome.history as { text: string }[]).map((m) => m.text)).not.toContain('on the side');
  });

  it('answers /readyz 503 naming the bus, and reads salon_bus_connected 0, from an outage until the node hears its rooms again', async () => {
    const ana = await joined(nodes[0], 'Ana');
    const cy = await joined(nodes[2], 'Cy');
    await sees(ana, ['Ana', 'Cy']);
    const readiness = async () => {
      const res = await nodes[2].inject({ url: '/readyz', headers: ADMIN });
      return { status: res.statusCode, bus: res.json().checks.bus as { ok: boolean; detail: string } };
    };
    /** Node 2's gauge of the outage, and its count of outages. */
    const bus = async () => {
      const body = (await nodes[2].inject('/metrics')).body;
      const read = (series: string) => Number(new RegExp(`^${series} (\\S+)$`, 'm').exec(body)?.[1]);
      return { connected: read('salon_bus_connected'), outages: read('salon_bus_outages_total') };
    };
    expect((await readiness()).status).toBe(200);
    expect(await bus()).toEqual({ connected: 1, outages: 0 });
    // The reconnection's SUBSCRIBE of the room's channel waits until `release`.
    const sub = buses[2].link.sub;
    const subscribe = sub.subscribe.bind(sub) as (...channels: string[]) => Promise<unknown>;
    let resubscribing: () => void = () => {};
    const seen = new Promise<void>((resolve) => (resubscribing = resolve));
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = vi.spyOn(sub, 'subscribe').mockImplementation(((...channels: string[]) => {
      if (!channels.some((c) => c.endsWith(`room:${ROOM}`))) return subscribe(...channels);
      resubscribing();
      return gate.then(() => subscribe(...channels));
    }) as never);

    await proxy.cut();
    await until(() => !buses[2].link.isUp, WAIT_MS);
    const cutOff = await readiness();
    expect(cutOff.status).toBe(503);
    expect(cutOff.bus).toMatchObject({ ok: false, detail: expect.stringContaining('unreachable') });
    // Anyone is told which check fails, without its detail.
    expect((await nodes[2].inject('/readyz')).json()).toEqual(expect.objectContaining({ ok: false, checks: expect.objectContaining({ bus: { ok: false } }) }));
    expect(await bus()).toEqual({ connected: 0, outages: 1 });

    await proxy.restore();
    await seen;
    // Redis answers again, but the room's channel is not subscribed yet.
    expect(buses[2].link.isUp).toBe(true);
    const restoring = await readiness();
    expect(restoring.status).toBe(503);
    expect(restoring.bus).toMatchObject({ ok: false, detail: expect.stringContaining('subscribing its 1 room(s) again') });
    expect(await bus()).toEqual({ connected: 0, outages: 1 });

    release();
    await expect.poll(async () => (await readiness()).status, { timeout: WAIT_MS }).toBe(200);
    held.mockRestore();
    expect(await bus()).toEqual({ connected: 1, outages: 1 });
    // Ready means heard: what is said on node 0 reaches the member on node 2.
    ana.client.send({ type: 'say', text: 'heard once ready', clientId: 'a1' });
    expect((await cy.client.next('message', (f) => f.message.text === 'heard once ready', WAIT_MS)).message.seq).toBe(1);
  });

  it('serves a cut-off node’s members locally, reports it in /readyz and resyncs when Redis is back', async () => {
    const ana = await joined(nodes[0], 'Ana');
    const cy = await joined(nodes[2], 'Cy');
    const dan = await joined(nodes[2], 'Dan');
    await sees(ana, ['Ana', 'Cy', 'Dan']);

    await proxy.cut();
    await sees(ana, ['Ana']);
    const ready = await nodes[2].inject({ url: '/readyz', headers: ADMIN });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.bus).toMatchObject({ ok: false, detail: expect.stringContaining('Redis at 127.0.0.1') });
    expect((await nodes[0].inject('/readyz')).statusCode).toBe(200);

    cy.client.send({ type: 'say', text: 'said while cut off', clientId: 'c1' });
    expect((await dan.client.next('message')).message).toMatchObject({ seq: 1, text: 'said while cut off' });
    ana.client.send({ type: 'say', text: 'said on the other side', clientId: 'a1' });
    await ana.client.next('message', (f) => f.message.seq === 2);

    // The resync's presence and its replayed messages may come in either order.
    const since = new Map([ana, cy, dan].map((who) => [who, who.client.frames.length]));
    await proxy.restore();
    const replayed = (who: Joined, seq: number) => who.client.arrived('message', (f) => f.message.seq === seq, since.get(who)!, 5_000);
    for (const who of [cy, dan]) expect((await replayed(who, 2)).message.text).toBe('said on the other side');
    expect((await replayed(ana, 1)).message.text).toBe('said while cut off');
    await ana.client.arrived('presence', (f) => names(f as never).join() === 'Ana,Cy,Dan', since.get(ana)!, 5_000);
    expect((await nodes[2].inject('/readyz')).statusCode).toBe(200);

    await new Promise((r) => setTimeout(r, 200));
    for (const who of [ana, cy, dan])
      expect(
        who.client
          .all('message')
          .map((f) => f.message.seq)
          .sort(),
      ).toEqual([1, 2]);
  });
});
