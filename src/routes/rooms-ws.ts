/**
 * `GET /ws/rooms/:roomId`: with rooms-ws-connection.ts, the only code that touches `ws` (docs/architecture.md).
 * Checks the Origin before the upgrade, adapts each socket to a `Connection` for the rooms core, pings each once every `heartbeatMs` (a slice of the sockets at a time) and
 * terminates sockets that did not answer the previous ping, and closes every socket with 1001 when
 * the app closes.
 *
 * A refused Origin still completes the upgrade and is then closed with 4403: a browser cannot read
 * the status of a refused upgrade (it only sees 1006), but it can read a close code.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebsocketPluginOptions } from '@fastify/websocket';
import type { RawData, WebSocket } from 'ws';
import { errors, type SalonError } from '../errors.js';
import { serializedOrigin } from '../origins.js';
import { CloseCode } from '../protocol/close-codes.js';
import type { RoomHub } from '../rooms/hub.js';
import { errorFrame, type Session } from '../rooms/session.js';
import { WsConnection } from './rooms-ws-connection.js';
import { SpreadSweep } from './spread-sweep.js';

const SHUTDOWN_POLL_MS = 10;

export interface RoomsWebsocketOptions {
  /** ALLOWED_ORIGINS: origins besides the page's own; `*` allows any. */
  allowedOrigins: readonly string[];
  /** Whether the upgrade's Host may open a socket (loopback-host.ts); absent, any may. */
  hostAllowed?: ((request: FastifyRequest) => boolean) | null;
  heartbeatMs: number;
  /** How long shutdown waits for clients to answer the 1001 close before cutting them off. */
  shutdownGraceMs: number;
  /** Where a handler's unexpected failure is logged (the connection is closed with 1011). */
  log: { error(details: Record<string, unknown>, msg: string): void };
}

/**
 * True when a socket opened with this Origin and Host may join rooms: no Origin, the page's own
 * (an http(s) origin on the Host's host and port), or exactly one of `allowed` (serialised origins,
 * src/origins.ts).
 */
export function originAllowed(origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined || allowed.includes('*')) return true;
  const serialized = serializedOrigin(origin);
  if (serialized === null) return false;
  if (host && /^https?:/.test(serialized) && new URL(serialized).host === host.toLowerCase()) return true;
  return allowed.includes(serialized);
}

/** Detaches the HTTP response Node assigned to the upgraded TCP socket. */
function releaseUpgradeResponse(request: FastifyRequest): void {
  const tcp = request.raw.socket as (Socket & { _httpMessage?: ServerResponse | null }) | undefined;
  const response = tcp?._httpMessage;
  if (tcp && response && typeof response.detachSocket === 'function') response.detachSocket(tcp);
}

function ignoreSocketError(): void {
  // `ws` closes the socket itself after a protocol error (1009 for an oversized frame, 1002 …).
}

/**
 * Ends the socket of an upgrade request that was answered with an HTTP error instead of an upgrade.
 * Fastify writes some answers (400 for a malformed URL, 414 for a path parameter over the router's
 * limit) straight to the response, past the hooks that would end an upgrade's socket: the socket
 * stayed half-open, and a closing server waited for it until its shutdown deadline. Call after
 * @fastify/websocket is registered, so this listener runs after the one that routes the request.
 */
export function endRefusedUpgrades(server: Server): void {
  server.on('upgrade', (_request: IncomingMessage, socket: Socket & { _httpMessage?: ServerResponse | null }) => {
    const response = socket._httpMessage;
    if (!response) return;
    if (response.writableFinished) socket.destroy();
    else response.once('finish', () => socket.destroy());
  });
}

/** The @fastify/websocket plugin options and the route plugin for room sockets. */
export function roomsWebsocket(
  hub: RoomHub,
  options: RoomsWebsocketOptions,
): { pluginOptions: WebsocketPluginOptions; routes: (app: FastifyInstance) => Promise<void>; stop: () => void } {
  if (!(options.heartbeatMs > 0)) throw new TypeError('roomsWebsocket heartbeatMs: expected a positive number');
  const refused = new WeakMap<FastifyRequest, SalonError>();
  let nextId = 0;

  // Every socket pinged once per heartbeatMs, a slice of them at a time (spread-sweep.ts); one that
  // has not answered the previous ping is terminated.
  const sockets = new SpreadSweep<WsConnection>(options.heartbeatMs, (conn) => {
    if (!conn.alive) {
      conn.socket.terminate();
      return;
    }
    conn.alive = false;
    conn.socket.ping();
  });

  async function shutdown(): Promise<void> {
    sockets.stop();
    await hub.close(CloseCode.GOING_AWAY);
    for (const conn of [...sockets.members()]) conn.close(CloseCode.GOING_AWAY);
    const deadline = Date.now() + options.shutdownGraceMs;
    while (sockets.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, SHUTDOWN_POLL_MS));
    for (const conn of [...sockets.members()]) conn.socket.terminate();
  }

  /**
   * Runs a socket event handler so that its failure closes this connection (1011) and is logged.
   * An exception would otherwise escape into `ws`'s event emitter and end the process, and with
   * it every room on the node.
   */
  function guard(conn: WsConnection, session: Session): (handler: () => void) => void {
    return (handler) => {
      try {
        handler();
      } catch (err) {
        options.log.error({ err, conn: conn.id }, 'room socket handler failed; closing the connection');
        try {
          session.close(CloseCode.INTERNAL_ERROR);
        } catch {
          conn.socket.terminate();
        }
      }
    };
  }

  function accept(socket: WebSocket, request: FastifyRequest<{ Params: { roomId: string } }>): void {
    // @fastify/websocket's error listener, and the upgrade's ServerResponse left on the TCP
    // socket, would hold the request and reply for the socket's lifetime: a few KB per connection.
    socket.removeAllListeners('error');
    socket.on('error', ignoreSocketError);
    releaseUpgradeResponse(request);
    const conn = new WsConnection(`c${++nextId}`, socket);
    const err = refused.get(request);
    if (err) {
      conn.send(errorFrame(err));
      return conn.close(CloseCode.ORIGIN_NOT_ALLOWED);
    }
    const session = hub.connect(conn, { roomId: request.params.roomId, ip: request.ip ?? 'unknown' });
    if (!session) return;
    sockets.add(conn);
    const guarded = guard(conn, session);
    socket.on('message', (data: RawData, isBinary: boolean) => {
      guarded(() => (isBinary ? session.receiveBinary() : session.receive(data.toString())));
    });
    socket.on('ping', () => guarded(() => session.receiveControl()));
    socket.on('pong', () => {
      // The answer to the heartbeat's ping is not counted (a short ROOM_HEARTBEAT_MS would spend the
      // client's rate); a pong nobody asked for is.
      if (conn.alive) guarded(() => session.receiveControl());
      conn.alive = true;
    });
    socket.on('close', () => {
      sockets.delete(conn);
      guarded(() => session.closed());
    });
  }

  async function routes(app: FastifyInstance): Promise<void> {
    app.route<{ Params: { roomId: string } }>({
      method: 'GET',
      url: '/ws/rooms/:roomId',
      schema: { hide: true },
      preValidation: async (request) => {
        if (options.hostAllowed && !options.hostAllowed(request)) refused.set(request, new errors.ERR_HOST_NOT_ALLOWED(request.headers.host ?? '(none)'));
        else if (!originAllowed(request.headers.origin, request.headers.host, options.allowedOrigins)) {
          refused.set(request, new errors.ERR_ORIGIN_NOT_ALLOWED(request.headers.origin));
        }
      },
      // A plain GET (a browser tab, curl, a proxy that drops the Upgrade header) is told why it got no socket.
      handler: async (request) => {
        throw new errors.ERR_UPGRADE_REQUIRED(request.url.split('?', 1)[0]);
      },
      wsHandler: accept,
    });
  }

  const pluginOptions: WebsocketPluginOptions = {
    options: {
      maxPayload: hub.options.maxPayloadBytes,
      perMessageDeflate: false,
      clientTracking: false,
      // A socket the server closed is cut off if the client has not answered the close by then
      // (ws 8.23 takes it; @types/ws does not list it yet).
      ...({ closeTimeout: hub.options.closeTimeoutMs } as object),
    },
    preClose(done) {
      shutdown().then(
        () => done(),
        () => done(),
      );
    },
  };
  return { pluginOptions, routes, stop: () => sockets.stop() };
}
