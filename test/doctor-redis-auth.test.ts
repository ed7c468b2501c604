/** `salon doctor`'s Redis check (pingRedis) authenticating as ioredis does, whatever the password holds. */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { pingRedis } from '../src/cli/commands/doctor.js';

/** A Redis double that takes one password, in RESP only: an inline AUTH is split at the password's spaces. */
/** A server that answers its first bytes with `reply`, whatever they were. */
async function answering(reply: string): Promise<{ server: Server; url: (auth?: string) => string }> {
  const server = createServer((socket) => socket.once('data', () => socket.write(reply)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, url: (userinfo) => `redis://${userinfo ? `${userinfo}@` : ''}127.0.0.1:${port}` };
}

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

  it("passes a Redis that needs no password though REDIS_URL gives one, as the server's ioredis does", async () => {
    // Redis 6 and later, word for word, to AUTH with a password and then PING.
    const redis = await answering(
      '-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n+PONG\r\n',
    );
    servers.push(redis.server);
    expect(await pingRedis(redis.url(':secret'))).toEqual({ ok: true, detail: expect.stringMatching(/answers$/) });
  });

  it("tells a PING refused after AUTH's +OK as the refusal, not as no answer", async () => {
    const redis = await answering("+OK\r\n-NOPERM User salon has no permissions to run the 'ping' command\r\n");
    servers.push(redis.server);
    const result = await pingRedis(redis.url('salon:secret'), 2_000);
    expect(result.ok).toBe(false);
    expect(result.detail).toMatch(/refused: NOPERM User salon has no permissions to run the 'ping' command; check the credentials in REDIS_URL$/);
  });

  it('tells a server that is not Redis as one', async () => {
    const http = await answering('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
    servers.push(http.server);
    const result = await pingRedis(http.url(), 2_000);
    expect(result).toEqual({ ok: false, detail: expect.stringMatching(/does not answer as Redis does; check REDIS_URL$/) });
  });
});
