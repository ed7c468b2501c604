/** A loopback HTTP server with the routes the fetcher tests need. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

export const HTML = '<!doctype html><html><head><title>Fixture</title></head><body><p>Hello fixture</p></body></html>';

/** A running fixture server: its port, per-path hit counts, and `close()`. */
export interface FixtureServer {
  port: number;
  hits: Map<string, number>;
  /** Where `/to?url=` style redirects should point, set by tests. */
  redirectTarget: string;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, server: FixtureServer) => void;

const send = (res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': type, ...extra });
  res.end(body);
};

const routes: Record<string, Handler> = {
  '/page': (_req, res) => send(res, 200, 'text/html; charset=utf-8', HTML),
  '/feed': (_req, res) => send(res, 200, 'application/rss+xml', '<rss version="2.0"><channel><title>t</title></channel></rss>'),
  '/json': (_req, res) => send(res, 200, 'application/json; charset=utf-8', JSON.stringify({ id: 8863, by: 'dhouston' })),
  // Flat arrays of zeros: one byte over the fetcher's JSON cap (2 MiB), and exactly at it.
  '/json-over-cap': (_req, res) => send(res, 200, 'application/json', `[${'0,'.repeat(1_048_575)}0]`),
  '/json-at-cap': (_req, res) => send(res, 200, 'application/json', `[${'0,'.repeat(1_048_574)}10]`),
  '/bad-json': (_req, res) => send(res, 200, 'application/json', '{"id": 88'),
  '/image': (_req, res) => send(res, 200, 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47])),
  '/no-type': (_req, res) => {
    res.writeHead(200);
    res.end('plain bytes');
  },
  '/big': (_req, res) => send(res, 200, 'text/html', `<p>${'x'.repeat(200_000)}</p>`),
  '/big-chunked': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    for (let i = 0; i < 50; i++) res.write('y'.repeat(4096));
    res.end();
  },
  '/gzip': (_req, res) => send(res, 200, 'text/html', gzipSync(HTML), { 'content-encoding': 'gzip' }),
  // Gzipped twice, each coding named on a header line of its own.
  '/gzip-twice': (_req, res) => {
    res.setHeader('content-encoding', ['gzip', 'gzip']);
    send(res, 200, 'text/html', gzipSync(gzipSync(HTML)));
  },
  '/gzip-bomb': (_req, res) => send(res, 200, 'text/html', gzipSync(Buffer.alloc(2_000_000, 0x20)), { 'content-encoding': 'gzip' }),
  '/latin1': (_req, res) =>
    send(res, 200, 'text/html; charset=windows-1252', Buffer.from('<html><body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e \x80 5</p></body></html>', 'latin1')),
  // An article in ISO-8859-5 named only by the Content-Type (no <meta charset>): a sniffing decoder
  // would read its Cyrillic bytes as windows-1252 accents.
  '/cyrillic-article': (_req, res) =>
    send(
      res,
      200,
      'text/html; charset=iso-8859-5',
      Buffer.from(
        `<html><head><title>News</title></head><body><article><h1>News</h1>${Array.from(
          { length: 6 },
          (_, i) =>
            `<p>Paragraph ${i}: the harbour greeted every ferry with \xdf\xe0\xd8\xd2\xd5\xe2 that morning, and the ferries answered with three long horns before they docked.</p>`,
        ).join('')}</article></body></html>`,
        'latin1',
      ),
    ),
  '/latin1-meta': (_req, res) =>
    send(
      res,
      200,
      'text/html',
      Buffer.from(
        `<html><head><meta charset="iso-8859-1"></head><body>${'<p>Die Stra\xdfe ist lang, und na\xefve Leute gehen dort jeden Tag spazieren.</p>'.repeat(3)}</body></html>`,
        'latin1',
      ),
    ),
  '/flaky': (req, res, server) => {
    if ((server.hits.get(req.url!) ?? 0) === 1) return send(res, 429, 'text/plain', 'slow down', { 'retry-after': '0' });
    send(res, 200, 'text/html', HTML);
  },
  '/etag-feed': (req, res) => {
    if (req.headers['if-none-match'] === '"v1"' || req.headers['if-modified-since'] === 'Tue, 02 Jan 2024 10:00:00 GMT') {
      res.writeHead(304, { etag: '"v1"' });
      return res.end();
    }
    send(res, 200, 'application/rss+xml', '<rss version="2.0"><channel><title>t</title></channel></rss>', {
      etag: '"v1"',
      'last-modified': 'Tue, 02 Jan 2024 10:00:00 GMT',
    });
  },
  '/always-500': (_req, res) => send(res, 500, 'text/plain', 'boom'),
  '/retry-later': (_req, res) => send(res, 503, 'text/plain', 'later', { 'retry-after': '3600' }),
  '/missing': (_req, res) => send(res, 404, 'text/html', 'not here'),
  '/to-target': (_req, res, server) => send(res, 302, 'text/plain', '', { location: server.redirectTarget }),
  '/hang': () => {
    // never answers: the fetcher's headers timeout must fire
  },
  '/stall-body': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write('<html><body><p>first part');
  },
};

function handle(req: IncomingMessage, res: ServerResponse, server: FixtureServer): void {
  const path = req.url!.split('?')[0];
  server.hits.set(req.url!, (server.hits.get(req.url!) ?? 0) + 1);
  const hop = /^\/redirect\/(\d+)$/.exec(path);
  if (hop) {
    const n = Number(hop[1]);
    return send(res, 302, 'text/plain', '', { location: n > 1 ? `/redirect/${n - 1}` : '/page' });
  }
  // Each hop answers after 150 ms: slow, but within any one attempt's deadline.
  const slowHop = /^\/slow-redirect\/(\d+)$/.exec(path);
  if (slowHop) {
    const n = Number(slowHop[1]);
    setTimeout(() => send(res, 302, 'text/plain', '', { location: n > 1 ? `/slow-redirect/${n - 1}` : '/page' }), 150);
    return;
  }
  const route = routes[path];
  if (route) route(req, res, server);
  else send(res, 404, 'text/plain', 'no route');
}

/** Starts the server on 127.0.0.1, port 0. */
export async function startFixtureServer(): Promise<FixtureServer> {
  const sockets = new Set<import('node:net').Socket>();
  let httpServer: Server;
  const fixture: FixtureServer = {
    port: 0,
    hits: new Map(),
    redirectTarget: '/page',
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        httpServer.close(() => resolve());
      }),
  };
  httpServer = createServer((req, res) => handle(req, res, fixture));
  httpServer.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  fixture.port = (httpServer.address() as AddressInfo).port;
  return fixture;
}
