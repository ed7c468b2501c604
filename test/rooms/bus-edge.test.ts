/**
 * What another node puts on a room's channel is checked where it comes in (src/rooms/bus-message.ts):
 * a malformed envelope or message is dropped with a warning, a seq far past the room's is not taken
 * on the envelope's word but read from the store, and the room goes on either way.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeEnvelope, encodeEnvelope, type Delivery } from '../../src/rooms/envelope.js';
import { parseBusMessage } from '../../src/rooms/bus-message.js';
import type { RoomHub } from '../../src/rooms/hub.js';
import type { InProcessBus } from '../../src/rooms/in-process-bus.js';
import { MAX_SEQ_LEAD } from '../../src/rooms/node-sync.js';
import type { Message } from '../../src/protocol/messages.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { silentLogger } from '../../src/logger.js';
import { FakeConnection, hubBesideOtherNode, ROOM, until } from './helpers.js';

describe('the room bus edge', () => {
  let store: SqliteStore;
  let closeAll: () => Promise<void>;
  let hub: RoomHub;
  let other: InProcessBus;
  let warnings: string[];
  let n = 0;

  beforeEach(async () => {
    warnings = [];
    ({ store, hub, other, close: closeAll } = await hubBesideOtherNode({ ...silentLogger, warn: (_details, msg) => void warnings.push(msg) }));
  });
  afterEach(() => closeAll());

  async function member(name: string) {
    const conn = new FakeConnection(`c${++n}`);
    const session = hub.connect(conn, { roomId: ROOM, ip: `10.0.0.${n}` })!;
    session.receive(JSON.stringify({ type: 'hello', name }));
    await until(() => conn.frames('welcome').length === 1);
    return { conn, session, welcome: conn.frames('welcome')[0] };
  }

  /** A message the other node stored (not yet published). */
  async function storedElsewhere(text: string): Promise<Message> {
    const thread = await store.ensureMainThread(ROOM);
    return (await store.appendMessage({ roomId: ROOM, threadId: thread.id, author: { id: 'u_zed', name: 'Zed', kind: 'user' }, text })).message;
  }

  const publish = (delivery: Delivery, frame: string, user?: string) =>
    other.publish(ROOM, encodeEnvelope({ node: 'other', delivery, frame, ...(user ? { user } : {}) }));
  const texts = (conn: FakeConnection) => conn.frames('message').map((f) => f.message.text);

  it('drops malformed messages and frames with a warning, and a seq far past the room’s that the store does not hold; the room goes on', async () => {
    const ann = await member('Ann');
    const bob = await member('Bob');
    const thread = await store.ensureMainThread(ROOM);
    const shape = { id: 'x1', roomId: ROOM, threadId: thread.id, author: { id: 'u_x', name: 'X', kind: 'user' }, text: 'junk', ts: '2026-01-01T00:00:00Z' };
    const frame = (message: object) => JSON.stringify({ type: 'message', message });
    const malformed = [
      // JSON reads 1e400 as Infinity, and 1e300 is an integer no store gives.
      frame({ ...shape, seq: 1 }).replace('"seq":1', '"seq":1e400'),
      frame({ ...shape, seq: 1e300 }),
      frame({ ...shape, seq: -1 }),
      frame({ ...shape, seq: 2.5 }),
      frame({ ...shape, seq: '3' }),
      frame({ ...shape, seq: 4, roomId: 'post_2' }),
      frame({ ...shape, seq: 5, author: null }),
      frame({ ...shape, seq: 6, ts: 'yesterday' }),
      JSON.stringify({ type: 'presence', message: { ...shape, seq: 7 } }),
      'not json',
    ];
    for (const f of malformed) await publish('history', f);
    await publish('all', '{"type":');
    await publish('user', '[]', ann.welcome.you.id);
    // Well formed, but far past anything stored: the store is asked and has nothing to deliver.
    await publish('history', frame({ ...shape, seq: 1 + MAX_SEQ_LEAD + 1_000_000 }));
    await other.publish(ROOM, 'no header');

    bob.session.receive(JSON.stringify({ type: 'say', text: 'after', clientId: 'b1' }));
    await until(() => texts(ann.conn).includes('after') && texts(bob.conn).includes('after'));
    const cy = await member('Cy');
    expect(cy.welcome.seq).toBe(1);
    expect(cy.welcome.history.map((m: Message) => m.text)).toEqual(['after']);
    expect(texts(ann.conn)).toEqual(['after']);
    expect(ann.conn.sent.filter((f) => !f.startsWith('{"type":')).length).toBe(0);
    expect(warnings.filter((w) => /malformed (message|frame|envelope) on the room bus dropped/.test(w))).toHaveLength(malformed.length + 3);
  });

  it('delivers another node’s next message as it came, and one far ahead from the store with every message missed before it, in order', async () => {
    const ann = await member('Ann');
    const read = vi.spyOn(store, 'messagesAfter');
    const first = await storedElsewhere('first');
    await publish('history', JSON.stringify({ type: 'message', message: first }));
    await until(() => texts(ann.conn).includes('first'));
    expect(read).not.toHaveBeenCalled();
    // A notice never stored (a thread operation's announcement) has seq 0: delivered, not kept.
    const notice = { ...first, id: 'sys_1', seq: 0, author: { id: 'system', name: 'Salon', kind: 'system' }, text: 'a notice' };
    await publish('history', JSON.stringify({ type: 'message', message: notice }));
    await until(() => texts(ann.conn).includes('a notice'));
    ann.conn.sent.length = 0;

    // This node hears none of the next ones but the last.
    let last = first;
    for (let i = 0; i <= MAX_SEQ_LEAD + 10; i++) last = await storedElsewhere(`missed ${i}`);
    await publish('history', JSON.stringify({ type: 'message', message: last }));
    await until(() => texts(ann.conn).includes(last.text));
    expect(ann.conn.frames('message').map((f) => f.message.seq)).toEqual(Array.from({ length: last.seq - 1 }, (_, i) => i + 2));
    expect(read).toHaveBeenCalled();
    expect((await member('Bob')).welcome.history.map((m: Message) => m.text)).not.toContain('a notice');
  });

  it('tells the other nodes to read a message whose publish failed when it closes before the second it waits is up', async () => {
    await member('Ann');
    const heard: string[] = [];
    other.subscribe((_roomId, payload) => void heard.push(payload));
    const publish = hub.bus.publish.bind(hub.bus);
    vi.spyOn(hub.bus, 'publish').mockImplementation(async (roomId, payload) => {
      if (payload.includes('refused')) throw new Error('Command timed out');
      return publish(roomId, payload);
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      hub.broadcast(ROOM, { type: 'message', message: await storedElsewhere('refused') });
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual(['room bus publish failed']);
      await hub.close();
      await new Promise((resolve) => setImmediate(resolve));
      const syncs = heard.map((p) => decodeEnvelope(p)).filter((e) => e?.delivery === 'sync');
      expect(syncs.map((e) => JSON.parse(e!.frame))).toEqual([{ from: 0 }]);
      // Nothing is left to fire on the closed bus.
      await vi.runOnlyPendingTimersAsync();
      expect(warnings.filter((w) => w === 'room bus publish failed')).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads a message from the bus only when it is one of this room’s, whole', () => {
    const message = {
      id: 'm1',
      seq: 3,
      roomId: ROOM,
      threadId: 't1',
      author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' },
      text: 'hi',
      ts: '2026-01-01T00:00:00.000Z',
    };
    expect(parseBusMessage(JSON.stringify({ type: 'assistant.done', message }), ROOM)).toEqual(message);
    expect(parseBusMessage(JSON.stringify({ type: 'message', message }), 'post_2')).toBeNull();
    for (const bad of [{ id: '' }, { threadId: 7 }, { author: { ...message.author, kind: 'bot' } }, { clientId: 5 }, { sources: 'x' }, { seq: 2 ** 53 }]) {
      expect(parseBusMessage(JSON.stringify({ type: 'message', message: { ...message, ...bad } }), ROOM), JSON.stringify(bad)).toBeNull();
    }
  });
});
