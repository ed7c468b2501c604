/** Every limit gives its code while the other members carry on; origins, heartbeat and shutdown. */
import { afterEach, describe, expect, it } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { ROOM, connect, inject, joined, listen, member, roomsApp, until } from './helpers.js';

type Started = Awaited<ReturnType<typeof roomsApp>>;
let running: Started[] = [];
afterEach(async () => {
  await Promise.all(running.map((r) => r.close()));
  running = [];
});

async function start(...args: Parameters<typeof roomsApp>): Promise<Started & { url: (roomId?: string) => string }> {
  const started = await roomsApp(...args);
  running.push(started);
  return { ...started, url: await listen(started.app) };
}

describe('room limits', () => {
  it('rate-limits a flooding connection, then closes it with 4429; others are unaffected', async () => {
    const { url } = await start();
    const flood = await member(url(), 'Flood');
    const calm = await member(url(), 'Calm');
    for (let i = 0; i < 40; i++) flood.client.send({ type: 'say', text: `f${i}`, clientId: `f${i}` });
    expect((await flood.client.closed).code).toBe(CloseCode.RATE_LIMITED);
    const limited = flood.client.all('error').filter((e) => e.code === 'ERR_RATE_LIMITED');
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0].clientId).toMatch(/^f\d+$/);
    calm.client.send({ type: 'say', text: 'still fine', clientId: 'c1' });
    await calm.client.next('message', (f) => f.message.text === 'still fine');
    const floodMessages = calm.client.all('message').filter((f) => f.message.author.name === 'Flood');
    // The burst is 10 frames and hello took one.
    expect(floodMessages.length).toBeGreaterThanOrEqual(9);
    expect(floodMessages.length).toBeLessThan(15);
  });

  it('posts every message it admitted from a flood that arrives in one read, though the same read closes the socket', async () => {
    const { url } = await start();
    const flood = await member(url(), 'Flood');
    const calm = await member(url(), 'Calm');
    // Corked, the frames leave in one write, so the server reads them together: its refusals close
    // the socket before the admitted messages' first await resumes.
    const socket = (flood.client.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.cork();
    for (let i = 0; i < 40; i++) flood.client.send({ type: 'say', text: `f${i}`, clientId: `f${i}` });
    socket.uncork();
    expect((await flood.client.closed).code).toBe(CloseCode.RATE_LIMITED);
    // Frames are admitted in order until the first refusal (the burst: 10, hello took one).
    const firstRefused = Number(String(flood.client.all('error')[0].clientId).slice(1));
    expect(firstRefused).toBeGreaterThanOrEqual(9);
    const admitted = Array.from({ length: firstRefused }, (_, i) => `f${i}`);
    calm.client.send({ type: 'say', text: 'still fine', clientId: 'c1' });
    await calm.client.next('message', (f) => f.message.text === 'still fine');
    const seen = calm.client
      .all('message')
      .filter((f) => f.message.author.name === 'Flood')
      .map((f) => f.message.clientId);
    expect(seen).toEqual(admitted);
  });

  it('admits typing frames from a budget of their own: announcing typing around every message never gets one refused', async () => {
    const { url } = await start();
    const ana = await member(url(), 'Ana');
    const ben = await member(url(), 'Ben');
    // A burst as a client that announced typing before and after each message sent it: hello and
    // eight messages fit the frame budget (bursts of 10), with the sixteen typing frames around them.
    for (let i = 0; i < 8; i++) {
      ana.client.send({ type: 'typing', active: true });
      ana.client.send({ type: 'typing', active: false });
      ana.client.send({ type: 'say', text: `m${i}`, clientId: `m${i}` });
    }
    await ben.client.next('message', (f) => f.message.text === 'm7');
    expect(ben.client.all('message').map((f) => f.message.text)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    expect(ana.client.all('error')).toEqual([]);
  });

  it('drops typing frames past their budget silently, and closes a connection that floods them with 4429', async () => {
    const { url } = await start();
    const flood = await member(url(), 'Flood');
    const calm = await member(url(), 'Calm');
    for (let i = 0; i < 40; i++) flood.client.send({ type: 'typing', active: i % 2 === 0 });
    expect((await flood.client.closed).code).toBe(CloseCode.RATE_LIMITED);
    expect(flood.client.all('error').map((e) => e.code)).toEqual(['ERR_RATE_LIMITED']);
    calm.client.send({ type: 'say', text: 'still fine', clientId: 'c1' });
    await calm.client.next('message', (f) => f.message.text === 'still fine');
  });

  it('closes a connection that keeps sending bad frames with 4400', async () => {
    const { url } = await start();
    const c = await connect(url());
    for (let i = 0; i < 25; i++) c.send('nope');
    expect((await c.closed).code).toBe(CloseCode.BAD_MESSAGE);
    expect(c.all('error').every((e) => e.code === 'ERR_BAD_MESSAGE')).toBe(true);
  });

  it('closes with 1009 on a frame over 16 KiB; others are unaffected', async () => {
    const { url } = await start();
    const big = await member(url(), 'Big');
    const other = await member(url(), 'Other');
    big.client.send({ type: 'say', text: 'x'.repeat(17_000), clientId: 'big' });
    expect((await big.client.closed).code).toBe(CloseCode.MESSAGE_TOO_BIG);
    other.client.send({ type: 'say', text: 'fine', clientId: 'o' });
    await other.client.next('message', (f) => f.message.text === 'fine');
  });

  it('caps connections per address with ERR_TOO_MANY_CONNECTIONS and frees the slot on close', async () => {
    const { url, app } = await start({ ROOM_MAX_CONNECTIONS_PER_IP: '2' });
    const a = await connect(url());
    await connect(url());
    const third = await connect(url());
    expect((await third.next('error')).code).toBe('ERR_TOO_MANY_CONNECTIONS');
    expect((await third.closed).code).toBe(CloseCode.RATE_LIMITED);
    a.close();
    await until(() => app.salon.rooms!.connectionCount === 1);
    const again = await connect(url());
    expect((await again.hello('Ana')).you.name).toBe('Ana');
  });

  it('closes with 4408 when no hello comes in time', async () => {
    const { app } = await start({ ROOM_HELLO_TIMEOUT_MS: '150' });
    const c = await inject(app);
    expect((await c.next('error')).code).toBe('ERR_HELLO_TIMEOUT');
    expect((await c.closed).code).toBe(CloseCode.HELLO_TIMEOUT);
    const ok = await inject(app);
    await ok.hello('Ana');
    await new Promise((r) => setTimeout(r, 250));
    ok.send({ type: 'ping' });
    await ok.next('pong');
  });

  it('drops a consumer that stops reading and closes it with 1013; the others get every message', async () => {
    const { url } = await start(
      {},
      {
        roomOptions: {
          softBufferedBytes: 16 * 1024,
          hardBufferedBytes: 256 * 1024,
          rateBurst: 100_000,
          ratePerSecond: 100_000,
          framesPerSecondPerAddress: 100_000,
          roomMessagesPerSecond: 100_000,
        },
      },
    );
    const slow = await member(url(), 'Slow');
    const fast = await member(url(), 'Fast');
    const talker = await member(url(), 'Talker');
    // Stop reading: the kernel buffers fill (tens of MB on loopback), then the server's send queue grows.
    const socket = (slow.client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const text = 'z€'.repeat(2000);
    let sent = 0;
    const dropped = () => fast.client.all('presence').some((f) => f.left?.id === slow.welcome.you.id);
    while (!dropped() && sent < 20_000) {
      for (let i = 0; i < 50; i++) talker.client.send({ type: 'say', text, clientId: `t${sent++}` });
      await fast.client.next('message', (f) => f.message.clientId === `t${sent - 1}`, 10_000);
      socket.pause();
    }
    expect(dropped()).toBe(true);
    socket.resume();
    expect((await slow.client.closed).code).toBe(CloseCode.TRY_AGAIN_LATER);
    expect(slow.client.all('message').length).toBeLessThan(sent);
    expect(fast.client.all('message')).toHaveLength(sent);
    fast.client.send({ type: 'say', text: 'after', clientId: 'after' });
    await talker.client.next('message', (f) => f.message.clientId === 'after');
  }, 60_000);
});

describe('origins', () => {
  const hello = async (c: Awaited<ReturnType<typeof inject>>) => {
    c.send({ type: 'hello', name: 'Ana' });
    return c.next('welcome', undefined, 1000).then(
      () => 'welcome',
      async () => (await c.closed).code,
    );
  };

  it('allows same-origin, listed origins and clients without Origin; refuses others with 4403', async () => {
    const { app } = await start({ ALLOWED_ORIGINS: 'https://friend.example', HOST: '0.0.0.0' });
    expect(await hello(await inject(app, ROOM, { origin: 'http://salon.test:3000', host: 'salon.test:3000' }))).toBe('welcome');
    expect(await hello(await inject(app, ROOM, { origin: 'https://friend.example', host: 'salon.test' }))).toBe('welcome');
    expect(await hello(await inject(app, ROOM, {}))).toBe('welcome');
    for (const origin of ['https://evil.example', 'null', 'https://friend.example:444', 'http://salon.test.evil:3000']) {
      const c = await inject(app, ROOM, { origin, host: 'salon.test:3000' });
      expect((await c.next('error')).code).toBe('ERR_ORIGIN_NOT_ALLOWED');
      expect((await c.closed).code).toBe(CloseCode.ORIGIN_NOT_ALLOWED);
    }
  });

  it('lets in the custom-scheme origin listed, and no other custom scheme', async () => {
    const { app } = await start({ ALLOWED_ORIGINS: 'capacitor://localhost', HOST: '0.0.0.0' });
    expect(await hello(await inject(app, ROOM, { origin: 'capacitor://localhost', host: 'salon.test' }))).toBe('welcome');
    for (const origin of ['evil-scheme://attacker.example', 'chrome-extension://abcdefgh']) {
      const c = await inject(app, ROOM, { origin, host: 'salon.test' });
      expect((await c.closed).code).toBe(CloseCode.ORIGIN_NOT_ALLOWED);
    }
  });

  it('allows any origin with ALLOWED_ORIGINS=*', async () => {
    const { app } = await start({ ALLOWED_ORIGINS: '*', HOST: '0.0.0.0' });
    expect(await hello(await inject(app, ROOM, { origin: 'https://anyone.example', host: 'salon.test' }))).toBe('welcome');
  });

  it('refuses a browser on another origin over a real socket, observably', async () => {
    const { url } = await start();
    const c = await connect(url(), { origin: 'https://evil.example' });
    expect((await c.closed).code).toBe(CloseCode.ORIGIN_NOT_ALLOWED);
  });
});

describe('heartbeat and shutdown', () => {
  it('terminates sockets that do not answer pings, and keeps those that do', async () => {
    const { url, app } = await start({ ROOM_HEARTBEAT_MS: '100' });
    const deaf = await connect(url(), { autoPong: false });
    await deaf.hello('Deaf');
    const alive = await connect(url());
    await alive.hello('Alive');
    expect((await deaf.closed).code).toBe(1006);
    await new Promise((r) => setTimeout(r, 300));
    alive.send({ type: 'say', text: 'here', clientId: 'h' });
    await alive.next('message');
    expect(app.salon.rooms!.connectionCount).toBe(1);
  });

  it('closes every socket with 1001 when the app closes', async () => {
    const started = await roomsApp();
    const url = await listen(started.app);
    const a = await member(url(), 'Ana');
    const before = await connect(url());
    const injected = await joined(started.app, 'Inj');
    await started.close();
    expect((await a.client.closed).code).toBe(CloseCode.GOING_AWAY);
    expect((await before.closed).code).toBe(CloseCode.GOING_AWAY);
    expect((await injected.client.closed).code).toBe(CloseCode.GOING_AWAY);
  });
});

describe('closes a client does not answer', () => {
  it('cuts the TCP connection of a socket the server closed once closeTimeoutMs passes without the client answering', async () => {
    const { app, url } = await start({ ROOM_HELLO_TIMEOUT_MS: '100' }, { roomOptions: { closeTimeoutMs: 200 } });
    const open = () => new Promise<number>((resolve, reject) => app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    const silent = await connect(url());
    // A client that stopped reading: the 4408 close waits in its kernel buffer, never answered.
    (silent.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    expect(await open()).toBe(1);
    // ws waited 30 s for the answer, holding the socket and whatever it still had to send.
    let left = 1;
    await until(() => {
      void open().then((n) => (left = n));
      return left === 0;
    }, 10_000);
  });
});
