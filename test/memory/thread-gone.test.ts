/**
 * What memory keeps per thread for live chat follows a thread deleted, merged away or split on
 * another node, heard on the room's channel: a deleted thread's open window goes unkept, a merged
 * one's last line leads no later window, and messages split off leave the open window they were in
 * for one of the thread they are in now.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { encodeEnvelope } from '../../src/rooms/envelope.js';
import { InProcessBusNetwork, type InProcessBus } from '../../src/rooms/in-process-bus.js';
import { joined, roomsApp, ROOM, until } from '../rooms/helpers.js';

let a: FastifyInstance;
let other: InProcessBus;
let close: () => Promise<void>;

beforeEach(async () => {
  const network = new InProcessBusNetwork();
  const t = await roomsApp({}, { roomBus: network.node('here') });
  ({ app: a, close } = t);
  other = network.node('other');
  await other.join(ROOM);
  // A member here: this node hears the room's channel.
  await joined(a, 'Ann');
});
afterEach(async () => {
  await other.close();
  await close();
});

/** A member's line in `threadId`, stored and handed to memory as the hub does. */
async function says(threadId: string, text: string): Promise<void> {
  const { message } = await a.salon.store.appendMessage({ roomId: ROOM, threadId, author: { id: 'u_ann', name: 'Ann', kind: 'user' }, text });
  a.salon.memory.onMessage(message);
}

/** Another node's word about a thread, once this node's memory acted on it (`listener`). */
async function heard(move: object, listener: 'threadGone' | 'messagesMoved' = 'threadGone'): Promise<void> {
  const told = vi.spyOn(a.salon.memory, listener);
  await other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'threads', frame: JSON.stringify(move) }));
  await until(() => told.mock.calls.length > 0);
  told.mockRestore();
}

it('drops the open window of a thread another node deleted', async () => {
  const thread = await a.salon.threads.create(ROOM, 'Doomed', 'admin');
  await says(thread.id, 'the ferry to Hydra leaves at nine');
  expect((await a.salon.memory.stats(thread.id)).pending).toBe(1);
  await a.salon.store.deleteThread(thread.id);
  await heard({ deleted: thread.id });
  expect((await a.salon.memory.stats(thread.id)).pending).toBe(0);
  a.salon.memory.flush();
  await a.salon.memory.idle();
  expect(await a.salon.store.scanThreadMemory(thread.id, 0, 10)).toEqual([]);
});

it('forgets the last line of a thread another node merged away', async () => {
  const thread = await a.salon.threads.create(ROOM, 'Absorbed', 'admin');
  const main = (await a.salon.store.ensureMainThread(ROOM)).id;
  await says(thread.id, 'the ferry to Hydra leaves at nine');
  a.salon.memory.flush(thread.id);
  await heard({ merged: { absorbedId: thread.id, survivorId: main } });
  await says(thread.id, 'and comes back at six');
  a.salon.memory.flush(thread.id);
  await a.salon.memory.idle();
  const texts = (await a.salon.store.scanThreadMemory(thread.id, 0, 10)).map((c) => c.text);
  expect(texts).toHaveLength(2);
  expect(texts[1]).not.toContain('Hydra');
});

it('windows the messages another node split off in the thread they went to, not in the one they left', async () => {
  const parent = await a.salon.threads.create(ROOM, 'Mixed', 'admin');
  const child = await a.salon.threads.create(ROOM, 'Garden', 'admin');
  await says(parent.id, 'the night train leaves at ten');
  await says(parent.id, 'a cabin costs 120 euros');
  await says(parent.id, 'tomatoes need full sun');
  const open = await a.salon.store.threadMessages(parent.id, 10);
  const garden = open.filter((m) => m.text.includes('tomatoes')).map((m) => m.id);
  await a.salon.store.applyThreadChange({ at: new Date().toISOString(), expect: [], moveMessages: [{ ids: garden, threadId: child.id }] });
  await heard({ moves: [{ ids: garden, threadId: child.id }] }, 'messagesMoved');
  expect((await a.salon.memory.stats(parent.id)).pending).toBe(2);
  expect((await a.salon.memory.stats(child.id)).pending).toBe(1);
  a.salon.memory.flush();
  await a.salon.memory.idle();
  const [trains] = await a.salon.store.scanThreadMemory(parent.id, 0, 10);
  expect(trains.text).not.toContain('tomatoes');
  expect(trains.messageIds).toHaveLength(2);
  const [tomatoes] = await a.salon.store.scanThreadMemory(child.id, 0, 10);
  expect(tomatoes).toMatchObject({ threadId: child.id, messageIds: garden });
});
