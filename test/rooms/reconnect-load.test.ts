/**
 * After Redis comes back, a node reads every room's missed messages (and history) from the store,
 * and so does every other node for the `sync` each room's return sends. Those reads wait in line,
 * CATCH_UP_READS_AT_ONCE at a time, instead of all going to the shared store in one instant; every
 * room still gets what it missed.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { RoomHub } from '../../src/rooms/hub.js';
import { CATCH_UP_READS_AT_ONCE } from '../../src/rooms/node-sync.js';
import { ReadSlots } from '../../src/rooms/read-slots.js';
import { silentLogger } from '../../src/logger.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { cuttable, FakeConnection, hubBesideOtherNode, until } from './helpers.js';

const ROOMS = Array.from({ length: 5 * CATCH_UP_READS_AT_ONCE }, (_, i) => `news_${i + 1}`);

let store: SqliteStore;
let hub: RoomHub;
let closeAll: () => Promise<void>;
/** What the hub's bus tells its listeners when Redis goes away (false) and when it is back (true). */
let tell: (connected: boolean) => void;

beforeEach(async () => {
  ({ store, hub, close: closeAll } = await hubBesideOtherNode(silentLogger, {}, { prepare: (here) => (tell = cuttable(here)) }));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await closeAll();
});

/** A message another node stored in `roomId` while this one was cut off (its publish never came). */
async function storedElsewhere(roomId: string, text: string): Promise<void> {
  const thread = await store.ensureMainThread(roomId);
  await store.appendMessage({ roomId, threadId: thread.id, author: { id: 'u_zed', name: 'Zed', kind: 'user' }, text });
}

it('reads the store for the rooms of a node back on Redis a few at a time, and every room gets what it missed', async () => {
  const members = new Map<string, FakeConnection>();
  for (const [i, roomId] of ROOMS.entries()) {
    const conn = new FakeConnection(`c${i}`);
    hub.connect(conn, { roomId, ip: `10.0.${i >> 8}.${i & 255}` })!.receive(JSON.stringify({ type: 'hello', name: `Ann ${i}` }));
    members.set(roomId, conn);
  }
  await until(() => [...members.values()].every((conn) => conn.frames('welcome').length === 1));
  tell(false);
  for (const roomId of ROOMS) await storedElsewhere(roomId, `missed in ${roomId}`);
  // Every read of the store waits until the test lets them go; the test counts those under way.
  const read = store.messagesAfter.bind(store);
  let running = 0;
  let most = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  vi.spyOn(store, 'messagesAfter').mockImplementation(async (...args) => {
    most = Math.max(most, ++running);
    try {
      await gate;
      return await read(...args);
    } finally {
      running--;
    }
  });
  tell(true);
  await until(() => running >= CATCH_UP_READS_AT_ONCE);
  // Turns enough for every room's catch-up to reach its read, were nothing holding them back.
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(most).toBe(CATCH_UP_READS_AT_ONCE);
  open();
  await until(() => ROOMS.every((roomId) => members.get(roomId)!.frames('message').length === 1));
  for (const roomId of ROOMS)
    expect(
      members
        .get(roomId)!
        .frames('message')
        .map((f) => f.message.text),
    ).toEqual([`missed in ${roomId}`]);
  expect(most).toBe(CATCH_UP_READS_AT_ONCE);
});

it('passes a slot on when a read fails, and runs the waiting reads in the order they came', async () => {
  const slots = new ReadSlots(1);
  const order: string[] = [];
  let fail!: (err: Error) => void;
  const first = slots.run(() => new Promise<void>((_, reject) => (fail = reject)));
  const second = slots.run(async () => void order.push('second'));
  const third = slots.run(async () => void order.push('third'));
  await new Promise((resolve) => setImmediate(resolve));
  expect(order).toEqual([]);
  fail(new Error('the store is away'));
  await expect(first).rejects.toThrow('the store is away');
  await Promise.all([second, third]);
  expect(order).toEqual(['second', 'third']);
  expect(() => new ReadSlots(0)).toThrow(RangeError);
});
