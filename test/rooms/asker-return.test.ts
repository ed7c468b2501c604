/**
 * The wait for a member who left to come back (RoomHub.awaitAskerReturn) reads who is in the room
 * only for a member with a private ask to end: a read per member who left copied and sorted every
 * entry of the room, and members who leave together have their waits end in one turn.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RoomHub } from '../../src/rooms/hub.js';
import { Identity } from '../../src/rooms/identity.js';
import { InProcessBus } from '../../src/rooms/in-process-bus.js';
import { DEFAULT_ASKER_RETURN_GRACE_MS } from '../../src/rooms/options.js';
import type { Session } from '../../src/rooms/session.js';
import type { RoomAssistant } from '../../src/rooms/types.js';
import { tempStore } from '../helpers.js';
import { FakeConnection, ROOM, until } from './helpers.js';

describe('waiting for a member who left to come back', () => {
  let closeStore: () => Promise<void>;
  let hub: RoomHub;
  let bus: InProcessBus;
  let privateAskers: Set<string>;
  let askerLeft: ReturnType<typeof vi.fn>;
  let n = 0;

  beforeEach(() => {
    const temp = tempStore();
    closeStore = temp.close;
    bus = new InProcessBus();
    privateAskers = new Set();
    askerLeft = vi.fn();
    const assistant = {
      hasPrivateAsks: (roomId: string, userId: string) => roomId === ROOM && privateAskers.has(userId),
      askerLeft,
      pending: () => [],
      close: async () => {},
    } as unknown as RoomAssistant;
    hub = new RoomHub({
      store: temp.store,
      identity: new Identity(Buffer.alloc(32, 7)),
      bus,
      assistant: () => assistant,
      resolver: async (id) => (id === ROOM ? { id, kind: 'news', title: 'T', url: null, context: 'T' } : null),
      options: { maxConnectionsPerIp: 100_000 },
    });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await hub.close();
    await closeStore();
  });

  async function member(name: string): Promise<Session> {
    const conn = new FakeConnection(`c${++n}`);
    const session = hub.connect(conn, { roomId: ROOM, ip: `10.0.1.${n % 250}` })!;
    session.receive(JSON.stringify({ type: 'hello', name }));
    await until(() => conn.frames('welcome').length === 1);
    return session;
  }

  it('reads the room’s presence only for those who left with a private ask here, and ends only theirs', async () => {
    await member('Ana');
    const leaving = [await member('Ben'), await member('Cy'), await member('Dee')];
    privateAskers.add(leaving[0].userId);
    const list = vi.spyOn(bus.presence, 'list');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    for (const session of leaving) session.closed();
    await vi.advanceTimersByTimeAsync(DEFAULT_ASKER_RETURN_GRACE_MS);
    // Ben, who has an answer being written here, is looked for and gone; Cy and Dee cost nothing.
    expect(list).toHaveBeenCalledTimes(1);
    expect(askerLeft.mock.calls).toEqual([[ROOM, leaving[0].userId]]);
  });
});
