/**
 * A conversation between members on two nodes is remembered as one: every node in the room windows
 * every message it delivers, its own and those the bus brings, and each window is filed once, by
 * the first node to claim its messages (Store ClaimedMessages); a node that joined the room later
 * cuts its windows where the other does from the first window it finds claimed (MemoryService.realign).
 * Two app nodes on one store and one in-process bus network, on SQLite and on PostgreSQL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { InProcessBusNetwork } from '../../src/rooms/in-process-bus.js';
import type { Store, StoredMemoryChunk } from '../../src/store/types.js';
import { testApp } from '../helpers.js';
import { joined, listen, member, until } from '../rooms/helpers.js';
import { item } from '../store/contract.js';
import { describePostgres } from '../store/postgres-harness.js';
import { postgresSchema, sharedSqlite, type StoreSource } from './one-store.js';

const SECRET = 'one identity secret for both nodes of this test';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function node(source: StoreSource, bus: InProcessBusNetwork, name: string): Promise<FastifyInstance> {
  const t = await testApp({ SEED_DEMO: 'false', IDENTITY_SECRET: SECRET, ...source.env } as never, {
    store: source.store,
    roomBus: bus.node(name),
    // Members here say more in a second than a person does.
    roomOptions: { shutdownGraceMs: 100, ratePerSecond: 1_000, rateBurst: 1_000 },
  });
  cleanups.push(t.close);
  await t.app.ready();
  return t.app;
}

type Joined = Awaited<ReturnType<typeof joined>>['client'];

/** `from` says `text`; resolves once `to` (on the other node) has it too: the id of the message. */
async function say(from: Joined, to: Joined, text: string): Promise<string> {
  const clientId = `c${Math.random().toString(36).slice(2)}`;
  from.send({ type: 'say', text, clientId });
  const mine = await from.next('message', (f) => f.message.clientId === clientId);
  await to.next('message', (f) => f.message.id === mine.message.id);
  return mine.message.id as string;
}

/** Closes both nodes' open windows and waits until what they queued is filed, twice: a realigned window reopens. */
async function settle(nodes: FastifyInstance[]): Promise<void> {
  for (let round = 0; round < 3; round++)
    for (const n of nodes) {
      n.salon.memory.flush();
      await n.salon.memory.idle();
    }
}

async function windowsOf(store: Store, threadId: string): Promise<StoredMemoryChunk[]> {
  return (await store.scanThreadMemory(threadId, 0, 100)).filter((c) => c.kind === 'window');
}

function acrossNodes(name: string, open: () => Promise<StoreSource>): void {
  describe(`memory windows across two nodes (${name})`, () => {
    async function twoNodes() {
      const source = await open();
      const network = new InProcessBusNetwork();
      const a = await node(source, network, 'node-a');
      const b = await node(source, network, 'node-b');
      await a.salon.ingest.pipeline.put(item('news_1', { title: 'Ferries of the bay', body: 'The ferry leaves from pier 3.' }));
      const { client: ann, welcome } = await joined(a, 'Ann', 'news_1');
      return { a, b, ann, store: a.salon.store, main: welcome.threadId as string };
    }

    it('remembers a conversation of Ann on one node and Bo on the other as windows holding both sides, each filed once', async () => {
      const { a, b, ann, store, main } = await twoNodes();
      const { client: bo } = await joined(b, 'Bo', 'news_1');
      const ids: string[] = [];
      for (let i = 0; i < 10; i++)
        ids.push(i % 2 ? await say(bo, ann, `Bo answers ${i}: the ferry leaves from pier ${i}`) : await say(ann, bo, `Ann asks ${i}: which pier today?`));
      await settle([a, b]);
      const windows = await windowsOf(store, main);
      expect(windows.flatMap((w) => w.messageIds)).toEqual(ids);
      expect(windows[0].authors).toEqual(['Ann', 'Bo']);
      expect(windows[0].text).toMatch(/Ann asks 0[\s\S]*Bo answers 1/);
    });

    it('files every message once when the other node gets its first member mid-conversation, whichever node files a window first', async () => {
      const { a, b, ann, store, main } = await twoNodes();
      const alone: string[] = [];
      const { client: cy } = await joined(a, 'Cy', 'news_1');
      for (let i = 0; i < 3; i++) alone.push(await say(ann, cy, `Ann alone ${i}: the tide is low`));
      const { client: bo } = await joined(b, 'Bo', 'news_1');
      const ids = [...alone];
      for (let i = 0; i < 14; i++) ids.push(i % 2 ? await say(bo, ann, `Bo ${i}: the tide turns at noon`) : await say(ann, bo, `Ann ${i}: when does it turn?`));
      await settle([a, b]);
      const windows = await windowsOf(store, main);
      const filed = windows.flatMap((w) => w.messageIds);
      expect([...filed].sort()).toEqual([...ids].sort());
      expect(new Set(filed).size).toBe(filed.length);
      // Each window is a run of the conversation in its order, and one holds both sides of it.
      for (const w of windows) expect(w.messageIds.map((id) => ids.indexOf(id))).toEqual([...w.messageIds.map((id) => ids.indexOf(id))].sort((x, y) => x - y));
      expect(windows.some((w) => w.authors.includes('Ann') && w.authors.includes('Bo'))).toBe(true);
    });

    it('ends a node’s window where its room was dropped and messages went out before it was joined again, and only there', async () => {
      const { a, b, ann, store, main } = await twoNodes();
      const ids: string[] = [];
      // A real socket: its close reaches the server, and the room goes with its last member.
      const onB = await listen(b);
      const bo = (await member(onB('news_1'), 'Bo')).client;
      for (let i = 0; i < 2; i++) ids.push(await say(ann, bo, `Ann before ${i}: the ferry is late`));
      // Bo leaves: B's room is dropped, and Ann goes on while B is not in it.
      bo.close();
      await until(() => b.salon.rooms!.listRooms().length === 0);
      const { client: cy } = await joined(a, 'Cy', 'news_1');
      for (let i = 0; i < 2; i++) ids.push(await say(ann, cy, `Ann meanwhile ${i}: it left at last`));
      const back = (await member(onB('news_1'), 'Bo')).client;
      for (let i = 0; i < 2; i++) ids.push(await say(ann, back, `Ann after ${i}: it is back at noon`));
      // B files first: its windows must not join 0–1 with 4–5 across the two it never heard.
      await settle([b, a]);
      const filed = (await windowsOf(store, main)).map((w) => w.messageIds.map((id) => ids.indexOf(id)));
      expect(filed.flat().sort()).toEqual([0, 1, 2, 3, 4, 5]);
      for (const at of filed) expect(at).toEqual(at.map((_, i) => at[0] + i));
    });

    it('keeps a lone node’s window whole across a reload: its room dropped and joined again with nothing said meanwhile', async () => {
      const { b, store, main } = await twoNodes();
      const onB = await listen(b);
      const ann = (await member(onB('news_1'), 'Ann')).client;
      const cy = (await member(onB('news_1'), 'Cy')).client;
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) ids.push(await say(ann, cy, `Ann before ${i}: the ferry is late`));
      ann.close();
      cy.close();
      await until(() => b.salon.rooms!.listRooms().length === 0);
      const again = (await member(onB('news_1'), 'Ann')).client;
      const other = (await member(onB('news_1'), 'Cy')).client;
      for (let i = 0; i < 2; i++) ids.push(await say(again, other, `Ann after ${i}: it is back at noon`));
      await settle([b]);
      expect((await windowsOf(store, main)).map((w) => w.messageIds)).toEqual([ids]);
    });
  });
}

acrossNodes('SQLite', async () => sharedSqlite(cleanups));

describePostgres('PostgreSQL', () => {
  acrossNodes('PostgreSQL', () => postgresSchema(cleanups));
});
