/**
 * A `presence` envelope carries the change (who joined, took a name or left which node), and the
 * other nodes apply it without reading the room's whole presence: a join cost every other node a
 * read of every member, so a mass join of N members cost each of them O(N²).
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { RoomHub } from '../../src/rooms/hub.js';
import { Identity } from '../../src/rooms/identity.js';
import { InProcessBusNetwork, type InProcessBus } from '../../src/rooms/in-process-bus.js';
import { decodeEnvelope, encodeEnvelope, parsePresenceDelta } from '../../src/rooms/envelope.js';
import { PRESENCE_READS_AT_ONCE } from '../../src/rooms/node-sync.js';
import { silentLogger } from '../../src/logger.js';
import { tempStore } from '../helpers.js';
import { FakeConnection, ROOM, until } from './helpers.js';

let temp: ReturnType<typeof tempStore>;
let network: InProcessBusNetwork;
let hubs: RoomHub[];

function hubOn(bus: InProcessBus): RoomHub {
  const hub = new RoomHub({
    store: temp.store,
    identity: new Identity(Buffer.alloc(32, 7)),
    bus,
    resolver: async (id) => ({ id, kind: 'news', title: 'T', url: null, context: 'T' }),
    log: silentLogger,
    options: {},
  });
  hubs.push(hub);
  return hub;
}

let connections = 0;
async function join(hub: RoomHub, name: string): Promise<FakeConnection> {
  const n = ++connections;
  const conn = new FakeConnection(`c${n}`);
  hub.connect(conn, { roomId: ROOM, ip: `10.1.${n >> 8}.${n & 255}` })!.receive(JSON.stringify({ type: 'hello', name }));
  await until(() => conn.frames('welcome').length === 1);
  return conn;
}

const lastNames = (conn: FakeConnection) =>
  conn
    .frames('presence')
    .at(-1)
    ?.members.map((m: { name: string }) => m.name);

const delta = (node: string, change: { joined?: { id: string; name: string; since: number }[]; left?: string[] }) =>
  encodeEnvelope({
    node,
    delivery: 'presence',
    frame: JSON.stringify({
      joined: (change.joined ?? []).map((j) => ({ ...j, node })),
      left: (change.left ?? []).map((id) => ({ id, node })),
    }),
  });

beforeEach(() => {
  temp = tempStore();
  network = new InProcessBusNetwork();
  hubs = [];
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const hub of hubs) await hub.close();
  await temp.close();
});

it('applies a join on another node to the member list without reading the presence', async () => {
  const a = network.node('a');
  const b = network.node('b');
  const [hubA, hubB] = [hubOn(a), hubOn(b)];
  const bo = await join(hubB, 'Bo');
  const reads = vi.spyOn(b.presence, 'list');
  await join(hubA, 'Ann');
  await until(() => bo.frames('presence').some((f) => f.joined?.name === 'Ann'));
  expect(lastNames(bo)).toEqual(['Bo', 'Ann']);
  expect(reads).not.toHaveBeenCalled();
});

it('keeps a member connected to two nodes until both have left, announced once', async () => {
  const here = network.node('here');
  const [x, y] = [network.node('x'), network.node('y')];
  hubOn(here);
  const ann = await join(hubs[0], 'Ann');
  await Promise.all([x.join(ROOM), y.join(ROOM)]);
  const reads = vi.spyOn(here.presence, 'list');
  const bob = { id: 'u_bob', name: 'Bob', since: Date.now() };
  await x.publish(ROOM, delta('x', { joined: [bob] }));
  await y.publish(ROOM, delta('y', { joined: [{ ...bob, since: bob.since + 5 }] }));
  await until(() => ann.frames('presence').some((f) => f.joined?.name === 'Bob'));
  await x.publish(ROOM, delta('x', { left: ['u_bob'] }));
  // A marker after the leave: once it is listed, the leave was applied too.
  await x.publish(ROOM, delta('x', { joined: [{ id: 'u_cy', name: 'Cy', since: bob.since + 10 }] }));
  await until(() => ann.frames('presence').some((f) => f.joined?.name === 'Cy'));
  expect(lastNames(ann)).toEqual(['Ann', 'Bob', 'Cy']);
  expect(ann.frames('presence').some((f) => f.left?.name === 'Bob')).toBe(false);
  await y.publish(ROOM, delta('y', { left: ['u_bob'] }));
  await until(() => ann.frames('presence').some((f) => f.left?.name === 'Bob'));
  expect(lastNames(ann)).toEqual(['Ann', 'Cy']);
  expect(ann.frames('presence').filter((f) => f.joined?.name === 'Bob' || f.left?.name === 'Bob')).toHaveLength(2);
  expect(reads).not.toHaveBeenCalled();
});

it('reads the presence again on an empty frame (a node that sends no change) or one it cannot apply', async () => {
  const here = network.node('here');
  const other = network.node('other');
  hubOn(here);
  const ann = await join(hubs[0], 'Ann');
  await other.join(ROOM);
  const reads = vi.spyOn(here.presence, 'list');
  await other.presence.set(ROOM, { id: 'u_bob', name: 'Bob' }, Date.now());
  await other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'presence', frame: '' }));
  await until(() => ann.frames('presence').some((f) => f.joined?.name === 'Bob'));
  expect(reads).toHaveBeenCalledTimes(1);
  // A change naming another node than its sender is not applied: the presence is read instead.
  await other.presence.set(ROOM, { id: 'u_cy', name: 'Cy' }, Date.now());
  const forged = JSON.stringify({ joined: [{ id: 'u_cy', name: 'Cy', since: Date.now(), node: 'here' }], left: [] });
  await other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'presence', frame: forged }));
  await until(() => ann.frames('presence').some((f) => f.joined?.name === 'Cy'));
  expect(reads).toHaveBeenCalledTimes(2);
});

it('costs the other node one change per member of a mass join, and no read', async () => {
  const a = network.node('a');
  const b = network.node('b');
  const [hubA, hubB] = [hubOn(a), hubOn(b)];
  const watcher = await join(hubB, 'Watcher');
  const reads = vi.spyOn(b.presence, 'list');
  const sent: string[] = [];
  const publish = a.publish.bind(a);
  vi.spyOn(a, 'publish').mockImplementation((roomId, payload) => (sent.push(payload), publish(roomId, payload)));
  const N = 60;
  await Promise.all(Array.from({ length: N }, (_, i) => join(hubA, `M${i}`)));
  await until(() => watcher.frames('presence').at(-1)?.count === N + 1);
  expect(reads).not.toHaveBeenCalled();
  const changes = sent
    .map((p) => decodeEnvelope(p)!)
    .filter((e) => e.delivery === 'presence')
    .map((e) => parsePresenceDelta(e.frame, e.node)!);
  expect(changes.reduce((n, d) => n + d.joined.length + d.left.length, 0)).toBe(N);
});

it('reads once more for a change heard while a read of the presence runs, which may have been answered before it', async () => {
  const here = network.node('here');
  const x = network.node('x');
  hubOn(here);
  await x.join(ROOM);
  const list = here.presence.list.bind(here.presence);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let answered = false;
  const reads = vi.spyOn(here.presence, 'list').mockImplementation(async (roomId) => {
    const entries = await list(roomId);
    answered = true;
    await gate;
    return entries;
  });
  const conn = new FakeConnection('c-ann');
  hubs[0].connect(conn, { roomId: ROOM, ip: '10.2.0.1' })!.receive(JSON.stringify({ type: 'hello', name: 'Ann' }));
  await until(() => answered);
  await x.presence.set(ROOM, { id: 'u_bob', name: 'Bob' }, Date.now());
  await x.publish(ROOM, delta('x', { joined: [{ id: 'u_bob', name: 'Bob', since: Date.now() }] }));
  await new Promise((resolve) => setImmediate(resolve));
  open();
  await until(() => conn.frames('welcome').length === 1 && lastNames(conn)?.includes('Bob') === true);
  expect(reads).toHaveBeenCalledTimes(2);
});

it('reads the presence of a node’s rooms back on the bus a few at a time', async () => {
  const here = network.node('here');
  const listeners: ((connected: boolean) => void)[] = [];
  (here as { onConnectionChange: (listener: (connected: boolean) => void) => void }).onConnectionChange = (listener) => void listeners.push(listener);
  const hub = hubOn(here);
  const rooms = Array.from({ length: 5 * PRESENCE_READS_AT_ONCE }, (_, i) => `news_${i + 1}`);
  const members = rooms.map((roomId, i) => {
    const conn = new FakeConnection(`c-r${i}`);
    hub.connect(conn, { roomId, ip: `10.3.${i >> 8}.${i & 255}` })!.receive(JSON.stringify({ type: 'hello', name: `Ann ${i}` }));
    return conn;
  });
  await until(() => members.every((conn) => conn.frames('welcome').length === 1));
  listeners.forEach((listener) => listener(false));
  const x = network.node('x');
  for (const roomId of rooms) await x.presence.set(roomId, { id: 'u_bob', name: 'Bob' }, Date.now());
  const list = here.presence.list.bind(here.presence);
  let running = 0;
  let most = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  vi.spyOn(here.presence, 'list').mockImplementation(async (roomId) => {
    most = Math.max(most, ++running);
    try {
      await gate;
      return await list(roomId);
    } finally {
      running--;
    }
  });
  listeners.forEach((listener) => listener(true));
  await until(() => running >= PRESENCE_READS_AT_ONCE);
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(most).toBe(PRESENCE_READS_AT_ONCE);
  open();
  await until(() => members.every((conn) => lastNames(conn)?.includes('Bob') === true));
  expect(most).toBe(PRESENCE_READS_AT_ONCE);
});

it('tells the other nodes only the presence changes it wrote: a failed write publishes nothing', async () => {
  const a = network.node('a');
  const b = network.node('b');
  const [hubA, hubB] = [hubOn(a), hubOn(b)];
  const bo = await join(hubB, 'Bo');
  const published: string[] = [];
  const publish = a.publish.bind(a);
  vi.spyOn(a, 'publish').mockImplementation(async (roomId, envelope) => {
    const e = decodeEnvelope(envelope);
    if (e?.delivery === 'presence') published.push(e.frame);
    return publish(roomId, envelope);
  });
  const set = vi.spyOn(a.presence, 'set').mockRejectedValueOnce(new Error('presence down'));
  const remove = vi.spyOn(a.presence, 'remove').mockRejectedValueOnce(new Error('presence down'));
  const ann = new FakeConnection('ann');
  const session = hubA.connect(ann, { roomId: ROOM, ip: '10.2.0.1' })!;
  session.receive(JSON.stringify({ type: 'hello', name: 'Ann' }));
  await until(() => ann.frames('welcome').length === 1 && set.mock.settledResults.some((r) => r.type === 'rejected'));
  session.closed();
  await until(() => remove.mock.settledResults.some((r) => r.type === 'rejected'));
  // A marker written after both failures: once it is published, anything before it was too.
  await join(hubA, 'Cy');
  const told = () => published.map((f) => parsePresenceDelta(f, 'a')).map((d) => ({ joined: d?.joined.map((j) => j.name), left: d?.left.length }));
  await until(() => told().some((d) => d.joined?.includes('Cy')));
  expect(told()).toEqual([{ joined: ['Cy'], left: 0 }]);
  await until(() => bo.frames('presence').some((f) => f.joined?.name === 'Cy'));
  expect(lastNames(bo)).toEqual(['Bo', 'Cy']);
});
