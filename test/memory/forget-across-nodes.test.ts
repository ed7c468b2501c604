/**
 * `/forget private` on one node covers a private ask still being answered on another, and a public
 * one in a privileged thread (its exchange is its asker's alone): two app nodes on one store and
 * one in-process bus network, the member connected to both (two devices). The ask runs on the node
 * its socket is on, the command on the other; the exchange finishing after the command must not be
 * stored. On SQLite (one store object for both nodes) and on PostgreSQL
 * (a store, so a pool, per node on one schema).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { ChatModel } from '../../src/ai/types.js';
import { privateScope } from '../../src/memory/scopes.js';
import { InProcessBusNetwork } from '../../src/rooms/in-process-bus.js';
import type { SalonAssistant } from '../../src/rag/assistant.js';
import type { Store } from '../../src/store/types.js';
import { holdPrivateScans } from './held-scan.js';
import { testApp } from '../helpers.js';
import { heldLocalChat } from '../rag/fakes.js';
import { joined } from '../rooms/helpers.js';
import { item } from '../store/contract.js';
import { describePostgres } from '../store/postgres-harness.js';
import { postgresSchema, sharedSqlite, type StoreSource } from './one-store.js';

const SECRET = 'one identity secret for both nodes of this test';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function node(source: StoreSource, bus: InProcessBusNetwork, name: string, chat?: ChatModel): Promise<FastifyInstance> {
  const t = await testApp({ ASK_LIMIT_USER: '100', SEED_DEMO: 'false', IDENTITY_SECRET: SECRET, ...source.env } as never, {
    store: source.store,
    roomBus: bus.node(name),
    chat,
    roomOptions: { shutdownGraceMs: 100 },
  });
  cleanups.push(t.close);
  await t.app.ready();
  return t.app;
}

/**
 * Two app nodes on one store and one bus network, node A's answers held mid-stream, a page in the
 * room, and Ann on node A (her laptop) and, with the same identity, on node B (her phone);
 * `prepare` runs on the store before she joins.
 */
async function annOnTwoNodes(open: () => Promise<StoreSource>, prepare?: (store: Store) => Promise<void>) {
  const source = await open();
  const network = new InProcessBusNetwork();
  const { chat, writing, release } = heldLocalChat();
  const a = await node(source, network, 'node-a', chat);
  const b = await node(source, network, 'node-b');
  await a.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
  const store = a.salon.store;
  await prepare?.(store);
  const { client: laptop, welcome } = await joined(a, 'Ann', 'news_1');
  const annId = welcome.you.id as string;
  const { client: phone } = await joined(b, 'Ann', 'news_1', { token: welcome.you.token });
  const stored = async () => (await store.scanPrivateMemory(annId, 0, 100)).map((c) => c.text);
  return { a, b, store, laptop, phone, annId, writing, release, stored };
}

/**
 * Waits until `nodes` have filed what their answers handed to memory: an answer's `assistant.done`
 * leaves before its exchange is handed over (its asker's forget mark is read in between).
 */
async function filed(...nodes: FastifyInstance[]): Promise<void> {
  for (const n of nodes) {
    await (n.salon.assistant as SalonAssistant).idle();
    await n.salon.memory.idle();
  }
}

function acrossNodes(name: string, open: () => Promise<StoreSource>): void {
  describe(`/forget private across two nodes (${name})`, () => {
    it('leaves unremembered a private answer another node is still writing when the command arrives; a private ask after it is remembered', async () => {
      const { a, b, store, laptop, phone, annId, writing, release, stored } = await annOnTwoNodes(open);

      laptop.send({ type: 'ask', text: 'My secret word is zqheld; is Rust 2.0 out?', clientId: 'p1', private: true });
      // Its answer is being written on node A (held) when the phone's command reaches node B.
      await writing;
      phone.send({ type: 'say', text: '/forget private', clientId: 'f1' });
      const reply = (await phone.next('message', (f) => f.message.clientId === 'f1')).message.text as string;
      release();
      const answered = await laptop.next('assistant.done', () => true, 10_000);
      // Answered all the same (not an abstention, which memory would not keep anyway).
      expect(answered.message.text).toMatch(/Rust 2\.0/);
      await filed(a, b);

      // No trace of it: not in the store, its lines, or what either node's memory recalls.
      expect(await stored()).toEqual([]);
      const thread = await store.ensureMainThread('news_1');
      expect(await store.searchMemoryLines('secret word zqheld', [privateScope(thread.id, annId)], 5)).toEqual([]);
      for (const n of [a, b])
        expect(
          (await n.salon.memory.search('what is my secret word zqheld', { threadId: thread.id, userId: annId, private: true }, 5)).map((h) => h.chunk.text),
        ).toEqual([]);
      // Node B knew of no exchange of hers, stored or running there: it claims none.
      expect(reply).toBe('The assistant remembers no private exchange of yours in this room.');
      // Her private answers reach both her devices: each wait takes the first answer not seen yet.
      const seen = new Set<string>([answered.message.id]);
      const nextAnswer = async (device: typeof phone) => {
        const done = await device.next('assistant.done', (f) => !seen.has(f.message.id), 10_000);
        seen.add(done.message.id);
        return done.message.text as string;
      };
      phone.send({ type: 'ask', text: 'What is my secret word?', clientId: 'p2', private: true });
      expect(await nextAnswer(phone)).not.toContain('zqheld');
      await filed(a, b);
      expect((await stored()).join('\n')).not.toContain('zqheld');

      // Asked after the command, a private question is remembered as before.
      laptop.send({ type: 'ask', text: 'My locker code is zqlater; is Rust 2.0 out?', clientId: 'p3', private: true });
      expect(await nextAnswer(laptop)).toMatch(/Rust 2\.0/);
      await filed(a);
      const after = await stored();
      expect(after).toContainEqual(expect.stringContaining('zqlater'));
      expect(after.join('\n')).not.toContain('zqheld');
    });

    it('keeps, and does not count, a private exchange asked on another node after the command and filed there while the command still reads the store', async () => {
      const { a, b, laptop, phone, annId, release, stored } = await annOnTwoNodes(open);
      release();
      // Node B's read of her memory (the command's scan) is held.
      const { reached: scanReached, release: releaseScan, scan } = holdPrivateScans(b.salon.store);

      phone.send({ type: 'say', text: '/forget private', clientId: 'f1' });
      await scanReached;
      // The command has moved her mark: an ask on her laptop reads the new one, and node A, which
      // knows nothing of the command, files its exchange as it ends.
      laptop.send({ type: 'ask', text: 'My locker code is zqduring; is Rust 2.0 out?', clientId: 'p1', private: true });
      expect((await laptop.next('assistant.done', () => true, 10_000)).message.text).toMatch(/Rust 2\.0/);
      await filed(a);
      // (Read past the hold: on SQLite both nodes share the store object.)
      expect((await scan(annId, 0, 100)).map((c) => c.text)).toEqual([expect.stringContaining('zqduring')]);
      releaseScan();

      const reply = (await phone.next('message', (f) => f.message.clientId === 'f1')).message.text as string;
      await filed(b);
      // Asked after the command: neither forgotten nor counted (before, the scan took it for one asked before).
      expect(reply).toBe('The assistant remembers no private exchange of yours in this room.');
      expect(await stored()).toEqual([expect.stringContaining('zqduring')]);
    });

    it('leaves unremembered a public answer in a privileged thread (its asker’s alone) another node is still writing when the command arrives; one asked after it is remembered', async () => {
      const { a, b, store, laptop, phone, annId, writing, release, stored } = await annOnTwoNodes(open, async (store) => {
        const main = await store.ensureMainThread('news_1');
        await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: main.id, privileged: true }] });
      });
      const thread = await store.ensureMainThread('news_1');

      // A public ask (its question is posted to the room), answered on node A, held.
      laptop.send({ type: 'ask', text: 'My secret word is zqheld; is Rust 2.0 out?', clientId: 'q1' });
      await writing;
      phone.send({ type: 'say', text: '/forget private', clientId: 'f1' });
      const reply = (await phone.next('message', (f) => f.message.clientId === 'f1')).message.text as string;
      release();
      expect((await laptop.next('assistant.done', () => true, 10_000)).message.text).toMatch(/Rust 2\.0/);
      await filed(a, b);

      expect(await stored()).toEqual([]);
      expect(await store.searchMemoryLines('secret word zqheld', [privateScope(thread.id, annId), thread.id], 5)).toEqual([]);
      for (const n of [a, b])
        expect(
          (await n.salon.memory.search('what is my secret word zqheld', { threadId: thread.id, userId: annId, private: true }, 5)).map((h) => h.chunk.text),
        ).toEqual([]);
      expect(reply).toBe('The assistant remembers no private exchange of yours in this room.');

      // Asked after the command, it is remembered for her as before.
      laptop.send({ type: 'ask', text: 'My locker code is zqlater; is Rust 2.0 out?', clientId: 'q2' });
      expect((await laptop.next('assistant.done', () => true, 10_000)).message.text).toMatch(/Rust 2\.0/);
      await filed(a);
      expect(await stored()).toEqual([expect.stringContaining('zqlater')]);
    });
  });
}

acrossNodes('SQLite', async () => sharedSqlite(cleanups));

describePostgres('PostgreSQL', () => {
  acrossNodes('PostgreSQL', () => postgresSchema(cleanups));
});
