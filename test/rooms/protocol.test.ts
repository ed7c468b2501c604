/** The room protocol over app.injectWS: joining, identity, names, history, replay, idempotency, errors. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { topicSummaryKey } from '../../src/rooms/types.js';
import { MAX_MERGE_HOPS } from '../../src/store/thread-survivor.js';
import { OTHER_ROOM, ROOM, inject, joined, roomsApp } from './helpers.js';
import { createThread } from '../store/new-thread.js';

describe('room protocol', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ app, close } = await roomsApp());
  });
  afterEach(async () => close());

  it('welcomes with identity, room info, main thread, empty history and members', async () => {
    const { welcome } = await joined(app, '  Ana ');
    expect(welcome.you.name).toBe('Ana');
    expect(welcome.you.id).toMatch(/^u_/);
    expect(welcome.you.token).toContain(welcome.you.id);
    expect(welcome.room).toEqual({
      id: ROOM,
      kind: 'news',
      title: 'Rust 2.0 released',
      url: 'https://example.com/news_1',
      context: 'Rust 2.0 released\n\nThe Rust team shipped a new edition.',
    });
    expect(welcome.threadId).toBe((await app.salon.store.ensureMainThread(ROOM)).id);
    expect(welcome.history).toEqual([]);
    expect(welcome.members).toEqual([{ id: welcome.you.id, name: 'Ana' }]);
    expect(welcome.memberCount).toBe(1);
    expect(welcome.seq).toBe(0);
  });

  it('keeps room context within 2000 characters', async () => {
    await app.salon.store.upsertItem({ ...(await app.salon.store.getItem('video_3'))!, description: 'word '.repeat(1000) });
    const { welcome } = await joined(app, 'Ana', 'video_3');
    expect(welcome.room.context.length).toBeLessThanOrEqual(2000);
    expect(welcome.room.context.startsWith('Compilers in 10 minutes\n\nword word')).toBe(true);
  });

  it('lets two users see each other’s messages and the join', async () => {
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'Ben');
    const seen = await a.client.next('presence', (f) => f.joined?.id === b.welcome.you.id);
    expect(seen.members.map((m: { name: string }) => m.name)).toEqual(['Ana', 'Ben']);
    expect(seen.count).toBe(2);
    expect(b.welcome.members.map((m: { name: string }) => m.name)).toEqual(['Ana', 'Ben']);

    b.client.send({ type: 'say', text: 'hello Ana', clientId: 'b1' });
    const atA = await a.client.next('message');
    const atB = await b.client.next('message');
    expect(atA.message).toEqual(atB.message);
    expect(atA.message).toMatchObject({
      seq: 1,
      roomId: ROOM,
      threadId: b.welcome.threadId,
      text: 'hello Ana',
      clientId: 'b1',
      author: { id: b.welcome.you.id, name: 'Ben', kind: 'user' },
    });
    expect(await app.salon.store.lastSeq(ROOM)).toBe(1);
  });

  it('keeps rooms apart', async () => {
    const a = await joined(app, 'Ana', ROOM);
    const b = await joined(app, 'Ben', OTHER_ROOM);
    a.client.send({ type: 'say', text: 'only news', clientId: 'a1' });
    await a.client.next('message');
    b.client.send({ type: 'say', text: 'only post', clientId: 'b1' });
    expect((await b.client.next('message')).message.text).toBe('only post');
    expect(a.client.all('message')).toHaveLength(1);
  });

  it('rejects an unknown room with 4404 after hello', async () => {
    for (const id of ['news_404', 'topic_nope', 'nonsense', 'news_bad id']) {
      const c = await inject(app, encodeURIComponent(id));
      c.send({ type: 'hello', name: 'Ana' });
      expect((await c.next('error')).code).toBe('ERR_ROOM_NOT_FOUND');
      expect((await c.closed).code).toBe(CloseCode.ROOM_NOT_FOUND);
    }
  });

  it('opens topic rooms for stored categories, with the generated summary when there is one', async () => {
    const { welcome } = await joined(app, 'Ana', 'topic_tech');
    expect(welcome.room).toMatchObject({ id: 'topic_tech', kind: 'topic', title: 'Topic: Tech', url: null });
    expect(welcome.room.context.startsWith('Topic: Tech\n\n')).toBe(true);

    await app.salon.topics?.idle();
    const summary = { category: 'Science', summary: 'Light scatters.', itemIds: ['post_2'], updatedAt: new Date().toISOString() };
    await app.salon.store.setMeta(topicSummaryKey('science'), JSON.stringify(summary));
    const s = await joined(app, 'Ana', 'topic_science');
    expect(s.welcome.room.context).toBe('Topic: Science\n\nLight scatters.');
  });

  it('keeps the identity of a returning token and refuses forged ones with 4401', async () => {
    const first = await joined(app, 'Ana');
    const again = await joined(app, 'Ana', OTHER_ROOM, { token: first.welcome.you.token });
    expect(again.welcome.you).toMatchObject({ id: first.welcome.you.id, name: first.welcome.you.name });

    const [prefix, id, at, sig] = first.welcome.you.token.split('.');
    const forged = [`${prefix}.u_AAAAAAAAAAAAAAAA.${at}.${sig}`, `${prefix}.${id}.${at}.${sig.slice(0, -2)}xx`, 'garbage', `${prefix}.${id}.${at}`];
    for (const token of forged) {
      const c = await inject(app);
      c.send({ type: 'hello', name: 'Eve', token });
      expect((await c.next('error')).code).toBe('ERR_BAD_TOKEN');
      expect((await c.closed).code).toBe(CloseCode.BAD_TOKEN);
    }
  });

  it('suffixes a name another member already uses, but not the same user in a second tab', async () => {
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'ana');
    const c = await joined(app, 'Ana');
    expect(b.welcome.you.name).toBe('ana (2)');
    expect(c.welcome.you.name).toBe('Ana (3)');
    const tab = await joined(app, 'Ana', ROOM, { token: a.welcome.you.token });
    expect(tab.welcome.you).toMatchObject({ id: a.welcome.you.id, name: a.welcome.you.name });
    expect(tab.welcome.members).toHaveLength(3);
  });

  it('renames a member when another tab (or a reconnect) asks for a new name', async () => {
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'Ben');
    const renamed = await joined(app, 'ben', ROOM, { token: a.welcome.you.token });
    expect(renamed.welcome.you).toMatchObject({ id: a.welcome.you.id, name: 'ben (2)' });
    const p = await b.client.next('presence', (f) => f.members.some((m: { name: string }) => m.name === 'ben (2)'));
    expect(p.count).toBe(2);
    a.client.send({ type: 'say', text: 'from my first tab', clientId: 'r' });
    expect((await b.client.next('message')).message.author).toEqual({ id: a.welcome.you.id, name: 'ben (2)', kind: 'user' });
  });

  it('refuses bad names with ERR_BAD_MESSAGE and keeps the connection open', async () => {
    const c = await inject(app);
    for (const name of ['', '   ', 'x'.repeat(33), 'bad\u0007name', 'Ana\u202e', 42]) {
      c.send({ type: 'hello', name });
      expect((await c.next('error')).code).toBe('ERR_BAD_MESSAGE');
    }
    expect((await c.hello('x'.repeat(32))).you.name).toBe('x'.repeat(32));
  });

  it('answers bad frames with ERR_BAD_MESSAGE and stays open', async () => {
    const { client } = await joined(app, 'Ana');
    const bad = [
      '{not json',
      '[]',
      '"hi"',
      JSON.stringify({ type: 'shout' }),
      JSON.stringify({ text: 'x' }),
      JSON.stringify({ type: 'say', text: 'no id' }),
      JSON.stringify({ type: 'say', clientId: 'c1' }),
      JSON.stringify({ type: 'say', clientId: 'c2', text: '   ' }),
      JSON.stringify({ type: 'typing' }),
    ];
    for (const frame of bad) {
      client.send(frame);
      expect((await client.next('error')).code, frame).toBe('ERR_BAD_MESSAGE');
    }
    client.send({ type: 'hello', name: 'Ana' });
    expect((await client.next('error')).message).toMatch(/already joined/);
    client.send({ type: 'say', text: 'still here', clientId: 'ok' });
    expect((await client.next('message')).message.text).toBe('still here');
  });

  it('needs hello before anything but ping', async () => {
    const c = await inject(app);
    c.send({ type: 'ping' });
    await c.next('pong');
    c.send({ type: 'say', text: 'hi', clientId: 'early' });
    expect(await c.next('error')).toMatchObject({ code: 'ERR_NOT_JOINED', clientId: 'early' });
    c.send({ type: 'typing', active: true });
    expect((await c.next('error')).code).toBe('ERR_NOT_JOINED');
  });

  it('refuses text over 4000 characters with ERR_MESSAGE_TOO_LONG and the clientId', async () => {
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'Ben');
    a.client.send({ type: 'say', text: 'x'.repeat(4001), clientId: 'long' });
    expect(await a.client.next('error')).toMatchObject({ code: 'ERR_MESSAGE_TOO_LONG', clientId: 'long' });
    a.client.send({ type: 'say', text: 'y'.repeat(4000), clientId: 'max' });
    expect((await b.client.next('message')).message.clientId).toBe('max');
    // An ask is posted as `@ai <text>`: 3,996 characters of question make the longest message.
    a.client.send({ type: 'ask', text: 'z'.repeat(3997), clientId: 'ask-long' });
    expect(await a.client.next('error')).toMatchObject({ code: 'ERR_MESSAGE_TOO_LONG', clientId: 'ask-long' });
    a.client.send({ type: 'ask', text: 'z'.repeat(3996), clientId: 'ask-max' });
    const posted = (await b.client.next('message')).message;
    expect(posted).toMatchObject({ clientId: 'ask-max' });
    expect(posted.text).toHaveLength(4000);
  });

  it('returns the original message for a resent clientId, to the sender only', async () => {
    const a = await joined(app, 'Ana');
    const b = await joined(app, 'Ben');
    a.client.send({ type: 'say', text: 'once', clientId: 'same' });
    const original = (await a.client.next('message')).message;
    await b.client.next('message');
    a.client.send({ type: 'say', text: 'once', clientId: 'same' });
    expect((await a.client.next('message')).message).toEqual(original);
    a.client.send({ type: 'say', text: 'after', clientId: 'other' });
    expect((await b.client.next('message')).message.text).toBe('after');
    expect(b.client.all('message').map((f) => f.message.seq)).toEqual([1, 2]);
    expect(await app.salon.store.lastSeq(ROOM)).toBe(2);
  });

  it('refuses a message to a thread the room does not have with ERR_THREAD_NOT_FOUND, and tells the room its main thread was deleted', async () => {
    const a = await joined(app, 'Ana');
    a.client.send({ type: 'say', text: 'nowhere', clientId: 'lost', threadId: 'thr_never_was' });
    expect(await a.client.next('error')).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND', clientId: 'lost' });

    const oldMain = a.welcome.threadId;
    const deleted = await app.inject({ method: 'DELETE', url: `/api/v1/threads/${oldMain}`, headers: { authorization: 'Bearer test-admin-token' } });
    expect(deleted.statusCode).toBe(200);
    const told = (await a.client.next('message', (f) => f.message.author.kind === 'system')).message;
    expect(told).toMatchObject({ seq: 0, threadId: oldMain, text: '“Main” was deleted with its messages: a new main thread takes what is said next.' });
    expect(told.clientId).toBeUndefined();
    // A message naming the deleted main thread is refused as one naming any gone thread; one naming none goes to the new main thread.
    a.client.send({ type: 'say', text: 'to the old main', clientId: 'old', threadId: oldMain });
    expect(await a.client.next('error')).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND', clientId: 'old' });
    a.client.send({ type: 'say', text: 'to the main thread', clientId: 'main' });
    const posted = (await a.client.next('message', (f) => f.message.clientId === 'main')).message;
    expect(posted.threadId).toBe((await app.salon.store.ensureMainThread(ROOM)).id);
    expect(posted.threadId).not.toBe(oldMain);
  });

  it('sends a message naming a thread merged many times over to the survivor at the end of its merges', async () => {
    const { store } = app.salon;
    const a = await joined(app, 'Ana');
    // thr_c0 merged into thr_c1, that one into thr_c2, …, thr_c11 into the main thread: 12 merges.
    const chain = Array.from({ length: 12 }, (_, i) => `thr_c${i}`);
    for (const id of chain) await createThread(store, { id, roomId: ROOM, title: id }, 'admin');
    const survivor = a.welcome.threadId;
    const at = new Date().toISOString();
    const into = (i: number) => chain[i + 1] ?? survivor;
    for (const [i, id] of chain.entries()) await store.applyThreadChange({ at, expect: [], updateThreads: [{ id, status: 'archived', mergedInto: into(i) }] });
    a.client.send({ type: 'say', text: 'to the oldest shell', clientId: 'far', threadId: 'thr_c0' });
    const posted = (await a.client.next('message', (f) => f.message.clientId === 'far')).message;
    expect(posted.threadId).toBe(survivor);
    expect((await store.threadMessages(survivor, 10)).map((m) => m.text)).toEqual(['to the oldest shell']);
  });

  it('refuses a message to a thread archived without a merge, storing nothing, and the socket goes on', async () => {
    const { store } = app.salon;
    const a = await joined(app, 'Ana');
    await createThread(store, { id: 'thr_shut', roomId: ROOM, title: 'Shut' }, 'admin');
    a.client.send({ type: 'say', text: 'while it is active', clientId: 'before', threadId: 'thr_shut' });
    await a.client.next('message', (f) => f.message.clientId === 'before');
    // No thread operation archives a thread without merging it; only a write to the store can.
    await store.applyThreadChange({ at: new Date().toISOString(), expect: [], updateThreads: [{ id: 'thr_shut', status: 'archived' }] });
    a.client.send({ type: 'say', text: 'into the shell', clientId: 'after', threadId: 'thr_shut' });
    expect(await a.client.next('error')).toMatchObject({ code: 'ERR_THREAD_ARCHIVED', clientId: 'after' });
    a.client.send({ type: 'ask', text: 'anyone here?', clientId: 'asked', threadId: 'thr_shut' });
    expect(await a.client.next('error', (f) => f.clientId === 'asked')).toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
    expect((await store.threadMessages('thr_shut', 10)).map((m) => m.text)).toEqual(['while it is active']);
    a.client.send({ type: 'say', text: 'to the main thread', clientId: 'main' });
    expect((await a.client.next('message', (f) => f.message.clientId === 'main')).message.seq).toBe(2);
  });

  it('refuses a message naming a thread it never resolved that leads to no active thread with the store’s ERR_THREAD_ARCHIVED', async () => {
    const { store } = app.salon;
    const main = (await store.ensureMainThread(ROOM)).id;
    // Archived before any member named it: the room resolves it itself, without asking the store to append.
    await createThread(store, { id: 'thr_closed', roomId: ROOM, title: 'Closed' }, 'admin');
    const at = new Date().toISOString();
    await store.applyThreadChange({ at, expect: [], updateThreads: [{ id: 'thr_closed', status: 'archived' }] });
    const chain = Array.from({ length: MAX_MERGE_HOPS + 1 }, (_, i) => `thr_far${i}`);
    for (const id of chain) await createThread(store, { id, roomId: ROOM, title: id }, 'admin');
    for (const [i, id] of chain.entries())
      await store.applyThreadChange({ at, expect: [], updateThreads: [{ id, status: 'archived', mergedInto: chain[i + 1] ?? main }] });
    // What the store says of a message for each (the HTTP import and an answer begun there hear it too).
    const storeSays = async (threadId: string) =>
      store.appendMessage({ roomId: ROOM, threadId, author: { id: 'u_x', name: 'X', kind: 'user' }, text: 'x' }).then(
        () => 'stored',
        (err: { code?: string }) => err.code,
      );
    expect([await storeSays('thr_closed'), await storeSays(chain[0])]).toEqual(['ERR_THREAD_ARCHIVED', 'ERR_THREAD_ARCHIVED']);

    const a = await joined(app, 'Ana');
    a.client.send({ type: 'say', text: 'into the closed one', clientId: 'closed', threadId: 'thr_closed' });
    expect(await a.client.next('error', (f) => f.clientId === 'closed')).toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
    a.client.send({ type: 'ask', text: 'anyone there?', clientId: 'closed-ask', threadId: 'thr_closed', private: true });
    expect(await a.client.next('error', (f) => f.clientId === 'closed-ask')).toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
    a.client.send({ type: 'say', text: 'too far down the merges', clientId: 'far', threadId: chain[0] });
    expect(await a.client.next('error', (f) => f.clientId === 'far')).toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
    // A thread the room does not have is still ERR_THREAD_NOT_FOUND; the socket goes on.
    a.client.send({ type: 'say', text: 'nowhere', clientId: 'none', threadId: 'thr_never_was' });
    expect(await a.client.next('error', (f) => f.clientId === 'none')).toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
    a.client.send({ type: 'say', text: 'to the main thread', clientId: 'main' });
    expect((await a.client.next('message', (f) => f.message.clientId === 'main')).message).toMatchObject({ threadId: main, seq: 1 });
    expect(await store.lastSeq(ROOM)).toBe(1);
  });

  it('replays exactly the messages after lastSeq', async () => {
    const a = await joined(app, 'Ana');
    for (let i = 1; i <= 5; i++) a.client.send({ type: 'say', text: `m${i}`, clientId: `c${i}` });
    await a.client.next('message', (f) => f.message.seq === 5);
    const token = a.welcome.you.token;
    const r1 = await joined(app, 'Ana', ROOM, { token, lastSeq: 2 });
    expect(r1.welcome.history.map((m: { seq: number }) => m.seq)).toEqual([3, 4, 5]);
    const r2 = await joined(app, 'Ana', ROOM, { token, lastSeq: 5 });
    expect(r2.welcome.history).toEqual([]);
    expect(r2.welcome.seq).toBe(5);
    a.client.send({ type: 'say', text: 'live', clientId: 'c6' });
    expect((await r2.client.next('message')).message.seq).toBe(6);
    expect(r2.client.all('message')).toHaveLength(1);
  });
});

describe('room protocol: longer histories', () => {
  it('welcomes with the last 20 messages, oldest first', async () => {
    const { app, close } = await roomsApp({}, { roomOptions: { rateBurst: 50 } });
    try {
      const a = await joined(app, 'Ana');
      for (let i = 1; i <= 25; i++) a.client.send({ type: 'say', text: `m${i}`, clientId: `c${i}` });
      await a.client.next('message', (f) => f.message.seq === 25);
      const { welcome } = await joined(app, 'Ben');
      expect(welcome.history.map((m: { text: string }) => m.text)).toEqual(Array.from({ length: 20 }, (_, i) => `m${i + 6}`));
      expect(welcome.seq).toBe(25);
    } finally {
      await close();
    }
  });

  it('reads missed messages from the store, and marks a replay cut at the limit', async () => {
    const { app, close } = await roomsApp({}, { roomOptions: { historySize: 3, replayLimit: 6, rateBurst: 50 } });
    try {
      const a = await joined(app, 'Ana');
      for (let i = 1; i <= 10; i++) a.client.send({ type: 'say', text: `m${i}`, clientId: `c${i}` });
      await a.client.next('message', (f) => f.message.seq === 10);
      const token = a.welcome.you.token;
      expect((await joined(app, 'Ana')).welcome.history.map((m: { seq: number }) => m.seq)).toEqual([8, 9, 10]);
      const r = await joined(app, 'Ana', ROOM, { token, lastSeq: 5 });
      expect(r.welcome.history.map((m: { seq: number }) => m.seq)).toEqual([6, 7, 8, 9, 10]);
      expect(r.welcome.truncated).toBeUndefined();
      const cut = await joined(app, 'Ana', ROOM, { token, lastSeq: 1 });
      expect(cut.welcome.history.map((m: { seq: number }) => m.seq)).toEqual([5, 6, 7, 8, 9, 10]);
      expect(cut.welcome.truncated).toBe(true);
    } finally {
      await close();
    }
  });
});
