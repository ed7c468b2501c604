/**
 * Caps on the TCP connections this node holds, HTTP and room sockets together: per client address
 * (HTTP_MAX_CONNECTIONS_PER_IP; IPv6: per /64) and in all (HTTP_MAX_CONNECTIONS).
 *
 * Per address: timeouts drop a connection that trickles its request or idles, but only after 30
 * and 65 s: one address that kept opening them held as many as it liked, each a file descriptor
 * and some kilobytes, and the room-socket cap counts a socket only once it is upgraded. A proxy
 * TRUST_PROXY trusts is not counted there: it carries many clients, whom the other limits count.
 *
 * In all: many addresses together (or one trusted proxy) could still open connections until the
 * process ran out of file descriptors, and then the store, the workers and the model server's
 * connections failed with EMFILE as well. Past the cap a few connections more (HTTP_RESERVE_CONNECTIONS)
 * are taken but serve only the health routes and admin requests, so a full node can still be
 * probed and managed; past those a new connection is closed before Node reads a byte of it.
 *
 * The reserve is held only while it serves: a connection from it answers one request and closes,
 * must send that request within `reserveRequestMs` and take the answer within as long again, and
 * one address holds at most `reservePerAddress` of it. Under the request timeout alone (30 s) a
 * stranger's idle connections, or a probe's keep-alive, held the reserve and starved /healthz.
 */
import type { Server } from 'node:http';
import { BlockList, isIPv4, type Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TrustProxy } from '../config.js';
import { errors } from '../errors.js';
import { addressKey, listHolds } from '../rooms/address.js';
import { isAdmin } from './auth.js';

/** Routes a connection from the reserve may reach without the admin token. */
const HEALTH_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Which cap refused a connection. */
export type ConnectionLimit = 'address' | 'node';

/** Whether TRUST_PROXY trusts a direct peer at an address (then it is a proxy of ours). */
export function trustsPeer(trust: TrustProxy): (ip: string) => boolean {
  // A hop count trusts whatever is next to us, the first hop.
  if (!Array.isArray(trust)) {
    const all = trust === true || (typeof trust === 'number' && trust > 0);
    return () => all;
  }
  const list = new BlockList();
  for (const entry of trust) {
    const [address, prefix] = entry.split('/');
    const type = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return (ip) => listHolds(list, ip);
}

/** What `capConnections` takes. */
export interface ConnectionCaps {
  /** Connections one address may hold (HTTP_MAX_CONNECTIONS_PER_IP). */
  perAddress: number;
  /** Connections the node serves fully (HTTP_MAX_CONNECTIONS). */
  total: number;
  /** Connections past `total` that serve the health routes and admin requests only (HTTP_RESERVE_CONNECTIONS). */
  reserve: number;
  /** Connections of the reserve one address may hold (HTTP_RESERVE_PER_ADDRESS). */
  reservePerAddress: number;
  /** How long a connection of the reserve may take to send its request, and to take its answer (HTTP_RESERVE_REQUEST_MS). */
  reserveRequestMs: number;
  /** Whether a peer is a proxy TRUST_PROXY trusts (not counted per address). */
  trusted: (ip: string) => boolean;
  /** Called for each connection or request refused, with the cap that refused it. */
  onRefused: (limit: ConnectionLimit) => void;
}

/** Adds `n` to `key`'s count in `counts`, forgetting it at 0. */
function count(counts: Map<string, number>, key: string, n: number): void {
  const left = (counts.get(key) ?? 0) + n;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

/**
 * Installs the caps on `app`'s server: a new connection past either is closed at once; one taken
 * from the reserve is answered `503 ERR_SERVER_FULL` (and closed) unless it asks for a health
 * route or carries the admin token, and is cut if it does not send its request, or take its
 * answer, in time.
 */
export function capConnections(app: FastifyInstance, caps: ConnectionCaps): void {
  // A connection of the reserve and the timer that cuts it unless it is being served.
  const fromReserve = new Map<Socket, NodeJS.Timeout | undefined>();
  const server: Server = app.server;
  const perAddress = new Map<string, number>();
  const inReserve = new Map<string, number>();
  let open = 0;
  // Before Node's own listener, so a refused connection never gets a parser.
  server.prependListener('connection', (socket: Socket) => {
    if (open >= caps.total + caps.reserve) return refuse(socket, 'node');
    const ip = socket.remoteAddress;
    const key = ip === undefined || caps.trusted(ip) ? undefined : addressKey(ip);
    const reserved = open >= caps.total;
    if (key !== undefined) {
      if ((perAddress.get(key) ?? 0) >= caps.perAddress) return refuse(socket, 'address');
      if (reserved && (inReserve.get(key) ?? 0) >= caps.reservePerAddress) return refuse(socket, 'address');
      count(perAddress, key, 1);
      if (reserved) count(inReserve, key, 1);
    }
    if (reserved) deadline(socket);
    open++;
    socket.once('close', () => {
      open--;
      if (reserved) {
        clearTimeout(fromReserve.get(socket));
        fromReserve.delete(socket);
      }
      if (key === undefined) return;
      count(perAddress, key, -1);
      if (reserved) count(inReserve, key, -1);
    });
  });
  const refuse = (socket: Socket, limit: ConnectionLimit) => {
    socket.destroy();
    caps.onRefused(limit);
  };
  /** (Re)starts the time a connection of the reserve has to do its part. */
  const deadline = (socket: Socket) => {
    clearTimeout(fromReserve.get(socket));
    const timer = setTimeout(() => socket.destroy(), caps.reserveRequestMs);
    timer.unref();
    fromReserve.set(socket, timer);
  };
  app.addHook('onRequest', async (request, reply) => {
    const socket = request.raw.socket;
    if (!fromReserve.has(socket)) return;
    // One request a connection: a keep-alive would hold a place of the reserve between requests.
    reply.header('connection', 'close');
    if (servedFromReserve(request)) {
      // While a health check or an admin's request (its body too) is handled, the time is theirs.
      clearTimeout(fromReserve.get(socket));
      fromReserve.set(socket, undefined);
      return;
    }
    caps.onRefused('node');
    throw new errors.ERR_SERVER_FULL();
  });
  // The answer is the client's to take in time.
  app.addHook('onSend', (request, _reply, payload, done) => {
    const socket = request.raw.socket;
    if (fromReserve.has(socket) && !socket.destroyed) deadline(socket);
    done(null, payload);
  });
}

/** Whether a request on a connection from the reserve is served: a health route, or an admin's. */
function servedFromReserve(request: FastifyRequest): boolean {
  if (HEALTH_PATHS.has(request.url.split('?')[0]) && request.method === 'GET') return true;
  return isAdmin(request);
}
