/**
 * The transport self-test (src/routes/rooms-ws-transport.ts): on this Node the direct TCP writes
 * pass it; where they would not, the server says why and every room socket uses ws's own send.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { checkTransport, setTransportMode, transportMode, transportSelfTest } from '../../src/routes/rooms-ws-transport.js';
import { listen, member, roomsApp } from './helpers.js';

function recordingLog() {
  const lines: { level: 'info' | 'warn'; msg: string }[] = [];
  return {
    lines,
    debug() {},
    info: (_d: object, msg: string) => lines.push({ level: 'info', msg }),
    warn: (_d: object, msg: string) => lines.push({ level: 'warn', msg }),
    error() {},
  };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  setTransportMode('direct');
  for (const close of closers.splice(0)) await close();
});

describe('room socket transport', () => {
  it('passes its self-test on this Node: bytes written through the handle arrive whole and in order', async () => {
    const log = recordingLog();
    // The real loopback probe (small write, then one larger than the socket's buffer), passed in:
    // an app of an earlier test file in this process may have run the cached one already.
    expect(await checkTransport(log, transportSelfTest)).toBe('direct');
    expect(transportMode()).toBe('direct');
    expect(log.lines).toEqual([{ level: 'info', msg: expect.stringContaining('self-test passed') }]);
  });

  it('falls back to ws’s own send when the self-test fails, logs why, and rooms keep working', async () => {
    const log = recordingLog();
    expect(await checkTransport(log, async () => 'a TCP socket has no _handle.writeBuffer')).toBe('ws');
    expect(log.lines).toEqual([{ level: 'warn', msg: expect.stringContaining('a TCP socket has no _handle.writeBuffer') }]);
    expect(log.lines[0].msg).toContain("ws's own send");

    const started = await roomsApp();
    closers.push(started.close);
    const url = await listen(started.app);
    const ana = await member(url(), 'Ana');
    const ben = await member(url(), 'Ben');
    for (let i = 1; i <= 5; i++) ana.client.send({ type: 'say', text: `m${i}`, clientId: `c${i}` });
    await ben.client.next('message', (f) => f.message.seq === 5);
    expect(ben.client.all('message').map((f) => f.message.text)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    // The app's own start-up check must not switch direct writes back on behind the fallback.
    expect(transportMode()).toBe('ws');
  });
});
