/**
 * A room whose read of the shared presence failed is read again at the next recheck: the read was
 * for a node that died (a recheck found its entries expired), and whatever recheck came next no
 * longer found them (deleted meanwhile), so its members stayed listed until the room emptied.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { RoomHub } from '../../src/rooms/hub.js';
import type { InProcessBus } from '../../src/rooms/in-process-bus.js';
import { encodeEnvelope } from '../../src/rooms/envelope.js';
import { silentLogger } from '../../src/logger.js';
import { FakeConnection, hubBesideOtherNode, ROOM, until } from './helpers.js';

let hub: RoomHub;
let here: InProcessBus;
let other: InProcessBus;
let closeAll: () => Promise<void>;

beforeEach(async () => {
  ({
    hub,
    here,
    other,
    close: closeAll,
  } = await hubBesideOtherNode(
    silentLogger,
    {},
    {
      // Entries that expire, as in Redis: this node rechecks its rooms.
      prepare: (bus) => Object.defineProperty(bus.presence, 'recheckMs', { value: 10 }),
    },
  ));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await closeAll();
});

it('reads the presence again at the next recheck when the read a recheck asked for failed', async () => {
  const ann = new FakeConnection('c1');
  hub.connect(ann, { roomId: ROOM, ip: '10.0.0.1' })!.receive(JSON.stringify({ type: 'hello', name: 'Ann' }));
  await until(() => ann.frames('welcome').length === 1);
  await other.join(ROOM);
  await other.presence.set(ROOM, { id: 'u_bob', name: 'Bob' }, Date.now());
  await other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'presence', frame: '' }));
  await until(() => ann.frames('presence').some((f) => f.joined?.name === 'Bob'));
  // Bob's node dies: his entry goes without a word. One recheck finds it expired; the read it asks
  // for fails, and every later recheck finds nothing expired (the entry was deleted meanwhile).
  await other.presence.remove(ROOM, 'u_bob');
  const stale = vi.spyOn(here.presence, 'stale').mockResolvedValueOnce([ROOM]);
  const read = vi.spyOn(here.presence, 'list').mockRejectedValueOnce(new Error('Redis timed out'));
  await until(() => stale.mock.calls.length >= 1 && read.mock.calls.length >= 1);
  await until(() => ann.frames('presence').some((f) => f.left?.name === 'Bob'));
  expect(
    ann
      .frames('presence')
      .at(-1)
      ?.members.map((m: { name: string }) => m.name),
  ).toEqual(['Ann']);
});
