/**
 * A minimal WebSocket client for the load generator: one net.Socket, a hand-written upgrade and
 * frame parser, masked frames with an all-zero key (valid, and free to apply). Tens of thousands
 * of these fit in one process where `ws` clients would cost several times the memory and CPU.
 * Every client reads into one shared buffer (`onread`), bypassing the stream machinery, and frames
 * reach the handler as offsets into it: receiving allocates nothing unless a frame is split.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

const OP_TEXT = 1;
const OP_CLOSE = 8;
const OP_PING = 9;
const HEADER_END = Buffer.from('\r\n\r\n');
const UPGRADE_TIMEOUT_MS = 10_000;
const READ_BUFFER_BYTES = 256 * 1024;

/** One read buffer for every client: reads are synchronous, and leftovers are copied out. */
const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);

export interface RawClientHandlers {
  /** A text frame's payload, `buf[start..end)` (the shared read buffer: copy what you keep). */
  onText(buf: Buffer, start: number, end: number): void;
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
      let settle: ((err?: Error) => void) | null = (err) => {
        settle = null;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const socket = connect({
        port,
        host: '127.0.0.1',
        localAddress,
        noDelay: true,
        onread: { buffer: readBuffer, callback: (n: number) => this.onRead(n, settle) },
      });
      this.socket = socket;
      const fail = (err: Error) => {
        settle?.(err);
        this.finish(1006);
        socket.destroy();
      };
      const timer = setTimeout(() => fail(new Error('upgrade timed out')), UPGRADE_TIMEOUT_MS);
      socket.on('error', fail);
      socket.once('close', () => fail(new Error('closed before the upgrade')));
      socket.once('connect', () => {
        const key = randomBytes(16).toString('base64');
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
    });
  }

  /** `n` new bytes at the start of the shared read buffer. */
  private onRead(n: number, settle: ((err?: Error) => void) | null): boolean {
    if (this.upgraded) {
      this.read(readBuffer, n);
      return true;
    }
    const buf = this.pending ? Buffer.concat([this.pending, readBuffer.subarray(0, n)]) : readBuffer.subarray(0, n);
    const end = buf.indexOf(HEADER_END);
    if (end < 0) {
      this.pending = Buffer.from(buf);
      return true;
    }
    this.pending = null;
    if (!buf.subarray(0, 12).toString().startsWith('HTTP/1.1 101')) {
      settle?.(new Error(`upgrade refused: ${buf.subarray(0, end).toString().split('\r\n')[0]}`));
      this.socket?.destroy();
      return false;
    }
    this.upgraded = true;
    settle?.();
    if (end + 4 < buf.length) {
      const rest = Buffer.from(buf.subarray(end + 4));
      this.read(rest, rest.length);
    }
    return true;
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

  /** Parses the frames in `chunk[0..n)`, after any bytes left over from the last read. */
  private read(chunk: Buffer, n: number): void {
    let buf = chunk;
    let length = n;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk.subarray(0, n)]);
      length = buf.length;
      this.pending = null;
    }
    let at = 0;
    while (length - at >= 2) {
      const opcode = buf[at] & 0x0f;
      let len = buf[at + 1] & 0x7f;
      let head = 2;
      if (len === 126) {
        if (length - at < 4) break;
        len = buf.readUInt16BE(at + 2);
        head = 4;
      } else if (len === 127) {
        if (length - at < 10) break;
        len = Number(buf.readBigUInt64BE(at + 2));
        head = 10;
      }
      if (length - at < head + len) break;
      const start = at + head;
      at = start + len;
      if (opcode === OP_TEXT) this.handlers.onText(buf, start, at);
      else if (opcode === OP_PING) this.socket?.write(clientFrame(0x0a, Buffer.from(buf.subarray(start, at))));
      else if (opcode === OP_CLOSE) {
        this.finish(len >= 2 ? buf.readUInt16BE(start) : 1005);
        this.socket?.destroy();
        return;
      }
    }
    if (at < length) this.pending = Buffer.from(buf.subarray(at, length));
  }
}
