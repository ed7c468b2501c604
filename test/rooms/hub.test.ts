/** The rooms core with fake connections: no sockets, exact control over back-pressure. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { RoomHub } from '../../src/rooms/hub.js';
import { Identity } from '../../src/rooms/identity.js';
import { InProcessBus } from '../../src/rooms/in-process-bus.js';
import type { RoomOptions } from '../../src/rooms/options.js';
import type { Session } from '../../src/rooms/session.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { tempStore } from '../helpers.js';
import { FakeConnection, until } from './helpers.js';

describe('RoomHub with fake connections', () => {
  let store: SqliteStore;
  let closeStore: () => Promise<void>;
  let hub: RoomHub;
  let n = 0;

  const makeHub = (options: Partial<RoomOptions> = {}) => {
    void hub?.close();
    hub = new RoomHub({
      store,
      identity: new Identity(Buffer.alloc(32, 7)),
      bus: new InProcessBus(),
      resolver: async (id) => (id === 'news_1' ? { id, kind: 'news', title: 'T', url: null, context: 'T' } : null),
      options: { maxConnectionsPerIp: 100_000, ...options },
    });
  };

  beforeEach(() => {
    const temp = tempStore();
    store = temp.store;
    closeStore = temp.close;
    makeHub();
  });
  afterEach(async () => {
    await hub.close();
    await closeStore();
  });

  async function member(name: string): Promise<{ conn: FakeConnection; session: Session }> {
    const conn = new FakeConnection(`c${++n}`);
    const session = hub.connect(conn, { roomId: 'news_1', ip: `10.0.0.${n % 250}` })!;
    session.receive(JSON.stringify({ type: 'hello', name }));
    await until(() => conn.frames('welcome').length === 1);
    return { conn, session };
  }

  it('serialises a broadcast once, however many members', async () => {
    const count = async (members: number) => {
      const conns: Awaited<ReturnType<typeof member>>[] = [];
      for (let i = 0; i < members; i++) conns.push(await member(`m${i}`));
      await new Promise((r) => setTimeout(r, 80));
      const spy = vi.spyOn(JSON, 'stringify');
      conns[0].session.receive(JSON.stringify({ type: 'say', text: 'hi', clientId: `k${members}` }));
      await until(() => conns.every((c) => c.conn.frames('message').length === 1));
      // Only the broadcast frame's serialisations count: on a busy machine a timer's work (a leaving
      // member's presence, a sweep) can stringify something else meanwhile.
      const calls = spy.mock.calls.filter(([value]) => (value as { type?: unknown } | null)?.type === 'message').length;
      spy.mockRestore();
      for (const c of conns) c.session.closed();
      return calls;
    };
    const few = await count(2);
    const many = await count(40);
    expect(few).toBe(1);
    expect(many).toBe(few);
  });

  it('answers an ask with ERR_ASSISTANT_FAILED when the hub has no assistant', async () => {
    const a = await member('Ana');
    a.session.receive(JSON.stringify({ type: 'say', text: '@ai anyone?', clientId: 'n' }));
    await until(() => a.conn.frames('error').length === 1);
    expect(a.conn.frames('error')[0]).toMatchObject({ code: 'ERR_ASSISTANT_FAILED', clientId: 'n' });
    expect(a.conn.frames('message')).toHaveLength(1);
  });

  it('skips typing and presence for a backed-up connection but still sends it messages', async () => {
    makeHub({ softBufferedBytes: 1000, hardBufferedBytes: 100_000 });
    const a = await member('Ana');
    const b = await member('Ben');
    a.conn.bufferedAmount = 5000;
    const before = a.conn.sent.length;
    b.session.receive(JSON.stringify({ type: 'typing', active: true }));
    await member('Cy');
    await new Promise((r) => setTimeout(r, 120));
    expect(a.conn.sent.length).toBe(before);
    b.session.receive(JSON.stringify({ type: 'say', text: 'important', clientId: 'm' }));
    await until(() => a.conn.frames('message').length === 1);
    expect(a.conn.closedWith).toBeNull();
  });

  it('closes a connection past the hard cap with 1013 and drops it from the room', async () => {
    makeHub({ softBufferedBytes: 1000, hardBufferedBytes: 10_000 });
    const a = await member('Ana');
    const b = await member('Ben');
    a.conn.bufferedAmount = 20_000;
    b.session.receive(JSON.stringify({ type: 'say', text: 'flood', clientId: 'f' }));
    await until(() => a.conn.closedWith !== null);
    expect(a.conn.closedWith).toBe(CloseCode.TRY_AGAIN_LATER);
    // Ben's join and Ana's drop fall in one presence window: one frame without joined/left.
    await until(() => b.conn.frames('presence').some((f) => f.count === 1 && f.members[0].name === 'Ben'));
    expect(hub.connectionCount).toBe(1);
    b.session.receive(JSON.stringify({ type: 'say', text: 'again', clientId: 'g' }));
    await until(() => b.conn.frames('message').length === 2);
    expect(a.conn.frames('message')).toHaveLength(1);
  });

  it('closes a connection past the soft limit with 1013 once the node’s sockets queue more than its budget', async () => {
    makeHub({ softBufferedBytes: 1000, hardBufferedBytes: 100_000, nodeBufferedBytes: 100_000 });
    const a = await member('Ana');
    const b = await member('Ben');
    const c = await member('Cy');
    // Each alone is under its own limit; together they are over the node's.
    a.conn.bufferedAmount = 60_000;
    b.conn.bufferedAmount = 60_000;
    c.session.receive(JSON.stringify({ type: 'say', text: 'one', clientId: 'o' }));
    await until(() => c.conn.frames('message').length === 1);
    // Ana was counted first (60,000 of 100,000); Ben's share tipped the node over.
    expect(a.conn.closedWith).toBeNull();
    expect(b.conn.closedWith).toBe(CloseCode.TRY_AGAIN_LATER);
    // Ben's queue is the node's until his transport is gone.
    expect(hub.queuedBytes).toBe(120_000);
    b.session.closed();
    expect(hub.queuedBytes).toBe(60_000);
    c.session.receive(JSON.stringify({ type: 'say', text: 'two', clientId: 't' }));
    await until(() => a.conn.frames('message').length === 2);
    expect(a.conn.closedWith).toBeNull();
    expect(hub.connectionCount).toBe(2);
    // A closed socket's share is released, and a drained one is counted again by the sweep.
    a.conn.bufferedAmount = 0;
    await until(() => hub.queuedBytes === 0, 10_000);
    a.conn.bufferedAmount = 5_000;
    c.session.receive(JSON.stringify({ type: 'say', text: 'three', clientId: 'h' }));
    await until(() => a.conn.frames('message').length === 3);
    expect(hub.queuedBytes).toBe(5_000);
    a.session.closed();
    expect(hub.queuedBytes).toBe(0);
  });

  it('keeps counting the queue of a socket it closed until its transport is gone, and closes laggards by it', async () => {
    makeHub({ softBufferedBytes: 1000, hardBufferedBytes: 50_000, nodeBufferedBytes: 100_000 });
    const a = await member('Ana');
    const b = await member('Ben');
    const c = await member('Cy');
    a.conn.bufferedAmount = 60_000;
    c.session.receive(JSON.stringify({ type: 'say', text: 'one', clientId: 'o' }));
    await until(() => a.conn.closedWith !== null);
    expect(a.conn.closedWith).toBe(CloseCode.TRY_AGAIN_LATER);
    // Closed, Ana's client has not answered: her 60,000 bytes are still queued on the node.
    expect(hub.queuedBytes).toBe(60_000);
    expect(hub.connectionCount).toBe(2);
    // The sweep reads what her socket still holds, as it does an open one's.
    a.conn.bufferedAmount = 70_000;
    await until(() => hub.queuedBytes === 70_000, 10_000);
    // Ben, 40,000 behind, is under his own limit; with Ana's queue the node is over its budget.
    b.conn.bufferedAmount = 40_000;
    c.session.receive(JSON.stringify({ type: 'say', text: 'two', clientId: 't' }));
    await until(() => b.conn.closedWith !== null);
    expect(b.conn.closedWith).toBe(CloseCode.TRY_AGAIN_LATER);
    // Gone at last, their queues leave the budget with them.
    a.session.closed();
    b.session.closed();
    expect(hub.queuedBytes).toBe(0);
  });

  it('coalesces presence in large rooms and caps the member list', async () => {
    makeHub({ largeRoomMembers: 10, maxListedMembers: 5, presenceWindowMs: 1, largeRoomPresenceWindowMs: 300 });
    const started = Date.now();
    const first = await member('m0');
    for (let i = 1; i < 60; i++) await member(`m${i}`);
    await new Promise((r) => setTimeout(r, 400));
    const frames = first.conn.frames('presence');
    // At most one frame per window once the room is large, however long the joins took on this
    // machine (one per join below 10 members, plus the window open when the wait ended).
    expect(frames.length).toBeLessThanOrEqual(10 + Math.ceil((Date.now() - started) / 300) + 1);
    const last = frames[frames.length - 1];
    expect(last.count).toBe(60);
    expect(last.members).toHaveLength(5);
    const late = await member('late');
    const welcome = late.conn.frames('welcome')[0];
    expect(welcome.members).toHaveLength(5);
    expect(welcome.memberCount).toBe(61);
  });

  it('closes with 1011 when a room cannot be loaded, and loads it again on the next join', async () => {
    let broken = true;
    await hub.close();
    hub = new RoomHub({
      store,
      identity: new Identity(Buffer.alloc(32, 7)),
      bus: new InProcessBus(),
      resolver: async (id) => {
        if (broken) throw new Error('store down');
        return { id, kind: 'news', title: 'T', url: null, context: 'T' };
      },
    });
    const conn = new FakeConnection('x');
    hub.connect(conn, { roomId: 'news_1', ip: 'a' })!.receive(JSON.stringify({ type: 'hello', name: 'Ana' }));
    await until(() => conn.closedWith !== null);
    expect(conn.closedWith).toBe(CloseCode.INTERNAL_ERROR);
    expect(conn.frames('error')[0].code).toBe('ERR_INTERNAL');
    broken = false;
    expect((await member('Ben')).conn.frames('welcome')).toHaveLength(1);
  });

  it('answers a hello to a room that does not exist without joining its bus channel, and hears a real one until it empties', async () => {
    await hub.close();
    const bus = new InProcessBus();
    const join = vi.spyOn(bus, 'join');
    const leave = vi.spyOn(bus, 'leave');
    hub = new RoomHub({
      store,
      identity: new Identity(Buffer.alloc(32, 7)),
      bus,
      resolver: async (id) => (id === 'news_1' ? { id, kind: 'news', title: 'T', url: null, context: 'T' } : null),
    });
    for (const roomId of ['news_made_up', 'topic_nothing', 'whatever']) {
      const conn = new FakeConnection(roomId);
      hub.connect(conn, { roomId, ip: 'a' })!.receive(JSON.stringify({ type: 'hello', name: 'Ana' }));
      await until(() => conn.closedWith !== null);
      expect(conn.closedWith).toBe(CloseCode.ROOM_NOT_FOUND);
    }
    // With Redis each of those was a SUBSCRIBE and an UNSUBSCRIBE.
    expect(join).not.toHaveBeenCalled();
    expect(leave).not.toHaveBeenCalled();
    const ana = await member('Ana');
    expect(join.mock.calls).toEqual([['news_1']]);
    ana.session.closed();
    expect(leave.mock.calls).toEqual([['news_1']]);
  });

  it('arms no wait for an asker’s return for the members its closing sends away', async () => {
    await member('Ann');
    const read = vi.spyOn(hub.bus.presence, 'list');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await hub.close();
      await vi.runOnlyPendingTimersAsync();
      expect(read).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps memory bounded: a dropped room holds no members or sessions', async () => {
    const a = await member('Ana');
    a.session.closed();
    expect(hub.listRooms()).toEqual([]);
    expect(hub.connectionCount).toBe(0);
  });
});
