/**
 * Conversation memory end to end (issue 13's "done means"): a real app with the local providers,
 * asks over HTTP and sockets. A fact stated early is recalled and labelled thirty exchanges later,
 * far outside the recent chat, also after a restart; people's own chat is recalled; the switch,
 * other rooms and private asks keep what they must out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import type { ChatMessage } from '../../src/ai/types.js';
import { withoutLiteralEscapes } from '../../src/protocol/markdown-literal.js';
import type { Source } from '../../src/protocol/messages.js';
import { item } from '../store/contract.js';
import { ADMIN, tempDir, testApp } from '../helpers.js';
import { connect, joined, listen } from '../rooms/helpers.js';
import { heldLocalChat } from './fakes.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const LIMITS = { ASK_LIMIT_USER: '1000', ASK_LIMIT_ROOM: '1000', ASK_LIMIT_IP: '1000', API_RATE_LIMIT_PER_MINUTE: '10000' };

/** A chat model whose answers wait until aborted; `next()` resolves with the next answer begun. */
class AbortAwareChat extends LocalChatModel {
  private static begun: ((s: { question: string; aborted: Promise<void>; reason: () => unknown }) => void)[] = [];
  private static started: { question: string; aborted: Promise<void>; reason: () => unknown }[] = [];
  static next(): Promise<{ question: string; aborted: Promise<void>; reason: () => unknown }> {
    const ready = AbortAwareChat.started.shift();
    return ready ? Promise.resolve(ready) : new Promise((resolve) => AbortAwareChat.begun.push(resolve));
  }
  constructor() {
    super(new LocalEmbedder());
  }
  // eslint-disable-next-line require-yield
  override async *stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
    const aborted = new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
    const started = { question: messages.at(-1)?.content ?? '', aborted, reason: () => signal?.reason };
    const waiter = AbortAwareChat.begun.shift();
    if (waiter) waiter(started);
    else AbortAwareChat.started.push(started);
    await aborted;
  }
}

/**
 * An app whose chat model holds every answer until `release()`; `writing` resolves once one is
 * being written. The room news_1 has an article about the gym.
 */
async function appWithHeldAnswers(): Promise<{ app: FastifyInstance; writing: Promise<void>; release: () => void }> {
  const { chat, writing, release } = heldLocalChat();
  const t = await testApp(LIMITS, { chat, roomOptions: { shutdownGraceMs: 100 } });
  closers.push(t.close);
  await t.app.ready();
  await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Gym news', body: 'The gym opens a new locker room on Monday.' }));
  return { app: t.app, writing, release };
}

async function start(dataDir: string, seed: boolean): Promise<FastifyInstance> {
  const t = await testApp({ ...LIMITS, DATA_DIR: dataDir } as never, { roomOptions: { shutdownGraceMs: 100 } });
  closers.push(t.close);
  await t.app.ready();
  if (seed) {
    const pipeline = t.app.salon.ingest.pipeline;
    await pipeline.put(
      item('news_1', {
        title: 'Rust 2.0 released',
        description: 'The Rust team shipped a new edition.',
        body: 'The Rust team shipped Rust 2.0 on Tuesday. The new edition makes compile times twice as fast. The borrow checker got smarter error messages. Async closures are stable.',
      }),
    );
    await pipeline.put(
      item('news_2', { title: 'Volcano erupts in Iceland', description: '', body: 'Lava reached the town of Grindavik. Flights were cancelled for two days.' }),
    );
  }
  return t.app;
}

interface Answer {
  answer: string;
  sources: Source[];
  abstained?: boolean;
}

async function ask(app: FastifyInstance, text: string, roomId = 'news_1'): Promise<Answer> {
  const res = await app.inject({ method: 'POST', url: `/api/v1/rooms/${roomId}/ask`, payload: { text, name: 'Ann' } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Answer;
}

const FILLER = [
  'How much faster are compile times?',
  'What did the borrow checker get?',
  'When was Rust 2.0 shipped?',
  'Are async closures stable now?',
  'Who shipped the new edition?',
];

describe('the assistant remembers', () => {
  it('recalls a fact from exchange 3 at exchange 30 with its label, after a restart too, and only where it may', async () => {
    const { dir, cleanup } = tempDir();
    closers.push(cleanup);
    let app = await start(dir, true);
    await ask(app, FILLER[0]);
    await ask(app, FILLER[1]);
    const stated = await ask(app, 'Our launch party for Rust is at the Blue Harbor pub on Friday; is Rust 2.0 out by then?');
    expect(stated.abstained).toBeUndefined();
    for (let i = 4; i < 30; i++) await ask(app, `${FILLER[i % FILLER.length]} (${i})`);
    await app.salon.memory.idle();
    const thread = await app.salon.store.ensureMainThread('news_1');
    // The recent chat holds a dozen messages: the party is far behind it.
    const recent = await app.salon.store.threadMessages(thread.id, 12);
    expect(recent.some((m) => m.text.includes('Blue Harbor'))).toBe(false);

    const recall = async (target: FastifyInstance) => {
      const got = await ask(target, 'Where is our launch party?');
      expect(got.answer).toContain('Blue Harbor');
      const cited = Number(/\[(\d+)\]/.exec(got.answer)![1]);
      const source = got.sources.find((s) => s.n === cited)!;
      expect(source).toMatchObject({ sourceType: 'conversation', kind: 'thread', id: thread.id, authors: ['Ann', 'Salon AI'] });
      expect(source.title).toMatch(/^From this discussion — Ann, Salon AI, \d{1,2} \w{3} \d{4}$/);
      expect(source.messageIds).toHaveLength(2);
      return got;
    };
    await recall(app);
    // Asked again after a restart, beyond the recent chat again (the recall above joined it).
    for (let i = 0; i < 8; i++) await ask(app, `${FILLER[i % FILLER.length]} (again ${i})`);
    await app.close();
    app = await start(dir, false);
    await app.salon.memory.load();
    await recall(app);
    for (let i = 0; i < 8; i++) await ask(app, `${FILLER[i % FILLER.length]} (once more ${i})`);

    // Another room never sees it.
    const elsewhere = await ask(app, 'Where is our launch party?', 'news_2');
    expect(elsewhere.answer).not.toContain('Blue Harbor');
    expect(elsewhere.sources.every((s) => s.sourceType === 'document')).toBe(true);

    // Switched off, memory is neither searched nor cited.
    const off = await app.inject({ method: 'PUT', url: `/api/v1/threads/${thread.id}/config`, headers: ADMIN, payload: { enable_chat_history_rag: false } });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ thread: { id: thread.id, config: { enable_chat_history_rag: false } }, memory: { chunks: expect.any(Number) } });
    const forgotten = await ask(app, 'Where is our launch party?');
    expect(forgotten.answer).not.toContain('Blue Harbor');
    expect(forgotten.sources.some((s) => s.sourceType === 'conversation' && s.messageIds?.length === 2 && s.authors?.includes('Salon AI'))).toBe(false);
  });

  it('recalls what people said to each other, long after it left the recent chat', async () => {
    const { dir, cleanup } = tempDir();
    closers.push(cleanup);
    const app = await start(dir, true);
    const { client: ann } = await joined(app, 'Ann', 'news_1');
    const { client: cy } = await joined(app, 'Cy', 'news_1');
    const lines: [typeof ann, string][] = [
      [ann, 'My cousin Bob lost 4000 dollars on Meridian last week'],
      [cy, 'Ouch. Was that the stablecoin that lost its peg?'],
      [ann, 'Yes, he says he will never touch crypto again'],
    ];
    for (let i = 0; i < 14; i++) lines.push([i % 2 ? ann : cy, `Back to Rust: I like the new edition, point ${i}`]);
    for (const [i, [who, text]] of lines.entries()) {
      who.send({ type: 'say', text, clientId: `c${i}` });
      await who.next('message', (f) => f.message.clientId === `c${i}`);
    }
    app.salon.memory.flush();
    await app.salon.memory.idle();
    const got = await ask(app, 'How much money did Bob lose on Meridian?');
    expect(got.answer).toContain('4000 dollars');
    const source = got.sources.find((s) => s.sourceType === 'conversation' && s.messageIds!.length > 2)!;
    expect(source.authors).toEqual(['Ann', 'Cy']);
    const thread = await app.salon.store.ensureMainThread('news_1');
    const first = (await app.salon.store.threadMessages(thread.id, 1, 2))[0];
    expect(source.messageIds![0]).toBe(first.id);
    // The question is a message of the room too, in a window still open until it is flushed.
    app.salon.memory.flush();
    await app.salon.memory.idle();
    const detail = await app.inject({ method: 'GET', url: `/api/v1/threads/${thread.id}` });
    expect(detail.json()).toMatchObject({ messages: expect.any(Number), memory: { pending: 0 }, thread: { config: { enable_chat_history_rag: true } } });
    expect(detail.json().memory.chunks).toBeGreaterThanOrEqual(2);
  });

  it('remembers chat that says constructor, __proto__ or toString, and loads it again after a restart', async () => {
    const { dir, cleanup } = tempDir();
    closers.push(cleanup);
    let app = await start(dir, true);
    const { client: ann } = await joined(app, 'Ann', 'news_1');
    const lines = ['The constructor of the Blue Harbor pier was Toller & Sons', 'My __proto__ valueOf toString hasOwnProperty joke fell flat'];
    for (const [i, text] of lines.entries()) {
      ann.send({ type: 'say', text, clientId: `p${i}` });
      await ann.next('message', (f) => f.message.clientId === `p${i}`);
    }
    app.salon.memory.flush();
    await app.salon.memory.idle();
    const thread = await app.salon.store.ensureMainThread('news_1');
    const stored = await app.salon.store.countMemoryChunks(thread.id);
    expect(stored).toBeGreaterThan(0);
    expect(app.salon.memoryIndex.size).toBe(stored);
    const recall = async (target: FastifyInstance) => {
      const got = await ask(target, 'Who was the constructor of the pier?');
      // Markdown-escaped as the assistant quotes it; the page shows it as said.
      expect(got.answer).toContain('Toller \\& Sons');
      expect(withoutLiteralEscapes(got.answer)).toContain('Toller & Sons');
      expect(got.sources.some((s) => s.sourceType === 'conversation' && s.authors?.includes('Ann'))).toBe(true);
    };
    await recall(app);
    await app.close();
    app = await start(dir, false);
    await app.salon.memory.load();
    expect(app.salon.memoryIndex.size).toBe(await app.salon.store.countMemoryChunks(thread.id));
    await recall(app);
  });

  it('keeps a private fact for its asker’s private asks alone', async () => {
    const { dir, cleanup } = tempDir();
    closers.push(cleanup);
    const app = await start(dir, true);
    const { client: ann } = await joined(app, 'Ann', 'news_1');
    const { client: cy } = await joined(app, 'Cy', 'news_1');
    const privately = async (client: typeof ann, text: string, clientId: string) => {
      client.send({ type: 'ask', text, clientId, private: true });
      return (await client.next('assistant.done', () => true, 10_000)).message as { text: string; sources?: Source[] };
    };
    await privately(ann, 'My locker code is 4417; does Rust 2.0 make compile times faster?', 'p1');
    await app.salon.memory.idle();
    const mine = await privately(ann, 'What is my locker code?', 'p2');
    expect(mine.text).toContain('4417');
    const theirs = await privately(cy, 'What is the locker code?', 'p3');
    expect(theirs.text).not.toContain('4417');
    const shared = await ask(app, 'What is the locker code?');
    expect(shared.answer).not.toContain('4417');
    // What a source shows, not its ids: a message's UUID may hold 4417 by chance.
    expect(JSON.stringify(shared.sources.map((s) => [s.title, s.snippet]))).not.toContain('4417');
  });

  it('counts only public memory where anyone may look, so a private ask is not seen coming or going', async () => {
    const { dir, cleanup } = tempDir();
    closers.push(cleanup);
    const app = await start(dir, true);
    const { client: ann, welcome } = await joined(app, 'Ann', 'news_1');
    const memoryOf = async () => (await app.inject({ method: 'GET', url: `/api/v1/threads/${welcome.threadId}` })).json().memory;
    const before = await memoryOf();
    ann.send({ type: 'ask', text: 'My salary is 91k; when did the Rust team ship Rust 2.0?', clientId: 'p1', private: true });
    await ann.next('assistant.done', () => true, 10_000);
    expect(await memoryOf()).toEqual(before);
    await app.salon.memory.idle();
    expect(await memoryOf()).toEqual(before);
    // It was remembered all the same, for its asker.
    expect(await app.salon.store.countMemoryChunks(welcome.threadId)).toBe(before.chunks + 1);
    await ask(app, 'Is Rust 2.0 out?');
    await app.salon.memory.idle();
    expect((await memoryOf()).chunks).toBe(before.chunks + 1);
  });

  it('deletes a thread with its messages and memory, for the admin only', async () => {
    const { dir, cleanup } = tempDir();
    closers.push(cleanup);
    const app = await start(dir, true);
    await ask(app, 'Our launch party is at the Blue Harbor pub; is Rust 2.0 out?');
    await app.salon.memory.idle();
    const thread = await app.salon.store.ensureMainThread('news_1');
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/threads/${thread.id}` })).statusCode).toBe(401);
    const res = await app.inject({ method: 'DELETE', url: `/api/v1/threads/${thread.id}`, headers: ADMIN });
    expect(res.json()).toEqual({ deleted: thread.id, messages: 2, memoryChunks: 1, fusedInto: [], absorbed: [] });
    expect((await app.inject({ method: 'GET', url: `/api/v1/threads/${thread.id}` })).json().error.code).toBe('ERR_THREAD_NOT_FOUND');
    expect(app.salon.memoryIndex.size).toBe(0);
    const again = await ask(app, 'Where is our launch party?');
    expect(again.answer).not.toContain('Blue Harbor');
  });

  it('stores an answer its thread was merged under while it was being written in the survivor', async () => {
    const { app, writing, release } = await appWithHeldAnswers();
    const thread = async (title: string) =>
      (await app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/threads', headers: ADMIN, payload: { title } })).json().thread.id as string;
    const [survivor, absorbed] = [await thread('Gym'), await thread('Lockers')];
    const { client: ann } = await joined(app, 'Ann', 'news_1');
    ann.send({ type: 'say', text: '@ai when does the new locker room open?', clientId: 'q1', threadId: absorbed });
    await writing;
    const merged = await app.inject({ method: 'POST', url: '/api/v1/threads/merge', headers: ADMIN, payload: { survivorId: survivor, absorbedId: absorbed } });
    expect(merged.statusCode, merged.body).toBe(200);
    release();
    const done = await ann.next('assistant.done', () => true, 10_000);
    expect(done.message.threadId).toBe(survivor);
    const history = (await app.inject({ method: 'GET', url: `/api/v1/threads/${survivor}/messages` })).json().messages as { id: string }[];
    expect(history.map((m) => m.id)).toContain(done.message.id);
  });

  it('ends a private answer when its asker leaves the room, and asks nothing of the model for their waiting one', async () => {
    // Not back within 1 ms: gone.
    const t = await testApp(LIMITS, { chat: new AbortAwareChat(), roomOptions: { shutdownGraceMs: 100, askerReturnGraceMs: 1 } });
    closers.push(t.close);
    const { app } = t;
    await app.ready();
    await app.salon.ingest.pipeline.put(item('news_1', { title: 'Gym news', body: 'The gym opens a new locker room on Monday.' }));
    // A real socket: its close reaches the server as a member's would.
    const url = await listen(app);
    const ann = await connect(url('news_1'));
    await ann.hello('Ann');
    ann.send({ type: 'ask', text: 'When does the locker room open?', clientId: 'p1', private: true });
    const streamed = await AbortAwareChat.next();
    ann.send({ type: 'ask', text: 'And the sauna?', clientId: 'p2', private: true });
    await ann.next('warning', (f) => f.code === 'ASSISTANT_QUEUED');
    ann.close();
    await streamed.aborted;
    expect(String(streamed.reason())).toContain('the asker left the room');
    // The waiting ask ends without a model call: the next stream is Bo's public one.
    const { client: bo } = await joined(app, 'Bo', 'news_1');
    bo.send({ type: 'ask', text: 'When does the locker room open?', clientId: 'b1' });
    expect((await AbortAwareChat.next()).question).toContain('When does the locker room open?');
  });

  it('goes on with a private answer when its asker reloads, listing it in their welcome alone and finishing it on their new socket', async () => {
    const { app, writing, release } = await appWithHeldAnswers();
    const url = await listen(app);
    const ann = await connect(url('news_1'));
    const { you } = (await ann.hello('Ann')) as { you: { token: string } };
    ann.send({ type: 'ask', text: 'When does the locker room open?', clientId: 'p1', private: true });
    await writing;
    const started = await ann.next('assistant.progress', () => true);
    ann.close();
    // The reload: the same identity, a new socket, well within the grace.
    const back = await connect(url('news_1'));
    const welcome = (await back.hello('Ann', { token: you.token })) as { pending: { id: string }[] };
    expect(welcome.pending.map((p) => p.id)).toEqual([started.id]);
    const { welcome: bos } = await joined(app, 'Bo', 'news_1');
    expect(bos.pending ?? []).toEqual([]);
    release();
    const done = await back.next('assistant.done', () => true, 10_000);
    expect(done.message.text).toContain('Monday');
    back.close();
  });

  it('ends an answer being written in a thread that is deleted, keeps nothing of it, and asks nothing of the model for one waiting there', async () => {
    const logged: { level: number; msg: string }[] = [];
    const logStream = { write: (line: string) => void logged.push(JSON.parse(line)) };
    const t = await testApp({ ...LIMITS, LOG_LEVEL: 'info' }, { chat: new AbortAwareChat(), roomOptions: { shutdownGraceMs: 100 }, logStream });
    closers.push(t.close);
    const { app } = t;
    await app.ready();
    await app.salon.ingest.pipeline.put(item('news_1', { title: 'Gym news', body: 'The gym opens a new locker room on Monday.' }));
    const created = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_1/threads', headers: ADMIN, payload: { title: 'Lockers' } });
    const threadId = created.json().thread.id as string;
    const { client: ann } = await joined(app, 'Ann', 'news_1');
    ann.send({ type: 'say', text: 'My locker code at the gym is zq7391.', clientId: 's1', threadId });
    await ann.next('message', (f) => f.message.clientId === 's1');
    ann.send({ type: 'say', text: '@ai what is my locker code at the gym?', clientId: 'q1', threadId });
    const streamed = await AbortAwareChat.next();
    ann.send({ type: 'say', text: '@ai and when does the sauna open?', clientId: 'q2', threadId });
    await ann.next('warning', (f) => f.code === 'ASSISTANT_QUEUED');
    const removed = await app.inject({ method: 'DELETE', url: `/api/v1/threads/${threadId}`, headers: ADMIN });
    expect(removed.json()).toMatchObject({ deleted: threadId });
    // Not written on for a thread nobody sees: the model's stream is aborted at once.
    await streamed.aborted;
    expect(String(streamed.reason())).toContain('its thread was deleted');
    expect(await ann.next('error', () => true, 10_000)).toMatchObject({ code: 'ERR_ASSISTANT_FAILED' });
    // Ended by what the room did, not a failure of the server: no error in its log.
    expect(logged.filter((l) => l.msg === 'assistant failed').map((l) => l.level)).toEqual([30]);
    // The waiting ask ends without a model call: the next stream is Bo's, in the main thread.
    const { client: bo } = await joined(app, 'Bo', 'news_1');
    bo.send({ type: 'ask', text: 'When does the locker room open?', clientId: 'b1' });
    expect((await AbortAwareChat.next()).question).toContain('When does the locker room open?');
    // Nobody reads it later: not the room's history, not a newcomer's welcome.
    const history = (await app.inject({ method: 'GET', url: '/api/v1/rooms/news_1/messages' })).json().messages as { threadId: string }[];
    expect(history.filter((m) => m.threadId === threadId)).toEqual([]);
    const { welcome } = await joined(app, 'Zed', 'news_1');
    expect(JSON.stringify(welcome.history)).not.toContain('zq7391');
  });
});

describe('/memory in a room', () => {
  it('tells whether memory is on and lets members switch it, unless THREAD_OPS=admin', async () => {
    const { dir, cleanup } = tempDir();
    closers.push(cleanup);
    const app = await start(dir, true);
    const { client, welcome } = await joined(app, 'Ann', 'news_1');
    const reply = async (text: string, clientId: string) => {
      client.send({ type: 'say', text, clientId });
      return client.next('message', (f) => f.message.clientId === clientId && f.message.author.kind === 'system');
    };
    expect((await reply('/memory', 'm1')).message.text).toMatch(/^Memory is on in this thread: 0 remembered passages/);
    expect((await reply('/memory off', 'm2')).message.text).toMatch(/^Memory is off/);
    expect((await app.salon.store.getThread(welcome.threadId))!.memoryEnabled).toBe(false);
    expect((await reply('/memory on', 'm3')).message.text).toMatch(/^Memory is on/);
    expect((await app.salon.store.getThread(welcome.threadId))!.memoryEnabled).toBe(true);
    client.send({ type: 'say', text: '/memory maybe', clientId: 'm4' });
    expect((await client.next('error', (f) => f.clientId === 'm4')).code).toBe('ERR_BAD_MESSAGE');

    const admin = await testApp({ THREAD_OPS: 'admin', DATA_DIR: tempDirFor(closers) } as never, { roomOptions: { shutdownGraceMs: 100 } });
    closers.push(admin.close);
    await admin.app.ready();
    await admin.app.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released' }));
    const { client: other, welcome: there } = await joined(admin.app, 'Cy', 'news_1');
    other.send({ type: 'say', text: '/memory off', clientId: 'x1' });
    expect((await other.next('error', (f) => f.clientId === 'x1')).code).toBe('ERR_FORBIDDEN');
    expect((await admin.app.salon.store.getThread(there.threadId))!.memoryEnabled).toBe(true);
  });
});

/** A temporary DATA_DIR removed when the test ends. */
function tempDirFor(list: (() => Promise<void> | void)[]): string {
  const { dir, cleanup } = tempDir();
  list.push(cleanup);
  return dir;
}

describe('one embedding of the question per ask', () => {
  it('the memory search reuses the vector the document search made', async () => {
    const { LocalEmbedder } = await import('../../src/ai/local/local-embedder.js');
    const inner = new LocalEmbedder();
    const queries: string[][] = [];
    const embedder = Object.assign(Object.create(inner) as typeof inner, {
      embed: (texts: string[], signal?: AbortSignal, purpose?: 'document' | 'query') => {
        if (purpose !== 'document') queries.push(texts);
        return inner.embed(texts, signal);
      },
    });
    const { dir, cleanup } = tempDir();
    closers.push(cleanup);
    const t = await testApp({ ...LIMITS, DATA_DIR: dir } as never, { embedder, roomOptions: { shutdownGraceMs: 100 } });
    closers.push(t.close);
    await t.app.ready();
    await t.app.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released', body: 'The Rust team shipped Rust 2.0 on Tuesday.' }));
    await ask(t.app, 'When was Rust 2.0 shipped?');
    await t.app.salon.memory.idle();
    queries.length = 0;
    await ask(t.app, 'Who shipped Rust 2.0?');
    // The document search embeds [title + question, question]; the memory search embeds nothing of its own.
    expect(queries.filter((texts) => texts[1] === 'Who shipped Rust 2.0?')).toHaveLength(1);
    expect(queries.filter((texts) => texts.length === 1 && texts[0] === 'Who shipped Rust 2.0?')).toEqual([]);
    expect((await t.app.salon.memory.stats((await t.app.salon.store.ensureMainThread('news_1')).id)).chunks).toBeGreaterThan(0);
  });
});
