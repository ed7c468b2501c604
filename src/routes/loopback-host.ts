/**
 * DNS rebinding guard. A server listening on loopback is out of other machines' reach, but a page
 * from anywhere can have its own name re-resolve to 127.0.0.1: the browser then treats this server
 * as the page's origin, and an Origin check that compares the Origin with the Host header passes.
 * Only the Host header tells such a request apart: it names the attacker's domain. So when HOST is
 * a loopback address, every request and room socket is refused unless its Host names loopback
 * (`localhost`, a 127.x address or `[::1]`) with the port the server listens on. Reads are refused
 * too, not only writes: the page is same-origin to the browser, so it can read what it fetches
 * (threads and their messages, memory counts, sources with their feed URLs, metrics). Nothing a
 * loopback server answers is needed by another name, the page shell included, except `/healthz`,
 * which says only that the process is up and is what monitors probe by whatever name.
 *
 * Behind a proxy (TRUST_PROXY set) the Host is the proxy's to forward, the site's public name: the
 * guard is off, and the proxy's own server names decide what reaches it.
 */
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TrustProxy } from '../config.js';
import { errors } from '../errors.js';

/** True when HOST is `localhost` or a loopback address (127.0.0.0/8, ::1, their IPv4-mapped forms). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (!isIP(h)) return false;
  const mapped = h.startsWith('::ffff:') ? h.slice(7) : h;
  return mapped === '::1' || (isIP(mapped) === 4 && mapped.startsWith('127.'));
}

/**
 * True when a Host header names loopback with `port`: `localhost:3000`, `127.0.0.1:3000`,
 * `[::1]:3000`; without a port when `port` is 80. `port` undefined (an injected request) checks the
 * name alone. No Host at all passes: a browser always sends one, and rebinding needs a browser.
 */
export function loopbackHostHeader(header: string | undefined, port: number | undefined): boolean {
  if (header === undefined) return true;
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(header.trim());
  if (!m) return false;
  const name = m[1].startsWith('[') ? m[1].slice(1, -1) : m[1];
  // Browsers resolve `*.localhost` to loopback themselves, asking no DNS that could rebind it.
  if (!(isIP(name) ? isLoopbackHost(name) : /^(?:[a-z0-9-]+\.)*localhost$/i.test(name))) return false;
  if (port === undefined) return true;
  return m[2] === undefined ? port === 80 : Number(m[2]) === port;
}

/**
 * The check for this server's settings: null when it listens beyond loopback or behind a proxy
 * (nothing to check), else a predicate telling whether a request's Host may change state.
 */
export function loopbackHostCheck(listenHost: string, trustProxy: TrustProxy): ((request: FastifyRequest) => boolean) | null {
  if (!isLoopbackHost(listenHost) || trustProxy !== false) return null;
  return (request) => loopbackHostHeader(request.headers.host, request.raw.socket?.localPort);
}

/** Routes any Host may read: they answer nothing a page could use. */
const OPEN_TO_ANY_HOST = new Set(['/healthz']);
/** Methods that only read. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses every request whose Host `allowed` refuses with ERR_HOST_NOT_ALLOWED, reads as well as
 * writes, before its body is read. Writes, and requests carrying an Authorization header, are
 * refused first of all (onRequest, before any route's own hooks): a rebinding page's token guesses
 * must not reach the admin check, whose lock-out of 127.0.0.1 would lock the operator out too.
 * Other reads are refused in preParsing, after helmet's onRequest, so the refusal keeps the
 * security headers. WebSocket upgrades are left to their routes: the room socket route checks the
 * same and answers on the socket (4403), as the protocol has it, and a page's WebSocket reads
 * nothing of an upgrade that other routes answer in HTTP.
 */
export function refuseRebinding(app: FastifyInstance, allowed: ((request: FastifyRequest) => boolean) | null): void {
  if (!allowed) return;
  const refuse = (request: FastifyRequest): void => {
    if (isSocketUpgrade(request) || OPEN_TO_ANY_HOST.has(request.routeOptions.url ?? '')) return;
    if (!allowed(request)) throw new errors.ERR_HOST_NOT_ALLOWED(request.headers.host ?? '(none)');
  };
  app.addHook('onRequest', async (request) => {
    if (!READ_METHODS.has(request.method) || request.headers.authorization !== undefined) refuse(request);
  });
  app.addHook('preParsing', async (request) => refuse(request));
}

function isSocketUpgrade(request: FastifyRequest): boolean {
  return request.headers.upgrade?.toLowerCase() === 'websocket';
}
