/**
 * What thread operations derive from a thread's memory (a compaction's summaries, a fusion's copies
 * and pairs) never keeps a private exchange its asker forgot (`/forget private`): not one the
 * operation read before the forgetting and stores after it, nor a copy in a fusion whose source
 * thread is gone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { ChatModel } from '../../src/ai/types.js';
import { forgetCommand } from '../../src/memory/commands.js';
import { ThreadService } from '../../src/memory/threads/thread-service.js';
import type { ThreadChange } from '../../src/store/types.js';
import { OTHER_ROOM, ROOM } from '../rooms/helpers.js';
import { call, GARDEN, threadsApp, threadWith, TRAINS } from './thread-helpers.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const EVE = 'u_eveeveeveeveevee';
const PIN = 'Q: Which PIN did I choose for the garden shed lock?\nA: You chose 4921 for the garden shed lock.';
const DOCTOR = 'Q: When is my appointment with the skin doctor?\nA: On Tuesday at 9:40 with Dr. Lind.';

/** Private asks' exchanges of EVE in `threadId` of `roomId`, stored and indexed as memory keeps them. */
async function privateAsks(a: FastifyInstance, threadId: string, texts: string[], roomId = ROOM): Promise<void> {
  const ts = new Date(Date.UTC(2026, 10, 2)).toISOString();
  for (const text of texts) {
    await a.salon.store.addMemoryChunk(
      { threadId, roomId, kind: 'exchange', text, messageIds: [], authors: ['Eve', 'Salon AI'], firstTs: ts, lastTs: ts, privileged: true, owner: EVE },
      ts,
    );
  }
  await a.salon.memory.load();
}

/** EVE types `/forget private` in `roomId`; the reply. */
function forget(a: FastifyInstance, roomId: string): Promise<string> {
  const { store, memory, threads } = a.salon;
  return forgetCommand(store, memory, threads, () => a.salon.assistant).run({
    roomId,
    threadId: '',
    user: { id: EVE, name: 'Eve' },
    address: '203.0.113.1',
    args: 'private',
  });
}

/** Every memory text of every thread of the rooms, archived ones included. */
async function everyText(a: FastifyInstance): Promise<string> {
  const { store } = a.salon;
  const texts: string[] = [];
  for (const roomId of [ROOM, OTHER_ROOM]) {
    for (const t of await store.listThreads(roomId)) texts.push(...(await store.scanThreadMemory(t.id, 0, 10_000, false)).map((c) => c.text));
  }
  return texts.join('\n');
}

/** A gate a test opens: `reached` resolves when something waits at it, `open` lets it through. */
function gate(): { reached: Promise<void>; wait: () => Promise<void>; open: () => void } {
  let arrive!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    reached,
    wait: () => {
      arrive();
      return opened;
    },
    open,
  };
}

/**
 * A thread with an old long private exchange (summarised once twenty newer ones follow it) and the
 * twenty, and a compaction of it held while the model summarises that exchange.
 */
async function compactionHeldAtSummary() {
  const a = await threadsApp(closers);
  const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
  const key = `Q: Where did I hide the spare key?\nA: ${'Under the third flowerpot by the blue door, behind the bench. '.repeat(20)}`;
  await privateAsks(a, trains.id, [
    key,
    ...Array.from({ length: 20 }, (_, i) => `Q: What is locker ${i + 1} for?\nA: Locker ${i + 1} holds box ${i * 7 + 3}.`),
  ]);
  const held = gate();
  const chat: ChatModel = Object.assign(Object.create(a.salon.chat) as ChatModel, {
    async summarize(): Promise<string> {
      await held.wait();
      return 'Eve hid the spare key under the qzflowerpot.';
    },
  });
  const { store, memory, rooms } = a.salon;
  const service = new ThreadService({ store, memory, chat, bridges: a.salon.threads.bridges, outlet: rooms });
  const compacting = service.compact(trains.id, 'admin');
  compacting.catch(() => {});
  await held.reached;
  return { a, trains, key, held, compacting };
}

describe('an operation that read a private exchange forgotten before it commits', () => {
  it('a compaction that summarised it fails as a lost race and stores no summary of it', async () => {
    const { a, trains, held, compacting } = await compactionHeldAtSummary();
    const { store } = a.salon;
    // The model's summary takes its time (a remote model: seconds), and the asker forgets meanwhile.
    expect(await forget(a, ROOM)).toContain('no longer remembers 21 private exchanges');
    held.open();
    await expect(compacting).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
    expect(await everyText(a)).not.toMatch(/qzflowerpot|flowerpot/);
    expect((await store.scanThreadMemory(trains.id, 0, 1000, false)).filter((c) => c.owner === EVE)).toEqual([]);
  });

  it('a fusion that made a pair of it fails as a lost race and creates no thread holding it', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    // The same private exchanges in both: the plan makes them pairs, text and vector computed.
    await privateAsks(a, trains.id, [PIN, DOCTOR]);
    await privateAsks(a, garden.id, [PIN, DOCTOR]);
    const { store, threads } = a.salon;
    const before = (await store.listThreads(ROOM)).length;
    const held = gate();
    const apply = store.applyThreadChange.bind(store);
    // The plan is made; its change waits (a large fusion plans and writes for seconds).
    store.applyThreadChange = async (change: ThreadChange) => {
      if (change.createThreads?.some((t) => t.origin === 'fused')) await held.wait();
      return apply(change);
    };
    try {
      const fusing = threads.fuse([trains.id, garden.id], 'admin');
      fusing.catch(() => {});
      await held.reached;
      expect(await forget(a, ROOM)).toContain('no longer remembers 4 private exchanges');
      held.open();
      await expect(fusing).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
    } finally {
      store.applyThreadChange = apply;
    }
    expect((await store.listThreads(ROOM)).length).toBe(before);
    expect(await everyText(a)).not.toMatch(/4921|Dr\. Lind/);
  });
});

describe('an operation that read a private exchange that expires before it commits', () => {
  it('a compaction that summarised it fails as a lost race and stores no summary of it', async () => {
    const { a, trains, key, held, compacting } = await compactionHeldAtSummary();
    const { store, memory } = a.salon;
    // The key's exchange was last seen long ago (past MEMORY_RETENTION_DAYS): the next sweep (one
    // runs at every load) deletes it while the model summarises it.
    const [stored] = (await store.scanThreadMemory(trains.id, 0, 1000, false)).filter((c) => c.text === key);
    await store.touchMemoryChunk(stored.id, '2000-01-01T00:00:00.000Z');
    await memory.load();
    expect(await store.getMemoryChunks([stored.id])).toEqual([]);
    held.open();
    await expect(compacting).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
    expect(await everyText(a)).not.toMatch(/qzflowerpot|flowerpot/);
  });
});

describe('a fusion’s copy of a private exchange', () => {
  it('is forgotten by `/forget private` in the room it was asked in after its source thread was deleted', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const ferries = await threadWith(a, OTHER_ROOM, 'Ferries', GARDEN);
    await privateAsks(a, ferries.id, [PIN], OTHER_ROOM);
    await privateAsks(a, trains.id, [DOCTOR]);
    // Fused into a thread of the first room, then the source in the other room is deleted (its copy in the fusion stays).
    const { thread: fused } = await call(a, 'POST', '/api/v1/threads/fuse', { sourceIds: [trains.id, ferries.id] });
    await call(a, 'DELETE', `/api/v1/threads/${ferries.id}`);
    const { store } = a.salon;
    const eves = async () => (await store.scanThreadMemory(fused.id, 0, 1000, false)).filter((c) => c.owner === EVE).map((c) => c.text);
    // Copies of the first thread's chunks come first.
    expect(await eves()).toEqual([DOCTOR, PIN]);

    expect(await forget(a, OTHER_ROOM)).toContain('no longer remembers 1 private exchange');
    expect(await eves()).toEqual([DOCTOR]);
    expect(await everyText(a)).not.toContain('4921');
    expect(await a.salon.store.searchMemoryLines('PIN garden shed lock 4921', [`${fused.id}\u0000${EVE}`], 5)).toEqual([]);
  });
});

describe('a fusion’s copy of a private exchange made before lineages named rooms', () => {
  it('is forgotten by `/forget private` after its source thread was deleted, though its room cannot be told; one whose source stands stays its room’s', async () => {
    const a = await threadsApp(closers);
    const ferries = await threadWith(a, OTHER_ROOM, 'Ferries', GARDEN);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    const fused = await threadWith(a, ROOM, 'Trains + Ferries', TRAINS);
    const { store } = a.salon;
    // Rows as fusions wrote them before lineages named rooms: the copy sits in the fusion's room,
    // its lineage names only its source chunk and thread.
    const ts = new Date(Date.UTC(2026, 10, 2)).toISOString();
    const copy = (text: string, sourceThread: string) =>
      store.addMemoryChunk(
        {
          threadId: fused.id,
          roomId: ROOM,
          kind: 'exchange',
          text,
          messageIds: [],
          authors: ['Eve', 'Salon AI'],
          firstTs: ts,
          lastTs: ts,
          privileged: true,
          owner: EVE,
          fusion: 'kept',
          lineage: { chunkIds: [1_000_000], threadIds: [sourceThread] },
        },
        ts,
      );
    await copy(PIN, ferries.id);
    await copy(DOCTOR, garden.id);
    await a.salon.memory.load();
    await call(a, 'DELETE', `/api/v1/threads/${ferries.id}`);
    const eves = async () => (await store.scanThreadMemory(fused.id, 0, 1000, false)).filter((c) => c.owner === EVE).map((c) => c.text);
    expect(await eves()).toEqual([PIN, DOCTOR]);

    expect(await forget(a, OTHER_ROOM)).toContain('no longer remembers 1 private exchange');
    expect(await eves()).toEqual([DOCTOR]);
    expect(await everyText(a)).not.toContain('4921');
    expect(await store.searchMemoryLines('PIN garden shed lock 4921', [`${fused.id}\u0000${EVE}`], 5)).toEqual([]);
  });
});

describe('what is derived from a thread that already keeps private text to its asker (locked in)', () => {
  it('a merge’s new thread summary is made from messages only; a compaction’s summary of a private exchange is its asker’s and forgotten with it', async () => {
    const a = await threadsApp(closers);
    const trains = await threadWith(a, ROOM, 'Trains', TRAINS);
    const garden = await threadWith(a, ROOM, 'Garden', GARDEN);
    const key = `Q: Where did I hide the spare key?\nA: ${'Under the third qzflowerpot by the blue door, behind the bench. '.repeat(20)}`;
    await privateAsks(a, garden.id, [
      key,
      ...Array.from({ length: 20 }, (_, i) => `Q: What is locker ${i + 1} for?\nA: Locker ${i + 1} holds box ${i * 7 + 3}.`),
    ]);
    const base = a.salon.chat;
    const summarised: string[] = [];
    const chat: ChatModel = Object.assign(Object.create(base) as ChatModel, {
      async summarize(text: string, query?: string): Promise<string> {
        summarised.push(text);
        return query?.startsWith('What was asked') ? 'Eve keeps the spare key under a qzflowerpot.' : 'Trains and gardens.';
      },
    });
    const { store, memory, rooms } = a.salon;
    const service = new ThreadService({ store, memory, chat, bridges: a.salon.threads.bridges, outlet: rooms });
    await service.merge(trains.id, garden.id, 'admin');
    for (let turn = 0; turn < 1_000 && (await store.getThread(trains.id))!.summary !== 'Trains and gardens.'; turn++)
      await new Promise((r) => setTimeout(r, 5));
    expect((await store.getThread(trains.id))!.summary).toBe('Trains and gardens.');
    expect(summarised.join('\n')).not.toContain('qzflowerpot');

    await service.compact(trains.id, 'admin');
    const [summary] = (await store.scanThreadMemory(trains.id, 0, 1000, false)).filter((c) => c.text.includes('qzflowerpot'));
    expect(summary).toMatchObject({ text: 'Eve keeps the spare key under a qzflowerpot.', privileged: true, owner: EVE, roomId: ROOM });
    expect(
      (await memory.search('where is the spare key', { threadId: trains.id, userId: 'u_someone', private: true }, 30)).map((h) => h.chunk.text).join('\n'),
    ).not.toContain('qzflowerpot');
    expect(await forget(a, ROOM)).toContain('no longer remembers 21 private exchanges');
    expect(await everyText(a)).not.toContain('qzflowerpot');
  });
});
