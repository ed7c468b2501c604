/**
 * `GET /ws/rooms/:roomId`: the only code that touches `ws` (STYLE 4). Checks the Origin before the
 * upgrade, adapts each socket to a `Connection` for the rooms core, pings every `heartbeatMs` and
 * terminates sockets that did not answer the previous ping, and closes every socket with 1001 when
 * the app closes.
 *
 * A refused Origin still completes the upgrade and is then closed with 4403: a browser cannot read
 * the status of a refused upgrade (it only sees 1006), but it can read a close code.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebsocketPluginOptions } from '@fastify/websocket';
import type { RawData, WebSocket } from 'ws';
import { errors } from '../errors.js';
import { CloseCode } from '../protocol/close-codes.js';
import type { RoomHub } from '../rooms/hub.js';
import { errorFrame } from '../rooms/session.js';
import type { Connection } from '../rooms/types.js';

const SHUTDOWN_POLL_MS = 10;
const OPEN = 1;

export interface RoomsWebsocketOptions {
  /** ALLOWED_ORIGINS: origins besides the page's own; `*` allows any. */
  allowedOrigins: readonly string[];
  heartbeatMs: number;
  /** How long shutdown waits for clients to answer the 1001 close before cutting them off. */
  shutdownGraceMs: number;
}

/** True when a socket opened with this Origin and Host may join rooms. */
export function originAllowed(origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined || allowed.includes('*')) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (host && url.host === host.toLowerCase()) return true;
  return allowed.includes(url.origin);
}

/**
 * Frames a text message as the server sends it (unmasked, FIN, opcode 1). Server frames are the
 * same bytes for every recipient, so a broadcast frames its text once: `wire` keeps the last text
 * it framed, and a broadcast hands the same string to every member in a row.
 */
function frameText(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const head = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const out = Buffer.allocUnsafe(head + length);
  out[0] = 0x81;
  if (head === 2) out[1] = length;
  else if (head === 4) {
    out[1] = 126;
    out.writeUInt16BE(length, 2);
  } else {
    out[1] = 127;
    out.writeBigUInt64BE(BigInt(length), 2);
  }
  out.write(text, head, 'utf8');
  return out;
}

let lastText = '';
let lastWire = frameText('');
function wire(text: string): Buffer {
  if (text !== lastText) {
    lastWire = frameText(text);
    lastText = text;
  }
  return lastWire;
}

/** Connections holding frames from this turn of the event loop; flushed once I/O callbacks ran. */
const queued: WsConnection[] = [];
let flushScheduled = false;
function flushQueued(): void {
  flushScheduled = false;
  for (const conn of queued.splice(0)) {
    try {
      conn.flush();
    } catch {
      // A socket destroyed mid-turn has nothing left to flush; the others must still be flushed.
    }
  }
}

/**
 * A `ws` socket as the rooms core sees it. Frames are written straight to the TCP socket, which
 * `ws` allows here because per-message deflate is off (its sender never queues). The frames a
 * client gets in one turn of the event loop are held and leave in one write at the end of the
 * turn: under load, several messages share a syscall, which is what a delivery costs most. (Held
 * buffers rather than cork/uncork: corking a socket added ~1 µs to each write.)
 * Back-pressure is judged on what was queued before this turn: what the turn adds is not a backlog.
 */
class WsConnection implements Connection {
  alive = true;
  /** This turn's frames: none, one, or several. */
  private held: Buffer | Buffer[] | null = null;
  private heldBytes = 0;
  private readonly tcp: Socket | null;

  constructor(
    readonly id: string,
    readonly socket: WebSocket,
  ) {
    const tcp = (socket as unknown as { _socket?: Socket })._socket;
    this.tcp = tcp && typeof tcp.write === 'function' ? tcp : null;
  }

  send(frame: string): void {
    if (this.socket.readyState !== OPEN) return;
    if (!this.tcp) return this.socket.send(frame);
    const buf = wire(frame);
    const held = this.held;
    if (held === null) {
      this.held = buf;
      queued.push(this);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flushQueued);
      }
    } else if (Array.isArray(held)) held.push(buf);
    else this.held = [held, buf];
    this.heldBytes += buf.length;
  }

  /** Writes this turn's frames in one write. */
  flush(): void {
    const held = this.held;
    if (held === null) return;
    const bytes = this.heldBytes;
    this.held = null;
    this.heldBytes = 0;
    if (this.socket.readyState !== OPEN || !this.tcp || this.tcp.destroyed) return;
    this.tcp.write(Array.isArray(held) ? Buffer.concat(held, bytes) : held);
  }

  close(code: number, reason?: string): void {
    // Frames sent before the close (an error explaining it) must reach the client before it.
    this.flush();
    if (this.socket.readyState <= OPEN) this.socket.close(code, reason);
  }

  get bufferedAmount(): number {
    // What `ws` would report (its sender queues nothing without deflate), minus a getter per frame.
    return this.tcp ? this.tcp.writableLength : this.socket.bufferedAmount;
  }
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

/** The @fastify/websocket plugin options and the route plugin for room sockets. */
export function roomsWebsocket(
  hub: RoomHub,
  options: RoomsWebsocketOptions,
): { pluginOptions: WebsocketPluginOptions; routes: (app: FastifyInstance) => Promise<void>; stop: () => void } {
  if (!(options.heartbeatMs > 0)) throw new TypeError('roomsWebsocket heartbeatMs: expected a positive number');
  const sockets = new Set<WsConnection>();
  const refused = new WeakSet<FastifyRequest>();
  let nextId = 0;

  const heartbeat = setInterval(() => {
    for (const conn of sockets) {
      if (!conn.alive) {
        conn.socket.terminate();
        continue;
      }
      conn.alive = false;
      conn.socket.ping();
    }
  }, options.heartbeatMs);
  heartbeat.unref();

  async function shutdown(): Promise<void> {
    clearInterval(heartbeat);
    await hub.close(CloseCode.GOING_AWAY);
    for (const conn of sockets) conn.close(CloseCode.GOING_AWAY, 'server shutting down');
    const deadline = Date.now() + options.shutdownGraceMs;
    while (sockets.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, SHUTDOWN_POLL_MS));
    for (const conn of sockets) conn.socket.terminate();
  }

  function accept(socket: WebSocket, request: FastifyRequest<{ Params: { roomId: string } }>): void {
    // @fastify/websocket's error listener, and the upgrade's ServerResponse left on the TCP
    // socket, would hold the request and reply for the socket's lifetime: a few KB per connection.
    socket.removeAllListeners('error');
    socket.on('error', ignoreSocketError);
    releaseUpgradeResponse(request);
    const conn = new WsConnection(`c${++nextId}`, socket);
    if (refused.has(request)) {
      const err = new errors.ERR_ORIGIN_NOT_ALLOWED(request.headers.origin);
      conn.send(errorFrame(err));
      return conn.close(CloseCode.ORIGIN_NOT_ALLOWED, err.message.slice(0, 120));
    }
    const session = hub.connect(conn, { roomId: request.params.roomId, ip: request.ip ?? 'unknown' });
    if (!session) return;
    sockets.add(conn);
    socket.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) session.receiveBinary();
      else session.receive(data.toString());
    });
    socket.on('pong', () => {
      conn.alive = true;
    });
    socket.on('close', () => {
      sockets.delete(conn);
      session.closed();
    });
  }

  async function routes(app: FastifyInstance): Promise<void> {
    app.get<{ Params: { roomId: string } }>(
      '/ws/rooms/:roomId',
      {
        websocket: true,
        preValidation: async (request) => {
          if (!originAllowed(request.headers.origin, request.headers.host, options.allowedOrigins)) refused.add(request);
        },
      },
      accept,
    );
  }

  const pluginOptions: WebsocketPluginOptions = {
    options: { maxPayload: hub.options.maxPayloadBytes, perMessageDeflate: false, clientTracking: false },
    preClose(done) {
      shutdown().then(
        () => done(),
        () => done(),
      );
    },
  };
  return { pluginOptions, routes, stop: () => clearInterval(heartbeat) };
}
