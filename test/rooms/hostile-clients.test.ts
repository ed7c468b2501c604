/** Regression tests for inputs that once ended the process: no client frame may close more than its own connection. */
import { connect as tcpConnect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLOSE_REASONS, CloseCode, MAX_CLOSE_REASON_BYTES } from '../../src/protocol/close-codes.js';
import { Session } from '../../src/rooms/session.js';
import { connect, listen, member, roomsApp } from './helpers.js';

type Started = Awaited<ReturnType<typeof roomsApp>>;
let running: Started[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(running.map((r) => r.close()));
  running = [];
});

async function start(): Promise<Started & { url: (roomId?: string) => string }> {
  const started = await roomsApp();
  running.push(started);
  return { ...started, url: await listen(started.app) };
}

describe('hostile room clients', () => {
  it('every close reason fits the 123 bytes a close frame allows', () => {
    for (const reason of Object.values(CLOSE_REASONS)) expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(MAX_CLOSE_REASON_BYTES);
  });

  it('survives unknown types of multi-byte characters (the close reason once echoed them and ws threw)', async () => {
    const { url } = await start();
    const bystander = await member(url(), 'Bystander');
    const attacker = await connect(url());
    for (let i = 0; i < 20; i++) attacker.send(JSON.stringify({ type: '€'.repeat(40) }));
    const closed = await attacker.closed;
    expect(closed.code).toBe(CloseCode.BAD_MESSAGE);
    expect(closed.reason).toBe(CLOSE_REASONS[CloseCode.BAD_MESSAGE]);
    expect(attacker.all('error').every((e) => e.code === 'ERR_BAD_MESSAGE')).toBe(true);
    bystander.client.send({ type: 'say', text: 'still here', clientId: 'b1' });
    await bystander.client.next('message', (f) => f.message.text === 'still here');
    // The node still accepts newcomers.
    await member(url(), 'Newcomer');
  });

  it('echoes a message with half a surrogate pair as it stores it, one U+FFFD in its place', async () => {
    const { app, url } = await start();
    const ana = await member(url(), 'Ana');
    ana.client.send({ type: 'say', text: 'a\ud800b \udc00 ok \ud83d\ude00', clientId: 's1' });
    const echoed = (await ana.client.next('message', (f) => f.message.clientId === 's1')).message;
    expect(echoed.text).toBe('a\ufffdb \ufffd ok \ud83d\ude00');
    const stored = (await app.inject(`/api/v1/rooms/${echoed.roomId}/messages`)).json().messages;
    expect(stored.map((m: { text: string }) => m.text)).toEqual([echoed.text]);
  });

  it('echoes a message with a NUL as it stores it, U+FFFD in its place', async () => {
    const { app, url } = await start();
    const ana = await member(url(), 'Ana');
    ana.client.send({ type: 'say', text: 'a\u0000b', clientId: 'n1' });
    const echoed = (await ana.client.next('message', (f) => f.message.clientId === 'n1')).message;
    expect(echoed.text).toBe('a\ufffdb');
    const stored = (await app.inject(`/api/v1/rooms/${echoed.roomId}/messages`)).json().messages;
    expect(stored).toEqual([echoed]);
  });

  it('echoes a name and a clientId with half a surrogate pair as it stores them, and matches a resend by that clientId', async () => {
    const { app, url } = await start();
    const ana = await connect(url());
    const welcome = await ana.hello('Ana\ud800');
    expect(welcome.you.name).toBe('Ana\ufffd');
    ana.send('{"type":"say","text":"first","clientId":"id\\ud800"}');
    const echoed = (await ana.next('message')).message;
    expect(echoed).toMatchObject({ clientId: 'id\ufffd', author: { name: 'Ana\ufffd' } });
    ana.send('{"type":"say","text":"resent","clientId":"id\\ud800"}');
    expect((await ana.next('message')).message).toEqual(echoed);
    const stored = (await app.inject(`/api/v1/rooms/${echoed.roomId}/messages`)).json().messages;
    expect(stored).toEqual([echoed]);
  });

  it('closes only the failing connection with 1011 when a frame handler throws', async () => {
    const { url } = await start();
    const bystander = await member(url(), 'Bystander');
    const victim = await member(url(), 'Victim');
    const original = Session.prototype.receive;
    vi.spyOn(Session.prototype, 'receive').mockImplementation(function (this: Session, raw: string) {
      if (raw.includes('boom')) throw new Error('handler bug');
      return original.call(this, raw);
    });
    victim.client.send({ type: 'say', text: 'boom', clientId: 'v1' });
    const closed = await victim.client.closed;
    expect(closed.code).toBe(CloseCode.INTERNAL_ERROR);
    bystander.client.send({ type: 'say', text: 'unaffected', clientId: 'b1' });
    await bystander.client.next('message', (f) => f.message.text === 'unaffected');
  });

  it('ends the socket of an upgrade refused with an HTTP error (it stayed half-open and held shutdown)', async () => {
    const { url } = await start();
    const port = Number(new URL(url()).port);
    for (const path of ['/ws/rooms/%E2%82%AC%00%FF', `/ws/rooms/${'a'.repeat(8_000)}`]) {
      const answer = await new Promise<{ status: string; endedByServer: boolean }>((resolve) => {
        const socket = tcpConnect(port, '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => (received += chunk.toString('latin1')));
        // The client never ends its side: only the server can close this socket.
        socket.on('close', () => resolve({ status: received.split('\r\n')[0], endedByServer: true }));
        socket.write(
          [
            `GET ${path} HTTP/1.1`,
            'Host: 127.0.0.1',
            'Connection: Upgrade',
            'Upgrade: websocket',
            'Sec-WebSocket-Version: 13',
            'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
            '',
            '',
          ].join('\r\n'),
        );
      });
      expect(answer.status).toMatch(/^HTTP\/1\.1 4\d\d /);
      expect(answer.endedByServer).toBe(true);
    }
  });
});
