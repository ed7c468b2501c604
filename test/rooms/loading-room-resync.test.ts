/**
 * A room whose load is under way when the node learns that it missed something: its load may have
 * read the store before what it missed was stored, so the room reads the store again once loaded.
 * The bus coming back after an outage (the reconnection resyncs the rooms loaded), and another
 * node's `sync` (it stored messages it could not publish), both reached only loaded rooms; a room
 * loading then never got those messages, nor did its welcomes while it stayed live.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Message } from '../../src/protocol/messages.js';
import { encodeEnvelope } from '../../src/rooms/envelope.js';
import { MAX_SEQ_LEAD } from '../../src/rooms/node-sync.js';
import type { RoomHub } from '../../src/rooms/hub.js';
import type { InProcessBus } from '../../src/rooms/in-process-bus.js';
import { silentLogger } from '../../src/logger.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { cuttable, FakeConnection, hubBesideOtherNode, ROOM, until } from './helpers.js';

describe('a room loading when the node learns it missed messages', () => {
  let store: SqliteStore;
  let hub: RoomHub;
  let other: InProcessBus;
  let closeAll: () => Promise<void>;
  /** What the hub's bus tells its listeners when Redis goes away (false) and when it is back (true). */
  let tell: (connected: boolean) => void;

  beforeEach(async () => {
    ({ store, hub, other, close: closeAll } = await hubBesideOtherNode(silentLogger, {}, { prepare: (here) => (tell = cuttable(here)) }));
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await closeAll();
  });

  /** A message the other node stored, its publish never heard here. */
  async function storedElsewhere(text: string): Promise<Message> {
    const thread = await store.ensureMainThread(ROOM);
    return (await store.appendMessage({ roomId: ROOM, threadId: thread.id, author: { id: 'u_zed', name: 'Zed', kind: 'user' }, text })).message;
  }

  /**
   * Ann says hello to the room, whose load waits, once it read the room's messages, until the
   * returned `release`; resolves when the load has read them.
   */
  async function joinWhileLoadWaits(): Promise<{ conn: FakeConnection; release: () => void }> {
    const recent = store.recentMessages.bind(store);
    let read!: () => void;
    const wasRead = new Promise<void>((resolve) => (read = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    vi.spyOn(store, 'recentMessages').mockImplementationOnce(async (roomId, limit) => {
      const messages = await recent(roomId, limit);
      read();
      await gate;
      return messages;
    });
    const conn = new FakeConnection('c1');
    hub.connect(conn, { roomId: ROOM, ip: '10.0.0.1' })!.receive(JSON.stringify({ type: 'hello', name: 'Ann' }));
    await wasRead;
    return { conn, release };
  }

  /** Every message Ann got: in her welcome, then live. */
  const got = (conn: FakeConnection): string[] => [
    ...(conn.frames('welcome')[0]?.history ?? []).map((m: Message) => m.text),
    ...conn.frames('message').map((f) => f.message.text as string),
  ];

  it('reads the store again when the bus came back from an outage while the room loaded', async () => {
    await storedElsewhere('before');
    tell(false);
    const ann = await joinWhileLoadWaits();
    // Stored on another node after the load read the store; its publish went nowhere (cut off).
    await storedElsewhere('said during the outage');
    tell(true);
    ann.release();
    await until(() => got(ann.conn).includes('said during the outage'));
    expect(got(ann.conn)).toEqual(['before', 'said during the outage']);
  });
  it('reads the store after a sync that another node sent while the room loaded', async () => {
    await storedElsewhere('before');
    const ann = await joinWhileLoadWaits();
    // The other node was cut off: it stored a message it could not publish, and is back.
    await storedElsewhere('said while the other node was cut off');
    await other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'sync', frame: JSON.stringify({ from: 0 }) }));
    await new Promise((resolve) => setImmediate(resolve));
    ann.release();
    await until(() => got(ann.conn).includes('said while the other node was cut off'));
    expect(got(ann.conn)).toEqual(['before', 'said while the other node was cut off']);
  });

  /** Another node stores `count` messages and publishes each on the bus, as it does. */
  async function saidElsewhere(count: number): Promise<string[]> {
    const texts: string[] = [];
    for (let i = 0; i < count; i++) {
      const message = await storedElsewhere(`heard ${i}`);
      texts.push(message.text);
      await other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'history', frame: JSON.stringify({ type: 'message', message }) }));
    }
    return texts;
  }

  /** Counts the waits the hub starts on the loading room's `ready`. */
  function countWaits(): () => number {
    const room = (hub as unknown as { rooms: Map<string, { ready: Promise<unknown> }> }).rooms.get(ROOM)!;
    const ready = room.ready;
    let waits = 0;
    room.ready = {
      then: (...args: Parameters<Promise<unknown>['then']>) => {
        waits++;
        return ready.then(...args);
      },
    } as Promise<unknown>;
    return () => waits;
  }

  it('delivers the messages heard on the bus while it loaded, in order, after one wait', async () => {
    await storedElsewhere('before');
    const ann = await joinWhileLoadWaits();
    const waits = countWaits();
    const texts = await saidElsewhere(5);
    ann.release();
    await until(() => got(ann.conn).length === 6);
    expect(got(ann.conn)).toEqual(['before', ...texts]);
    expect(waits()).toBe(1);
  });
  it('keeps at most MAX_SEQ_LEAD messages heard while it loads, and reads the rest from the store', async () => {
    await storedElsewhere('before');
    const ann = await joinWhileLoadWaits();
    const waits = countWaits();
    const texts = await saidElsewhere(MAX_SEQ_LEAD * 2 + 5);
    ann.release();
    await until(() => got(ann.conn).length === texts.length + 1);
    expect(got(ann.conn)).toEqual(['before', ...texts]);
    expect(waits()).toBe(1);
  });
});
