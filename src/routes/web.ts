/**
 * The browser client: security headers for every response (@fastify/helmet with a strict CSP),
 * the bundled assets under `/assets/`, and the page routes, which all serve the one HTML shell
 * the build writes to dist/public/index.html.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { errors } from '../errors.js';

/** Addresses that show a page of the client. */
export const PAGE_ROUTES = ['/', '/posts', '/post', '/videos', '/watch', '/chat'] as const;
/** Hashed bundle files never change; everything else is revalidated. */
const HASHED_ASSET = /-[A-Z0-9]{8}\.(js|css)(\.map)?$/;
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** A Host header we are willing to echo into the CSP (no spaces, quotes or semicolons). */
const SAFE_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export interface WebOptions {
  /** Folder holding index.html and assets/ (default: the build output, dist/public). */
  publicDir?: string;
}

/** dist/public, whether this module runs from src/ (tests) or from dist/src/ (the server). */
export function defaultPublicDir(): string {
  const up = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  return basename(up) === 'dist' ? join(up, 'public') : join(up, 'dist/public');
}

/** `connect-src` must name the socket origin: `'self'` alone does not cover ws: in every browser. */
function socketSources(req: IncomingMessage): string {
  const host = req.headers.host ?? '';
  return SAFE_HOST.test(host) ? `ws://${host} wss://${host}` : '';
}

/** The Content-Security-Policy: only this origin's scripts, styles, images, and its WebSocket. */
export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  baseUri: ["'self'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  // lit adopts constructed stylesheets, which CSP does not gate; page CSS is a same-origin file.
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'", (req: IncomingMessage) => socketSources(req)],
  // Videos open on their own site in a new tab; nothing is embedded.
  frameSrc: ["'none'"],
  objectSrc: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'self'"],
  manifestSrc: ["'self'"],
  // Only lit's and DOMPurify's policies may turn strings into HTML.
  requireTrustedTypesFor: ["'script'"],
  trustedTypes: ['lit-html', 'dompurify'],
  upgradeInsecureRequests: null,
};

/** The HTML shell the build wrote to `publicDir`, or null before a build. Read per request: a rebuild changes the hashed names while the server runs. */
export function readShell(publicDir: string = defaultPublicDir()): Promise<string | null> {
  return readFile(join(publicDir, 'index.html'), 'utf8').catch(() => null);
}

async function pages(app: FastifyInstance, publicDir: string): Promise<void> {
  await app.register(fastifyStatic, {
    root: join(publicDir, 'assets'),
    prefix: '/assets/',
    decorateReply: false,
    index: false,
    cacheControl: false,
    setHeaders(response, path) {
      response.setHeader('cache-control', HASHED_ASSET.test(path) ? IMMUTABLE : 'no-cache');
    },
  });
  // `/posts/` too: the client reads the address without its trailing slash and shows the page,
  // which answered 404 (a link's preview said the page was missing while a browser showed it).
  for (const url of PAGE_ROUTES.flatMap((route) => (route === '/' ? [route] : [route, `${route}/`]))) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) => {
      const html = await readShell(publicDir);
      if (html === null) throw new errors.ERR_NOT_READY('the browser client is not built; run npm run build');
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html);
    });
  }
}

/** Registers helmet for the whole app, then the client's assets and pages. */
const webRoutes: FastifyPluginAsync<WebOptions> = async (app, opts) => {
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
    crossOriginEmbedderPolicy: false,
  });
  const publicDir = opts.publicDir ?? defaultPublicDir();
  await app.register(async (scope) => pages(scope, publicDir));
};

// Not encapsulated, so helmet's headers reach every route of the app (API and sockets too).
(webRoutes as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export default webRoutes;
