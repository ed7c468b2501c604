/**
 * Floods are limited where they come from: per client address across all of its sockets (sockets,
 * frames a second, new identities a minute), per room, and per node. Real sockets from several
 * loopback addresses (all of 127/8 is loopback on Linux), so the server sees distinct clients.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { AddressLimits } from '../../src/rooms/address-limits.js';
import { AddressRate } from '../../src/rooms/address-rate.js';
import { connect, listen, member, roomsApp, until } from './helpers.js';

type Started = Awaited<ReturnType<typeof roomsApp>>;
const running: Started[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.close();
});

async function start(env: Record<string, string> = {}) {
  const started = await roomsApp(env, { roomOptions: { ratePerSecond: 1000, rateBurst: 1000 } });
  running.push(started);
  return { ...started, url: await listen(started.app) };
}

const from = (address: string) => ({ localAddress: address });

describe('AddressLimits', () => {
  const limits = () => new AddressLimits({ maxConnectionsPerAddress: 2, framesPerSecondPerAddress: 5, newIdentitiesPerMinute: 3, commandsPerMinute: 60 });

  it('caps sockets per address and frees a place when one closes', () => {
    const l = limits();
    expect([l.open('a', 0), l.open('a', 0), l.open('a', 0)]).toEqual([true, true, false]);
    expect(l.open('b', 0)).toBe(true);
    l.close('a', 0);
    expect(l.open('a', 0)).toBe(true);
  });

  it('shares one frame budget among all sockets of an address, refilling with time', () => {
    const l = limits();
    const taken = Array.from({ length: 12 }, () => l.frame('a', 1_000)).filter(Boolean).length;
    expect(taken).toBe(10); // a burst of twice the rate
    expect(l.frame('b', 1_000)).toBe(true);
    expect(l.frame('a', 1_200)).toBe(true); // 0.2 s at 5/s is one more frame
    expect(l.frame('a', 1_200)).toBe(false);
  });

  it('allows a few new identities a minute per address', () => {
    const l = limits();
    expect([1, 2, 3, 4].map(() => l.newIdentity('a', 0))).toEqual([true, true, true, false]);
    expect(l.newIdentity('a', 20_000)).toBe(true);
  });

  it('shares one budget of slash commands a minute among all sockets of an address', () => {
    const l = limits();
    const taken = Array.from({ length: 40 }, () => l.command('a', 0)).filter(Boolean).length;
    expect(taken).toBe(30); // a burst of half a minute's
    expect(l.command('b', 0)).toBe(true);
    expect(l.command('a', 1_000)).toBe(true); // one a second
    expect(l.command('a', 1_000)).toBe(false);
  });

  it('forgets them at the next close after the clock was set back, not once it has caught up', () => {
    const HOUR = 3_600_000;
    const l = limits();
    l.open('a', HOUR);
    l.close('a', HOUR + 120_000);
    l.open('b', HOUR + 120_000);
    l.frame('c', HOUR + 120_000);
    expect(l.size).toBe(2);
    // An hour back: the sweep runs at the next close, and forgets what owes nothing.
    l.close('b', 120_000);
    expect(l.size).toBe(1);
    l.close('b', 240_000);
    expect(l.size).toBe(0);
  });

  it('forgets addresses that hold no socket and owe nothing', () => {
    const l = limits();
    l.open('a', 0);
    l.frame('b', 0);
    l.close('a', 0);
    expect(l.size).toBe(2);
    l.close('a', 120_000);
    expect(l.size).toBe(0);
  });

  it('holds at most maxAddresses between sweeps, forgetting the oldest that holds no socket, so a flood from many addresses stays bounded', () => {
    const l = new AddressLimits({
      maxConnectionsPerAddress: 2,
      framesPerSecondPerAddress: 5,
      newIdentitiesPerMinute: 3,
      commandsPerMinute: 60,
      maxAddresses: 100,
    });
    // An address that holds its sockets and has spent its budgets stays remembered, first seen as it is.
    expect([l.open('held', 0), l.open('held', 0)]).toEqual([true, true]);
    while (l.frame('held', 0));
    // The clock stands still: no sweep runs, every stranger's identity budget is spent.
    for (let i = 0; i < 20_000; i++) {
      const stranger = `2001:db8:${i.toString(16)}::`;
      l.open(stranger, 0);
      l.newIdentity(stranger, 0);
      l.close(stranger, 0);
      expect(l.size).toBeLessThanOrEqual(100);
    }
    expect(l.open('held', 0)).toBe(false);
    expect(l.frame('held', 0)).toBe(false);
  });

  it('keeps every address that holds a socket, past maxAddresses if need be', () => {
    const l = new AddressLimits({
      maxConnectionsPerAddress: 1,
      framesPerSecondPerAddress: 5,
      newIdentitiesPerMinute: 3,
      commandsPerMinute: 60,
      maxAddresses: 10,
    });
    for (let i = 0; i < 50; i++) expect(l.open(`a${i}`, 0)).toBe(true);
    expect(l.size).toBe(50);
    for (let i = 0; i < 50; i++) expect(l.open(`a${i}`, 0)).toBe(false);
  });
});

describe('AddressRate', () => {
  it('allows a burst of a minute’s budget per address, then refills at that rate', () => {
    const rate = new AddressRate({ perMinute: 3, maxAddresses: 100 });
    expect([1, 2, 3, 4].map(() => rate.take('a', 0))).toEqual([true, true, true, false]);
    expect(rate.take('b', 0)).toBe(true);
    expect(rate.take('a', 19_999)).toBe(false);
    expect(rate.take('a', 20_000)).toBe(true); // 3 a minute is one every 20 s
    expect(rate.take('a', 20_000)).toBe(false);
  });

  it('holds at most maxAddresses, forgetting the one seen longest ago, so an address that keeps coming stays limited', () => {
    const rate = new AddressRate({ perMinute: 2, maxAddresses: 3 });
    rate.take('hot', 0);
    rate.take('hot', 0);
    for (let i = 0; i < 1000; i++) {
      rate.take(`stranger${i}`, 0);
      expect(rate.take('hot', 0)).toBe(false);
      expect(rate.size).toBeLessThanOrEqual(3);
    }
  });

  it("takes a burst of its own when given one, refilling at the minute's rate", () => {
    const rate = new AddressRate({ perMinute: 2, burst: 5, maxAddresses: 100 });
    expect(Array.from({ length: 6 }, () => rate.take('a', 0))).toEqual([true, true, true, true, true, false]);
    expect(rate.take('a', 29_999)).toBe(false);
    expect(rate.take('a', 30_000)).toBe(true);
  });

  it('forgets addresses whose budget has refilled as new ones come', () => {
    const rate = new AddressRate({ perMinute: 60, maxAddresses: 1_000 });
    for (let i = 0; i < 10; i++) rate.take(`a${i}`, 0);
    expect(rate.size).toBe(10);
    for (let i = 0; i < 10; i++) rate.take(`b${i}`, 60_000);
    expect(rate.size).toBe(10);
  });
});

describe('per-address limits on room sockets', () => {
  it('closes the sockets an address opens past ROOM_ADDRESS_CONNECTS_PER_MINUTE with ERR_RATE_LIMITED and 4429 before any hello, and counts them', async () => {
    const { app, url } = await start({ ROOM_ADDRESS_CONNECTS_PER_MINUTE: '2', ROOM_MAX_CONNECTIONS_PER_IP: '2' });
    // The clock stands still unless moved, so however slow the machine, no socket is refilled.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      // Open and closed again: it is the opening that counts, not how many are held.
      for (const name of ['One', 'Two']) {
        const c = await connect(url(), from('127.0.0.12'));
        await c.hello(name);
        c.close();
        await c.closed;
      }
      const third = await connect(url(), from('127.0.0.12'));
      const refused = await third.next('error');
      expect(refused).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.stringContaining('2 room sockets a minute from one address') });
      expect((await third.closed).code).toBe(CloseCode.RATE_LIMITED);
      expect(third.all('welcome')).toHaveLength(0);
      // Another address is not held back.
      expect((await (await connect(url(), from('127.0.0.13'))).hello('Elsewhere')).you.name).toBe('Elsewhere');
      // 2 a minute is one every 30 s.
      vi.setSystemTime(Date.now() + 30_000);
      expect((await (await connect(url(), from('127.0.0.12'))).hello('Later')).you.name).toBe('Later');
      const again = await connect(url(), from('127.0.0.12'));
      expect((await again.closed).code).toBe(CloseCode.RATE_LIMITED);
    } finally {
      vi.useRealTimers();
    }
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('salon_room_sockets_refused_total{reason="rate"} 2');
  });

  it('lets an address open at once as many room sockets as it may hold (its members reconnecting together), then limits it to the rate', async () => {
    const { url } = await start({ ROOM_ADDRESS_CONNECTS_PER_MINUTE: '2', ROOM_MAX_CONNECTIONS_PER_IP: '4' });
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      const office = await Promise.all(Array.from({ length: 4 }, () => connect(url(), from('127.0.0.14'))));
      const welcomes = await Promise.all(office.map((c, i) => c.hello(`Desk${i}`)));
      expect(welcomes.map((w) => w.you.name)).toEqual(['Desk0', 'Desk1', 'Desk2', 'Desk3']);
      for (const c of office) c.close();
      await Promise.all(office.map((c) => c.closed));
      const fifth = await connect(url(), from('127.0.0.14'));
      expect(await fifth.next('error')).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.stringContaining('room sockets a minute') });
      expect((await fifth.closed).code).toBe(CloseCode.RATE_LIMITED);
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers a flood from many sockets of one address with ERR_RATE_LIMITED, then 4429; a member elsewhere keeps chatting', async () => {
    const { url } = await start({ ROOM_ADDRESS_FRAMES_PER_SECOND: '5' });
    const quiet = await connect(url(), from('127.0.0.2'));
    await quiet.hello('Quiet');
    const flooders = await Promise.all(Array.from({ length: 4 }, () => connect(url(), from('127.0.0.3'))));
    await Promise.all(flooders.map((f, i) => f.hello(`Flood${i}`)));
    // 4 sockets, each far under its own per-socket rate, together far over the address's.
    for (let round = 0; round < 30; round++) for (const [i, f] of flooders.entries()) f.send({ type: 'say', text: `x${round}`, clientId: `f${i}-${round}` });
    const refused = await flooders[0].next('error', (e) => e.code === 'ERR_RATE_LIMITED');
    expect(refused.message).toContain('from one address');
    const codes = await Promise.all(flooders.map(async (f) => (await f.closed).code));
    expect(codes.some((c) => c === CloseCode.RATE_LIMITED)).toBe(true);
    quiet.send({ type: 'say', text: 'still here', clientId: 'q1' });
    const mine = await quiet.next('message', (m) => m.message.clientId === 'q1');
    expect(mine.message.text).toBe('still here');
  });

  it('answers slash commands past the address’s budget with ERR_RATE_LIMITED, on any of its sockets; chat goes on', async () => {
    const { app, url } = await start();
    const budget = Math.floor(app.salon.rooms.options.commandsPerMinutePerAddress / 2);
    const sockets = await Promise.all(Array.from({ length: 3 }, () => connect(url(), from('127.0.0.4'))));
    await Promise.all(sockets.map((s, i) => s.hello(`Lister${i}`)));
    // Each /threads counts the messages of every thread of the room: more than a frame's worth.
    // The clock stands still meanwhile, so however slow the machine, no command is refilled.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    let refused;
    try {
      for (let i = 0; i <= budget; i++) sockets[i % 3].send({ type: 'say', text: '/threads', clientId: `t${i}` });
      // Frames of three sockets arrive in any order: whichever comes past the budget is refused.
      const replies = () => sockets.flatMap((s) => s.frames.filter((f) => (f.type === 'message' && f.message.seq === 0) || f.type === 'error'));
      await until(() => replies().length === budget + 1);
      refused = replies().filter((f) => f.type === 'error');
    } finally {
      vi.useRealTimers();
    }
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ code: 'ERR_RATE_LIMITED', clientId: expect.stringMatching(/^t\d+$/) });
    sockets[0].send({ type: 'say', text: 'plain chat', clientId: 'p1' });
    expect((await sockets[0].next('message', (m) => m.message.clientId === 'p1')).message.seq).toBeGreaterThan(0);
    const elsewhere = await connect(url(), from('127.0.0.5'));
    await elsewhere.hello('Other');
    elsewhere.send({ type: 'say', text: '/threads', clientId: 'o1' });
    expect((await elsewhere.next('message', (m) => m.message.clientId === 'o1')).message.text).toContain('Threads of this room');
  });

  it('caps sockets per address across rooms, and other addresses are unaffected', async () => {
    const { app, url } = await start({ ROOM_MAX_CONNECTIONS_PER_IP: '2' });
    await connect(url(), from('127.0.0.4'));
    await connect(url('post_2'), from('127.0.0.4'));
    const third = await connect(url(), from('127.0.0.4'));
    expect((await third.next('error')).code).toBe('ERR_TOO_MANY_CONNECTIONS');
    expect((await third.closed).code).toBe(CloseCode.RATE_LIMITED);
    const elsewhere = await member(url(), 'Elsewhere');
    expect(elsewhere.welcome.you.name).toBe('Elsewhere');
    expect((await app.inject({ method: 'GET', url: '/metrics' })).body).toContain('salon_room_sockets_refused_total{reason="address"} 1');
  });

  it('limits new identities per address; a returning member with a token still joins', async () => {
    const { url } = await start({ ROOM_NEW_IDENTITIES_PER_MINUTE: '2' });
    const first = await connect(url(), from('127.0.0.5'));
    const welcome = await first.hello('One');
    await (await connect(url(), from('127.0.0.5'))).hello('Two');
    const third = await connect(url(), from('127.0.0.5'));
    third.send({ type: 'hello', name: 'Three' });
    expect((await third.next('error')).code).toBe('ERR_RATE_LIMITED');
    expect((await third.closed).code).toBe(CloseCode.RATE_LIMITED);
    const back = await connect(url(), from('127.0.0.5'));
    expect((await back.hello('One', { token: welcome.you.token })).you.id).toBe(welcome.you.id);
  });

  it('closes sockets past the node’s cap with ERR_SERVER_FULL and 1013', async () => {
    const { url } = await start({ ROOM_MAX_CONNECTIONS: '2' });
    await connect(url(), from('127.0.0.6'));
    await connect(url(), from('127.0.0.7'));
    const over = await connect(url(), from('127.0.0.8'));
    expect((await over.next('error')).code).toBe('ERR_SERVER_FULL');
    const closed = await over.closed;
    expect(closed.code).toBe(CloseCode.TRY_AGAIN_LATER);
    // The reason does not blame a client that only arrived when the node was full.
    expect(closed.reason).not.toMatch(/too slow/);
  });

  it('tells an asker the assistant’s limits refused what the limits are and when to ask again', async () => {
    const { url } = await start({ ASK_LIMIT_USER: '2', ASK_LIMIT_ROOM: '20', ASK_LIMIT_IP: '12' });
    const ann = await connect(url(), from('127.0.0.11'));
    await ann.hello('Ann');
    for (let i = 0; i < 2; i++) {
      ann.send({ type: 'say', text: `@ai question ${i}?`, clientId: `q${i}` });
      await ann.next('message', (f) => f.message.clientId === `q${i}`);
    }
    const told = /^Slow down: the assistant takes 2 questions a minute from each member; ask again in \d+ s$/;
    ann.send({ type: 'say', text: '@ai one too many?', clientId: 'q2' });
    expect(await ann.next('error', (e) => e.clientId === 'q2')).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.stringMatching(told) });
    // A private question is refused in the same words.
    ann.send({ type: 'ask', text: 'and privately?', clientId: 'p1', private: true });
    expect(await ann.next('error', (e) => e.clientId === 'p1')).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.stringMatching(told) });
  });

  it('limits one room’s message rate, whoever sends, and one address to its share of it', async () => {
    const { url } = await start({ ROOM_MESSAGES_PER_SECOND: '2' });
    const a = await connect(url(), from('127.0.0.9'));
    await a.hello('A');
    const b = await connect(url(), from('127.0.0.10'));
    await b.hello('B');
    // Alone, A may send half the room's burst of four; the rest is left for whoever posts next.
    for (let i = 0; i < 4; i++) a.send({ type: 'say', text: `a${i}`, clientId: `a${i}` });
    for (const clientId of ['a2', 'a3']) {
      expect(await a.next('error', (e) => e.clientId === clientId)).toMatchObject({
        code: 'ERR_RATE_LIMITED',
        message: expect.stringContaining('shared among'),
      });
    }
    b.send({ type: 'say', text: 'b0', clientId: 'b0' });
    expect((await b.next('message', (m) => m.message.clientId === 'b0')).message.text).toBe('b0');
    // A public ask posts its question: it counts against B's share too (a private one posts nothing).
    b.send({ type: 'ask', text: 'flood?', clientId: 'b1' });
    expect(await b.next('error', (e) => e.clientId === 'b1')).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.stringContaining('this room') });
    // Every address has a share of one message at least, but all of them together no more than the room's rate.
    const c = await connect(url(), from('127.0.0.11'));
    await c.hello('C');
    const d = await connect(url(), from('127.0.0.12'));
    await d.hello('D');
    c.send({ type: 'say', text: 'c0', clientId: 'c0' });
    await c.next('message', (m) => m.message.clientId === 'c0');
    d.send({ type: 'say', text: 'd0', clientId: 'd0' });
    const refused = await d.next('error', (e) => e.clientId === 'd0');
    expect(refused).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.stringContaining('this room takes at most 2 messages a second') });
    // Another room is not affected by this one's rate.
    const e = await connect(url('post_2'), from('127.0.0.9'));
    await e.hello('A');
    e.send({ type: 'say', text: 'elsewhere', clientId: 'e0' });
    expect((await e.next('message', (m) => m.message.clientId === 'e0')).message.text).toBe('elsewhere');
  });
});
