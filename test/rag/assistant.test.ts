/** The room assistant with doubles: streaming frames, late joiners, queueing, limits, failures, private asks. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { SalonError } from '../../src/errors.js';
import { SalonAssistant, type AssistantOptions } from '../../src/rag/assistant.js';
import { ABSTAIN_TEXT, ANSWER_MAX_CHARS } from '../../src/rag/answer-run.js';
import type { ChatMessage } from '../../src/ai/types.js';
import { NOT_COVERED } from '../../src/ai/grounded-prompt.js';
import type { AskRequest } from '../../src/rooms/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { tempStore } from '../helpers.js';
import { item } from '../store/contract.js';
import { MemorySearch, RecordingOutlet, ScriptedChat } from './fakes.js';

let store: SqliteStore;
let closeStore: () => Promise<void>;
let outlet: RecordingOutlet;
const assistants: SalonAssistant[] = [];

beforeEach(async () => {
  const temp = tempStore();
  store = temp.store;
  closeStore = temp.close;
  outlet = new RecordingOutlet();
  for (const [id, title, body] of [
    ['news_1', 'Rust 2.0 released', 'The Rust team shipped a new edition with faster compile times. The release came on a Tuesday.'],
    ['news_2', 'Volcano erupts in Iceland', 'Lava reached the town of Grindavik. Flights were cancelled for two days.'],
  ]) {
    await store.upsertItem(item(id, { title, body, description: '' }));
    await store.replaceChunks(id, [{ ord: 0, part: 'body', text: body }]);
  }
});

afterEach(async () => {
  for (const a of assistants.splice(0)) await a.close();
  await closeStore();
});

function make(chat: ScriptedChat, over: Partial<AssistantOptions> = {}): SalonAssistant {
  const a = new SalonAssistant({
    store,
    search: new MemorySearch(store, new LocalEmbedder()),
    chat,
    resolveRoom: async (id) => (id.startsWith('news_') || id.startsWith('topic_') ? { id, title: `Room ${id}`, context: `Context of ${id}` } : null),
    deltaIntervalMs: 30,
    ...over,
  });
  a.attach(outlet);
  assistants.push(a);
  return a;
}

async function threadOf(roomId: string): Promise<string> {
  return (await store.ensureMainThread(roomId)).id;
}

async function request(over: Partial<AskRequest> = {}): Promise<AskRequest> {
  const roomId = over.roomId ?? 'news_1';
  return { roomId, threadId: await threadOf(roomId), text: 'What did the Rust team ship?', asker: { id: 'u1', name: 'Ada' }, clientId: 'c1', ...over };
}

describe('answering in a room', () => {
  it('streams progress, batched deltas and a persisted answer with numbered sources to the room', async () => {
    const pieces = Array.from({ length: 30 }, (_, i) => `w${i} `);
    const a = make(new ScriptedChat({ pieces, pieceDelayMs: 3 }));
    const { id, position, done } = a.ask(await request({ questionId: 'm_question' }));
    expect(position).toBe(0);
    const result = await done;

    const frames = outlet.frames.filter((f) => f.roomId === 'news_1');
    expect(frames.every((f) => f.to === undefined)).toBe(true);
    const stages = outlet.ofType('assistant.progress').map((f) => f.stage);
    expect(stages).toEqual(['searching', 'reranking', 'writing']);
    expect(outlet.ofType('assistant.progress').every((f) => f.id === id)).toBe(true);
    const deltas = outlet.ofType('assistant.delta');
    expect(deltas.map((d) => d.text).join('')).toBe(pieces.join(''));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.length).toBeLessThan(pieces.length / 2);

    const [doneFrame] = outlet.ofType('assistant.done');
    expect(frames[frames.length - 1].frame.type).toBe('assistant.done');
    expect(doneFrame.message).toEqual(result.message);
    expect(result.message).toMatchObject({
      author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' },
      text: pieces.join('').trim(),
      replyTo: 'm_question',
      clientId: id,
    });
    expect(result.sources.length).toBeGreaterThan(0);
    expect(result.sources.map((s) => s.n)).toEqual(result.sources.map((_, i) => i + 1));
    expect(result.sources[0]).toMatchObject({ id: 'news_1', kind: 'news', title: 'Rust 2.0 released', sourceType: 'document' });
    expect(result.sources[0].snippet).toContain('Rust team shipped');
    expect(result.stages).toMatchObject({ search: { candidates: 2 }, rerank: { method: 'skipped', selected: 2 } });

    const stored = await store.recentMessages('news_1', 5);
    expect(stored.at(-1)).toEqual(result.message);
    expect(a.pending('news_1')).toEqual([]);
  });

  it('shows an answer in progress to members who join mid-answer, as text already sent', async () => {
    const a = make(new ScriptedChat({ pieces: ['one ', 'two ', 'three ', 'four ', 'five '], pieceDelayMs: 25 }));
    const { id, done } = a.ask(await request());
    await until(() => outlet.ofType('assistant.delta').length >= 1);
    const [pending] = a.pending('news_1');
    expect(pending).toMatchObject({ id, stage: 'writing' });
    expect(pending.text).toBe(
      outlet
        .ofType('assistant.delta')
        .map((d) => d.text)
        .join(''),
    );
    expect(a.pending('news_2')).toEqual([]);
    await done;
    const after = outlet
      .ofType('assistant.delta')
      .map((d) => d.text)
      .join('');
    expect(after.startsWith(pending.text)).toBe(true);
    expect(after).toBe('one two three four five ');
  });

  it('sends a private answer to the asker only and does not store it', async () => {
    const a = make(new ScriptedChat({ pieces: ['secret ', 'answer'], pieceDelayMs: 5 }));
    const req = await request({ private: true });
    const { done } = a.ask(req);
    expect(a.pending('news_1')).toEqual([]);
    const result = await done;
    expect(outlet.frames.length).toBeGreaterThan(3);
    expect(outlet.frames.every((f) => f.to === 'u1')).toBe(true);
    expect(result.message.seq).toBe(0);
    expect(await store.recentMessages('news_1', 5)).toEqual([]);
  });
});

describe('private asks of an asker followed elsewhere', () => {
  it('says whether the asker has a private ask waiting or being answered in the room, until it ends or they leave', async () => {
    const a = make(new ScriptedChat({ pieces: ['a ', 'b ', 'c'], pieceDelayMs: 15 }));
    const first = a.ask(await request({ private: true }));
    const waiting = a.ask(await request({ private: true, clientId: 'c2' }));
    const open = a.ask(await request({ asker: { id: 'u2', name: 'Bob' }, clientId: 'c3' }));
    expect(a.hasPrivateAsks('news_1', 'u1')).toBe(true);
    // A public ask is the room's; another room's are not this one's.
    expect(a.hasPrivateAsks('news_1', 'u2')).toBe(false);
    expect(a.hasPrivateAsks('news_2', 'u1')).toBe(false);
    await Promise.all([first.done, waiting.done, open.done]);
    expect(a.hasPrivateAsks('news_1', 'u1')).toBe(false);

    const left = a.ask(await request({ private: true, clientId: 'c4' }));
    a.askerLeft('news_1', 'u1');
    await left.done.catch(() => {});
    expect(a.hasPrivateAsks('news_1', 'u1')).toBe(false);
  });
});

describe('a member forgetting their private asks while some run', () => {
  it('answers their asks waiting or being written in the room but tells none to onAnswer; anyone else’s, another room’s, a public one and a later one are told', async () => {
    const told: string[] = [];
    // Three of Ada's asks wait at once: more than half of the default four places.
    const a = make(new ScriptedChat({ pieces: ['a ', 'b ', 'c'], pieceDelayMs: 15 }), {
      onAnswer: (req) => void told.push(req.clientId!),
      maxWaitingPerRoom: 10,
    });
    const writing = a.ask(await request({ private: true, clientId: 'c1' }));
    const queued = a.ask(await request({ private: true, clientId: 'c2' }));
    const others = [
      a.ask(await request({ private: true, clientId: 'c3', asker: { id: 'u2', name: 'Bob' } })),
      a.ask(await request({ clientId: 'c4' })),
      a.ask(await request({ private: true, clientId: 'c5', roomId: 'news_2' })),
    ];
    expect([writing.position, queued.position]).toEqual([0, 1]);
    expect(await a.forgetPrivateAsks('news_1', 'u1')).toBe(2);
    // Told once: a second forget meanwhile marks nothing more.
    expect(await a.forgetPrivateAsks('news_1', 'u1')).toBe(0);
    const later = a.ask(await request({ private: true, clientId: 'c6' }));
    const [first, second] = await Promise.all([writing.done, queued.done, later.done, ...others.map((o) => o.done)]);
    expect(told.sort()).toEqual(['c3', 'c4', 'c5', 'c6']);
    // Their answers still reached them, and them alone.
    for (const answer of [first, second]) {
      const sent = outlet.frames.filter((f) => f.frame.type === 'assistant.done' && f.frame.message.id === answer.message.id);
      expect(sent.map((f) => f.to)).toEqual(['u1']);
    }
    expect(await a.forgetPrivateAsks('news_1', 'u1')).toBe(0);
  });

  it('treats their public asks in a thread privileged when they forget as private ones (their exchanges would be theirs alone): answered to the room, not told, counted', async () => {
    const told: string[] = [];
    const a = make(new ScriptedChat({ pieces: ['a ', 'b ', 'c'], pieceDelayMs: 15 }), { onAnswer: (req) => void told.push(req.clientId!) });
    const secret = await threadOf('news_1');
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: secret, privileged: true }] });
    const writing = a.ask(await request({ clientId: 'c1' }));
    const queued = a.ask(await request({ clientId: 'c2' }));
    const others = [
      a.ask(await request({ clientId: 'c3', asker: { id: 'u2', name: 'Bob' } })),
      // Another room's main thread is not privileged.
      a.ask(await request({ clientId: 'c4', roomId: 'news_2' })),
    ];
    const forgetting = a.forgetPrivateAsks('news_1', 'u1');
    // Marked before it resolves: a second forget meanwhile marks nothing more.
    expect(await a.forgetPrivateAsks('news_1', 'u1')).toBe(0);
    expect(await forgetting).toBe(2);
    const later = a.ask(await request({ clientId: 'c5' }));
    const [first] = await Promise.all([writing.done, queued.done, later.done, ...others.map((o) => o.done)]);
    expect(told.sort()).toEqual(['c3', 'c4', 'c5']);
    // Public answers: the room reads them.
    expect(outlet.frames.filter((f) => f.frame.type === 'assistant.done' && f.frame.message.id === first.message.id).map((f) => f.to)).toEqual([undefined]);
  });
});

describe('the forget mark a private ask carries', () => {
  it('reads its asker’s mark in the room as it is asked and hands that one to onAnswer, however it moves meanwhile; a public ask’s too (its thread may be privileged as it is filed)', async () => {
    const told: [string, number | null][] = [];
    const a = make(new ScriptedChat({ pieces: ['a ', 'b'], pieceDelayMs: 15 }), { onAnswer: (req, _result, mark) => void told.push([req.clientId!, mark]) });
    await store.markPrivateForget('u1', 'news_1');
    const asked = a.ask(await request({ private: true, clientId: 'c1' }));
    const other = a.ask(await request({ private: true, clientId: 'c2', roomId: 'news_2' }));
    const open = a.ask(await request({ clientId: 'c3' }));
    // Forgotten on another node while it is answered: the store, not this node, refuses its exchange.
    await store.markPrivateForget('u1', 'news_1');
    await Promise.all([asked.done, other.done, open.done]);
    expect(told.sort()).toEqual([
      ['c1', 1],
      ['c2', 0],
      ['c3', 1],
    ]);
  });

  it('is idle only once an answer whose done frame has left has been handed to onAnswer (its mark read in between)', async () => {
    const told: string[] = [];
    const a = make(new ScriptedChat({ pieces: ['a ', 'b'] }), { onAnswer: (req) => void told.push(req.clientId!) });
    let markRead!: (mark: number) => void;
    vi.spyOn(store, 'privateForgetMark').mockImplementationOnce(() => new Promise<number>((resolve) => (markRead = resolve)));
    a.ask(await request({ private: true, clientId: 'c1' }));
    await until(() => outlet.ofType('assistant.done').length > 0);
    let idle = false;
    const waiting = a.idle().then(() => (idle = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([idle, told]).toEqual([false, []]);
    markRead(0);
    await waiting;
    expect(told).toEqual(['c1']);
    await a.idle();
  });

  it('hands onAnswer a null mark when it could not be read (the store then refuses the exchange if it is filed private), and answers all the same', async () => {
    const told: [string, number | null][] = [];
    const a = make(new ScriptedChat({ pieces: ['a ', 'b'] }), { onAnswer: (req, _result, mark) => void told.push([req.clientId!, mark]) });
    const read = vi.spyOn(store, 'privateForgetMark').mockRejectedValueOnce(new Error('the store is down'));
    const result = await a.ask(await request({ private: true, clientId: 'c1' })).done;
    expect(result.message.text).not.toBe('');
    expect(read).toHaveBeenCalledTimes(1);
    await a.ask(await request({ private: true, clientId: 'c2' })).done;
    expect(told).toEqual([
      ['c1', null],
      ['c2', 0],
    ]);
  });
});

describe('fairness', () => {
  it('answers one question at a time per room and tells the waiting asker its place', async () => {
    const chat = new ScriptedChat({ pieces: ['a ', 'b ', 'c'], pieceDelayMs: 15 });
    const a = make(chat);
    const first = a.ask(await request());
    const second = a.ask(await request({ asker: { id: 'u2', name: 'Bob' }, clientId: 'c2' }));
    const other = a.ask(await request({ roomId: 'news_2', asker: { id: 'u3', name: 'Cy' } }));
    expect([first.position, second.position, other.position]).toEqual([0, 1, 0]);
    const queued = outlet.frames.find((f) => f.frame.type === 'warning');
    expect(queued).toMatchObject({ roomId: 'news_1', to: 'u2', frame: { code: 'ASSISTANT_QUEUED' } });
    const order: string[] = [];
    await Promise.all([first.done.then(() => order.push('first')), second.done.then(() => order.push('second')), other.done.then(() => order.push('other'))]);
    expect(order.indexOf('first')).toBeLessThan(order.indexOf('second'));
    const room1Frames = outlet.frames.filter((f) => f.roomId === 'news_1' && f.frame.type.startsWith('assistant.'));
    const firstDone = room1Frames.findIndex((f) => f.frame.type === 'assistant.done');
    const secondStart = room1Frames.findIndex((f) => f.frame.type === 'assistant.progress' && f.frame.id === second.id);
    expect(secondStart).toBeGreaterThan(firstDone);
  });

  it('answers at once or refuses busy with no waiting places in a room (maxWaitingPerRoom 0: no line)', async () => {
    const chat = new GatedChat();
    const a = make(chat, { maxWaitingPerRoom: 0 });
    const first = a.ask(await request({ asker: { id: 'u1', name: 'Ada' }, clientId: 'c1' }));
    expect(first.position).toBe(0);
    // The room's answer is being written: another ask would wait, and nothing may.
    const next = await request({ asker: { id: 'u2', name: 'Bob' }, clientId: 'c2' });
    for (const refused of [() => a.ask(next), () => a.admit(next)]) expect(refused).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    // Another room's starts at once; an admission holds its room's start against the next ask.
    const admitted = a.admit(await request({ roomId: 'news_2', asker: { id: 'u2', name: 'Bob' }, clientId: 'c3' }));
    const behind = await request({ roomId: 'news_2', asker: { id: 'u3', name: 'Cy' }, clientId: 'c4' });
    expect(() => a.admit(behind)).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    const second = a.ask(await request({ roomId: 'news_2', asker: { id: 'u2', name: 'Bob' }, clientId: 'c3' }), admitted);
    expect(second.position).toBe(0);
    chat.open();
    await Promise.all([first.done, second.done]);
    // The room free again, its next ask is answered.
    await expect(a.ask(next).done).resolves.toMatchObject({ abstained: expect.any(Boolean) });
  });

  it('counts an admitted ask that starts at once as no question of its asker’s waiting', async () => {
    const chat = new GatedChat();
    // No line: the asker's next ask, while the first is being posted, is refused busy, not told of
    // "1 question waiting".
    const none = make(chat, { maxWaitingPerRoom: 0 });
    const ada = await request({ asker: { id: 'u1', name: 'Ada' }, clientId: 'c1' });
    const held = none.admit(ada);
    const again = await request({ asker: { id: 'u1', name: 'Ada' }, clientId: 'c2' });
    for (const refused of [() => none.admit(again), () => none.ask(again)]) expect(refused).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    // A line of two (one each): the asker's next ask takes its place in it, and the one after is hers too many.
    const two = make(chat, { maxWaitingPerRoom: 2 });
    const first = two.admit(ada);
    const second = two.admit(again);
    expect(() => two.admit({ ...again, clientId: 'c3' })).toThrow(
      expect.objectContaining({ code: 'ERR_RATE_LIMITED', message: expect.stringMatching(/you have 1 question waiting/) }),
    );
    const answers = [none.ask(ada, held), two.ask(ada, first), two.ask(again, second)];
    expect(answers.map((a) => a.position)).toEqual([0, 0, 1]);
    chat.open();
    await Promise.all(answers.map((a) => a.done));
  });

  it('starts an admitted ask at once with no line, though another room asked while it was being posted (maxWaitingPerRoom 0)', async () => {
    const chat = new GatedChat();
    const a = make(chat, { maxWaitingPerRoom: 0, queue: { concurrency: 1 } });
    const ada = await request({ asker: { id: 'u1', name: 'Ada' }, clientId: 'c1' });
    const admitted = a.admit(ada);
    // The only answer slot is the admitted ask's: another room's would wait, and nothing may.
    const elsewhere = await request({ roomId: 'news_2', asker: { id: 'u2', name: 'Bob' }, clientId: 'c2' });
    for (const refused of [() => a.ask(elsewhere), () => a.admit(elsewhere)]) expect(refused).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    const first = a.ask(ada, admitted);
    expect(first.position).toBe(0);
    chat.open();
    await first.done;
    // The queue frees the slot once the answer's promise settled: after the microtasks that follow it.
    await new Promise((resolve) => setImmediate(resolve));
    await expect(a.ask(elsewhere).done).resolves.toMatchObject({ abstained: expect.any(Boolean) });
  });

  it('lets one client address hold at most half a room’s waiting places, whatever names it asks under', async () => {
    const chat = new GatedChat();
    const a = make(chat, { maxWaitingPerRoom: 4 });
    const named = (n: number, address = '203.0.113.9') => request({ asker: { id: `x${n}`, name: `X${n}` }, clientId: `c${n}`, address });
    const asked = [a.ask(await named(1)), a.ask(await named(2))];
    const admitted = a.admit(await named(3));
    expect(asked.map((x) => x.position)).toEqual([0, 1]);
    // One answered, one queued, one admitted, each under a name of its own: two of the address's waiting.
    const fourth = await named(4);
    for (const refused of [() => a.ask(fourth), () => a.admit(fourth)])
      expect(refused).toThrow(
        expect.objectContaining({
          code: 'ERR_RATE_LIMITED',
          message: 'Slow down: 2 questions from your address are waiting for the assistant in this room; ask again once one is answered',
        }),
      );
    // Another address still gets in line, and this one in another room.
    const other = a.ask(await named(5, '198.51.100.7'));
    const elsewhere = a.ask(await request({ roomId: 'news_2', asker: { id: 'x6', name: 'X6' }, clientId: 'c6', address: '203.0.113.9' }));
    asked.push(a.ask(await named(3), admitted), other, elsewhere);
    expect(other.position).toBeGreaterThan(0);
    // A released admission gives its place back.
    const x7 = await named(7);
    expect(() => a.admit(x7)).toThrow(expect.objectContaining({ code: 'ERR_RATE_LIMITED' }));
    chat.open();
    await asked[0].done;
    await until(() => chat.started >= 3);
    a.release(a.admit(x7));
    a.release(a.admit(x7));
    await Promise.all(asked.map((x) => x.done));
  });

  it('refuses asks past the global queue and per-room waiting limits with ERR_ASSISTANT_BUSY', async () => {
    const a = make(new ScriptedChat({ pieces: ['slow'], pieceDelayMs: 200 }), { queue: { concurrency: 1, maxWaiting: 2 }, maxWaitingPerRoom: 5 });
    const asks = [];
    for (let i = 0; i < 3; i++) asks.push(a.ask(await request({ roomId: `news_${i + 1}`, asker: { id: `u${i}`, name: 'x' } })));
    expect(asks.map((x) => x.position)).toEqual([0, 1, 2]);
    const busy = await request({ roomId: 'topic_tech', asker: { id: 'u9', name: 'x' } });
    expect(() => a.ask(busy)).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    expect(() => a.admit(busy)).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    await a.close();
    await expect(asks[2].done).rejects.toBeInstanceOf(SalonError);

    const b = make(new ScriptedChat({ pieces: ['slow'], pieceDelayMs: 100 }), { maxWaitingPerRoom: 1 });
    b.ask(await request({ asker: { id: 'a', name: 'a' } }));
    b.ask(await request({ asker: { id: 'b', name: 'b' } }));
    expect(() => b.ask({ roomId: 'news_1', threadId: 't', text: 'q', asker: { id: 'c', name: 'c' } })).toThrow(
      expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }),
    );
  });

  it('lets one asker hold at most half a room’s waiting places, so the others still get in line', async () => {
    const chat = new GatedChat();
    const a = make(chat, { maxWaitingPerRoom: 4 });
    const ada = (clientId: string) => request({ clientId });
    const req4 = await ada('c4');
    const asked = [a.ask(await ada('c1')), a.ask(await ada('c2'))];
    const admitted = a.admit(await ada('c3'));
    expect(asked.map((x) => x.position)).toEqual([0, 1]);
    // One answered, one queued, one admitted while its question is posted: two waiting, half of four.
    for (const refused of [() => a.ask(req4), () => a.admit(req4)])
      expect(refused).toThrow(
        expect.objectContaining({
          code: 'ERR_RATE_LIMITED',
          message: 'Slow down: you have 2 questions waiting for the assistant in this room; ask again once one is answered',
        }),
      );
    // The other members still get in line, and Ada in another room.
    const bob = a.ask(await request({ asker: { id: 'u2', name: 'Bob' }, clientId: 'b1' }));
    const elsewhere = a.ask(await request({ roomId: 'news_2', clientId: 'c5' }));
    asked.push(a.ask(await ada('c3'), admitted), bob, elsewhere);
    expect(bob.position).toBeGreaterThan(0);
    expect(() => a.admit(req4)).toThrow(expect.objectContaining({ code: 'ERR_RATE_LIMITED' }));
    // Her first answer done, her next one starts: one waiting, so she may ask again.
    chat.open();
    await asked[0].done;
    await until(() => chat.started >= 3);
    const again = a.admit(req4);
    a.release(again);
    await Promise.all(asked.map((x) => x.done));
  });

  it('limits asks per user and per room with ERR_RATE_LIMITED', async () => {
    const a = make(new ScriptedChat({ pieces: ['ok'] }), {
      userLimit: { limit: 2, windowMs: 60_000 },
      roomLimit: { limit: 3, windowMs: 60_000 },
      maxWaitingPerRoom: 10,
    });
    const dones = [];
    dones.push(a.ask(await request()).done, a.ask(await request()).done);
    expect(() => a.ask({ roomId: 'news_1', threadId: 't', text: 'q', asker: { id: 'u1', name: 'Ada' } })).toThrow(
      expect.objectContaining({ code: 'ERR_RATE_LIMITED' }),
    );
    dones.push(a.ask(await request({ asker: { id: 'u2', name: 'Bob' } })).done);
    expect(() => a.ask({ roomId: 'news_1', threadId: 't', text: 'q', asker: { id: 'u3', name: 'Cy' } })).toThrow(
      expect.objectContaining({ code: 'ERR_RATE_LIMITED' }),
    );
    expect(a.ask(await request({ roomId: 'news_2', asker: { id: 'u3', name: 'Cy' } })).position).toBe(0);
    await Promise.all(dones);
  });

  it('counts private asks against their asker alone, so they leave the room’s visible asks their limit', async () => {
    const a = make(new ScriptedChat({ pieces: ['ok'] }), {
      userLimit: { limit: 3, windowMs: 60_000 },
      roomLimit: { limit: 2, windowMs: 60_000 },
      maxWaitingPerRoom: 10,
    });
    const dones = [];
    for (const clientId of ['p1', 'p2', 'p3']) dones.push(a.ask(await request({ private: true, clientId })).done);
    // The asker's own budget still bounds them.
    expect(() => a.admit({ roomId: 'news_1', threadId: 't', text: 'q', private: true, asker: { id: 'u1', name: 'Ada' } })).toThrow(
      expect.objectContaining({ code: 'ERR_RATE_LIMITED', message: expect.stringContaining('each member') }),
    );
    // The room's visible asks have their whole limit left, and it still holds.
    const released = a.admit(await request({ private: true, asker: { id: 'u9', name: 'Io' } }));
    a.release(released);
    dones.push(a.ask(await request({ asker: { id: 'u2', name: 'Bob' } })).done, a.ask(await request({ asker: { id: 'u3', name: 'Cy' } })).done);
    expect(() => a.ask({ roomId: 'news_1', threadId: 't', text: 'q', asker: { id: 'u4', name: 'Di' } })).toThrow(
      expect.objectContaining({ code: 'ERR_RATE_LIMITED', message: expect.stringContaining('each room') }),
    );
    await Promise.all(dones);
  });

  it('holds an admitted ask’s place in the limits until it is asked, and counts it once', async () => {
    // The HTTP route admits, posts the question (an await: a PostgreSQL round trip), then asks:
    // asks arriving together must not all pass the check before the first is counted.
    const a = make(new ScriptedChat({ pieces: ['ok'] }), { userLimit: { limit: 2, windowMs: 60_000 }, maxWaitingPerRoom: 10 });
    const req = await request();
    const first = a.admit(req);
    const second = a.admit(req);
    expect(() => a.admit(req)).toThrow(expect.objectContaining({ code: 'ERR_RATE_LIMITED' }));
    const dones = [a.ask(req, first).done, a.ask(req, second).done];
    expect(() => a.ask(req)).toThrow(expect.objectContaining({ code: 'ERR_RATE_LIMITED' }));
    // An admission is taken once: given again, the ask is counted (and refused) like any other.
    expect(() => a.ask(req, first)).toThrow(expect.objectContaining({ code: 'ERR_RATE_LIMITED' }));
    await Promise.all(dones);
  });

  it('holds an admitted ask’s place in the queue while its question is posted, so asks meanwhile cannot leave it refused', async () => {
    const a = make(new ScriptedChat({ pieces: ['slow'], pieceDelayMs: 200 }), { queue: { concurrency: 1, maxWaiting: 2 }, maxWaitingPerRoom: 5 });
    const first = a.ask(await request({ roomId: 'news_1', asker: { id: 'u1', name: 'x' } }));
    const admitted = await request({ roomId: 'news_2', asker: { id: 'u2', name: 'x' } });
    const admission = a.admit(admitted);
    // While its question is being posted, others ask: one takes the last free place, the next is refused.
    const other = a.ask(await request({ roomId: 'news_3', asker: { id: 'u3', name: 'x' } }));
    const late = await request({ roomId: 'topic_tech', asker: { id: 'u4', name: 'x' } });
    expect(() => a.ask(late)).toThrow(expect.objectContaining({ code: 'ERR_ASSISTANT_BUSY' }));
    const asked = a.ask(admitted, admission);
    expect(asked.position).toBe(2);
    await a.close();
    await Promise.allSettled([first.done, other.done, asked.done]);
  });

  it('gives a released admission’s place in the limits back, and takes it no more', async () => {
    const a = make(new ScriptedChat({ pieces: ['ok'] }), {
      userLimit: { limit: 1, windowMs: 60_000 },
      addressLimit: { limit: 1, windowMs: 60_000 },
      maxWaitingPerRoom: 10,
    });
    const req = await request({ address: '203.0.113.9' });
    const first = a.admit(req);
    expect(() => a.admit(req)).toThrow(expect.objectContaining({ code: 'ERR_RATE_LIMITED' }));
    a.release(first);
    a.release(first);
    const second = a.admit(req);
    // A released admission is no admission: its ask is counted (and refused) like any other.
    expect(() => a.ask(req, first)).toThrow(expect.objectContaining({ code: 'ERR_RATE_LIMITED' }));
    await a.ask(req, second).done;
  });

  it('limits asks per client address across the identities it uses', async () => {
    const a = make(new ScriptedChat({ pieces: ['ok'] }), { addressLimit: { limit: 2, windowMs: 60_000 }, maxWaitingPerRoom: 10 });
    const dones = [
      a.ask(await request({ asker: { id: 'x1', name: 'X' }, address: '203.0.113.9' })).done,
      a.ask(await request({ roomId: 'news_2', asker: { id: 'x2', name: 'Y' }, address: '203.0.113.9' })).done,
    ];
    const third = await request({ asker: { id: 'x3', name: 'Z' }, address: '203.0.113.9' });
    expect(() => a.ask(third)).toThrow(expect.objectContaining({ code: 'ERR_RATE_LIMITED', message: expect.stringContaining('address') }));
    dones.push(a.ask(await request({ asker: { id: 'x3', name: 'Z' }, address: '203.0.113.10' })).done);
    await Promise.all(dones);
  });

  it('names the limit that refused an ask, whose it is and the seconds until a place comes free', async () => {
    const a = make(new ScriptedChat({ pieces: ['ok'] }), {
      userLimit: { limit: 2, windowMs: 60_000 },
      roomLimit: { limit: 3, windowMs: 10_000 },
      maxWaitingPerRoom: 10,
    });
    const req = await request();
    vi.useFakeTimers({ toFake: ['Date'], now: 1_000_000 });
    try {
      const dones = [a.ask(req).done];
      vi.setSystemTime(1_020_000);
      dones.push(a.ask(req).done);
      vi.setSystemTime(1_030_500);
      const refusal = (of = req): SalonError => {
        try {
          a.admit(of);
        } catch (err) {
          return err as SalonError;
        }
        throw new Error('the ask was admitted');
      };
      // The first ask leaves the member's minute at 1,060,000: 29.5 s from now, told as 30.
      expect(refusal()).toMatchObject({
        code: 'ERR_RATE_LIMITED',
        message: 'Slow down: the assistant takes 2 questions a minute from each member; ask again in 30 s',
        retryAfterMs: 29_500,
      });
      vi.setSystemTime(1_060_000);
      for (const id of ['u2', 'u3', 'u4']) dones.push(a.ask(await request({ asker: { id, name: id } })).done);
      expect(refusal(await request({ asker: { id: 'u5', name: 'u5' } }))).toMatchObject({
        message: 'Slow down: the assistant takes 3 questions every 10 s from each room; ask again in 10 s',
        retryAfterMs: 10_000,
      });
      await Promise.all(dones);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('background work while an answer is prepared', () => {
  /** A ForegroundHolds that records, at each of the model's calls, how many holds were on. */
  function recordingHolds() {
    const holds = { on: 0, taken: 0 };
    return {
      holds,
      background: {
        hold() {
          holds.on++;
          holds.taken++;
          let released = false;
          return () => {
            if (!released) holds.on--;
            released = true;
          };
        },
      },
    };
  }

  it('holds it from the ask until the prompt is ready, and lets it go before the model writes', async () => {
    const { holds, background } = recordingHolds();
    const seen: Record<string, number> = {};
    const chat = new ScriptedChat({ pieces: () => ((seen.stream = holds.on), ['An ', 'answer ', '[1].']) });
    const search = new MemorySearch(store, new LocalEmbedder());
    const searchRefs = search.searchChunkRefsMany.bind(search);
    search.searchChunkRefsMany = async (queries, options) => ((seen.search = holds.on), searchRefs(queries, options));
    const a = make(chat, { background, search, resolveRoom: async (id) => ((seen.room = holds.on), { id, title: `Room ${id}`, context: '' }) });
    await a.ask(await request()).done;
    expect(seen).toEqual({ room: 1, search: 1, stream: 0 });
    expect(holds).toEqual({ on: 0, taken: 1 });
  });

  it('lets it go when the answer fails while being prepared, and when the model fails', async () => {
    const { holds, background } = recordingHolds();
    const chat = new ScriptedChat({ pieces: ['half ', 'an answer'], failAfter: 1 });
    const a = make(chat, { background });
    await expect(a.ask(await request({ roomId: 'nowhere' })).done).rejects.toMatchObject({ code: 'ERR_ROOM_NOT_FOUND' });
    await expect(a.ask(await request({ clientId: 'c2' })).done).rejects.toMatchObject({ code: 'ERR_ASSISTANT_FAILED' });
    expect(holds).toEqual({ on: 0, taken: 2 });
  });
});

describe('failures', () => {
  it('gives the room an error when the model fails, and answers the next ask', async () => {
    const chat = new ScriptedChat({ pieces: ['half ', 'an ', 'answer'], failAfter: 2 });
    const a = make(chat);
    const failed = a.ask(await request({ questionId: 'm_q', questionSeq: 7 }));
    await expect(failed.done).rejects.toMatchObject({ code: 'ERR_ASSISTANT_FAILED' });
    const [error] = outlet.ofType('error');
    expect(error).toMatchObject({ code: 'ERR_ASSISTANT_FAILED', clientId: 'c1' });
    expect(error.message).not.toContain('exploded');
    // The frame names the question's clientId; the rooms core is told beside it which answer it ends
    // (a catch-up lets it through as it lets that answer's pieces through), as for every frame of it.
    expect(outlet.frames.every((f) => f.frame.type === 'assistant.done' || f.tag?.answer === failed.id)).toBe(true);
    expect(outlet.frames.find((f) => f.frame.type === 'error')?.tag).toEqual({ answer: failed.id, questionSeq: 7 });
    expect(a.pending('news_1')).toEqual([]);
    expect(await store.recentMessages('news_1', 5)).toEqual([]);

    chat.options = { pieces: ['fine ', 'now'] };
    const next = await a.ask(await request({ clientId: 'c2' })).done;
    expect(next.message.text).toBe('fine now');
  });

  it('passes catalogued AI errors through and times out a hung model', async () => {
    // The scripted model ignores its abort signal while it waits: the answer must not wait with it.
    const a = make(new ScriptedChat({ pieces: ['never'], pieceDelayMs: 20_000 }), { answerTimeoutMs: 100 });
    const hang = new Promise((resolve) => setTimeout(resolve, 5000, 'still waiting'));
    await expect(Promise.race([a.ask(await request()).done, hang])).rejects.toMatchObject({ code: 'ERR_AI_TIMEOUT' });
    expect(outlet.ofType('error')[0]).toMatchObject({ code: 'ERR_AI_TIMEOUT' });
  });

  it('keeps at most ANSWER_MAX_CHARS of a model that never stops, and stops it there', async () => {
    let stopped = false;
    let streamed = 0;
    class EndlessChat extends ScriptedChat {
      override async *stream(_messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
        try {
          for (;;) {
            await new Promise((r) => setImmediate(r));
            signal?.throwIfAborted();
            streamed++;
            yield 'é'.repeat(999) + ' ';
          }
        } finally {
          stopped = true;
        }
      }
    }
    const a = make(new EndlessChat(), { answerTimeoutMs: 20_000 });
    const { message } = await a.ask(await request()).done;
    expect(message.text.length).toBeLessThanOrEqual(ANSWER_MAX_CHARS);
    expect(message.text.length).toBeGreaterThan(ANSWER_MAX_CHARS - 1000);
    expect(stopped).toBe(true);
    expect(streamed).toBe(Math.ceil(ANSWER_MAX_CHARS / 1000));
    const sent = outlet
      .ofType('assistant.delta')
      .map((d) => d.text)
      .join('');
    expect(sent.trim()).toBe(message.text);
    expect((await store.recentMessages('news_1', 5)).at(-1)?.text).toBe(message.text);
  });

  it('stops the model at ANSWER_MAX_CHARS when the cut falls inside a character (a base letter and its mark)', async () => {
    let stopped = false;
    class MarkedChat extends ScriptedChat {
      override async *stream(_messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
        try {
          yield 'a'.repeat(ANSWER_MAX_CHARS - 1);
          for (;;) {
            await new Promise((r) => setImmediate(r));
            signal?.throwIfAborted();
            yield 'e\u0301';
          }
        } finally {
          stopped = true;
        }
      }
    }
    const a = make(new MarkedChat(), { answerTimeoutMs: 20_000 });
    const { message } = await a.ask(await request()).done;
    expect(message.text).toBe('a'.repeat(ANSWER_MAX_CHARS - 1));
    expect(stopped).toBe(true);
  });

  it('answers with half a surrogate pair made U+FFFD, as the history reads it back, and keeps a pair split between pieces', async () => {
    const a = make(new ScriptedChat({ pieces: ['A lone \ud83d', ' half; a split pair \ud83d', '\ude00.'] }));
    const { message } = await a.ask(await request()).done;
    expect(message.text).toBe('A lone \ufffd half; a split pair \u{1f600}.');
    expect((await store.recentMessages('news_1', 5)).at(-1)?.text).toBe(message.text);
  });

  it('abstains without calling the model when nothing it found has text for the prompt (an item with only a title)', async () => {
    const title = 'Meridian stablecoin loses its dollar peg';
    for (const id of ['news_1', 'news_2']) await store.deleteItem(id);
    await store.upsertItem(item('news_9', { title, body: '', description: '' }));
    await store.replaceChunks('news_9', [{ ord: 0, part: 'body', text: title }]);
    const chat = new ScriptedChat({ pieces: ['Meridian collapsed because of a bank run [1].'] });
    const a = make(chat);
    const result = await a.ask(await request({ roomId: 'news_9', text: 'Why did the Meridian stablecoin lose its peg?' })).done;
    expect(chat.streamed).toEqual([]);
    expect(result).toMatchObject({ abstained: true, sources: [], message: { text: ABSTAIN_TEXT } });
    expect(outlet.ofType('assistant.done')[0]).toMatchObject({ abstained: true });
  });

  it('shows no citation of a source the model was not given', async () => {
    const a = make(new ScriptedChat({ pieces: ['It shipped a new edition [1][7]. ', 'Lava came [2, 9] as foretold [9].'] }));
    const result = await a.ask(await request()).done;
    expect(result.sources.map((s) => s.n)).toEqual([1, 2]);
    expect(result.message.text).toBe('It shipped a new edition [1]. Lava came [2] as foretold.');
    expect(outlet.ofType('assistant.done')[0].message.text).toBe(result.message.text);
    expect((await store.recentMessages('news_1', 1))[0].text).toBe(result.message.text);
  });

  it('takes a decline with a citation marker for the abstention it is', async () => {
    const a = make(new ScriptedChat({ pieces: [`${NOT_COVERED.slice(0, -1)} `, '[1].'] }));
    const result = await a.ask(await request()).done;
    expect(result).toMatchObject({ abstained: true, sources: [], message: { text: NOT_COVERED } });
  });

  it('reports an unknown room as ERR_ROOM_NOT_FOUND', async () => {
    const a = make(new ScriptedChat());
    await expect(a.ask({ roomId: 'nowhere', threadId: 't', text: 'q', asker: { id: 'u', name: 'u' } }).done).rejects.toMatchObject({
      code: 'ERR_ROOM_NOT_FOUND',
    });
  });

  it('validates its options by name', () => {
    expect(() => make(new ScriptedChat(), { answerTimeoutMs: 0 })).toThrow(/answerTimeoutMs/);
    expect(() => make(new ScriptedChat(), { userLimit: { limit: 0, windowMs: 1 } })).toThrow(/userLimit/);
    expect(() => make(new ScriptedChat(), { queue: { concurrency: 0 } })).toThrow(/concurrency/);
  });
});

async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A model whose answers wait until `open` is called; `started` counts the answers it began. */
class GatedChat extends ScriptedChat {
  started = 0;
  private readonly gate: Promise<void>;
  open!: () => void;
  constructor() {
    super({ pieces: ['ok'] });
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  override async *stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
    this.started++;
    await this.gate;
    yield* super.stream(messages, signal);
  }
}
