/**
 * The HTTP API behind the open internet: per-address request limits on the routes that cost work
 * (@fastify/rate-limit), the client address taken from X-Forwarded-For only when TRUST_PROXY names
 * the proxy, and request timeouts.
 */
import { connect, type AddressInfo, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { errors } from '../src/errors.js';
import { MEMBER_THREAD_CHANGES_PER_MINUTE, ThreadChangeGate } from '../src/memory/threads/change-gate.js';
import { defaultConnectionCap, HTTP_RESERVE_CONNECTIONS, HTTP_RESERVE_PER_ADDRESS, HTTP_RESERVE_REQUEST_MS, loadConfig, openFileLimit } from '../src/config.js';
import { AI_READINESS_FRESH_MS } from '../src/plugins/ai.js';
import { isLocalNetworkAddress } from '../src/rooms/address.js';
import { ADMIN_FAILURES_PER_MINUTE, AdminAuth } from '../src/routes/auth.js';
import { trustsPeer } from '../src/routes/connection-cap.js';
import { installErrorHandlers } from '../src/routes/error-handler.js';
import { startFakeOllama } from './fakes/ollama-server.js';
import { ADMIN, testApp } from './helpers.js';
import { item } from './store/contract.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function app(env: Record<string, string>) {
  const t = await testApp(env as never);
  close = t.close;
  return t.app;
}

describe('API rate limits', () => {
  it('answers 429 ERR_RATE_LIMITED with Retry-After past the per-address budget of a route, on API routes only', async () => {
    const a = await app({ API_RATE_LIMIT_PER_MINUTE: '3' });
    const get = (url: string, remoteAddress = '198.51.100.1') => a.inject({ method: 'GET', url, remoteAddress });
    for (let i = 0; i < 3; i++) expect((await get('/api/v1/content')).statusCode).toBe(200);
    const limited = await get('/api/v1/content');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('ERR_RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The budget is per route and per address (an IPv6 /64 is one address).
    expect((await get('/api/v1/search?q=rust')).statusCode).toBe(200);
    expect((await get('/api/v1/content', '198.51.100.2')).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) await get('/api/v1/content', '2001:db8:5:6::1');
    expect((await get('/api/v1/content', '2001:db8:5:6:ffff::9')).statusCode).toBe(429);
    // Health checks and pages are not API work.
    expect((await get('/healthz')).statusCode).toBe(200);
  });

  it('limits scrapes of /metrics and of the OpenAPI document, which render kilobytes of text each', async () => {
    const a = await app({ API_RATE_LIMIT_PER_MINUTE: '2' });
    const get = (url: string) => a.inject({ method: 'GET', url, remoteAddress: '198.51.100.9' });
    const first = await get('/api/v1/openapi.json');
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    expect(first.json().paths['/api/v1/search']).toBeDefined();
    // Served from the one serialisation.
    expect((await get('/api/v1/openapi.json')).body).toBe(first.body);
    expect((await get('/api/v1/openapi.json')).json().error.code).toBe('ERR_RATE_LIMITED');
    for (let i = 0; i < 2; i++) expect((await get('/metrics')).statusCode).toBe(200);
    expect((await get('/metrics')).statusCode).toBe(429);
  });

  it('limits the room listings, which read every member of the rooms they list', async () => {
    const a = await app({ API_RATE_LIMIT_PER_MINUTE: '2' });
    const get = (url: string) => a.inject({ method: 'GET', url, remoteAddress: '198.51.100.7' });
    for (const url of ['/api/v1/rooms', '/api/v1/rooms/news_nope']) {
      for (let i = 0; i < 2; i++) expect((await get(url)).statusCode).not.toBe(429);
      expect((await get(url)).json().error.code).toBe('ERR_RATE_LIMITED');
    }
  });

  it('limits the source listings, which read every source from the store, per address', async () => {
    const a = await app({ API_RATE_LIMIT_PER_MINUTE: '2' });
    const get = (url: string, remoteAddress: string) => a.inject({ method: 'GET', url, remoteAddress });
    for (const url of ['/api/v1/sources', '/api/v1/sources/src_nope']) {
      for (let i = 0; i < 2; i++) expect((await get(url, '198.51.100.11')).statusCode).not.toBe(429);
      const limited = await get(url, '198.51.100.11');
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error.code).toBe('ERR_RATE_LIMITED');
      expect(limited.headers['retry-after']).toBeDefined();
      // Another address has a budget of its own.
      expect((await get(url, '198.51.100.12')).statusCode).not.toBe(429);
    }
  });
});

describe('admin token guesses', () => {
  const wrong = { authorization: 'Bearer not-the-admin-token' };

  it('answers 429 on every admin route, the right token included, to an address past 10 failed attempts a minute', async () => {
    const a = await app({});
    const from = (remoteAddress: string, headers: Record<string, string>, method: 'POST' | 'DELETE', url: string) =>
      a.inject({ method, url, remoteAddress, headers, payload: method === 'POST' ? {} : undefined });
    // Failures count together over the admin routes: thread operations, deletions, ingest.
    for (let i = 0; i < 4; i++) expect((await from('198.51.100.7', wrong, 'POST', '/api/v1/threads/merge')).statusCode).toBe(401);
    for (let i = 0; i < 3; i++) expect((await from('198.51.100.7', wrong, 'DELETE', '/api/v1/threads/nope')).statusCode).toBe(401);
    for (let i = 0; i < 3; i++) expect((await from('198.51.100.7', wrong, 'POST', '/api/v1/ingest')).statusCode).toBe(401);
    const blocked = await from('198.51.100.7', ADMIN, 'POST', '/api/v1/threads/merge');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().error.code).toBe('ERR_RATE_LIMITED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await from('198.51.100.7', ADMIN, 'DELETE', '/api/v1/threads/nope')).statusCode).toBe(429);
    // Another address (an IPv6 /64 is one) is not held back; the token still works from it.
    expect((await from('198.51.100.8', ADMIN, 'DELETE', '/api/v1/threads/nope')).statusCode).toBe(404);
    for (let i = 0; i < 10; i++) await from(`2001:db8:7::${i}`, wrong, 'DELETE', '/api/v1/threads/nope');
    expect((await from('2001:db8:7::ff', ADMIN, 'DELETE', '/api/v1/threads/nope')).statusCode).toBe(429);
  });

  it('counts a wrong token offered to /readyz, and then shows no details to that address', async () => {
    const a = await app({});
    const readyz = (headers: Record<string, string>) => a.inject({ method: 'GET', url: '/readyz', remoteAddress: '198.51.100.9', headers });
    expect((await readyz(ADMIN)).json().checks.store.detail).toBeDefined();
    // No token is no attempt.
    for (let i = 0; i < 20; i++) await readyz({});
    for (let i = 0; i < 10; i++) expect((await readyz(wrong)).json().checks.store.detail).toBeUndefined();
    expect((await readyz(ADMIN)).json().checks.store.detail).toBeUndefined();
  });

  it('counts no request that offers no bearer token, so a scanner or a client without one cannot lock the admin out', async () => {
    const a = await app({});
    const from = (headers: Record<string, string>) => a.inject({ method: 'DELETE', url: '/api/v1/threads/nope', remoteAddress: '198.51.100.10', headers });
    for (let i = 0; i < 2 * ADMIN_FAILURES_PER_MINUTE; i++) {
      expect((await from({})).statusCode).toBe(401);
      expect((await from({ authorization: 'Basic YWRtaW46YWRtaW4=' })).statusCode).toBe(401);
      expect((await from({ authorization: 'Bearer' })).statusCode).toBe(401);
    }
    expect((await from(ADMIN)).statusCode).toBe(404);
  });

  it('logs the address a lock-out holds back, once, with a hint when it is a local proxy', async () => {
    const a = await app({});
    const warn = vi.spyOn(a.log, 'warn');
    const guess = (remoteAddress: string) =>
      a.inject({ method: 'DELETE', url: '/api/v1/threads/nope', remoteAddress, headers: { authorization: 'Bearer not-the-admin-token' } });
    for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE + 5; i++) await guess('198.51.100.11');
    for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE; i++) await guess('10.0.0.2');
    const lines = warn.mock.calls.map((c) => String(c[1]));
    expect(lines.filter((l) => l.includes('198.51.100.11'))).toEqual([expect.stringMatching(/10 failed admin attempts .* refused for a minute$/)]);
    expect(lines.filter((l) => l.includes('10.0.0.2'))).toEqual([expect.stringMatching(/set TRUST_PROXY to its address$/)]);
    expect(lines.join('\n')).not.toContain('not-the-admin-token');
  });

  it('remembers the failures of a bounded number of addresses, however many guess within a minute', () => {
    const auth = new AdminAuth('the-right-admin-token', 1_000);
    for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE; i++) auth.check('Bearer guess', '203.0.113.5', 0);
    // IPv6 gives one client a /64 per guess; each is a new address.
    for (let i = 0; i < 20_000; i++) {
      auth.check('Bearer guess', `2001:db8:${i.toString(16)}::1`, 1);
      expect(auth.addresses).toBeLessThanOrEqual(1_000);
    }
  });

  it('lets an address try again once its oldest failure is a minute old', () => {
    const auth = new AdminAuth('the-right-admin-token');
    for (let i = 0; i < ADMIN_FAILURES_PER_MINUTE - 1; i++)
      expect(auth.check('Bearer guess', '203.0.113.5', 1_000 + i)).toEqual({ ok: false, blockedForMs: 0 });
    expect(auth.check('Bearer guess', '203.0.113.5', 1_009)).toEqual({ ok: false, blockedForMs: 0, lockedOut: true });
    expect(auth.check('Bearer the-right-admin-token', '203.0.113.5', 30_000)).toEqual({ ok: false, blockedForMs: 31_000 });
    expect(auth.check('Bearer the-right-admin-token', '203.0.113.5', 61_000)).toEqual({ ok: true });
  });
});

describe('TRUST_PROXY', () => {
  it('ignores X-Forwarded-For unless the proxy is trusted', async () => {
    const a = await app({ API_RATE_LIMIT_PER_MINUTE: '1' });
    const viaProxy = (forwarded: string) =>
      a.inject({ method: 'GET', url: '/api/v1/content', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': forwarded } });
    expect((await viaProxy('203.0.113.1')).statusCode).toBe(200);
    // Without TRUST_PROXY a forged header changes nothing: the proxy's own address is limited.
    expect((await viaProxy('203.0.113.2')).statusCode).toBe(429);
  });

  it('warns once, naming TRUST_PROXY, when a local proxy forwards requests it does not trust', async () => {
    const a = await app({});
    const warn = vi.spyOn(a.log, 'warn');
    const proxied = (remoteAddress: string, headers: Record<string, string>) => a.inject({ url: '/healthz', remoteAddress, headers });
    // A stranger on the internet sending the header is no proxy of ours: no advice to trust it.
    await proxied('203.0.113.9', { 'x-forwarded-for': '198.51.100.1' });
    await proxied('127.0.0.1', {});
    expect(warn).not.toHaveBeenCalled();
    await proxied('127.0.0.1', { 'x-forwarded-for': '198.51.100.1' });
    await proxied('10.1.2.3', { forwarded: 'for=198.51.100.2' });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatchObject({ proxy: '127.0.0.1', variable: 'TRUST_PROXY' });
    expect(String(warn.mock.calls[0][1])).toContain('TRUST_PROXY=127.0.0.1');
  });

  it('takes loopback, private, shared and link-local addresses for a local proxy, and nothing public', () => {
    for (const ip of ['127.0.0.1', '::1', '::ffff:10.0.0.7', '172.20.1.1', '192.168.1.9', '100.64.0.1', '169.254.1.1', 'fd00::1', 'fe80::1%eth0'])
      expect(isLocalNetworkAddress(ip), ip).toBe(true);
    for (const ip of ['203.0.113.9', '172.32.0.1', '::ffff:8.8.8.8', '2001:db8::1', 'not an address']) expect(isLocalNetworkAddress(ip), ip).toBe(false);
  });

  it('does not warn when TRUST_PROXY names the proxy', async () => {
    const a = await app({ TRUST_PROXY: '127.0.0.1' });
    const warn = vi.spyOn(a.log, 'warn');
    await a.inject({ url: '/healthz', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '198.51.100.1' } });
    expect(warn).not.toHaveBeenCalled();
  });

  it('takes the client address from X-Forwarded-For when the proxy is trusted', async () => {
    const a = await app({ API_RATE_LIMIT_PER_MINUTE: '1', TRUST_PROXY: '10.0.0.1' });
    const viaProxy = (forwarded: string) =>
      a.inject({ method: 'GET', url: '/api/v1/content', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': forwarded } });
    expect((await viaProxy('203.0.113.1')).statusCode).toBe(200);
    expect((await viaProxy('203.0.113.2')).statusCode).toBe(200);
    expect((await viaProxy('203.0.113.1')).statusCode).toBe(429);
  });

  it('accepts false, true, a hop count or proxy addresses, and names the variable otherwise', () => {
    expect(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16, ::1' }).TRUST_PROXY).toEqual(['10.0.0.1', '192.168.0.0/16', '::1']);
    expect(() => loadConfig({ TRUST_PROXY: 'my proxy' })).toThrow(/TRUST_PROXY/);
  });

  it('refuses proxy entries proxy-addr would refuse at start-up, naming the variable', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, fd00::/8, ::ffff:10.0.0.5, 192.168.1.1/32' }).TRUST_PROXY).toHaveLength(4);
    for (const value of ['deadbeef', '...', '10.0.0.5/99', '10.0.0.5/0', '::1/129', '10.0.0.5/8/8', '10.0.0.256', '10.0.0.5/']) {
      expect(() => loadConfig({ TRUST_PROXY: `10.0.0.1, ${value}` }), value).toThrow(/^TRUST_PROXY: /);
    }
  });
});

describe('connections per address', () => {
  /** A TCP connection to `port` that sends one keep-alive request: its status line, or 'closed' when closed unanswered. */
  const held: Socket[] = [];
  afterEach(() => {
    for (const socket of held.splice(0)) socket.destroy();
  });
  function ask(port: number): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      held.push(socket);
      let got = '';
      socket.on('data', (d) => {
        got += d;
        if (got.includes('\r\n\r\n')) resolve(got.split('\r\n')[0]);
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve(got.split('\r\n')[0] || 'closed'));
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    });
  }

  it('closes a new connection from an address that holds HTTP_MAX_CONNECTIONS_PER_IP already, and serves it again once one closes', async () => {
    const a = await app({ HTTP_MAX_CONNECTIONS_PER_IP: '3' });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    for (let i = 0; i < 3; i++) expect(await ask(port)).toBe('HTTP/1.1 200 OK');
    expect(await ask(port)).toBe('closed');
    held[0].destroy();
    await vi.waitFor(async () => expect(await ask(port)).toBe('HTTP/1.1 200 OK'), { timeout: 10_000 });
  });

  it('does not count a proxy TRUST_PROXY trusts', async () => {
    const a = await app({ HTTP_MAX_CONNECTIONS_PER_IP: '2', TRUST_PROXY: '127.0.0.1' });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    for (let i = 0; i < 4; i++) expect(await ask(port)).toBe('HTTP/1.1 200 OK');
  });

  it('takes a peer for a trusted proxy as TRUST_PROXY names it', () => {
    expect(trustsPeer(false)('127.0.0.1')).toBe(false);
    expect(trustsPeer(true)('203.0.113.1')).toBe(true);
    expect(trustsPeer(1)('203.0.113.1')).toBe(true);
    const listed = trustsPeer(['10.0.0.0/8', '::ffff:192.0.2.5', 'fd00::/8']);
    for (const ip of ['10.1.2.3', '::ffff:10.1.2.3', '192.0.2.5', 'fd00::7']) expect(listed(ip), ip).toBe(true);
    for (const ip of ['11.0.0.1', '192.0.2.6', 'fe80::1']) expect(listed(ip), ip).toBe(false);
  });
});

describe('connections on the node', () => {
  const held: Socket[] = [];
  afterEach(() => {
    for (const socket of held.splice(0)) socket.destroy();
  });
  /**
   * A keep-alive GET of `path` on a new connection (from `localAddress`, a loopback address): its
   * status line, head and body, or 'closed' when closed unanswered.
   */
  function get(port: number, path: string, headers = '', localAddress?: string): Promise<{ status: string; head: string; body: string }> {
    return new Promise((resolve) => {
      const socket = connect({ port, host: '127.0.0.1', localAddress });
      held.push(socket);
      let got = '';
      const answer = () => {
        const [head, body = ''] = got.split('\r\n\r\n');
        return { status: head.split('\r\n')[0] || 'closed', head, body };
      };
      socket.on('data', (d) => {
        got += d;
        const length = /content-length: (\d+)/i.exec(got)?.[1];
        if (length !== undefined && answer().body.length >= Number(length)) resolve(answer());
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve(answer()));
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n${headers}\r\n`);
    });
  }

  /** A connection that sends nothing, from `localAddress` (a loopback address). */
  function idle(port: number, localAddress?: string): Socket {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    socket.on('error', () => {});
    held.push(socket);
    return socket;
  }
  /**
   * Waits until the server holds `n` connections (without timers: tests here fake them). Node counts
   * a connection gone when it is destroyed, and its `close` listeners (the caps' own count) run in
   * the loop's close phase: two turns more see them run.
   */
  async function serverHolds(a: FastifyInstance, n: number): Promise<void> {
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    for (;;) {
      const open = await new Promise<number>((resolve, reject) => a.server.getConnections((err, count) => (err ? reject(err) : resolve(count))));
      if (open === n) break;
      await turn();
    }
    await turn();
    await turn();
  }

  it('serves HTTP_MAX_CONNECTIONS connections from every address together, keeps a reserve for health and admin requests, and counts what it refuses', async () => {
    // The per-address cap is out of the way: the loopback peer is a trusted proxy.
    const a = await app({ HTTP_MAX_CONNECTIONS: '2', TRUST_PROXY: '127.0.0.1' });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    for (let i = 0; i < 2; i++) expect((await get(port, '/api/v1/content')).status).toBe('HTTP/1.1 200 OK');
    // Past the cap: the reserve answers an API request 503 and closes, but serves an admin and the health routes.
    const refused = await get(port, '/api/v1/content');
    expect(refused.status).toBe('HTTP/1.1 503 Service Unavailable');
    expect(JSON.parse(refused.body).error.code).toBe('ERR_SERVER_FULL');
    expect((await get(port, '/api/v1/content', `authorization: ${ADMIN.authorization}\r\n`)).status).toBe('HTTP/1.1 200 OK');
    await serverHolds(a, 2);
    // Connections that send nothing fill the reserve while the clock stands still.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (let i = 0; i < HTTP_RESERVE_CONNECTIONS; i++) idle(port);
      await serverHolds(a, 2 + HTTP_RESERVE_CONNECTIONS);
      // Past the reserve a new connection is closed unanswered, whatever it asks.
      expect((await get(port, '/healthz')).status).toBe('closed');
      const metrics = (await a.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toContain('salon_connections_refused_total{limit="node"} 2');
    } finally {
      vi.useRealTimers();
    }
    // A connection that closes makes room for a new one.
    held[0].destroy();
    await vi.waitFor(async () => expect((await get(port, '/healthz')).status).toBe('HTTP/1.1 200 OK'), { timeout: 10_000 });
  });

  it('cuts a connection of the reserve that sends no request in HTTP_RESERVE_REQUEST_MS, and closes one once it is answered', async () => {
    const a = await app({ HTTP_MAX_CONNECTIONS: '1', TRUST_PROXY: '127.0.0.1' });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    expect((await get(port, '/healthz')).status).toBe('HTTP/1.1 200 OK');
    await serverHolds(a, 1);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      // A health check on the reserve is served once, and the connection closed after its answer.
      const probe = await get(port, '/healthz');
      expect(probe.status).toBe('HTTP/1.1 200 OK');
      expect(probe.head.toLowerCase()).toContain('connection: close');
      await serverHolds(a, 1);
      // Idle ones are held until the reserve's time runs out, not the request timeout's 30 s.
      for (let i = 0; i < HTTP_RESERVE_CONNECTIONS; i++) idle(port);
      await serverHolds(a, 1 + HTTP_RESERVE_CONNECTIONS);
      expect((await get(port, '/healthz')).status).toBe('closed');
      vi.advanceTimersByTime(HTTP_RESERVE_REQUEST_MS);
      await serverHolds(a, 1);
    } finally {
      vi.useRealTimers();
    }
    expect((await get(port, '/healthz')).status).toBe('HTTP/1.1 200 OK');
  });

  it('gives one address at most HTTP_RESERVE_PER_ADDRESS connections of the reserve', async () => {
    const a = await app({ HTTP_MAX_CONNECTIONS: '1' });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    expect((await get(port, '/healthz', '', '127.0.0.1')).status).toBe('HTTP/1.1 200 OK');
    await serverHolds(a, 1);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (let i = 0; i < HTTP_RESERVE_PER_ADDRESS; i++) idle(port, '127.0.0.1');
      await serverHolds(a, 1 + HTTP_RESERVE_PER_ADDRESS);
      expect((await get(port, '/healthz', '', '127.0.0.1')).status).toBe('closed');
      // Another address still reaches /healthz.
      expect((await get(port, '/healthz', '', '127.0.0.2')).status).toBe('HTTP/1.1 200 OK');
    } finally {
      vi.useRealTimers();
    }
    expect((await a.inject({ method: 'GET', url: '/metrics' })).body).toContain('salon_connections_refused_total{limit="address"} 1');
  });

  it('answers an upgrade on a connection from the reserve 503 ERR_SERVER_FULL: room sockets do not take it', async () => {
    const a = await app({ HTTP_MAX_CONNECTIONS: '1' });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    expect((await get(port, '/healthz')).status).toBe('HTTP/1.1 200 OK');
    const upgrade = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      held.push(socket);
      let got = '';
      socket.on('data', (d) => (got += d));
      socket.on('error', () => {});
      socket.on('close', () => resolve(got));
      socket.write(
        'GET /ws/rooms/news_1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
    });
    expect(upgrade.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable');
    expect(JSON.parse(upgrade.split('\r\n\r\n')[1]).error.code).toBe('ERR_SERVER_FULL');
  });

  it('counts connections refused by the per-address cap apart', async () => {
    const a = await app({ HTTP_MAX_CONNECTIONS_PER_IP: '1' });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    expect((await get(port, '/healthz')).status).toBe('HTTP/1.1 200 OK');
    expect((await get(port, '/healthz')).status).toBe('closed');
    expect((await a.inject({ method: 'GET', url: '/metrics' })).body).toContain('salon_connections_refused_total{limit="address"} 1');
  });

  it('defaults HTTP_MAX_CONNECTIONS to three quarters of the open-file limit, at most 25,000, and refuses a bad value naming it', () => {
    expect(openFileLimit(() => 'Limit   Soft Limit   Hard Limit   Units\nMax open files            1024                 524288               files\n')).toBe(
      1024,
    );
    expect(openFileLimit(() => 'Max open files            unlimited            unlimited            files\n')).toBeUndefined();
    expect(
      openFileLimit(() => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
    expect(defaultConnectionCap(1024)).toBe(768);
    expect(defaultConnectionCap(1_048_576)).toBe(25_000);
    expect(defaultConnectionCap(undefined)).toBe(7_500);
    expect(loadConfig({}).HTTP_MAX_CONNECTIONS).toBe(defaultConnectionCap(openFileLimit()));
    for (const bad of ['0', 'many', '-5', '1.5']) expect(() => loadConfig({ HTTP_MAX_CONNECTIONS: bad }), bad).toThrow(/^HTTP_MAX_CONNECTIONS: /);
  });
});

describe('HTTP timeouts', () => {
  it('cuts off clients that trickle a request and bounds idle keep-alives', async () => {
    const a = await app({ HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '7000' });
    expect(a.server.requestTimeout).toBe(5000);
    expect(a.server.headersTimeout).toBe(5000);
    expect(a.server.keepAliveTimeout).toBe(7000);
  });

  it('starts and listens with either end of each timeout range, past Node’s own default request timeout included', async () => {
    for (const [requestMs, keepAliveMs] of [
      ['1000', '1000'],
      ['300001', '65000'],
      ['600000', '600000'],
    ]) {
      const a = await app({ HTTP_REQUEST_TIMEOUT_MS: requestMs, HTTP_KEEP_ALIVE_TIMEOUT_MS: keepAliveMs });
      await a.listen({ host: '127.0.0.1', port: 0 });
      expect(a.server.requestTimeout).toBe(Number(requestMs));
      expect(a.server.headersTimeout).toBe(Number(requestMs));
      expect(a.server.keepAliveTimeout).toBe(Number(keepAliveMs));
      await close!();
      close = undefined;
    }
  });

  it('closes a connection that sends nothing, or half its headers, once HTTP_REQUEST_TIMEOUT_MS has passed', async () => {
    const a = await app({ HTTP_REQUEST_TIMEOUT_MS: '1000' });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    // Node's own limits held both 60-90 s: headers have a limit of their own (60 s), checked every 30 s.
    const closed = (first: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => first && socket.write(first));
        let got = '';
        socket.on('data', (d) => (got += d));
        socket.on('error', () => {});
        socket.on('close', () => resolve(got.split('\r\n')[0] || 'closed'));
        setTimeout(() => {
          resolve('still open');
          socket.destroy();
        }, 20_000).unref();
      });
    const [silent, partial] = await Promise.all([closed(''), closed('GET /healthz HTTP/1.1\r\nHost: x\r\n')]);
    expect(silent).not.toBe('still open');
    expect(partial).toBe('HTTP/1.1 408 Request Timeout');
  });
});

describe('answers a client does not take', () => {
  const held: Socket[] = [];
  afterEach(() => {
    for (const socket of held.splice(0)) socket.destroy();
  });
  const connections = (a: FastifyInstance) => new Promise<number>((resolve, reject) => a.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  it('cuts a connection whose client takes nothing of its answer for HTTP_REQUEST_TIMEOUT_MS', async () => {
    const a = await app({ HTTP_REQUEST_TIMEOUT_MS: '1000' });
    await a.ready();
    // Far more than the loopback's socket buffers take: most of it waits in the server's memory.
    await a.salon.store.upsertItem(item('news_big', { title: 'Big', body: 'x'.repeat(16_000_000) }));
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    held.push(socket);
    socket.on('error', () => {});
    socket.pause();
    socket.write(`GET /api/v1/content/news_big HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await vi.waitFor(async () => expect(await connections(a)).toBe(1), { timeout: 10_000 });
    // Node held it until the client read or left, however long that took.
    await vi.waitFor(async () => expect(await connections(a)).toBe(0), { timeout: 20_000, interval: 100 });
  });

  it('leaves an idle keep-alive connection to the keep-alive timeout once its answer is taken', async () => {
    const a = await app({ HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '60000' });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    held.push(socket);
    let got = '';
    socket.on('data', (d) => (got += d));
    const answers = () => got.split('HTTP/1.1 200 OK').length - 1;
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await vi.waitFor(() => expect(answers()).toBe(1), { timeout: 10_000 });
    // Longer than the answer's timeout: only the keep-alive timeout applies to an idle connection.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await vi.waitFor(() => expect(answers()).toBe(2), { timeout: 10_000 });
  });
});

describe('numbers in the query', () => {
  it('refuses Infinity and overflowing numbers with 400 ERR_BAD_REQUEST, on every route that takes one', async () => {
    const a = await app({ API_RATE_LIMIT_PER_MINUTE: '10000' });
    await a.ready();
    await a.salon.ingest.pipeline.put(item('news_1', { title: 'Rust 2.0 released' }));
    const thread = await a.salon.store.ensureMainThread('news_1');
    const routes = [
      '/api/v1/rooms/news_1/messages?limit=',
      '/api/v1/rooms/news_1/messages?before=',
      `/api/v1/threads/${thread.id}/messages?limit=`,
      `/api/v1/threads/${thread.id}/messages?before=`,
      '/api/v1/content?limit=',
      '/api/v1/search?q=rust&k=',
    ];
    for (const route of routes) {
      for (const value of ['Infinity', '-Infinity', '1e999']) {
        const res = await a.inject({ method: 'GET', url: route + value });
        expect(res.statusCode, `${route}${value}: ${res.body}`).toBe(400);
        expect(res.json().error.code).toBe('ERR_BAD_REQUEST');
      }
      expect((await a.inject({ method: 'GET', url: route + '5' })).statusCode, route).toBe(200);
    }
  });
});

describe('paths the router refuses', () => {
  it('serves the longest valid id and answers a bad %-escape or an over-long parameter with 400 ERR_BAD_REQUEST', async () => {
    const a = await app({ API_RATE_LIMIT_PER_MINUTE: '10000' });
    await a.ready();
    // news_ + 128 characters: longer than the router's default parameter limit (100).
    const longest = `news_${'a'.repeat(128)}`;
    await a.salon.ingest.pipeline.put(item(longest, { title: 'The longest id' }));
    for (const url of [`/api/v1/content/${longest}`, `/api/v1/rooms/${longest}`, `/api/v1/rooms/${longest}/messages`]) {
      const res = await a.inject({ method: 'GET', url });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    }
    for (const url of [
      '/api/v1/rooms/%ED%A0%80/messages',
      '/api/v1/threads/%E0%A4%A',
      '/api/v1/content/%ZZ',
      `/api/v1/threads/${'x'.repeat(5000)}/messages`,
      `/api/v1/rooms/${'x'.repeat(5000)}`,
    ]) {
      const res = await a.inject({ method: 'GET', url });
      expect(res.statusCode, `${url.slice(0, 60)}: ${res.body}`).toBe(400);
      expect(res.json().error.code).toBe('ERR_BAD_REQUEST');
    }
  });
});

describe('request bodies', () => {
  // A megabyte of nested arrays: ~100 ms of the event loop for JSON.parse, whatever refuses it after.
  const nested = ('['.repeat(500_000) + ']'.repeat(500_000)).slice(0, 1_000_000);
  const json = { 'content-type': 'application/json' };

  it('answers a request no route takes with 404 before reading its body', async () => {
    const a = await app({});
    for (const method of ['POST', 'PUT', 'OPTIONS', 'DELETE'] as const) {
      for (const payload of [nested, '{"not json', 'x'.repeat(2_000_000)]) {
        const res = await a.inject({ method, url: '/api/v1/nope', headers: json, payload });
        // Parsed, these were 400 (not JSON) and 413 (over the app's 1 MiB).
        expect(res.statusCode, `${method} ${payload.slice(0, 10)}`).toBe(404);
        expect(res.json().error.code).toBe('ERR_NOT_FOUND');
      }
    }
    // Routes still read theirs.
    const bad = await a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', headers: json, payload: '{"not json' });
    expect(bad.statusCode).toBe(400);
  });

  it('refuses an ask past the assistant’s limit with 429, the limit in words and Retry-After in step with its seconds', async () => {
    const a = await app({ ASK_LIMIT_USER: '1' });
    await a.salon.store.upsertItem(item('news_1'));
    const ask = () =>
      a.inject({
        method: 'POST',
        url: '/api/v1/rooms/news_1/ask',
        remoteAddress: '198.51.100.20',
        headers: json,
        payload: { text: 'what is this?', name: 'Ada' },
      });
    expect((await ask()).statusCode).toBe(200);
    const refused = await ask();
    expect(refused.statusCode).toBe(429);
    const { code, message } = refused.json().error;
    expect(code).toBe('ERR_RATE_LIMITED');
    const seconds = /^Slow down: the assistant takes 1 question a minute from each member; ask again in (\d+) s$/.exec(message)?.[1];
    expect(seconds).toBeDefined();
    expect(refused.headers['retry-after']).toBe(seconds);
    expect(Number(seconds)).toBeGreaterThan(0);
    expect(Number(seconds)).toBeLessThanOrEqual(60);
  });

  it('refuses an ask body past what its fields can need with 413, before parsing it', async () => {
    const a = await app({});
    await a.salon.store.upsertItem(item('news_1'));
    const res = await a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', headers: json, payload: nested });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('ERR_PAYLOAD_TOO_LARGE');
    // The longest ask there can be, every character escaped, still fits.
    const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    const longest = JSON.stringify({ text: 'é'.repeat(2000), threadId: 'é'.repeat(200), name: 'é'.repeat(32) }).replace(/é/g, escaped);
    expect(longest.length).toBeGreaterThan(12_000);
    const fits = await a.inject({ method: 'POST', url: '/api/v1/rooms/news_1/ask', headers: json, payload: longest });
    expect(fits.statusCode).not.toBe(413);
  });
});

describe('Retry-After of a refusal that knows its wait in milliseconds', () => {
  /**
   * A bare app with the error handler whose `POST /change` runs a thread change through `gate` as
   * one member (no route of the server does: the admin's thread routes are not gated, a member's
   * changes come over the room socket), and whose `POST /busy` is refused by a full assistant queue.
   */
  async function gatedApp(gate: ThreadChangeGate) {
    const a = Fastify();
    installErrorHandlers(a);
    const ann = { userId: 'u_ann', address: '198.51.100.30' };
    a.post<{ Querystring: { room?: string } }>('/change', async (request) => ({
      done: await gate.run(request.query.room ?? 'news_1', ann, async () => 'merged'),
    }));
    a.post('/busy', async () => {
      throw new errors.ERR_ASSISTANT_BUSY();
    });
    await a.ready();
    close = () => a.close();
    return a;
  }

  it('answers a thread change the gate refuses with 429 and Retry-After, its wait rounded up to whole seconds: taken that much later, refused a millisecond sooner', async () => {
    let now = 0;
    const gate = new ThreadChangeGate(() => now);
    const a = await gatedApp(gate);
    const change = () => a.inject({ method: 'POST', url: '/change' });
    for (let i = 0; i < MEMBER_THREAD_CHANGES_PER_MINUTE; i++) expect((await change()).statusCode).toBe(200);
    // Part of a change refilled: the gate's wait is not whole seconds (6,000 − 1,500 ms).
    now = 1_500;
    const waitMs = 60_000 / MEMBER_THREAD_CHANGES_PER_MINUTE - now;
    expect(waitMs % 1000).not.toBe(0);
    const refused = await change();
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('ERR_RATE_LIMITED');
    expect(refused.headers['retry-after']).toBe(String(Math.ceil(waitMs / 1000)));
    now = 1_500 + waitMs - 1;
    expect((await change()).statusCode).toBe(429);
    now = 1_500 + Number(refused.headers['retry-after']) * 1000;
    expect((await change()).statusCode).toBe(200);
    // A refusal with no known wait says none: a change under way ends when it ends, a full queue
    // when answers end.
    let finish!: () => void;
    const running = gate.run('news_2', { userId: 'u_bob', address: '198.51.100.31' }, () => new Promise<void>((resolve) => (finish = resolve)));
    const busy = await a.inject({ method: 'POST', url: '/change?room=news_2' });
    expect(busy.statusCode).toBe(429);
    expect(busy.headers).not.toHaveProperty('retry-after');
    finish();
    await running;
    const full = await a.inject({ method: 'POST', url: '/busy' });
    expect(full.json().error.code).toBe('ERR_ASSISTANT_BUSY');
    expect(full.headers).not.toHaveProperty('retry-after');
  });
});

describe('/readyz', () => {
  it('runs its checks once for all the calls that arrive while they run, so a flood cannot queue store pings', async () => {
    const a = await app({});
    await a.ready();
    const store = a.salon.store;
    const ping = store.ping.bind(store);
    let pings = 0;
    let answer = () => {};
    store.ping = async () => {
      pings++;
      await new Promise<void>((resolve) => (answer = resolve));
      return ping();
    };
    const calls = Array.from({ length: 50 }, (_, i) => a.inject({ url: '/readyz', headers: i === 0 ? ADMIN : {} }));
    await vi.waitFor(() => expect(pings).toBe(1), { timeout: 10_000 });
    answer();
    const answers = await Promise.all(calls);
    expect(answers.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    // Each caller still gets its own view: details for the admin only.
    expect(answers[0].json().checks.store.detail).toBe('sqlite');
    expect(answers[1].json().checks.store).toEqual({ ok: true });
    expect(pings).toBe(1);
    // A call after they ended checks again: what /readyz says is never older than the call.
    const later = a.inject('/readyz');
    await vi.waitFor(() => expect(pings).toBe(2), { timeout: 10_000 });
    answer();
    expect((await later).statusCode).toBe(200);
  });

  it('checks the AI provider once for every call within a few seconds, so strangers cannot make the server call it', async () => {
    const ollama = await startFakeOllama();
    try {
      const a = await app({ AI_PROVIDER: 'ollama', OLLAMA_HOST: ollama.url });
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
      const asked = () => ollama.requests.filter((r) => r.path === '/api/version' || r.path === '/api/tags').length;
      const first = await a.inject('/readyz');
      expect(first.statusCode).toBe(200);
      const once = asked();
      expect(once).toBeGreaterThan(0);
      const many = await Promise.all(Array.from({ length: 20 }, () => a.inject('/readyz')));
      expect(many.every((r) => r.statusCode === 200)).toBe(true);
      expect((await a.inject({ url: '/readyz', headers: ADMIN })).json().checks.ai).toMatchObject({ ok: true });
      expect(asked()).toBe(once);
      // Past the window the provider is asked again, and what it says now is what /readyz says.
      ollama.setBehaviour({ models: [] });
      vi.setSystemTime(Date.now() + AI_READINESS_FRESH_MS);
      const later = await a.inject('/readyz');
      expect(later.statusCode).toBe(503);
      expect(later.json().checks.ai).toEqual({ ok: false });
      expect(asked()).toBe(2 * once);
    } finally {
      vi.useRealTimers();
      await close?.();
      close = undefined;
      await ollama.close();
    }
  });
});
