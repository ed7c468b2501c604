/**
 * An ERR_RATE_LIMITED `error` frame says how long until the limit that refused takes the frame
 * (`retryAfterMs`): a frame sent that much later is taken, one sent sooner is refused. The clock
 * (Date) is faked and moved by hand, so no test waits or depends on the machine's speed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { errors } from '../../src/errors.js';
import { errorFrame } from '../../src/rooms/session.js';
import { TokenBucket } from '../../src/rooms/token-bucket.js';
import { connect, listen, roomsApp } from './helpers.js';
import type { RoomOptions } from '../../src/rooms/options.js';

type Started = Awaited<ReturnType<typeof roomsApp>>;
const running: Started[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const s of running.splice(0)) await s.close();
});

async function joinedClient(roomOptions: Partial<RoomOptions>, address: string, name: string) {
  const started = await roomsApp({}, { roomOptions });
  running.push(started);
  const client = await connect((await listen(started.app))(), { localAddress: address });
  await client.hello(name);
  return client;
}

/**
 * Says `text` a millisecond before `due` (refused, and told to wait again) and at `due` (taken):
 * the message taken.
 */
async function soonerRefusedThenTaken(c: Awaited<ReturnType<typeof joinedClient>>, due: number, text: string) {
  vi.setSystemTime(due - 1);
  c.send({ type: 'say', text, clientId: 'early' });
  const early = await c.next('error', (e) => e.clientId === 'early');
  expect(early.code).toBe('ERR_RATE_LIMITED');
  expect(early.retryAfterMs).toBeGreaterThanOrEqual(1);
  vi.setSystemTime(due);
  c.send({ type: 'say', text, clientId: 'then' });
  return (await c.next('message', (m) => m.message.clientId === 'then')).message;
}

describe('TokenBucket.waitMs', () => {
  it('is the whole milliseconds until a token is there: none before it, one at it', () => {
    for (const [rate, burst] of [
      [5, 10],
      [3, 3],
      [0.1, 3],
      [1 / 60, 1],
      [7, 1],
    ]) {
      const bucket = new TokenBucket(rate, burst, 1_000);
      while (bucket.take(1_000));
      expect(bucket.waitMs(1_000)).toBe(Math.ceil(1000 / rate));
      // Part refilled: the wait is what is left, not the whole of it again.
      const later = 1_000 + Math.floor(400 / rate);
      const wait = bucket.waitMs(later);
      expect(wait).toBeGreaterThanOrEqual(1);
      const probe = new TokenBucket(rate, burst, 1_000);
      while (probe.take(1_000));
      expect(probe.take(later + wait - 1)).toBe(false);
      expect(probe.take(later + wait)).toBe(true);
    }
  });

  it('is 0 while a token is there', () => {
    const bucket = new TokenBucket(2, 2, 0);
    expect(bucket.waitMs(0)).toBe(0);
    bucket.take(0);
    expect(bucket.waitMs(0)).toBe(0);
  });
});

describe('errorFrame', () => {
  it('carries retryAfterMs for ERR_RATE_LIMITED only, and only when it is known', () => {
    const limited = new errors.ERR_RATE_LIMITED('x');
    expect(JSON.parse(errorFrame(limited, 'c1'))).not.toHaveProperty('retryAfterMs');
    limited.retryAfterMs = 250;
    expect(JSON.parse(errorFrame(limited, 'c1'))).toMatchObject({ type: 'error', code: 'ERR_RATE_LIMITED', clientId: 'c1', retryAfterMs: 250 });
    const other = new errors.ERR_ASSISTANT_BUSY();
    other.retryAfterMs = 250;
    expect(JSON.parse(errorFrame(other))).not.toHaveProperty('retryAfterMs');
  });
});

describe('retryAfterMs of refused frames', () => {
  it('a frame past the connection’s rate is told the wait of its bucket: sooner is refused, then is taken', async () => {
    // 3 frames a second, bursts of 3: a token every 333⅓ ms, so the wait is 334 ms.
    const c = await joinedClient({ ratePerSecond: 3, rateBurst: 3 }, '127.0.0.31', 'Quick');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    const start = Date.now();
    for (let i = 0; i < 4; i++) c.send({ type: 'say', text: `m${i}`, clientId: `m${i}` });
    const refused = await c.next('error', (e) => e.code === 'ERR_RATE_LIMITED');
    expect(refused).toMatchObject({ clientId: 'm3', retryAfterMs: 334 });
    const taken = await soonerRefusedThenTaken(c, start + refused.retryAfterMs, 'a message');
    expect(taken.seq).toBeGreaterThan(0);
  });

  it('a slash command past the address’s budget is told the wait of that budget: sooner is refused, then is taken', async () => {
    // 6 commands a minute, bursts of 3: one every 10 s.
    const c = await joinedClient({ ratePerSecond: 1000, rateBurst: 1000, commandsPerMinutePerAddress: 6 }, '127.0.0.32', 'Lister');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    const start = Date.now();
    for (let i = 0; i < 4; i++) c.send({ type: 'say', text: '/threads', clientId: `t${i}` });
    const refused = await c.next('error', (e) => e.code === 'ERR_RATE_LIMITED');
    expect(refused).toMatchObject({ clientId: expect.stringMatching(/^t\d$/), retryAfterMs: 10_000 });
    const taken = await soonerRefusedThenTaken(c, start + refused.retryAfterMs, '/threads');
    expect(taken.text).toContain('Threads of this room');
  });
});
