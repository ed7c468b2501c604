/**
 * A minimal WebSocket client for the load generator: one net.Socket, a hand-written upgrade and
 * frame parser, masked frames with an all-zero key (valid, and free to apply). Tens of thousands
 * of these fit in one process where `ws` clients would cost several times the memory and CPU.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

const OP_TEXT = 1;
const OP_CLOSE = 8;
const OP_PING = 9;
const HEADER_END = Buffer.from('\r\n\r\n');
const UPGRADE_TIMEOUT_MS = 10_000;

export interface RawClientHandlers {
  /** A text frame's payload (a view into the read buffer: copy what you keep). */
  onText(payload: Buffer): void;
  onClose(code: number): void;
}

/** Frames `payload` as a masked client frame with a zero mask key. */
export function clientFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const ext = len < 126 ? 0 : len < 65_536 ? 2 : 8;
  const out = Buffer.allocUnsafe(2 + ext + 4 + len);
  out[0] = 0x80 | opcode;
  if (ext === 0) out[1] = 0x80 | len;
  else if (ext === 2) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(len, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeBigUInt64BE(BigInt(len), 2);
  }
  out.writeUInt32BE(0, 2 + ext);
  payload.copy(out, 6 + ext);
  return out;
}

export class RawClient {
  private socket: Socket | null = null;
  private pending: Buffer | null = null;
  private upgraded = false;
  closed = false;

  constructor(private readonly handlers: RawClientHandlers) {}

  /** Connects and upgrades; resolves once the server answered 101. */
  open(port: number, path: string, localAddress: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1', localAddress, noDelay: true });
      this.socket = socket;
      const fail = (err: Error) => {
        if (!this.upgraded) reject(err);
        this.finish(1006);
        socket.destroy();
      };
      const timer = setTimeout(() => fail(new Error('upgrade timed out')), UPGRADE_TIMEOUT_MS);
      socket.once('error', fail);
      socket.once('close', () => fail(new Error('closed before the upgrade')));
      socket.once('connect', () => {
        const key = randomBytes(16).toString('base64');
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      });
      socket.on('data', (chunk: Buffer) => {
        if (this.upgraded) return this.read(chunk);
        const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
        const end = buf.indexOf(HEADER_END);
        if (end < 0) {
          this.pending = buf;
          return;
        }
        this.pending = null;
        if (!buf.subarray(0, 12).toString().startsWith('HTTP/1.1 101')) {
          socket.destroy();
          return reject(new Error(`upgrade refused: ${buf.subarray(0, end).toString().split('\r\n')[0]}`));
        }
        this.upgraded = true;
        clearTimeout(timer);
        resolve();
        if (end + 4 < buf.length) this.read(buf.subarray(end + 4));
      });
    });
  }

  sendText(text: string): void {
    if (!this.closed) this.socket?.write(clientFrame(OP_TEXT, Buffer.from(text)));
  }

  end(): void {
    if (this.closed) return;
    this.socket?.write(clientFrame(OP_CLOSE, Buffer.from([0x03, 0xe8])));
    this.socket?.end();
  }

  destroy(): void {
    this.socket?.destroy();
  }

  private finish(code: number): void {
    if (this.closed) return;
    this.closed = true;
    this.handlers.onClose(code);
  }

  private read(chunk: Buffer): void {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    let at = 0;
    while (buf.length - at >= 2) {
      const opcode = buf[at] & 0x0f;
      let len = buf[at + 1] & 0x7f;
      let head = 2;
      if (len === 126) {
        if (buf.length - at < 4) break;
        len = buf.readUInt16BE(at + 2);
        head = 4;
      } else if (len === 127) {
        if (buf.length - at < 10) break;
        len = Number(buf.readBigUInt64BE(at + 2));
        head = 10;
      }
      if (buf.length - at < head + len) break;
      const payload = buf.subarray(at + head, at + head + len);
      at += head + len;
      if (opcode === OP_TEXT) this.handlers.onText(payload);
      else if (opcode === OP_PING) this.socket?.write(clientFrame(0x0a, Buffer.from(payload)));
      else if (opcode === OP_CLOSE) {
        this.finish(len >= 2 ? payload.readUInt16BE(0) : 1005);
        this.socket?.destroy();
        return;
      }
    }
    if (at < buf.length) this.pending = Buffer.from(buf.subarray(at));
  }
}
