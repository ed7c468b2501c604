/** A loopback HTTP server for tests: routes are a map of path → answer; every request is logged. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Answer {
  status?: number;
  type?: string;
  body: string | Buffer;
  /** More response headers (ETag, Last-Modified, …). */
  headers?: Record<string, string>;
}

export type Route = Answer | ((req: IncomingMessage) => Answer | Promise<Answer>);

export interface FixtureServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  routes: Map<string, Route>;
  /** Paths requested, in order, with the time each arrived. */
  requests: { path: string; at: number }[];
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1, port 0. Unknown paths get `fallback` (default a 404). */
export async function startFixtureServer(
  routes: Record<string, Route> = {},
  fallback?: (path: string, req: IncomingMessage) => Answer | Promise<Answer>,
): Promise<FixtureServer> {
  const map = new Map(Object.entries(routes));
  const requests: { path: string; at: number }[] = [];
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    requests.push({ path, at: Date.now() });
    const route = map.get(path);
    const answer = route
      ? typeof route === 'function'
        ? await route(req)
        : route
      : fallback
        ? await fallback(path, req)
        : { status: 404, type: 'text/plain', body: 'not found' };
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'text/html; charset=utf-8', ...answer.headers });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    routes: map,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A small HTML article page that any reasonable extractor finds the body of. */
export function articlePage(title: string, paragraphs: string[], extra = ''): string {
  return `<!doctype html><html><head><title>${title}</title><meta property="og:title" content="${title}">
<meta property="og:site_name" content="Fixture Times">${extra}</head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>${title}</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('\n')}</article>
<footer>Copyright Fixture Times</footer></body></html>`;
}
