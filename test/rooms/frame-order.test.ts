/**
 * One socket's say, ask and command frames act in the order they arrived, whatever each one's
 * thread costs to find: a say in a thread the room reads from the store is posted before a say
 * sent after it in a thread the room knows. On a real socket to a real app, the store's thread read
 * held by hand.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RoomHub } from '../../src/rooms/hub.js';
import { Identity } from '../../src/rooms/identity.js';
import { InProcessBus } from '../../src/rooms/in-process-bus.js';
import { tempStore } from '../helpers.js';
import { FakeConnection, ROOM, holdThreadRead, listen, member, roomsApp, until } from './helpers.js';
import { createThread } from '../store/new-thread.js';

type Started = Awaited<ReturnType<typeof roomsApp>>;
let running: Started[] = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await Promise.all(running.map((r) => r.close()));
  running = [];
});

async function start(...args: Parameters<typeof roomsApp>) {
  const started = await roomsApp(...args);
  running.push(started);
  return { ...started, store: started.app.salon.store, url: await listen(started.app) };
}

/** Sends a ping and waits for its pong: every frame sent before it has been dispatched. */
async function roundTrip(client: Awaited<ReturnType<typeof member>>['client']): Promise<void> {
  client.send({ type: 'ping' });
  await client.next('pong');
}

describe('one socket’s frames act in the order they arrived', () => {
  it('posts a say whose thread is read from the store before a say sent after it in the main thread', async () => {
    const { store, url } = await start();
    await store.ensureMainThread(ROOM);
    await createThread(store, { id: 'thr_side', roomId: ROOM, title: 'Side' }, 'admin');
    const { client: ana } = await member(url(), 'Ana');
    const { reached, release } = holdThreadRead(store, 'thr_side');

    ana.send({ type: 'say', text: 'first', clientId: 's1', threadId: 'thr_side' });
    await reached;
    ana.send({ type: 'say', text: 'second', clientId: 's2' });
    await roundTrip(ana);
    release();

    const first = (await ana.next('message', (f) => f.message.clientId === 's1')).message;
    expect(first.threadId).toBe('thr_side');
    const second = (await ana.arrived('message', (f) => f.message.clientId === 's2', 0)).message;
    expect(second.seq).toBe(first.seq + 1);
    expect((await store.messagesAfter(ROOM, 0, 10)).map((m) => m.text)).toEqual(['first', 'second']);
  });

  it('lets the next frame act once an earlier one failed finding its thread, each error naming its own frame', async () => {
    const { store, url } = await start();
    await store.ensureMainThread(ROOM);
    const { client: ana } = await member(url(), 'Ana');
    const { reached, release } = holdThreadRead(store, 'thr_none');

    ana.send({ type: 'say', text: 'lost', clientId: 's1', threadId: 'thr_none' });
    await reached;
    ana.send({ type: 'say', text: 'kept', clientId: 's2' });
    ana.send({ type: 'say', text: '/nope', clientId: 'c1' });
    await roundTrip(ana);
    release();

    expect((await ana.arrived('error', (f) => f.clientId === 's1', 0)).code).toBe('ERR_THREAD_NOT_FOUND');
    expect((await ana.arrived('message', (f) => f.message.clientId === 'c1', 0)).message.text).toContain('Unknown command /nope');
    await ana.arrived('message', (f) => f.message.clientId === 's2', 0);
    expect((await store.messagesAfter(ROOM, 0, 10)).map((m) => m.text)).toEqual(['kept']);
    expect(ana.all('error')).toHaveLength(1);
  });
});

describe('what one socket may have waiting for its turn', () => {
  let hub: RoomHub | undefined;
  let closeStore: (() => Promise<void>) | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    await hub?.close();
    await closeStore?.();
  });

  it('is a burst of frames: the next say is refused (no retryAfterMs: the store decides how long) until they acted', async () => {
    const temp = tempStore();
    closeStore = temp.close;
    const { store } = temp;
    // Three frames at once (the hello is one of them), then one a second.
    hub = new RoomHub({
      store,
      identity: new Identity(Buffer.alloc(32, 7)),
      bus: new InProcessBus(),
      resolver: async (id) => (id === ROOM ? { id, kind: 'news', title: 'T', url: null, context: 'T' } : null),
      options: { rateBurst: 3, ratePerSecond: 1 },
    });
    await store.ensureMainThread(ROOM);
    await createThread(store, { id: 'thr_side', roomId: ROOM, title: 'Side' }, 'admin');
    const conn = new FakeConnection('c1');
    const session = hub.connect(conn, { roomId: ROOM, ip: '10.0.0.1' })!;
    session.receive(JSON.stringify({ type: 'hello', name: 'Ana' }));
    await until(() => conn.frames('welcome').length === 1);
    const { reached, release } = holdThreadRead(store, 'thr_side');
    // The clock moves by hand from here: each frame is read at the time set before it.
    vi.useFakeTimers({ toFake: ['Date'] });
    const say = (text: string, clientId: string, threadId?: string) => session.receive(JSON.stringify({ type: 'say', text, clientId, threadId }));

    say('one', 's1', 'thr_side');
    await reached;
    say('two', 's2');
    vi.setSystemTime(Date.now() + 1000);
    say('three', 's3');
    vi.setSystemTime(Date.now() + 1000);
    say('four', 's4');
    const refused = conn.frames('error');
    expect(refused).toEqual([{ type: 'error', code: 'ERR_RATE_LIMITED', message: expect.stringContaining('3 messages waiting their turn'), clientId: 's4' }]);

    // `until` polls on real timers; its deadline is on the fake clock (a failure here is the test's timeout).
    release();
    await until(() => conn.frames('message').length === 3);
    vi.setSystemTime(Date.now() + 1000);
    say('four', 's4');
    await until(() => conn.frames('message').length === 4);
    expect(conn.frames('message').map((f) => f.message.text)).toEqual(['one', 'two', 'three', 'four']);
    expect((await store.messagesAfter(ROOM, 0, 10)).map((m) => m.text)).toEqual(['one', 'two', 'three', 'four']);
  });
});
