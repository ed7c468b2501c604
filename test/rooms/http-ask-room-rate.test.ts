/**
 * A question asked over HTTP (`POST /api/v1/rooms/:id/ask`) is posted in the room as a socket's
 * is, and is under the room's message rate as a socket's is: an address asked over HTTP as fast as
 * the assistant's limits let it, past the share of the room a socket would have had.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ROOM, joined, roomsApp } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const c of closers.splice(0).reverse()) await c();
});

describe('questions asked over HTTP and the room’s message rate', () => {
  it('refuses an address’s question past its share of the room, unposted, and leaves the members theirs', async () => {
    // The assistant's limits far away: only the room's rate (one message a second) can refuse.
    const t = await roomsApp({ ASK_LIMIT_USER: '100', ASK_LIMIT_ROOM: '100', ASK_LIMIT_IP: '100' }, { roomOptions: { roomMessagesPerSecond: 1 } });
    closers.push(t.close);
    const { client: ann } = await joined(t.app, 'Ann');
    // The shares refill with the clock: stopped, nothing comes back between the asks.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const ask = (text: string) =>
      t.app.inject({ method: 'POST', url: `/api/v1/rooms/${ROOM}/ask`, remoteAddress: '198.51.100.7', payload: { text, name: 'Hal' } });
    expect((await ask('what did the Rust team ship?')).statusCode).toBe(200);
    const refused = await ask('and when?');
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toMatchObject({ code: 'ERR_RATE_LIMITED', message: expect.stringContaining("this room's messages are shared among") });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const asked = (await t.app.salon.store.recentMessages(ROOM, 50)).filter((m) => m.text.startsWith('@ai '));
    expect(asked.map((m) => m.text)).toEqual(['@ai what did the Rust team ship?']);
    // The member's share is theirs still.
    ann.send({ type: 'say', text: 'Still room for me?', clientId: 'a1' });
    await ann.next('message', (f) => f.message.clientId === 'a1');
    expect(ann.all('error')).toEqual([]);
  });
});
