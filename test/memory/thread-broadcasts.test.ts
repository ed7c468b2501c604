/**
 * Every thread operation over HTTP is told to the room exactly once: to the members on the node
 * that made it and to those on another node sharing the store and the bus, whichever node made it.
 * Starting, merging (which archives the absorbed thread), splitting, unlocking (or compacting a
 * thread locked until then), fusing, switching memory and deleting (a thread that absorbed
 * another: one notice, not one per shell).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { InProcessBusNetwork } from '../../src/rooms/in-process-bus.js';
import type { Client } from '../rooms/helpers.js';
import { item, joined, ROOM } from '../rooms/helpers.js';
import { tempStore } from '../helpers.js';
import { call, GARDEN, threadWith, TRAINS, type Json } from './thread-helpers.js';

let nodes: FastifyInstance[];
let closeStore: () => Promise<void>;

beforeEach(async () => {
  const temp = tempStore();
  closeStore = temp.close;
  await temp.store.upsertItem(item(ROOM));
  // Both nodes share the store; each closing app must not close it under the other.
  const shared = new Proxy(temp.store, { get: (t, p) => (p === 'close' ? async () => {} : Reflect.get(t, p)) });
  const network = new InProcessBusNetwork();
  const config = testConfig({ DATA_DIR: temp.dir, ADMIN_TOKEN: 'test-admin-token' });
  nodes = [];
  for (let i = 0; i < 2; i++) {
    const app = await buildApp(config, { store: shared, roomBus: network.node(`node-${i}`), roomOptions: { shutdownGraceMs: 50 } });
    await app.ready();
    nodes.push(app);
  }
});
afterEach(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  await closeStore();
});

/** The texts of the notices (system messages) and fusion introductions `client` got, in order. */
const told = (client: Client) =>
  client
    .all('message')
    .map((f) => f.message as Json)
    .filter((m) => m.author.kind === 'system' || (m.author.kind === 'assistant' && m.text.startsWith('This thread fuses')))
    .map((m) => (m.author.kind === 'system' ? m.text : 'fused'));

it('tells each thread operation once to the members of both nodes, whichever node made it', async () => {
  const [here, there] = nodes;
  const ana = (await joined(here, 'Ana')).client;
  const ben = (await joined(there, 'Ben')).client;
  const trains = await threadWith(here, ROOM, 'Trains', TRAINS);
  const garden = await threadWith(there, ROOM, 'Garden', GARDEN);
  const { thread: food } = await call(here, 'POST', `/api/v1/rooms/${ROOM}/threads`, { title: 'Food' });

  await call(there, 'POST', '/api/v1/threads/merge', { survivorId: trains.id, absorbedId: garden.id });
  const split = {
    parts: [
      { title: 'Basil', messageIds: [garden.messageIds[2]] },
      { title: 'Tomatoes', messageIds: [garden.messageIds[0]] },
    ],
  };
  const { threads: parts } = await call(here, 'POST', `/api/v1/threads/${trains.id}/split`, split);
  await call(there, 'POST', `/api/v1/threads/${parts[0].id}/unlock`);
  // Compaction releases a `compaction` lock, told as an unlock; a thread it releases nothing of is not told.
  expect((await call(here, 'POST', `/api/v1/threads/${parts[1].id}/compact`)).released).toBe(true);
  expect((await call(there, 'POST', `/api/v1/threads/${trains.id}/compact`)).released).toBe(false);
  await call(here, 'POST', '/api/v1/threads/fuse', { sourceIds: [trains.id, food.id] });
  await call(there, 'PUT', `/api/v1/threads/${trains.id}/config`, { enable_chat_history_rag: false });
  // Trains absorbed Garden: its shell goes with it, told once.
  expect((await call(here, 'DELETE', `/api/v1/threads/${trains.id}`)).absorbed).toEqual([garden.id]);
  await call(there, 'DELETE', `/api/v1/threads/${food.id}`);

  // The bus keeps each node's order: once both members have a last line from each node, every
  // notice before it has come. Notices of the two nodes may interleave: compared in sorted order.
  ana.send({ type: 'say', text: 'from here', clientId: 'end' });
  ben.send({ type: 'say', text: 'from there', clientId: 'end' });
  for (const client of [ana, ben]) for (const text of ['from here', 'from there']) await client.arrived('message', (f) => f.message.text === text, 0, 10_000);
  const expected = [
    'A new thread started: “Trains”.',
    'A new thread started: “Garden”.',
    'A new thread started: “Food”.',
    '“Garden” was merged into “Trains”.',
    '“Trains” was split: “Basil”, “Tomatoes” are threads of their own now.',
    '“Basil” is no longer split-locked.',
    '“Tomatoes” is no longer split-locked: its memory was compacted.',
    'fused',
    'Memory is off in “Trains”: the assistant no longer searches or cites what this thread discussed before (the recent chat still counts).',
    '“Trains” was deleted with its messages.',
    '“Food” was deleted with its messages.',
  ];
  expect(told(ana).sort()).toEqual(expected.sort());
  expect(told(ben).sort()).toEqual(expected.sort());
});
