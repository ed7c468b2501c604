/**
 * The log keeps a request's path, never its query: what people search for and any token a client
 * put in a URL stay out of it, in every line Fastify and the routes write (the request, a route
 * not found, an upgrade to a route without a socket, a malformed request, an error naming the URL).
 */
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loggedPath } from '../src/routes/request-log.js';
import { withoutQueries } from '../src/log-text.js';
import { testApp } from './helpers.js';

const SECRET = 'hushhush-needle';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** Sends `request` on a new connection to `port` and resolves once the server has answered or closed it. */
function raw(port: number, request: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let got = '';
    socket.on('data', (d) => {
      got += d;
      if (got.includes('\r\n\r\n')) socket.destroy();
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(got.split('\r\n')[0]));
  });
}

describe('request URLs in the log', () => {
  it('logs the path of every request, never its query, in any line', async () => {
    const lines: string[] = [];
    const t = await testApp({ LOG_LEVEL: 'trace' }, { logStream: { write: (line) => void lines.push(line) } });
    close = t.close;
    const a = t.app;
    a.get('/api/v1/broken', async (request) => {
      throw new Error(`could not serve ${request.url}`);
    });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    expect((await a.inject({ method: 'GET', url: `/api/v1/search?q=${SECRET}` })).statusCode).toBe(200);
    expect((await a.inject({ method: 'GET', url: `/no/such/page?token=${SECRET}` })).statusCode).toBe(404);
    expect((await a.inject({ method: 'GET', url: `/api/v1/broken?token=${SECRET}` })).statusCode).toBe(500);
    // An upgrade to a route that takes no socket: @fastify/websocket logs the URL it refused.
    const upgrade = `GET /api/v1/openapi.json?q=${SECRET} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`;
    await raw(port, upgrade);
    // A request Node's parser refuses: its bytes were logged with the client error.
    expect(await raw(port, `GET /api/v1/search?q=${SECRET} HTTP/1.1\r\nHost: x\r\nBad header line\r\n\r\n`)).toBe('HTTP/1.1 400 Bad Request');
    await vi.waitFor(() => expect(lines.join('')).toContain('client error'));
    await vi.waitFor(() => expect(lines.join('')).toContain('no websocket handler'));
    const logged = lines.map((line) => JSON.parse(line) as { msg?: string; req?: { url?: string } });
    expect(logged.filter((l) => l.msg === 'incoming request').map((l) => l.req?.url)).toEqual(
      expect.arrayContaining(['/api/v1/search', '/no/such/page', '/api/v1/broken']),
    );
    expect(lines.join('')).toContain('could not serve /api/v1/broken');
    for (const line of lines) expect(line).not.toContain(SECRET);
  });

  it('writes what clients and servers sent as escapes, not terminal controls: a Host header, an error, a message', async () => {
    const lines: string[] = [];
    const t = await testApp({ LOG_LEVEL: 'info' }, { logStream: { write: (line) => void lines.push(line) } });
    close = t.close;
    const a = t.app;
    a.get('/api/v1/broken', async () => {
      throw new Error('model server answered HTTP 500: \u009b2J\u202egone');
    });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const { port } = a.server.address() as AddressInfo;
    // Header values may hold any byte from 0x80 (read as latin1): 0x9b is CSI.
    const request = Buffer.concat([Buffer.from('GET /healthz HTTP/1.1\r\nHost: x'), Buffer.from([0x9b]), Buffer.from('2J\r\n\r\n')]);
    expect(await raw(port, request)).toBe('HTTP/1.1 200 OK');
    expect((await a.inject({ method: 'GET', url: '/api/v1/broken' })).statusCode).toBe(500);
    a.log.warn({ err: 'database is locked\u009d0;owned\u009c' }, 'memory chunk not stored: \u2066hidden');
    const logged = lines.map((line) => JSON.parse(line) as { msg?: string; req?: { url?: string; host?: string }; err?: unknown });
    expect(logged.find((l) => l.msg === 'incoming request' && l.req?.url === '/healthz')?.req?.host).toBe('x\\x9b2J');
    expect(logged.find((l) => l.msg === 'request failed')?.err).toMatchObject({ message: 'model server answered HTTP 500: \\x9b2J\\u202egone' });
    expect(logged.find((l) => l.msg?.startsWith('memory chunk'))).toMatchObject({
      msg: 'memory chunk not stored: \\u2066hidden',
      err: 'database is locked\\x9d0;owned\\x9c',
    });
    for (const line of lines) expect(line).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
  });

  it('drops the password of an absolute URL logged as a url or path field, and its request URLs’ queries', async () => {
    const lines: string[] = [];
    const t = await testApp({ LOG_LEVEL: 'info' }, { logStream: { write: (line) => void lines.push(line) } });
    close = t.close;
    t.app.log.warn({ url: 'https://feeds:hunter2@example.com/rss', path: 'polled /api/v1/search?q=x for http://u:pa ss@host' }, 'feed failed');
    const logged = JSON.parse(lines.find((line) => line.includes('feed failed'))!) as { url: string; path: string };
    expect(logged).toMatchObject({ url: 'https://example.com/rss', path: 'polled /api/v1/search for http://host' });
  });

  it('drops the query of a relative URL in free text and leaves absolute URLs as they are', () => {
    expect(loggedPath('/api/v1/search?q=a&k=5')).toBe('/api/v1/search');
    expect(loggedPath('/healthz')).toBe('/healthz');
    expect(withoutQueries('Route GET:/x/y?q=secret not found')).toBe('Route GET:/x/y not found');
    expect(withoutQueries('did you forget to "return reply" in the "/a?b=c" (GET) route?')).toBe('did you forget to "return reply" in the "/a" (GET) route?');
    expect(withoutQueries('fetching https://example.com/feed?page=2 failed')).toBe('fetching https://example.com/feed?page=2 failed');
    expect(withoutQueries('no query in /data/salon.db here')).toBe('no query in /data/salon.db here');
  });

  it("drops the query of an upgrade's URL whose path or query holds quotes or brackets, as a client's encodeURIComponent leaves them", async () => {
    const lines: string[] = [];
    const t = await testApp({ LOG_LEVEL: 'info' }, { logStream: { write: (line) => void lines.push(line) } });
    close = t.close;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    // Routes without a socket handler: @fastify/websocket logs each URL as it came (`path`).
    const urls = [
      `/api/v1/threads/x(?token=${SECRET}`,
      `/api/v1/threads/x'?token=${SECRET}`,
      `/api/v1/threads/x)?token=${SECRET}`,
      `/api/v1/threads/x?q=salon%20(2)%20${SECRET}`,
      `/api/v1/threads/x?q=what's%20${SECRET}`,
    ];
    for (const url of urls) {
      const upgrade = `GET ${url} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`;
      await raw(port, upgrade);
    }
    const refused = () => lines.filter((line) => line.includes('no websocket handler')).map((line) => (JSON.parse(line) as { path?: string }).path);
    await vi.waitFor(() => expect(refused()).toHaveLength(urls.length));
    expect(refused()).toEqual(['/api/v1/threads/x(', "/api/v1/threads/x'", '/api/v1/threads/x)', '/api/v1/threads/x', '/api/v1/threads/x']);
    for (const line of lines) expect(line).not.toContain(SECRET);
  });

  it('drops the whole query of a URL in free text, its quotes and brackets included', () => {
    expect(withoutQueries('Route GET:/a(b)/c?q=salon%20(2)%20secret not found')).toBe('Route GET:/a(b)/c not found');
    expect(withoutQueries("Route GET:/a?q=what's%20secret not found")).toBe('Route GET:/a not found');
    expect(withoutQueries("Route GET:/a'b?q=secret not found")).toBe("Route GET:/a'b not found");
    expect(withoutQueries('see (/a?q=x)')).toBe('see (/a');
    expect(withoutQueries("at '/a'/b?token=x")).toBe("at '/a'/b");
    expect(withoutQueries('at /a(/b?token=x')).toBe('at /a(/b');
  });

  it('drops queries after a colon or = inside a path too, and reads a text of many such starts in linear time', () => {
    expect(withoutQueries('at /a:b/c?token=x')).toBe('at /a:b/c');
    expect(withoutQueries('at /a=/b?token=x')).toBe('at /a=/b');
    expect(withoutQueries('at /a=//b?token=x')).toBe('at /a=//b');
    expect(withoutQueries('url=/next?token=x')).toBe('url=/next');
    // Each `=/` begins a path: read to the text's end from every one of them, this took minutes.
    for (const start of ['=/', "'/", '(/']) {
      const starts = start.repeat(200_000);
      expect(withoutQueries(`${starts}?q=secret`)).toBe(starts);
    }
  });
});
