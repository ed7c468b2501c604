/**
 * After Redis comes back, every node sends a `sync` for each of its rooms, and each node reads
 * the store for them: the syncs heard while a catch-up of the room waits for its turn join it (the
 * lowest seq is read after), instead of each queueing a read of its own, one per other node.
 */
import { expect, it, vi } from 'vitest';
import { encodeEnvelope } from '../../src/rooms/envelope.js';
import type { Room } from '../../src/rooms/room.js';
import { silentLogger } from '../../src/logger.js';
import { FakeConnection, hubBesideOtherNode, ROOM, until } from './helpers.js';

it('reads the store once for the syncs of many nodes heard while a catch-up of the room waits for its turn', async () => {
  const { store, hub, other, close } = await hubBesideOtherNode(silentLogger);
  try {
    const conn = new FakeConnection('c1');
    hub.connect(conn, { roomId: ROOM, ip: '10.0.0.1' })!.receive(JSON.stringify({ type: 'hello', name: 'Ann' }));
    await until(() => conn.frames('welcome').length === 1);
    const room = (hub as unknown as { rooms: Map<string, Room> }).rooms.get(ROOM)!;
    // The room's queue is busy (a join, an earlier catch-up) until `release`.
    let release!: () => void;
    const busy = room.run(() => new Promise<void>((resolve) => (release = resolve)));
    // Stored on another node while the nodes were cut off from Redis.
    const thread = await store.ensureMainThread(ROOM);
    await store.appendMessage({ roomId: ROOM, threadId: thread.id, author: { id: 'u_zed', name: 'Zed', kind: 'user' }, text: 'said while cut off' });
    const read = vi.spyOn(store, 'messagesAfter');
    // Ten nodes back on Redis say so for the room.
    for (let n = 9; n >= 0; n--) await other.publish(ROOM, encodeEnvelope({ node: `node-${n}`, delivery: 'sync', frame: JSON.stringify({ from: n }) }));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await busy;
    // Queued after every catch-up: once it runs, they ran.
    await room.run(async () => {});
    expect(read.mock.calls.map((call) => call.slice(0, 2))).toEqual([[ROOM, 0]]);
    expect(conn.frames('message').map((f) => f.message.text)).toEqual(['said while cut off']);
  } finally {
    vi.restoreAllMocks();
    await close();
  }
});
