/**
 * A connection closed by its own welcome (its queue already past the send limit, as a socket in
 * `ws` transport mode, or one behind before its hello, is) has left the room by the time the
 * welcome returns: nothing may write it back into the shared presence, where every heartbeat
 * would renew it for good.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { RoomHub } from '../../src/rooms/hub.js';
import { Identity } from '../../src/rooms/identity.js';
import { InProcessBus } from '../../src/rooms/in-process-bus.js';
import { tempStore } from '../helpers.js';
import { FakeConnection, ROOM, until } from './helpers.js';

const HARD = 100_000;

describe('a connection closed by its welcome', () => {
  let closeStore: () => Promise<void>;
  let hub: RoomHub;
  let bus: InProcessBus;

  beforeEach(() => {
    const temp = tempStore();
    closeStore = temp.close;
    bus = new InProcessBus();
    hub = new RoomHub({
      store: temp.store,
      identity: new Identity(Buffer.alloc(32, 7)),
      bus,
      resolver: async (id) => (id === ROOM ? { id, kind: 'news', title: 'T', url: null, context: 'T' } : null),
      // Presence frames go out one change at a time, so a stray one cannot hide in a coalesced frame.
      options: { softBufferedBytes: 1_000, hardBufferedBytes: HARD, presenceWindowMs: 1, largeRoomPresenceWindowMs: 1 },
    });
  });
  afterEach(async () => {
    await hub.close();
    await closeStore();
  });

  function hello(name: string, ip: string, queued = 0): FakeConnection {
    const conn = new FakeConnection(name);
    conn.bufferedAmount = queued;
    hub.connect(conn, { roomId: ROOM, ip })!.receive(JSON.stringify({ type: 'hello', name }));
    return conn;
  }

  it('is not left in the shared presence, which other nodes list', async () => {
    const ana = hello('Ana', '10.0.2.1');
    await until(() => ana.frames('welcome').length === 1);
    const ben = hello('Ben', '10.0.2.2', HARD + 1);
    await until(() => ben.closedWith !== null);
    expect(ben.closedWith).toBe(CloseCode.TRY_AGAIN_LATER);
    expect(ben.frames('welcome')).toHaveLength(1);
    expect((await bus.presence.list(ROOM)).map((e) => e.name)).toEqual(['Ana']);
  });

  it('is not announced as leaving a room it was never announced joining', async () => {
    const ana = hello('Ana', '10.0.2.1');
    await until(() => ana.frames('welcome').length === 1);
    const ben = hello('Ben', '10.0.2.2', HARD + 1);
    await until(() => ben.closedWith !== null);
    const cy = hello('Cy', '10.0.2.3');
    await until(() => cy.frames('welcome').length === 1 && ana.frames('presence').some((f) => f.joined?.name === 'Cy'));
    const told = ana.frames('presence').flatMap((f) => [f.joined?.name, f.left?.name].filter(Boolean));
    expect(told).not.toContain('Ben');
  });
});
