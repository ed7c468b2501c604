/**
 * WebSocket pings and pongs from a client take a frame's place in its connection's rate
 * (Session.receiveControl): `ws` answers each ping itself, and a client streaming them was never
 * refused or closed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { listen, member, roomsApp } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function room(...args: Parameters<typeof roomsApp>): Promise<(roomId?: string) => string> {
  const t = await roomsApp(...args);
  closers.push(t.close);
  return listen(t.app);
}

describe('pings and pongs from a client', () => {
  it('closes a connection streaming pings with 4429, as one streaming frames', async () => {
    const url = await room();
    const { client } = await member(url(), 'Pinger');
    for (let i = 0; i < 200; i++) client.ws.ping();
    const closed = await client.closed;
    expect(closed.code).toBe(CloseCode.RATE_LIMITED);
    expect(client.all('error').map((e) => e.code)).toContain('ERR_RATE_LIMITED');
  });

  it('closes a connection streaming pongs nobody asked for with 4429', async () => {
    const url = await room();
    const { client } = await member(url(), 'Ponger');
    for (let i = 0; i < 200; i++) client.ws.pong();
    expect((await client.closed).code).toBe(CloseCode.RATE_LIMITED);
  });

  it('keeps a connection that pings now and then, and its messages go out', async () => {
    const url = await room();
    const { client } = await member(url(), 'Calm');
    let pongs = 0;
    client.ws.on('pong', () => pongs++);
    for (let i = 0; i < 3; i++) client.ws.ping();
    client.send({ type: 'say', text: 'still here', clientId: 'c1' });
    await client.next('message', (f) => f.message.clientId === 'c1');
    expect(pongs).toBe(3);
    expect(client.all('error')).toEqual([]);
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });

  it('does not count the pongs that answer the heartbeat, however often it pings', async () => {
    // Ten heartbeat pings a second against a rate of one frame, and three refusals close the socket.
    const url = await room({ ROOM_HEARTBEAT_MS: '100' }, { roomOptions: { ratePerSecond: 1, rateBurst: 1, abuseRejections: 3 } });
    const { client } = await member(url(), 'Steady');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(client.ws.readyState).toBe(client.ws.OPEN);
    client.send({ type: 'say', text: 'still here', clientId: 'c1' });
    await client.next('message', (f) => f.message.clientId === 'c1');
    expect(client.all('error')).toEqual([]);
  });
});
