import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { ADMIN_FAILURES_PER_MINUTE } from '../../src/routes/auth.js';
import { isLoopbackHost, loopbackHostHeader } from '../../src/routes/loopback-host.js';
import { ROOM, connect, listen, roomsApp } from './helpers.js';

const running: { close: () => Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});

async function start(env: Record<string, string> = {}) {
  const started = await roomsApp(env);
  running.push(started);
  const url = await listen(started.app);
  const port = Number(new URL(url()).port);
  return { url, port };
}

/** A raw HTTP request to 127.0.0.1:`port` with `host` as its Host header: status and error code. */
function send(
  port: number,
  method: string,
  path: string,
  host: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; code?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host, 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let code: string | undefined;
        try {
          code = JSON.parse(text).error?.code;
        } catch {
          code = undefined;
        }
        resolve({ status: res.statusCode!, code });
      });
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('a server listening on loopback (DNS rebinding)', () => {
  it('reads HOST and Host headers as loopback or not', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost', '::ffff:127.0.0.1']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'salon.example']) expect(isLoopbackHost(host)).toBe(false);
    for (const header of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000', 'LOCALHOST:3000', 'salon.localhost:3000'])
      expect(loopbackHostHeader(header, 3000)).toBe(true);
    for (const header of [
      'attacker.example:3000',
      '127.0.0.1:3001',
      'localhost',
      '[::1]',
      '127.0.0.1.attacker.example:3000',
      'localhost.attacker.example:3000',
      '10.0.0.1:3000',
      '',
    ]) {
      expect(loopbackHostHeader(header, 3000)).toBe(false);
    }
    expect(loopbackHostHeader('localhost', 80)).toBe(true);
    expect(loopbackHostHeader(undefined, 3000)).toBe(true);
  });

  it('refuses a write whose Host names another domain, and takes it from localhost and 127.0.0.1 with the port', async () => {
    const { port } = await start();
    const ask = { text: 'what is new in rust?' };
    expect(await send(port, 'POST', `/api/v1/rooms/${ROOM}/ask`, `rebind.attacker.example:${port}`, ask)).toEqual({
      status: 403,
      code: 'ERR_HOST_NOT_ALLOWED',
    });
    expect(await send(port, 'POST', `/api/v1/rooms/${ROOM}/ask`, `127.0.0.1:${port + 1}`, ask)).toEqual({ status: 403, code: 'ERR_HOST_NOT_ALLOWED' });
    expect((await send(port, 'POST', `/api/v1/rooms/${ROOM}/ask`, `localhost:${port}`, ask)).status).toBe(200);
    expect((await send(port, 'POST', `/api/v1/rooms/${ROOM}/ask`, `127.0.0.1:${port}`, ask)).status).toBe(200);
  });

  it('refuses reads whose Host names another domain too: a rebinding page reads what it fetches', async () => {
    const { port } = await start();
    const evil = `rebind.attacker.example:${port}`;
    const reads = ['/api/v1/rooms', `/api/v1/rooms/${ROOM}/threads`, `/api/v1/rooms/${ROOM}/messages`, '/api/v1/sources', '/metrics', '/readyz', '/'];
    for (const path of reads) {
      expect(await send(port, 'GET', path, evil)).toEqual({ status: 403, code: 'ERR_HOST_NOT_ALLOWED' });
      expect((await send(port, 'HEAD', path, evil)).status).toBe(403);
    }
    expect(await send(port, 'GET', `/ws/rooms/${ROOM}`, evil)).toEqual({ status: 403, code: 'ERR_HOST_NOT_ALLOWED' });
    // Liveness says nothing but that the process is up; monitors probe it by the machine's name.
    expect((await send(port, 'GET', '/healthz', evil)).status).toBe(200);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      expect((await send(port, 'GET', '/api/v1/rooms', host)).status).toBe(200);
      expect((await send(port, 'GET', `/api/v1/rooms/${ROOM}/threads`, host)).status).toBe(200);
      expect((await send(port, 'GET', '/metrics', host)).status).toBe(200);
    }
  });

  it('refuses a rebinding page’s admin token guesses before they are counted: the operator on 127.0.0.1 is not locked out', async () => {
    const { port } = await start();
    const evil = `rebind.attacker.example:${port}`;
    const wrong = { authorization: 'Bearer guess' };
    for (let i = 0; i < 2 * ADMIN_FAILURES_PER_MINUTE; i++) {
      expect(await send(port, 'GET', '/api/v1/threads/thr_x/split', evil, undefined, wrong)).toEqual({ status: 403, code: 'ERR_HOST_NOT_ALLOWED' });
      expect(await send(port, 'POST', '/api/v1/threads/thr_x/unlock', evil, {}, wrong)).toEqual({ status: 403, code: 'ERR_HOST_NOT_ALLOWED' });
    }
    const admin = { authorization: 'Bearer test-admin-token' };
    expect(await send(port, 'GET', '/api/v1/threads/thr_x/split', `127.0.0.1:${port}`, undefined, admin)).toEqual({
      status: 404,
      code: 'ERR_THREAD_NOT_FOUND',
    });
  });

  it('closes a room socket whose Host names another domain with 4403, even from its own Origin', async () => {
    const { url, port } = await start();
    const evil = `rebind.attacker.example:${port}`;
    const refused = await connect(url(), { headers: { host: evil, origin: `http://${evil}` } });
    expect((await refused.next('error')).code).toBe('ERR_HOST_NOT_ALLOWED');
    expect((await refused.closed).code).toBe(CloseCode.ORIGIN_NOT_ALLOWED);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      const ok = await connect(url(), { headers: { host, origin: `http://${host}` } });
      ok.send({ type: 'hello', name: 'Ana' });
      await ok.next('welcome');
      ok.ws.close();
    }
  });

  it('takes any Host when listening beyond loopback, or behind a proxy', async () => {
    for (const env of [{ HOST: '0.0.0.0' }, { TRUST_PROXY: '1' }] as Record<string, string>[]) {
      const { url, port } = await start(env);
      const host = `salon.example:${port}`;
      expect((await send(port, 'POST', `/api/v1/rooms/${ROOM}/ask`, host, { text: 'rust?' })).status).toBe(200);
      expect((await send(port, 'GET', `/api/v1/rooms/${ROOM}/threads`, host)).status).toBe(200);
      const ok = await connect(url(), { headers: { host, origin: `http://${host}` } });
      ok.send({ type: 'hello', name: 'Ana' });
      await ok.next('welcome');
      ok.ws.close();
    }
  });
});
