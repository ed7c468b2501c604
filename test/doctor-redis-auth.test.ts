/** `salon doctor`'s Redis check (pingRedis) authenticating as ioredis does, whatever the password holds. */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { pingRedis } from '../src/cli/commands/doctor.js';

/** A Redis double that takes one password, in RESP only: an inline AUTH is split at the password's spaces. */
async function fakeRedis(password: string): Promise<{ server: Server; url: (auth: string) => string }> {
  let received = '';
  const auth = `*2\r\n$4\r\nAUTH\r\n$${Buffer.byteLength(password)}\r\n${password}\r\n`;
  const server = createServer((socket) => {
    let authed = false;
    socket.on('data', (d) => {
      received += d.toString('utf8');
      if (!authed && received.includes(auth)) authed = true;
      if (received.includes('PING')) socket.write(authed ? '+PONG\r\n' : '-WRONGPASS invalid username-password pair\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, url: (userinfo) => `redis://${userinfo}@127.0.0.1:${port}` };
}

describe('salon doctor: Redis with a password', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('sends a password with spaces whole, as one RESP command', async () => {
    const redis = await fakeRedis('two words');
    servers.push(redis.server);
    expect(await pingRedis(redis.url(':two%20words'))).toMatchObject({ ok: true });
  });
});
