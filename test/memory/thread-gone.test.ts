/**
 * What memory keeps per thread for live chat follows a thread deleted or merged away on another
 * node, heard on the room's channel: a deleted thread's open window goes unkept, and a merged
 * one's last line leads no later window.
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

/** Another node's word about a thread, once this node acted on it. */
async function heard(move: object): Promise<void> {
  const gone = vi.spyOn(a.salon.memory, 'threadGone');
  await other.publish(ROOM, encodeEnvelope({ node: 'other', delivery: 'threads', frame: JSON.stringify(move) }));
  await until(() => gone.mock.calls.length > 0);
  gone.mockRestore();
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
