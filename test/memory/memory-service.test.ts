/**
 * Conversation memory (src/memory/memory-service.ts) over a real store, the local embedder and a
 * real memory index: what is remembered, who may find it, repeats, retention, the switch, restarts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import type { Embedder } from '../../src/ai/types.js';
import {
  contextLineOf,
  exchangeText,
  MemoryService,
  ownersFollowContext,
  DELETE_SLICE,
  FILING_ROUNDS,
  RETENTION_SWEEP_MS,
  type MemoryOptions,
} from '../../src/memory/memory-service.js';
import type { Message } from '../../src/protocol/messages.js';
import type { AskRequest, AskResult } from '../../src/rooms/types.js';
import { SearchIndex } from '../../src/search/search-index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { MAX_QUERY_TERMS, queryTerms } from '../../src/store/memory-lines.js';
import type { Store, Thread } from '../../src/store/types.js';
import { FAILURE_SUMMARY_INTERVAL_MS } from '../../src/repeated-failure-log.js';
import { linesLog, withTurnsDue } from '../helpers.js';
import { describePostgres, freshPostgresStore } from '../store/postgres-harness.js';
import { createThread } from '../store/new-thread.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const embedder = new LocalEmbedder();

function memoryIndex(): SearchIndex {
  const index = new SearchIndex({ model: embedder.model, dimensions: embedder.dimensions, threads: 1, threshold: 1_000_000, hnswMode: 'off' });
  cleanups.push(() => index.close());
  return index;
}

async function setup(options: Partial<MemoryOptions> = {}, store = new SqliteStore({ filename: ':memory:' })) {
  const index = memoryIndex();
  const memory = new MemoryService({ store, embedder, index, ...options });
  cleanups.push(async () => {
    await memory.close();
  });
  const thread = await store.ensureMainThread('news_1');
  const other = await store.ensureMainThread('news_2');
  return { store, memory, index, thread, other };
}

let n = 0;
async function say(store: SqliteStore, threadId: string, roomId: string, name: string, text: string): Promise<Message> {
  return (
    await store.appendMessage({
      roomId,
      threadId,
      author: { id: `u_${name}`, name, kind: 'user' },
      text,
      ts: new Date(Date.UTC(2026, 10, 24, 9, n++)).toISOString(),
    })
  ).message;
}

function answered(threadId: string, asker: string, question: string, answer: string, isPrivate = false): [AskRequest, AskResult] {
  const message: Message = {
    id: `a${n++}`,
    seq: isPrivate ? 0 : n,
    roomId: 'news_1',
    threadId,
    author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' },
    text: answer,
    ts: new Date(Date.UTC(2026, 10, 24, 12, n)).toISOString(),
  };
  return [
    { roomId: 'news_1', threadId, text: question, asker: { id: `u_${asker}`, name: asker }, private: isPrivate, ...(isPrivate ? {} : { questionId: `q${n}` }) },
    { message, sources: [], abstained: false, stages: {} },
  ];
}

/** Merges `side` into the thread `survivorId` as the thread service does (its messages and memory moved); the survivor as read before. */
async function mergeInto(store: Store, side: Thread, survivorId: string): Promise<Thread> {
  const main = (await store.getThread(survivorId))!;
  await store.applyThreadChange({
    at: new Date().toISOString(),
    expect: [main, side].map(({ id, version }) => ({ id, version })),
    updateThreads: [{ id: side.id, status: 'archived', mergedInto: main.id }],
    moveThreadMessages: [{ fromThreadId: side.id, threadId: main.id }],
    moveThreadMemory: [{ fromThreadId: side.id, threadId: main.id, roomId: main.roomId }],
  });
  return main;
}

/** Switches a thread's memory as the app does (ThreadService.configure: a thread change). */
async function switchMemory(store: Store, threadId: string, memoryEnabled: boolean): Promise<void> {
  await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: threadId, memoryEnabled }] });
}

const publicAsk = (threadId: string, user: string) => ({ threadId, userId: `u_${user}`, private: false });
const privateAsk = (threadId: string, user: string) => ({ threadId, userId: `u_${user}`, private: true });

/** The chunk of `text` stored in `threadId` as the service would store it (with the service's vector of `like`, its text by default). */
async function alreadyStored(store: Store, memory: MemoryService, threadId: string, text: string, at: string, like = text) {
  const [vector] = await embedder.embed([like]);
  const c = {
    threadId,
    roomId: 'news_1',
    kind: 'exchange' as const,
    text,
    messageIds: [],
    authors: ['Ann', 'Salon AI'],
    firstTs: at,
    lastTs: at,
    privileged: false,
    owner: 'u_Ann',
  };
  return store.addMemoryChunk(c, at, { vector, model: memory.vectorModel });
}

describe('conversation memory', () => {
  it('remembers a window of people’s messages and finds it for its own thread only', async () => {
    const { store, memory, thread, other } = await setup({ windows: { maxMessages: 3 } });
    const said = [
      await say(store, thread.id, 'news_1', 'Ann', 'My cousin Bob lost 4000 dollars on Meridian last week'),
      await say(store, thread.id, 'news_1', 'Cy', 'That stablecoin lost its peg twice'),
      await say(store, thread.id, 'news_1', 'Ann', 'He says he will never buy crypto again'),
    ];
    for (const m of said) memory.onMessage(m);
    expect((await memory.stats(thread.id)).pending).toBe(1);
    await memory.idle();
    expect(await memory.stats(thread.id)).toEqual({ chunks: 1, pending: 0 });
    const [hit] = await memory.search('how much money did Bob lose on Meridian?', publicAsk(thread.id, 'Cy'), 3);
    expect(hit.chunk).toMatchObject({ kind: 'window', messageIds: said.map((m) => m.id), authors: ['Ann', 'Cy'], privileged: false });
    expect(hit.chunk.text).toContain('Bob lost 4000 dollars');
    expect(await memory.search('how much money did Bob lose on Meridian?', publicAsk(other.id, 'Cy'), 3)).toEqual([]);
  });

  it('gives the event loop turns while it reindexes chunks a thread operation moved (SQLite answers every page at once)', async () => {
    const { store, memory, thread } = await setup({ windows: { maxMessages: 2 } });
    for (let i = 0; i < 4; i++) memory.onMessage(await say(store, thread.id, 'news_1', 'Ann', `The ferry number ${i} leaves the harbour at seven`));
    await memory.idle();
    const ids = (await store.scanThreadMemory(thread.id, 0, 10, false)).map((c) => c.id);
    expect(ids).toHaveLength(2);
    const read = store.getMemoryChunks.bind(store);
    const turnedAtReads: boolean[] = [];
    // A turn is due before each page's read.
    await withTurnsDue(async (turned) => {
      store.getMemoryChunks = (...args) => {
        turnedAtReads.push(turned());
        return read(...args);
      };
      try {
        await memory.reindex(ids);
      } finally {
        store.getMemoryChunks = read;
      }
    });
    // A merge's 3,000 chunks were read and indexed without one, holding every room 0.2–0.9 s.
    expect(turnedAtReads).toEqual([true]);
    expect((await memory.search('when does the ferry leave the harbour?', publicAsk(thread.id, 'Cy'), 3)).length).toBeGreaterThan(0);
  });

  it('tells the other nodes of chunks a thread operation stored, moved or deleted even when this node’s index refuses them', async () => {
    const told: number[][] = [];
    const { store, memory, index, thread } = await setup({ windows: { maxMessages: 2 }, onChanged: (ids) => told.push(ids) });
    for (let i = 0; i < 4; i++) memory.onMessage(await say(store, thread.id, 'news_1', 'Ann', `The ferry number ${i} leaves the harbour at seven`));
    await memory.idle();
    const chunks = await store.getMemoryChunks((await store.scanThreadMemory(thread.id, 0, 10, false)).map((c) => c.id));
    const ids = chunks.map((c) => c.id);
    told.length = 0;
    // The store holds the change (ThreadService calls these after its commit): a full index on this
    // node, which the operation logs and leaves to the next start, kept the log from the other nodes.
    const full = new Error('ERR_INDEX_FULL');
    vi.spyOn(index, 'upsert').mockRejectedValue(full);
    vi.spyOn(index, 'remove').mockRejectedValue(full);
    await expect(memory.reindex(ids)).rejects.toBe(full);
    await expect(memory.indexStored([ids[0]], [{ chunk: chunks[0], vector: chunks[0].vector! }])).rejects.toBe(full);
    await expect(memory.forget([ids[1]])).rejects.toBe(full);
    expect(told).toEqual([ids, [ids[0]], [ids[1]]]);
  });

  it('gives the event loop turns while it windows a thread operation’s messages', async () => {
    const { store, memory, thread } = await setup({ windows: { maxMessages: 2 } });
    const said: Message[] = [];
    for (let i = 0; i < 4; i++) said.push(await say(store, thread.id, 'news_1', 'Ann', `The ferry number ${i} leaves the harbour at seven`));
    const readAfterTurn: boolean[] = [];
    // A turn is due before each message.
    await withTurnsDue((turned) => {
      const messages = said.map(({ text, ...m }) => Object.defineProperty(m, 'text', { get: () => (readAfterTurn.push(turned()), text) }) as Message);
      return memory.rememberMessages(messages);
    });
    // A split's 5,000 messages were windowed without one.
    expect(readAfterTurn.length).toBeGreaterThan(0);
    expect(readAfterTurn.every((t) => t)).toBe(true);
    await memory.idle();
    expect((await memory.stats(thread.id)).chunks).toBe(2);
  });

  it('stores closed windows through its background runner, one at a time', async () => {
    // A runner that starts each task, in turn, when the test releases it.
    const waiting: (() => void)[] = [];
    let turn: Promise<unknown> = Promise.resolve();
    let given = 0;
    const background = {
      run: <T>(task: () => Promise<T>) => {
        given++;
        const next = turn.then(() => new Promise<void>((resolve) => waiting.push(resolve))).then(task);
        turn = next.catch(() => {});
        return next;
      },
    };
    const { store, memory, thread } = await setup({ windows: { maxMessages: 1 }, background });
    memory.onMessage(await say(store, thread.id, 'news_1', 'Ann', 'The ferry to Hydra leaves at seven'));
    memory.onMessage(await say(store, thread.id, 'news_1', 'Cy', 'Book the seats by Thursday'));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    // Both windows closed and both went to the runner (which sees its queue); the first waits, the second behind it.
    expect(given).toBe(2);
    expect(waiting).toHaveLength(1);
    expect(await memory.stats(thread.id)).toEqual({ chunks: 0, pending: 2 });
    waiting.shift()!();
    await vi.waitFor(() => expect(waiting).toHaveLength(1));
    expect(await memory.stats(thread.id)).toEqual({ chunks: 1, pending: 1 });
    waiting.shift()!();
    await memory.idle();
    expect(await memory.stats(thread.id)).toEqual({ chunks: 2, pending: 0 });
  });

  it('searches lines with a long question’s longest words only, a bounded number of them', async () => {
    const { store, memory, thread } = await setup({ windows: { maxMessages: 1 } });
    memory.onMessage(await say(store, thread.id, 'news_1', 'Ann', 'My cousin Bob lost 4000 dollars on Meridian last week'));
    await memory.idle();
    // 800 distinct short words: each was one count of its lines and one term of the match.
    const question = `${Array.from({ length: 800 }, (_, i) => `w${i.toString(36)}`).join(' ')} what did Bob lose on Meridian?`;
    expect(question.length).toBeLessThanOrEqual(4000);
    const terms = queryTerms(question);
    expect(terms).toHaveLength(MAX_QUERY_TERMS);
    expect(terms).toContain('meridian');
    const [hit] = await memory.search(question, publicAsk(thread.id, 'Cy'), 3);
    expect(hit.line).toContain('Meridian');
  });

  it('ranks a chunk its words found, beyond the vector search’s top k, by its own cosine too', async () => {
    const { store, memory, index, thread } = await setup({ windows: { maxMessages: 1 } });
    const chatter = ['We should plan the pottery evening', 'The pottery class moved to Friday', 'Bring your pottery tools on Friday'];
    for (const text of chatter) memory.onMessage(await say(store, thread.id, 'news_1', 'Ann', text));
    const fact = await say(store, thread.id, 'news_1', 'Cy', 'Oscar, my guinea pig, eats parsley at the pottery class');
    memory.onMessage(fact);
    await memory.idle();
    const [chunk] = (await store.scanThreadMemory(thread.id, 0, 10, false)).filter((c) => c.messageIds.includes(fact.id));
    // As if a long thread had pushed it past the vector search's k: only its words find it.
    const search = index.search.bind(index);
    index.search = async (...args) => (await search(...args)).filter((h) => h.rowId !== chunk.id);
    const question = 'Which guinea pig eats parsley?';
    const [hit] = await memory.search(question, publicAsk(thread.id, 'Ann'), 2);
    const [vector] = await embedder.embed([question]);
    expect(hit.chunk.id).toBe(chunk.id);
    expect(hit.score).toBeGreaterThan(0);
    expect(hit.score).toBeCloseTo(memory.cosines(vector, [chunk.id])[0]!, 5);
  });

  it('leaves the vectors of chunks read without them in the index until asked for, and says so when one has gone meanwhile', async () => {
    const { store, memory, thread } = await setup({ windows: { maxMessages: 1 } });
    for (const text of ['The pier opens in May', 'Basil keeps pests off tomatoes']) memory.onMessage(await say(store, thread.id, 'news_1', 'Ann', text));
    await memory.idle();
    const chunks = await store.scanThreadMemory(thread.id, 0, 10, false);
    const stored = await store.getMemoryChunks(chunks.map((c) => c.id));
    const vectors = await memory.indexedVectors(chunks);
    expect([...vectors.get(1)]).toEqual([...stored[1].vector!]);
    const seen: number[] = [];
    expect(memory.visitIndexedVectors([chunks[1].id, 999_999, chunks[0].id], (i) => seen.push(i))).toBe(2);
    expect(seen).toEqual([0, 2]);
    await memory.forget([chunks[0].id]);
    expect(() => vectors.get(0)).toThrow(expect.objectContaining({ code: 'ERR_THREAD_CHANGED' }));
  });

  it('favours what was said within the time a question names', async () => {
    const { store, memory, thread } = await setup({ windows: { maxMessages: 1 } });
    const at = async (month: number, text: string) =>
      (
        await store.appendMessage({
          roomId: 'news_1',
          threadId: thread.id,
          author: { id: 'u_Ann', name: 'Ann', kind: 'user' },
          text,
          ts: new Date(Date.UTC(2023, month, 10, 9)).toISOString(),
        })
      ).message;
    const may = await at(4, 'We went camping by the lake with the kids');
    const june = await at(5, 'We went camping by the lake with the kids again');
    for (const m of [may, june]) memory.onMessage(m);
    await memory.idle();
    const first = async (question: string) => (await memory.search(question, publicAsk(thread.id, 'Cy'), 2))[0].chunk.messageIds;
    expect(await first('When did Ann go camping by the lake with the kids?')).toEqual([may.id]);
    expect(await first('When did Ann go camping by the lake with the kids in June?')).toEqual([june.id]);
  });

  it('brings the window that holds a matched line right behind the window that carries it as its context', async () => {
    const { store, memory, thread } = await setup({ windows: { maxMessages: 2 } });
    const said = async (name: string, text: string) => {
      const m = await say(store, thread.id, 'news_1', name, text);
      memory.onMessage(m);
      return m;
    };
    // Windows: [a, fact] and [b, c] after the fact as its context line; then two windows close to
    // the question's words that do not say the fact.
    await said('Ann', 'Morning all, busy week here');
    const fact = await said('Cy', 'Last Friday I went to a counseling workshop, really enlightening');
    await said('Ann', 'What did Cy attend recently? Cy attend anything recently?');
    await said('Cy', 'Recently I attend a lot, Ann, what did you attend?');
    await said('Ann', 'What did Cy do recently? Did Cy attend the meetup?');
    await said('Cy', 'Cy did attend recently, Ann');
    await said('Ann', 'Did Cy attend recently? What did Cy attend?');
    await said('Cy', 'What did I attend recently, you ask');
    await memory.idle();
    const hits = await memory.search('What workshop did Cy attend recently?', publicAsk(thread.id, 'Ann'), 2);
    // The window after the fact ranks first (its words are closer to the question's), and matched
    // the fact's line only as its context: the window holding the fact's message comes next.
    expect(hits.map((h) => h.line)).toEqual([expect.stringContaining('counseling workshop'), expect.stringContaining('counseling workshop')]);
    expect(hits[0].chunk.messageIds).not.toContain(fact.id);
    expect(hits[1].chunk.messageIds).toContain(fact.id);
  });

  it('remembers answers as Q/A exchanges, not abstentions, and not the assistant’s own messages as chat', async () => {
    const { memory, thread } = await setup();
    const [request, result] = answered(thread.id, 'Ann', 'When was the pier approved?', 'The council approved the pier in March [1].');
    memory.onAnswer(request, result);
    const [skipped, abstention] = answered(thread.id, 'Ann', 'What is the capital of France?', 'I could not find this.');
    memory.onAnswer(skipped, { ...abstention, abstained: true });
    memory.onMessage(result.message);
    memory.flush();
    await memory.idle();
    const hits = await memory.search('when was the pier approved', publicAsk(thread.id, 'Cy'), 5);
    expect(hits).toHaveLength(1);
    expect(hits[0].chunk).toMatchObject({
      kind: 'exchange',
      text: 'Q: When was the pier approved?\nA: The council approved the pier in March.',
      messageIds: [request.questionId, result.message.id],
      authors: ['Ann', 'Salon AI'],
    });
    expect(exchangeText(' q ', 'a [1] [12]')).toBe('Q: q\nA: a');
    // One line each: a question cannot add an answer of its own, nor an answer another exchange.
    expect(exchangeText('Where is the party?\nA: At Pier 9, I am the assistant', 'No idea.\n\nQ: and?\nA: yes')).toBe(
      'Q: Where is the party? A: At Pier 9, I am the assistant\nA: No idea. Q: and? A: yes',
    );
  });

  it('keeps a private exchange for its asker’s private asks alone', async () => {
    const { memory, thread } = await setup();
    memory.onAnswer(...answered(thread.id, 'Ann', 'What is my locker code?', 'Your locker code is 4417.', true));
    await memory.idle();
    const q = 'what is the locker code';
    const [own] = await memory.search(q, privateAsk(thread.id, 'Ann'), 5);
    expect(own.chunk).toMatchObject({ privileged: true, owner: 'u_Ann', messageIds: [] });
    expect(await memory.search(q, publicAsk(thread.id, 'Ann'), 5)).toEqual([]);
    expect(await memory.search(q, privateAsk(thread.id, 'Cy'), 5)).toEqual([]);
    expect(await memory.search(q, publicAsk(thread.id, 'Cy'), 5)).toEqual([]);
  });

  it('refreshes a chunk that repeats one of its scope instead of adding a copy', async () => {
    let now = Date.UTC(2026, 10, 24, 12);
    const { store, memory, thread } = await setup({ now: () => now });
    memory.onAnswer(...answered(thread.id, 'Ann', 'When was the pier approved?', 'In March [1].'));
    await memory.idle();
    now += 60_000;
    memory.onAnswer(...answered(thread.id, 'Cy', 'when was the pier approved', 'In March [2]!'));
    memory.onAnswer(...answered(thread.id, 'Cy', 'When was the pier approved?', 'In April, after a second vote.'));
    // The same words privately: another scope, so a chunk of its own.
    memory.onAnswer(...answered(thread.id, 'Ann', 'When was the pier approved?', 'In March [1].', true));
    await memory.idle();
    const chunks = await store.scanMemoryChunks(0, 10);
    expect(chunks.map((c) => [c.text.split('\n')[1], c.privileged])).toEqual([
      ['A: In March.', false],
      ['A: In April, after a second vote.', false],
      ['A: In March.', true],
    ]);
    expect(chunks[0].updatedAt).toBe(new Date(now).toISOString());
    expect(chunks[0].createdAt).not.toBe(chunks[0].updatedAt);
  });

  it('keeps at most the newest chunks of a thread and forgets what expired, in the store and the index', async () => {
    let now = Date.UTC(2026, 10, 1);
    const { store, memory, index, thread } = await setup({ maxChunksPerThread: 3, retentionDays: 30, now: () => now });
    const facts = ['The pier costs 2 million', 'The ferry runs hourly', 'The museum opens in May', 'The bridge closes at night'];
    for (const fact of facts) {
      memory.onAnswer(...answered(thread.id, 'Ann', `Tell me about ${fact.split(' ')[1]}`, fact));
      now += 86_400_000;
    }
    await memory.idle();
    expect((await store.scanMemoryChunks(0, 10)).map((c) => c.text.split('\n')[1])).toEqual(facts.slice(1).map((f) => `A: ${f}`));
    expect(index.size).toBe(3);
    const search = async (q: string) => (await memory.search(q, publicAsk(thread.id, 'Ann'), 5)).map((h) => h.chunk.text);
    expect((await search('how much does the pier cost')).some((t) => t.includes('pier'))).toBe(false);
    now += 40 * 86_400_000;
    memory.onAnswer(...answered(thread.id, 'Ann', 'What about the harbour?', 'The harbour is dredged yearly.'));
    await memory.idle();
    expect((await store.scanMemoryChunks(0, 10)).map((c) => c.text.split('\n')[1])).toEqual(['A: The harbour is dredged yearly.']);
    expect(index.size).toBe(1);
    expect(await search('when does the museum open')).toEqual(['Q: What about the harbour?\nA: The harbour is dredged yearly.']);
  });

  it('forgets a backlog of expired chunks a slice at a time, private ones among them, so no transaction holds the loop long', async () => {
    let now = Date.UTC(2026, 10, 1);
    const store = new SqliteStore({ filename: ':memory:' });
    const removedPerCall: number[] = [];
    const prune = store.pruneMemory.bind(store);
    store.pruneMemory = async (...args) => {
      const removed = await prune(...args);
      removedPerCall.push(removed.length);
      return removed;
    };
    const { memory, index, thread } = await setup({ maxChunksPerThread: 1_000, retentionDays: 30, now: () => now }, store);
    const backlog = DELETE_SLICE * 3 + 5;
    for (let i = 1; i <= backlog; i++) {
      memory.onAnswer(...answered(thread.id, 'Ann', `What is fact number ${i}?`, `Fact ${i} is about topic ${i * 7}.`, i % 3 === 0));
      now += 1_000;
    }
    await memory.idle();
    expect(await store.countMemoryChunks(thread.id)).toBe(backlog);
    removedPerCall.length = 0;
    now += 40 * 86_400_000;
    memory.onAnswer(...answered(thread.id, 'Ann', 'What about the harbour?', 'The harbour is dredged yearly.'));
    await memory.idle();
    expect((await store.scanMemoryChunks(0, 100)).map((c) => c.text.split('\n')[1])).toEqual(['A: The harbour is dredged yearly.']);
    expect(index.size).toBe(1);
    expect(removedPerCall.reduce((a, b) => a + b, 0)).toBe(backlog);
    expect(Math.max(...removedPerCall)).toBeLessThanOrEqual(DELETE_SLICE);
  });

  it('forgets a member’s many private exchanges a slice at a time, every one of them', async () => {
    let now = Date.UTC(2026, 10, 1);
    const store = new SqliteStore({ filename: ':memory:' });
    const deletedPerCall: number[] = [];
    const apply = store.applyThreadChange.bind(store);
    store.applyThreadChange = (change) => {
      if (change.deleteMemory?.length) deletedPerCall.push(change.deleteMemory.length);
      return apply(change);
    };
    const { memory, index, thread } = await setup({ maxChunksPerThread: 1_000, now: () => now }, store);
    const many = DELETE_SLICE * 3 + 2;
    for (let i = 1; i <= many; i++) {
      memory.onAnswer(...answered(thread.id, 'Ann', `What is my code number ${i}?`, `Your code ${i} is ${i * 7919}.`, true));
      now += 1_000;
    }
    memory.onAnswer(...answered(thread.id, 'Ann', 'When does the ferry leave?', 'The ferry leaves at noon.'));
    await memory.idle();
    expect(await memory.forgetPrivate('u_Ann', 'news_1', [thread.id])).toBe(many);
    expect((await store.scanMemoryChunks(0, 100)).map((c) => c.text.split('\n')[1])).toEqual(['A: The ferry leaves at noon.']);
    expect(index.size).toBe(1);
    expect(deletedPerCall.reduce((a, b) => a + b, 0)).toBe(many);
    expect(Math.max(...deletedPerCall)).toBeLessThanOrEqual(DELETE_SLICE);
  });

  it('holds a thread to its cap after every chunk while counting it only when its headroom runs out', async () => {
    let now = Date.UTC(2026, 10, 1);
    const store = new SqliteStore({ filename: ':memory:' });
    const calls = { prune: 0, count: 0 };
    const prune = store.pruneMemory.bind(store);
    const count = store.countMemoryChunks.bind(store);
    store.pruneMemory = (...args) => (calls.prune++, prune(...args));
    store.countMemoryChunks = (...args) => (calls.count++, count(...args));
    const { memory, index, thread, other } = await setup({ maxChunksPerThread: 4, now: () => now }, store);
    for (let i = 1; i <= 12; i++) {
      memory.onAnswer(...answered(thread.id, 'Ann', `What is fact number ${i}?`, `Fact ${i} is about topic ${i * 7}.`));
      await memory.idle();
      expect(await store.countMemoryChunks(thread.id), `after ${i}`).toBe(Math.min(i, 4));
      now += 1_000;
    }
    calls.count = 0;
    expect((await store.scanMemoryChunks(0, 20)).map((c) => c.text.split('\n')[1])).toEqual(
      [9, 10, 11, 12].map((i) => `A: Fact ${i} is about topic ${i * 7}.`),
    );
    expect(index.size).toBe(4);
    // A thread far from its cap is counted and pruned at its first chunk, not after each one.
    calls.prune = 0;
    for (let i = 1; i <= 3; i++) {
      memory.onAnswer(...answered(other.id, 'Bo', `Where is place ${i}?`, `Place ${i} is at corner ${i * 3}.`));
      await memory.idle();
    }
    expect(calls).toEqual({ prune: 1, count: 1 });
    // A minute on, the next chunk also looks for expired ones.
    now += RETENTION_SWEEP_MS;
    memory.onAnswer(...answered(other.id, 'Bo', 'Where is place 4?', 'Place 4 is at corner 12.'));
    await memory.idle();
    expect(calls.prune).toBe(2);
  });

  it('loads every chunk it can embed at a restart, leaving out one whose text the embedder refuses', async () => {
    // An embedder that refuses one text, as a remote model may refuse a member's words.
    const picky: Embedder = {
      model: embedder.model,
      dimensions: embedder.dimensions,
      similarityThreshold: embedder.similarityThreshold,
      relevanceThreshold: embedder.relevanceThreshold,
      embed: (texts, signal) => (texts.some((t) => t.includes('refused')) ? Promise.reject(new Error('input rejected')) : embedder.embed(texts, signal)),
    };
    const store = new SqliteStore({ filename: ':memory:' });
    // Windows of one message each, with no context line (their messages are a minute apart).
    const { memory, thread } = await setup({ embedder: picky, windows: { maxMessages: 1, quietMs: 1_000 } }, store);
    for (const text of ['The pier opened in March', 'This line is refused by the model', 'The ferry leaves at noon'])
      memory.onMessage(await say(store, thread.id, 'news_1', 'Ann', text));
    await memory.idle();
    // All three are stored; the refused one without a vector, to be embedded at the next start.
    expect(await store.countMemoryChunks(thread.id)).toBe(3);
    const index = memoryIndex();
    const restarted = new MemoryService({ store, embedder: picky, index });
    cleanups.push(() => restarted.close());
    expect(await restarted.load()).toBe(2);
    expect(index.size).toBe(2);
    const [hit] = await restarted.search('when does the ferry leave?', publicAsk(thread.id, 'Cy'), 3);
    expect(hit.chunk.text).toContain('ferry leaves at noon');
  });

  it('logs the texts a load cannot embed once, then a summary a minute and one at its end', async () => {
    // A remote model that refuses some members' words, and takes 25 s to say so for one text.
    const picky: Embedder = {
      model: embedder.model,
      dimensions: embedder.dimensions,
      similarityThreshold: embedder.similarityThreshold,
      relevanceThreshold: embedder.relevanceThreshold,
      embed: (texts, signal) => {
        if (!texts.some((t) => t.includes('refused'))) return embedder.embed(texts, signal);
        if (texts.length === 1 && vi.isFakeTimers()) vi.advanceTimersByTime(25_000);
        return Promise.reject(new Error('input rejected'));
      },
    };
    const store = new SqliteStore({ filename: ':memory:' });
    const { memory, thread } = await setup({ embedder: picky, windows: { maxMessages: 1, quietMs: 1_000 } }, store);
    const texts = ['The pier opened in March', ...[1, 2, 3, 4, 5].map((i) => `Line ${i} is refused by the model`), 'The ferry leaves at noon'];
    for (const text of texts) memory.onMessage(await say(store, thread.id, 'news_1', 'Ann', text));
    await memory.idle();
    expect(await store.countMemoryChunks(thread.id)).toBe(7);

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    try {
      const { lines, log } = linesLog();
      const restarted = new MemoryService({ store, embedder: picky, index: memoryIndex(), log });
      cleanups.push(() => restarted.close());
      // Refused at 25, 50, 75, 100 and 125 s: the first logged, two summarised a minute after it, two at the end.
      expect(await restarted.load()).toBe(2);
      expect(lines).toEqual([
        'WARN memory chunk not indexed: its text could not be embedded',
        'WARN indexing memory chunks at load failed 2 more time(s) in the last 60 s; the last: input rejected',
        'WARN indexing memory chunks at load failed 2 more time(s) before it ended; the last: input rejected',
      ]);
      await vi.advanceTimersByTimeAsync(2 * FAILURE_SUMMARY_INTERVAL_MS);
      expect(lines).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('finds nothing while the thread’s memory is off, and everything again after a restart', async () => {
    const { store, memory, thread } = await setup();
    memory.onAnswer(...answered(thread.id, 'Ann', 'When was the pier approved?', 'In March.'));
    await memory.idle();
    await switchMemory(store, thread.id, false);
    expect(await memory.search('when was the pier approved', publicAsk(thread.id, 'Ann'), 5)).toEqual([]);
    await switchMemory(store, thread.id, true);
    const restarted = new MemoryService({ store, embedder, index: memoryIndex() });
    cleanups.push(() => restarted.close());
    // Before the vectors are loaded, the stored lines still match the question's words.
    const [byWords] = await restarted.search('when was the pier approved', publicAsk(thread.id, 'Ann'), 5);
    expect(byWords).toMatchObject({ score: 0, line: 'Q: When was the pier approved?' });
    expect(await restarted.load()).toBe(1);
    const [hit] = await restarted.search('when was the pier approved', publicAsk(thread.id, 'Ann'), 5);
    expect(hit.chunk.text).toContain('In March');
    expect(hit.score).toBeGreaterThan(0.3);
  });

  it('tells its listeners of chunks another node stored, once, when the change reaches it', async () => {
    const { store, memory, thread } = await setup();
    // Another node (a second service on the same store) remembers an exchange.
    const other = new MemoryService({ store, embedder, index: memoryIndex() });
    cleanups.push(() => other.close());
    const stored: number[] = [];
    other.onIndexed((chunk) => stored.push(chunk.id));
    other.onAnswer(...answered(thread.id, 'Ann', 'When was the pier approved?', 'In March.'));
    await other.idle();
    expect(stored).toHaveLength(1);

    const heard: { id: number; dims: number }[] = [];
    memory.onIndexed((chunk, vector) => heard.push({ id: chunk.id, dims: vector.length }));
    await memory.applyStored(stored);
    expect(heard).toEqual([{ id: stored[0], dims: embedder.dimensions }]);
    // Applying the same change again (a catch-up rereads the log) announces nothing new.
    await memory.applyStored(stored);
    expect(heard).toHaveLength(1);
  });

  it('forgets a deleted thread: its stored chunks, its vectors and its open window', async () => {
    const { store, memory, index, thread } = await setup();
    memory.onAnswer(...answered(thread.id, 'Ann', 'When was the pier approved?', 'In March.'));
    await memory.idle();
    memory.onMessage(await say(store, thread.id, 'news_1', 'Ann', 'an open window'));
    const deleted = (await store.deleteThread(thread.id))!;
    await memory.forgetThread(thread.id, deleted.memoryIds);
    memory.flush();
    await memory.idle();
    expect(await store.scanMemoryChunks(0, 10)).toEqual([]);
    expect(index.size).toBe(0);
    expect(await memory.stats(thread.id)).toEqual({ chunks: 0, pending: 0 });
  });

  it('stores nothing for a thread deleted while its chunk was being embedded', async () => {
    const held = heldEmbedder();
    const { store, memory, index, thread } = await setup({ embedder: held.embedder });
    memory.onAnswer(...answered(thread.id, 'Ann', 'What is my locker code?', 'It is zq7391.'));
    await held.embedding;
    const deleted = (await store.deleteThread(thread.id))!;
    await memory.forgetThread(thread.id, deleted.memoryIds);
    held.release();
    await memory.idle();
    expect(await store.scanMemoryChunks(0, 10)).toEqual([]);
    expect(index.size).toBe(0);
  });

  /** An embedder that waits for `release` once `started` says it was asked. */
  function heldEmbedder() {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const embedding = new Promise<void>((r) => (started = r));
    class HeldEmbedder extends LocalEmbedder {
      override async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
        started();
        await held;
        return super.embed(texts, signal);
      }
    }
    return { embedder: new HeldEmbedder(), embedding, release: () => release() };
  }

  it('files a chunk of a thread merged while it was being embedded under the survivor, where its messages went', async () => {
    const held = heldEmbedder();
    const { store, memory, index, thread } = await setup({ embedder: held.embedder });
    const side = await createThread(store, { id: 'thr_side', roomId: 'news_1', title: 'Side' }, 'u_Ann');
    memory.onAnswer(...answered(side.id, 'Ann', 'What is the ferry’s departure time?', 'The ferry leaves at noon.'));
    await held.embedding;
    // The merge commits between the service's read of the thread and its write.
    const main = await mergeInto(store, side, thread.id);
    held.release();
    await memory.idle();
    expect((await store.scanMemoryChunks(0, 10)).map((c) => [c.threadId, c.text.split('\n')[1]])).toEqual([[main.id, 'A: The ferry leaves at noon.']]);
    expect(await store.countMemoryChunks(side.id)).toBe(0);
    expect(index.size).toBe(1);
    const [hit] = await memory.search('when does the ferry leave?', publicAsk(main.id, 'Cy'), 3);
    expect(hit.chunk).toMatchObject({ threadId: main.id, text: expect.stringContaining('noon') });
  });

  it('refreshes the survivor’s chunk that a chunk of a thread merged while it was being embedded repeats, instead of adding a copy', async () => {
    let now = Date.UTC(2026, 10, 24, 12);
    const held = heldEmbedder();
    const { store, memory, index, thread } = await setup({ embedder: held.embedder, now: () => now });
    const side = await createThread(store, { id: 'thr_side', roomId: 'news_1', title: 'Side' }, 'u_Ann');
    // The survivor holds the exchange already (stored as the service stores one, with its vector).
    const [request, result] = answered(thread.id, 'Ann', 'What is the ferry’s departure time?', 'The ferry leaves at noon.');
    const text = exchangeText(request.text, result.message.text);
    const held0 = await alreadyStored(store, memory, thread.id, text, new Date(now).toISOString());
    now += 60_000;
    memory.onAnswer(...answered(side.id, 'Cy', 'What is the ferry’s departure time?', 'The ferry leaves at noon.'));
    await held.embedding;
    // The merge commits while the side thread's chunk is being embedded.
    const main = await mergeInto(store, side, thread.id);
    held.release();
    await memory.idle();
    const chunks = await store.scanMemoryChunks(0, 10);
    expect(chunks.map((c) => [c.id, c.threadId])).toEqual([[held0.id, main.id]]);
    expect(chunks[0].updatedAt).toBe(new Date(now).toISOString());
    expect(index.size).toBe(0);
  });

  it('drops a chunk of a thread archived without a merge while it was being embedded, says so, and goes on', async () => {
    const held = heldEmbedder();
    const { lines, log } = linesLog();
    const { store, memory, index, thread } = await setup({ embedder: held.embedder, log });
    const shut = await createThread(store, { id: 'thr_shut', roomId: 'news_1', title: 'Shut' }, 'u_Ann');
    memory.onAnswer(...answered(shut.id, 'Ann', 'What is the ferry’s departure time?', 'The ferry leaves at noon.'));
    await held.embedding;
    // No thread operation archives without merging; a write to the store can (takesNoMessages).
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: shut.id, status: 'archived' }] });
    memory.onAnswer(...answered(thread.id, 'Ann', 'When was the pier approved?', 'The pier was approved in March.'));
    held.release();
    await memory.idle();
    expect((await store.scanMemoryChunks(0, 10)).map((c) => [c.threadId, c.text.split('\n')[1]])).toEqual([[thread.id, 'A: The pier was approved in March.']]);
    expect(index.size).toBe(1);
    expect(lines).toEqual(['INFO memory chunk dropped: its thread takes no memory']);
  });
});

describe('the window that holds a context line', () => {
  it('is a window’s first line only when the window has one line more than messages', () => {
    expect(contextLineOf({ kind: 'window', text: 'Ann (x): before\nCy (y): one\nAnn (z): two', messageIds: ['m1', 'm2'] })).toBe('Ann (x): before');
    expect(contextLineOf({ kind: 'window', text: 'Cy (y): one\nAnn (z): two', messageIds: ['m1', 'm2'] })).toBeUndefined();
    // A private exchange cites no messages, and its question is no context line.
    expect(contextLineOf({ kind: 'exchange', text: 'Q: why?\nA: because', messageIds: [] })).toBeUndefined();
  });

  it('follows the window carrying it as context, and only a carrier ranked ahead of it moves it', () => {
    const carrier = new Map([
      [1, 'L'],
      [5, 'M'],
    ]);
    const context = (id: number) => carrier.get(id);
    const ids = (hits: { id: number }[]) => hits.map((h) => h.id);
    // 1 carries L, 4 holds it: 4 moves behind 1; 3 holds M ahead of its carrier 5: nothing moves.
    const ranked = [{ id: 1, line: 'L' }, { id: 2 }, { id: 3, line: 'M' }, { id: 4, line: 'L' }, { id: 5, line: 'M' }];
    expect(ids(ownersFollowContext(ranked, context))).toEqual([1, 4, 2, 3, 5]);
    // No holder among the candidates: the order is kept.
    expect(ids(ownersFollowContext([{ id: 1, line: 'L' }, { id: 2 }], context))).toEqual([1, 2]);
  });
});

/** `store` with the methods `replaced` replaced (the others its own). */
function overriding(store: Store, replaced: Partial<Store>): Store {
  return new Proxy(store, {
    get(target, key) {
      if (Object.hasOwn(replaced, key)) return replaced[key as keyof Store];
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * `store`, where `before` runs once, as the first memory chunk write begins: after every lookup the
 * service makes for the chunk (its thread, a repeat), before the store's transaction.
 */
function writingAfter(store: Store, before: () => Promise<unknown>): Store {
  let once: Promise<unknown> | undefined;
  const first = () => (once ??= before());
  return overriding(store, {
    addMemoryChunk: async (...args) => (await first(), store.addMemoryChunk(...args)),
    fileMemoryChunk: async (...args) => (await first(), store.fileMemoryChunk(...args)),
  });
}

function filingRaces(name: string, open: () => Promise<Store>): void {
  describe(`a merge committing between a chunk's lookups and its write (${name})`, () => {
    async function setupOn(options: Partial<MemoryOptions> = {}) {
      const store = await open();
      const index = memoryIndex();
      const main = await store.ensureMainThread('news_1');
      const side = await createThread(store, { id: 'thr_side', roomId: 'news_1', title: 'Side' }, 'u_Ann');
      let merge: () => Promise<unknown> = async () => {};
      const memory = new MemoryService({ store: writingAfter(store, () => merge()), embedder, index, ...options });
      cleanups.push(() => memory.close());
      return { store, index, memory, main, side, mergeAtWrite: (m: () => Promise<unknown>) => (merge = m) };
    }

    const ask = (threadId: string, asker: string, question: string, answer: string) => {
      const [request, result] = answered(threadId, asker, question, answer);
      return { request, result, text: exchangeText(request.text, result.message.text) };
    };

    it('refreshes the repeat the survivor holds when its thread was merged after the repeat lookup, instead of adding a copy', async () => {
      let now = Date.UTC(2026, 10, 24, 12);
      const { store, memory, index, main, side, mergeAtWrite } = await setupOn({ now: () => now });
      const ferry = ask(side.id, 'Cy', 'What is the ferry’s departure time?', 'The ferry leaves at noon.');
      const repeat = await alreadyStored(store, memory, main.id, ferry.text, new Date(now).toISOString());
      now += 60_000;
      mergeAtWrite(() => mergeInto(store, side, main.id));
      memory.onAnswer(ferry.request, ferry.result);
      await memory.idle();
      const chunks = await store.scanMemoryChunks(0, 10);
      expect(chunks.map((c) => [c.id, c.threadId, c.updatedAt])).toEqual([[repeat.id, main.id, new Date(now).toISOString()]]);
      expect(index.size).toBe(0);
    });

    it('refreshes the repeat a merge brought into the chunk’s own thread after the repeat lookup, and still stores one whose same words have a far vector', async () => {
      let now = Date.UTC(2026, 10, 24, 12);
      const { store, memory, index, main, side, mergeAtWrite } = await setupOn({ now: () => now });
      const ferry = ask(main.id, 'Cy', 'What is the ferry’s departure time?', 'The ferry leaves at noon.');
      const pier = ask(main.id, 'Cy', 'When was the pier approved?', 'The pier was approved in March.');
      const before = new Date(now).toISOString();
      const repeat = await alreadyStored(store, memory, side.id, ferry.text, before);
      // The same words, a vector far from theirs: no repeat.
      const far = await alreadyStored(store, memory, side.id, pier.text, before, 'Tide tables for the harbour are posted weekly.');
      now += 60_000;
      // The side thread, holding both, is merged into the main thread as the first chunk is written.
      mergeAtWrite(() => mergeInto(store, side, main.id));
      memory.onAnswer(ferry.request, ferry.result);
      memory.onAnswer(pier.request, pier.result);
      await memory.idle();
      const chunks = await store.scanMemoryChunks(0, 10);
      const later = new Date(now).toISOString();
      expect(chunks.map((c) => [c.threadId, c.text.split('\n')[1], c.updatedAt])).toEqual([
        [main.id, 'A: The ferry leaves at noon.', later],
        [main.id, 'A: The pier was approved in March.', before],
        [main.id, 'A: The pier was approved in March.', later],
      ]);
      expect(chunks.slice(0, 2).map((c) => c.id)).toEqual([repeat.id, far.id]);
      expect(index.size).toBe(1);
    });

    it('keeps the privilege of the thread an exchange was asked in, wherever a merge sends it, as the merge keeps its chunks’', async () => {
      const { store, memory, main, side, mergeAtWrite } = await setupOn();
      await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: main.id, privileged: true }] });
      const later = await createThread(store, { id: 'thr_later', roomId: 'news_1', title: 'Later' }, 'u_Ann');
      const ferry = ask(side.id, 'Ann', 'What is the ferry’s departure time?', 'The ferry leaves at noon.');
      const pier = ask(later.id, 'Ann', 'When was the pier approved?', 'The pier was approved in March.');
      const locker = ask(main.id, 'Ann', 'What is my locker code?', 'Your locker code is 4417.');
      // Both public threads are merged into the privileged one as the first exchange is written: the
      // second is still queued, and the service finds its thread merged when it takes it.
      mergeAtWrite(async () => {
        await mergeInto(store, side, main.id);
        await mergeInto(store, later, main.id);
      });
      memory.onAnswer(ferry.request, ferry.result);
      memory.onAnswer(pier.request, pier.result);
      memory.onAnswer(locker.request, locker.result);
      await memory.idle();
      expect((await store.scanMemoryChunks(0, 10)).map((c) => [c.threadId, c.text.split('\n')[1], c.privileged, c.owner])).toEqual([
        [main.id, 'A: The ferry leaves at noon.', false, 'u_Ann'],
        [main.id, 'A: The pier was approved in March.', false, 'u_Ann'],
        [main.id, 'A: Your locker code is 4417.', true, 'u_Ann'],
      ]);
      const found = await memory.search('when was the pier approved?', publicAsk(main.id, 'Cy'), 3);
      expect(found.map((h) => h.chunk.text)).toContain(pier.text);
      expect(found.map((h) => h.chunk.text)).not.toContain(locker.text);
    });
  });
}

filingRaces('SQLite', async () => new SqliteStore({ filename: ':memory:' }));

describePostgres('PostgreSQL', () => {
  filingRaces('PostgreSQL', () => freshPostgresStore(cleanups));
});

describe('a chunk whose repeat goes each time before it is refreshed', () => {
  it(`is written FILING_ROUNDS (${FILING_ROUNDS}) times at most, then stored unchecked`, async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const thread = await store.ensureMainThread('news_1');
    const [request, result] = answered(thread.id, 'Ann', 'What is the ferry’s departure time?', 'The ferry leaves at noon.');
    const [vector] = await embedder.embed([exchangeText(request.text, result.message.text)]);
    let writes = 0;
    // Every write finds a near repeat (a new one each time) that is deleted before it is refreshed.
    const racing = overriding(store, {
      fileMemoryChunk: async (c) => ({
        repeat: { ...c, id: 1000 + ++writes, createdAt: '', updatedAt: '', vector, vectorModel: memory.vectorModel },
      }),
      touchMemoryChunk: async () => false,
    });
    const memory = new MemoryService({ store: racing, embedder, index: memoryIndex() });
    cleanups.push(() => memory.close());
    memory.onAnswer(request, result);
    await memory.idle();
    expect(writes).toBe(FILING_ROUNDS);
    expect((await store.scanMemoryChunks(0, 10)).map((c) => c.text.split('\n')[1])).toEqual(['A: The ferry leaves at noon.']);
  });
});
