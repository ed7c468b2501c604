/** The assistant hook: asks reach a RoomAssistant, answers come back through the RoomOutlet. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../src/errors.js';
import type { AskAdmission, AskRequest, AskResult, PendingAnswer, RoomAssistant, RoomOutlet } from '../../src/rooms/types.js';
import { ROOM, joined, listen, member, roomsApp, until } from './helpers.js';

/** Records asks; answers when the test says so, through the attached outlet. */
class FakeAssistant implements RoomAssistant {
  asks: AskRequest[] = [];
  outlet: RoomOutlet | null = null;
  pendingAnswers: PendingAnswer[] = [];
  refuse: Error | null = null;

  ask(request: AskRequest) {
    if (this.refuse) throw this.refuse;
    this.asks.push(request);
    return { id: `ans_${this.asks.length}`, position: 0, done: new Promise<AskResult>(() => {}) };
  }
  pending(): PendingAnswer[] {
    return this.pendingAnswers;
  }
  attach(outlet: RoomOutlet): void {
    this.outlet = outlet;
  }
  async close(): Promise<void> {}
}

describe('room assistant hook', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  let fake: FakeAssistant;
  beforeEach(async () => {
    fake = new FakeAssistant();
    ({ app, close } = await roomsApp({}, { assistant: fake }));
  });
  afterEach(async () => close());

  it('is attached to the rooms outlet when the app is ready', () => {
    expect(fake.outlet).toBe(app.salon.rooms);
  });

  it('posts "@ai …" and "/ask …" as messages, then asks with the question alone', async () => {
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'Ben');
    a.client.send({ type: 'say', text: '@ai what changed in Rust?', clientId: 'q1' });
    const posted = (await b.client.next('message')).message;
    expect(posted.text).toBe('@ai what changed in Rust?');
    a.client.send({ type: 'say', text: '/ask and why?', clientId: 'q2' });
    const second = (await b.client.next('message')).message;
    expect(fake.asks).toEqual([
      {
        roomId: ROOM,
        threadId: a.welcome.threadId,
        text: 'what changed in Rust?',
        asker: { id: a.welcome.you.id, name: 'Ana' },
        address: expect.any(String),
        clientId: 'q1',
        private: false,
        questionId: posted.id,
        questionSeq: posted.seq,
      },
      {
        roomId: ROOM,
        threadId: a.welcome.threadId,
        text: 'and why?',
        asker: { id: a.welcome.you.id, name: 'Ana' },
        address: expect.any(String),
        clientId: 'q2',
        private: false,
        questionId: second.id,
        questionSeq: second.seq,
      },
    ]);
  });

  it('posts an ask frame for everyone, but keeps a private ask out of the room', async () => {
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'Ben');
    a.client.send({ type: 'ask', text: 'secret?', clientId: 'p1', private: true });
    a.client.send({ type: 'ask', text: 'public?', clientId: 'p2' });
    expect((await b.client.next('message')).message.text).toBe('@ai public?');
    expect(fake.asks.map((r) => [r.text, r.private])).toEqual([
      ['secret?', true],
      ['public?', false],
    ]);
    expect(fake.asks[0].questionId).toBeUndefined();
    expect(b.client.all('message')).toHaveLength(1);
  });

  it('does not ask again for a resent clientId', async () => {
    const a = await joined(app, 'Ana');
    a.client.send({ type: 'say', text: '@ai once', clientId: 'same' });
    const first = (await a.client.next('message')).message;
    a.client.send({ type: 'say', text: '@ai once', clientId: 'same' });
    expect((await a.client.next('message')).message).toEqual(first);
    expect(fake.asks).toHaveLength(1);
  });

  it('refuses an empty question without posting it', async () => {
    const a = await joined(app, 'Ana');
    a.client.send({ type: 'say', text: '@ai   ', clientId: 'e' });
    expect(await a.client.next('error')).toMatchObject({ code: 'ERR_BAD_MESSAGE', clientId: 'e' });
    expect(fake.asks).toEqual([]);
    expect(await app.salon.store.lastSeq(ROOM)).toBe(0);
  });

  it('sends a refused ask back to the asker alone, with its code and clientId', async () => {
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'Ben');
    fake.refuse = new errors.ERR_ASSISTANT_BUSY();
    a.client.send({ type: 'say', text: '@ai busy?', clientId: 'r1' });
    expect(await a.client.next('error')).toMatchObject({ code: 'ERR_ASSISTANT_BUSY', clientId: 'r1' });
    fake.refuse = new errors.ERR_RATE_LIMITED('one question at a time');
    a.client.send({ type: 'ask', text: 'again?', clientId: 'r2' });
    expect(await a.client.next('error')).toMatchObject({ code: 'ERR_RATE_LIMITED', clientId: 'r2' });
    fake.refuse = new Error('kaboom');
    a.client.send({ type: 'ask', text: 'third?', clientId: 'r3' });
    const failed = await a.client.next('error');
    expect(failed).toMatchObject({ code: 'ERR_ASSISTANT_FAILED', clientId: 'r3' });
    expect(failed.message).not.toContain('kaboom');
    await b.client.next('message', (f) => f.message.clientId === 'r3');
    expect(b.client.all('error')).toEqual([]);
  });

  it('streams answers through the outlet; a done answer joins the history of later joiners', async () => {
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'Ben');
    const outlet = fake.outlet!;
    outlet.broadcast(ROOM, { type: 'assistant.progress', id: 'x', stage: 'searching' });
    outlet.broadcast(ROOM, { type: 'assistant.delta', id: 'x', text: 'Rust ' });
    const { message } = await app.salon.store.appendMessage({
      roomId: ROOM,
      threadId: a.welcome.threadId,
      author: { id: 'assistant', name: 'Assistant', kind: 'assistant' },
      text: 'Rust 2.0 [1]',
      sources: [],
    });
    outlet.broadcast(ROOM, { type: 'assistant.done', message });
    for (const c of [a.client, b.client]) {
      expect((await c.next('assistant.progress')).stage).toBe('searching');
      expect((await c.next('assistant.delta')).text).toBe('Rust ');
      expect((await c.next('assistant.done')).message).toEqual(message);
    }
    const late = await joined(app, 'Cy');
    expect(late.welcome.history).toEqual([message]);
    expect(late.welcome.seq).toBe(message.seq);

    outlet.sendToUser(ROOM, a.welcome.you.id, { type: 'error', code: 'ERR_ASSISTANT_FAILED', message: 'only for Ana' });
    expect((await a.client.next('error')).message).toBe('only for Ana');
    b.client.send({ type: 'ping' });
    await b.client.next('pong');
    expect(b.client.all('error')).toEqual([]);
  });

  it('puts answers being written into the welcome', async () => {
    fake.pendingAnswers = [{ id: 'ans_9', stage: 'writing', text: 'So far' }];
    expect((await joined(app, 'Ana')).welcome.pending).toEqual(fake.pendingAnswers);
  });
});

/** A FakeAssistant that admits before the question is posted, as the RAG assistant does. */
class AdmittingAssistant extends FakeAssistant {
  refuseAdmission: Error | null = null;
  admitted: AskAdmission[] = [];
  released: AskAdmission[] = [];
  askedWith: (AskAdmission | undefined)[] = [];

  admit(request: AskRequest): AskAdmission {
    if (this.refuseAdmission) throw this.refuseAdmission;
    const admission = { roomId: request.roomId };
    this.admitted.push(admission);
    return admission;
  }
  release(admission: AskAdmission): void {
    this.released.push(admission);
  }
  override ask(request: AskRequest, admission?: AskAdmission) {
    this.askedWith.push(admission);
    return super.ask(request);
  }
}

describe('asks the assistant refuses', () => {
  /** The questions (`@ai …` messages) stored in the room. */
  async function storedQuestions(app: FastifyInstance): Promise<string[]> {
    return (await app.salon.store.recentMessages(ROOM, 100)).filter((m) => m.text.startsWith('@ai ')).map((m) => m.text);
  }

  it('are refused past a member’s limit before their question is posted, for say and ask frames alike', async () => {
    const { app, close } = await roomsApp({ ASK_LIMIT_USER: '2' });
    try {
      const a = await joined(app, 'Ana');
      const b = await joined(app, 'Ben');
      a.client.send({ type: 'say', text: '@ai first?', clientId: 'q1' });
      a.client.send({ type: 'say', text: '@ai second?', clientId: 'q2' });
      a.client.send({ type: 'say', text: '@ai third?', clientId: 'q3' });
      a.client.send({ type: 'ask', text: 'fourth?', clientId: 'q4' });
      a.client.send({ type: 'say', text: 'plain', clientId: 'p1' });
      expect(await a.client.next('error')).toMatchObject({ code: 'ERR_RATE_LIMITED', clientId: 'q3' });
      expect(await a.client.next('error')).toMatchObject({ code: 'ERR_RATE_LIMITED', clientId: 'q4' });
      const seen = [];
      for (let i = 0; i < 3; i++) seen.push((await b.client.next('message')).message.text);
      expect(seen).toEqual(['@ai first?', '@ai second?', 'plain']);
      expect(await storedQuestions(app)).toEqual(['@ai first?', '@ai second?']);
      // A resend of a posted question still gets its original, the limits spent or not.
      a.client.send({ type: 'say', text: '@ai first?', clientId: 'q1' });
      const resent = await a.client.next('message', (f) => f.message.clientId === 'q1');
      expect(resent.message.seq).toBe(1);
      expect(a.client.all('error')).toHaveLength(2);
    } finally {
      await close();
    }
  });

  it('are refused when the assistant is busy before their question is posted, and admitted ones are asked with their admission', async () => {
    const fake = new AdmittingAssistant();
    const { app, close } = await roomsApp({}, { assistant: fake });
    try {
      const a = await joined(app, 'Ana');
      const b = await joined(app, 'Ben');
      fake.refuseAdmission = new errors.ERR_ASSISTANT_BUSY();
      a.client.send({ type: 'say', text: '@ai busy?', clientId: 'r1' });
      a.client.send({ type: 'ask', text: 'still busy?', clientId: 'r2' });
      expect(await a.client.next('error')).toMatchObject({ code: 'ERR_ASSISTANT_BUSY', clientId: 'r1' });
      expect(await a.client.next('error')).toMatchObject({ code: 'ERR_ASSISTANT_BUSY', clientId: 'r2' });
      fake.refuseAdmission = new Error('kaboom');
      a.client.send({ type: 'say', text: '@ai broken?', clientId: 'r3' });
      const failed = await a.client.next('error');
      expect(failed).toMatchObject({ code: 'ERR_ASSISTANT_FAILED', clientId: 'r3' });
      expect(failed.message).not.toContain('kaboom');
      fake.refuseAdmission = null;
      a.client.send({ type: 'say', text: '@ai now?', clientId: 'r4' });
      expect((await b.client.next('message')).message.text).toBe('@ai now?');
      expect(await storedQuestions(app)).toEqual(['@ai now?']);
      expect(fake.asks.map((r) => r.clientId)).toEqual(['r4']);
      expect(fake.askedWith).toEqual([fake.admitted[0]]);
      expect(b.client.all('error')).toEqual([]);
    } finally {
      await close();
    }
  });

  it('give their admission back when the question turns out a resend, or cannot be stored', async () => {
    const fake = new AdmittingAssistant();
    const { app, close } = await roomsApp({}, { assistant: fake, roomOptions: { historySize: 1 } });
    try {
      const a = await joined(app, 'Ana');
      a.client.send({ type: 'say', text: '@ai once?', clientId: 'q1' });
      await a.client.next('message', (f) => f.message.clientId === 'q1');
      a.client.send({ type: 'say', text: 'pushes the question out of memory', clientId: 'p1' });
      await a.client.next('message', (f) => f.message.clientId === 'p1');
      a.client.send({ type: 'say', text: '@ai once?', clientId: 'q1' });
      expect((await a.client.next('message', (f) => f.message.clientId === 'q1')).message.seq).toBe(1);
      expect(fake.released).toEqual([fake.admitted[1]]);

      const { store } = app.salon;
      const append = store.appendMessage.bind(store);
      store.appendMessage = async () => {
        throw new Error('disk full');
      };
      a.client.send({ type: 'say', text: '@ai lost?', clientId: 'q2' });
      expect(await a.client.next('error')).toMatchObject({ code: 'ERR_INTERNAL', clientId: 'q2' });
      store.appendMessage = append;
      expect(fake.released).toEqual([fake.admitted[1], fake.admitted[2]]);
      expect(fake.asks.map((r) => r.clientId)).toEqual(['q1']);
    } finally {
      await close();
    }
  });
});

describe('a question whose asker leaves while it is being stored', () => {
  it('is asked with its admission all the same: its place in the limits is neither kept nor lost', async () => {
    const fake = new AdmittingAssistant();
    const { app, close } = await roomsApp({}, { assistant: fake });
    const { store } = app.salon;
    const append = store.appendMessage.bind(store);
    try {
      // Real sockets: an injected one never tells the server it closed.
      const url = await listen(app);
      const a = await member(url(), 'Ana');
      const b = await member(url(), 'Ben');
      let open!: () => void;
      const stored = new Promise<void>((resolve) => (open = resolve));
      let appending = 0;
      store.appendMessage = async (m) => {
        appending++;
        await stored;
        return append(m);
      };
      a.client.send({ type: 'say', text: '@ai still there?', clientId: 'q1' });
      await until(() => appending === 1);
      // Admitted and on its way to the store when Ana's socket closes.
      expect(fake.admitted).toHaveLength(1);
      a.client.close();
      await b.client.next('presence', (f) => f.members.every((m: { id: string }) => m.id !== a.welcome.you.id));
      open();
      expect((await b.client.next('message')).message.text).toBe('@ai still there?');
      // The admission is taken by its ask or given back; the old code did neither (ERR_NOT_JOINED after the post).
      await until(() => fake.askedWith.length + fake.released.length > 0);
      expect(fake.askedWith).toEqual([fake.admitted[0]]);
      expect(fake.released).toEqual([]);
      expect(fake.asks.map((r) => [r.clientId, r.asker.name, r.questionId !== undefined])).toEqual([['q1', 'Ana', true]]);
    } finally {
      store.appendMessage = append;
      await close();
    }
  });
});

describe('slash commands', () => {
  it('answers other commands to the sender alone with a system message that is not stored', async () => {
    const { app, close } = await roomsApp();
    try {
      const a = await joined(app, 'Ana');
      const b = await joined(app, 'Ben');
      a.client.send({ type: 'say', text: '/nosuch', clientId: 's1' });
      const reply = (await a.client.next('message')).message;
      expect(reply).toMatchObject({ seq: 0, roomId: ROOM, clientId: 's1', author: { kind: 'system' } });
      expect(reply.text).toContain('Unknown command /nosuch');
      expect(reply.text).toContain('/ask <question>');
      expect(reply.text).toContain('/thread new <title>');
      a.client.send({ type: 'say', text: '/help', clientId: 's2' });
      expect((await a.client.next('message')).message.text).toMatch(/^Available commands/);

      app.salon.rooms!.commands.register({ name: 'echo', usage: '/echo <text>', summary: 'repeat', run: async (ctx) => `${ctx.user.name}: ${ctx.args}` });
      a.client.send({ type: 'say', text: '/echo  hi there ', clientId: 's3' });
      expect((await a.client.next('message')).message.text).toBe('Ana: hi there');
      app.salon.rooms!.commands.register({
        name: 'fail',
        usage: '/fail',
        summary: 'fails',
        run: async () => {
          throw new errors.ERR_BAD_MESSAGE('nope');
        },
      });
      a.client.send({ type: 'say', text: '/fail', clientId: 's4' });
      expect(await a.client.next('error')).toMatchObject({ code: 'ERR_BAD_MESSAGE', clientId: 's4' });

      a.client.send({ type: 'say', text: '/r/programming is fun', clientId: 's5' });
      expect((await b.client.next('message')).message.text).toBe('/r/programming is fun');
      expect(b.client.all('message')).toHaveLength(1);
      expect(await app.salon.store.lastSeq(ROOM)).toBe(1);
    } finally {
      await close();
    }
  });
});
