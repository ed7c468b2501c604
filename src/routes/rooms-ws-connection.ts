/**
 * A `ws` socket as the rooms core sees it (a `Connection`), built for broadcasts: a room's frame
 * is framed once for every member, the frames a client gets in one turn of the event loop leave in
 * one write at the end of the turn, and that write goes straight to the TCP handle when nothing is
 * queued on the socket (rooms-ws-transport.ts: the one place that reaches into Node's internals,
 * and its start-up self-test).
 */
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { CLOSE_REASONS, type CloseCodeValue } from '../protocol/close-codes.js';
import type { Connection } from '../rooms/types.js';
import { handleOf, rawSocketOf, writeToHandle, type TcpHandle } from './rooms-ws-transport.js';

const OPEN = 1;

/**
 * Frames a text message as the server sends it (unmasked, FIN, opcode 1). Server frames are the
 * same bytes for every recipient, so a broadcast frames its text once: `wire` keeps the last text
 * it framed, and a broadcast hands the same string to every member in a row.
 */
export function frameText(text: string): Buffer {
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

/**
 * Connections holding frames from this turn of the event loop, `queuedCount` of them; flushed once
 * I/O callbacks ran. Two arrays take turns and keep their length: a new array per turn grew to the
 * room's size push by push, a few KB of garbage per broadcast to 100 members (the largest
 * allocation of a chat message, docs/benchmarks.md).
 */
let queued: (WsConnection | null)[] = [];
let queuedCount = 0;
let spare: (WsConnection | null)[] = [];
let flushScheduled = false;
function flushQueued(): void {
  flushScheduled = false;
  const batch = queued;
  const count = queuedCount;
  // Frames sent while flushing (a close announced to the room) go to the other array, for the next turn.
  queued = spare;
  queuedCount = 0;
  spare = batch;
  for (let i = 0; i < count; i++) {
    const conn = batch[i]!;
    batch[i] = null;
    try {
      conn.flush();
    } catch {
      // A socket destroyed mid-turn has nothing left to flush; the others must still be flushed.
    }
  }
}

/**
 * The frames a client gets in one turn leave in one write at the end of the turn: under load,
 * several messages share a syscall. (Held buffers rather than cork/uncork: corking added ~1 µs to
 * each write.) Back-pressure is judged on what was queued before this turn: what the turn adds is
 * not a backlog.
 *
 * A write goes straight to the TCP handle unless earlier frames are still queued; then it takes
 * the socket's own path (queued behind them, in order) until that has drained. The hot path thus
 * reads nothing of the socket's stream state: with thousands of members, every object a delivery
 * touches is a cache miss.
 */
/** Frames handed to room sockets by this process (read by the metrics when scraped: a plain count costs the hot path nothing). */
export const framesSent = { total: 0 };

export class WsConnection implements Connection {
  alive = true;
  /** This turn's frames: none, one, or several. */
  private held: Buffer | Buffer[] | null = null;
  private heldBytes = 0;
  /** Bytes of direct writes the kernel has not taken yet (libuv holds them). */
  private directPending = 0;
  /** Frames went through `socket.write` and may still be queued in the stream. */
  private viaStream = false;
  private readonly tcp: Socket | null;

  constructor(
    readonly id: string,
    readonly socket: WebSocket,
  ) {
    this.tcp = rawSocketOf(socket);
  }

  send(frame: string): void {
    framesSent.total++;
    if (!this.tcp) {
      if (this.socket.readyState === OPEN) this.socket.send(frame);
      return;
    }
    // Frames for a socket that closed meanwhile are dropped at the flush.
    const buf = wire(frame);
    const held = this.held;
    if (held === null) {
      this.held = buf;
      queued[queuedCount++] = this;
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
    const tcp = this.tcp;
    if (!tcp || this.socket.readyState !== OPEN) return;
    const data = Array.isArray(held) ? Buffer.concat(held, bytes) : held;
    if (this.viaStream && tcp.writableLength === 0) this.viaStream = false;
    // A destroyed socket has no handle.
    const handle = this.directPending === 0 && !this.viaStream ? handleOf(tcp) : null;
    if (handle) return this.writeDirect(tcp, handle, data);
    if (tcp.destroyed) return;
    this.viaStream = true;
    tcp.write(data);
  }

  private writeDirect(tcp: Socket, handle: TcpHandle, data: Buffer): void {
    this.directPending += writeToHandle(tcp, handle, data, this.onDirectSent);
  }

  /** One callback per connection, not one per write: a broadcast flushes thousands of these. */
  private readonly onDirectSent = (bytes: number, status: number): void => {
    this.directPending -= bytes;
    if (status < 0) this.tcp?.destroy();
  };

  close(code: CloseCodeValue): void {
    try {
      // Frames sent before the close (an error explaining it) must reach the client before it.
      this.flush();
      if (this.socket.readyState <= OPEN) this.socket.close(code, CLOSE_REASONS[code] ?? '');
    } catch {
      // A socket that cannot even close cleanly is cut off; closing must never throw into a caller.
      this.socket.terminate();
    }
  }

  get bufferedAmount(): number {
    // What `ws` would report (its sender queues nothing without deflate; its own control frames
    // are left out), plus direct writes libuv still holds.
    if (!this.tcp) return this.socket.bufferedAmount;
    return this.viaStream ? this.tcp.writableLength + this.directPending : this.directPending;
  }
}
