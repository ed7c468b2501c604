/**
 * How frames leave the server (src/routes/rooms-ws-connection.ts and rooms-ws-transport.ts), over
 * real sockets: straight to the TCP handle while nothing is queued, through the socket's stream
 * while a reader lags, or through ws's own send when direct writes are off; in order every way; a
 * socket that goes away costs the room nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WsConnection } from '../../src/routes/rooms-ws-connection.js';
import { setTransportMode, type TransportMode } from '../../src/routes/rooms-ws-transport.js';
import type { RoomHub } from '../../src/rooms/hub.js';
import type { Session } from '../../src/rooms/session.js';
import { listen, member, roomsApp, until } from './helpers.js';

type Started = Awaited<ReturnType<typeof roomsApp>>;
let running: Started[] = [];
afterEach(async () => {
  setTransportMode('direct');
  await Promise.all(running.map((r) => r.close()));
  running = [];
});

async function start() {
  const started = await roomsApp(
    {},
    {
      roomOptions: {
        rateBurst: 100_000,
        ratePerSecond: 100_000,
        framesPerSecondPerAddress: 100_000,
        roomMessagesPerSecond: 100_000,
        hardBufferedBytes: 256 * 1024 * 1024,
      },
    },
  );
  running.push(started);
  return { ...started, url: await listen(started.app) };
}

/** What the server has queued for `userId` and not yet handed to the kernel. */
function queuedFor(hub: RoomHub, userId: string): number {
  const sessions = (hub as unknown as { sessions: Set<Session> }).sessions;
  let bytes = 0;
  for (const s of sessions) if (s.userId === userId) bytes += s.conn.bufferedAmount;
  return bytes;
}

describe.each<[string, TransportMode]>([
  ['direct handle writes', 'direct'],
  ['socket writes only', 'stream'],
  ["ws's own send", 'ws'],
])('room delivery with %s', (_name, mode) => {
  it('gives a reader that falls behind every message once, in seq order, once it reads again', async () => {
    setTransportMode(mode);
    const { app, url } = await start();
    const slow = await member(url(), 'Slow');
    const talker = await member(url(), 'Talker');
    const socket = (slow.client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const text = 'z€'.repeat(2000);
    let sent = 0;
    // Until the kernel's buffers are full and the server queues frames itself.
    while (queuedFor(app.salon.rooms!, slow.welcome.you.id) === 0 && sent < 20_000) {
      for (let i = 0; i < 50; i++) talker.client.send({ type: 'say', text, clientId: `t${++sent}` });
      await talker.client.next('message', (f) => f.message.clientId === `t${sent}`, 10_000);
      socket.pause();
    }
    expect(queuedFor(app.salon.rooms!, slow.welcome.you.id)).toBeGreaterThan(0);
    socket.resume();
    // Messages keep coming while the backlog drains, so writes meet a queue in every state.
    for (let batch = 0; batch < 40; batch++) {
      for (let i = 0; i < 10; i++) talker.client.send({ type: 'say', text: `tail ${batch}.${i} ${text.slice(0, batch * 50)}`, clientId: `t${++sent}` });
      await talker.client.next('message', (f) => f.message.clientId === `t${sent}`, 10_000);
    }
    await slow.client.next('message', (f) => f.message.seq === sent, 30_000);
    await until(() => queuedFor(app.salon.rooms!, slow.welcome.you.id) === 0);
    talker.client.send({ type: 'say', text: 'caught up', clientId: 'last' });
    await slow.client.next('message', (f) => f.message.clientId === 'last');
    const seqs = slow.client.all('message').map((f) => f.message.seq);
    expect(seqs).toEqual(Array.from({ length: sent + 1 }, (_, i) => i + 1));
  }, 60_000);
});

describe('room delivery', () => {
  it('drops a member whose socket was reset; the others keep getting every message', async () => {
    const { url } = await start();
    const gone = await member(url(), 'Gone');
    const stays = await member(url(), 'Stays');
    const talker = await member(url(), 'Talker');
    (gone.client.ws as unknown as { _socket: { resetAndDestroy(): void } })._socket.resetAndDestroy();
    for (let i = 1; i <= 20; i++) talker.client.send({ type: 'say', text: `m${i}`, clientId: `c${i}` });
    // Presence changes within 50 ms share a frame (without `left`): the member list is the truth.
    await stays.client.next('presence', (f) => f.members.every((m: { id: string }) => m.id !== gone.welcome.you.id));
    await until(() => stays.client.all('message').length >= 20);
    expect(stays.client.all('message').map((f) => f.message.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});

/**
 * A TCP socket as WsConnection sees it: a stream that holds chunks while one is in flight, over a
 * handle whose writes complete at once or later, as the test says. `wire` is libuv's order.
 */
/** The payloads of the small server frames in `data`, joined. */
function payloads(data: Buffer): string {
  let out = '';
  for (let at = 0; at < data.length; at += 2 + data[at + 1]) out += String(data.subarray(at + 2, at + 2 + data[at + 1]));
  return out;
}

function fakeSocket() {
  const binding = (process as unknown as { binding(n: string): { streamBaseState: Int32Array; kLastWriteWasAsync: number } }).binding('stream_wrap');
  const wire: string[] = [];
  const pending: { req: { oncomplete(status: number): void }; bytes: number }[] = [];
  let nextAsync = false;
  const handle = {
    writeQueueSize: 0,
    writeBuffer(req: { oncomplete(status: number): void }, data: Buffer) {
      wire.push(payloads(data));
      binding.streamBaseState[binding.kLastWriteWasAsync] = nextAsync ? 1 : 0;
      if (nextAsync) {
        handle.writeQueueSize += data.length;
        pending.push({ req, bytes: data.length });
      }
      return 0;
    },
  };
  const stream = { inFlight: null as Buffer | null, buffered: [] as Buffer[] };
  const tcp = {
    destroyed: false,
    _handle: handle,
    get writableLength() {
      return (stream.inFlight?.length ?? 0) + stream.buffered.reduce((n, b) => n + b.length, 0);
    },
    write(data: Buffer) {
      if (stream.inFlight) stream.buffered.push(data);
      else {
        stream.inFlight = data;
        wire.push(payloads(data));
      }
      return true;
    },
  };
  return {
    ws: { readyState: 1, _socket: tcp },
    wire,
    /** Makes the next handle write complete later. */
    writeLater: () => (nextAsync = true),
    writeAtOnce: () => (nextAsync = false),
    /** The oldest pending direct write completes. */
    completeDirect() {
      const p = pending.shift()!;
      handle.writeQueueSize -= p.bytes;
      p.req.oncomplete(0);
    },
    /** The stream's write in flight completes; what it held goes out in one write. */
    completeStream() {
      stream.inFlight = null;
      if (stream.buffered.length) tcp.write(Buffer.concat(stream.buffered.splice(0)));
    },
  };
}

describe('WsConnection', () => {
  const send = (conn: WsConnection, text: string) => {
    conn.send(text);
    conn.flush();
  };

  it('keeps frames in order while the stream still holds some, even once its direct write is done', () => {
    const s = fakeSocket();
    const conn = new WsConnection('c1', s.ws as never);
    s.writeLater();
    send(conn, 'a');
    expect(conn.bufferedAmount).toBeGreaterThan(0);
    s.writeAtOnce();
    send(conn, 'b');
    send(conn, 'c');
    s.completeDirect();
    send(conn, 'd');
    s.completeStream();
    s.completeStream();
    send(conn, 'e');
    expect(s.wire.join('')).toBe('abcde');
    expect(conn.bufferedAmount).toBe(0);
  });

  it('counts what libuv and the stream hold as buffered, and nothing once they drained', () => {
    const s = fakeSocket();
    const conn = new WsConnection('c1', s.ws as never);
    send(conn, 'x'.repeat(10));
    expect(conn.bufferedAmount).toBe(0);
    s.writeLater();
    send(conn, 'y'.repeat(10));
    expect(conn.bufferedAmount).toBe(12);
    send(conn, 'z'.repeat(100));
    expect(conn.bufferedAmount).toBe(12 + 102);
    s.writeAtOnce();
    s.completeDirect();
    s.completeStream();
    expect(conn.bufferedAmount).toBe(0);
  });
});
