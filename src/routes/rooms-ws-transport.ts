/**
 * How room frames reach the kernel: the one module that reaches into Node's and `ws`'s internals
 * (`process.binding('stream_wrap')`, a `ws` socket's `_socket`, a TCP socket's `_handle`).
 *
 * - `direct`: a frame goes straight to the TCP handle while nothing of ours is queued on the socket
 *   (Node's stream machinery adds ~1.5 µs to each write, which a 10,000-member room pays 10,000
 *   times; docs/benchmarks.md), through the socket's own `write` while something is;
 * - `stream`: always through the TCP socket's `write` (frames still framed once and batched);
 * - `ws`: through `ws`'s own `send`, touching no internals at all.
 *
 * Internals can change under a new Node major, so `checkTransport` writes through the handle to a
 * loopback peer at start-up and, should anything be missing or wrong, falls back to `ws` and logs
 * it. `engines` in package.json names the Node majors this was tested on.
 */
import { once } from 'node:events';
import { createServer, connect, type Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { Logger } from '../logger.js';

export type TransportMode = 'direct' | 'stream' | 'ws';

/** What Node's TCP handle offers for writing (internal, so everything is checked before use). */
export interface TcpHandle {
  writeBuffer(req: WriteRequest, data: Buffer): number;
  readonly writeQueueSize: number;
}
interface WriteRequest {
  handle: TcpHandle;
  oncomplete: (status: number) => void;
  async: boolean;
  bytes: number;
  buffer: Buffer | null;
}
interface StreamWrapBinding {
  WriteWrap: new () => WriteRequest;
  streamBaseState?: Int32Array;
  kLastWriteWasAsync?: number;
}

/** Node's write request class, or null where it is not reachable. */
function loadStreamWrap(): StreamWrapBinding | null {
  try {
    const binding = (process as unknown as { binding(name: string): Partial<StreamWrapBinding> }).binding('stream_wrap');
    return typeof binding?.WriteWrap === 'function' ? (binding as StreamWrapBinding) : null;
  } catch {
    return null;
  }
}
const streamWrap = loadStreamWrap();
let mode: TransportMode = streamWrap ? 'direct' : 'ws';

/** The mode room sockets opened from now on use. */
export function transportMode(): TransportMode {
  return mode;
}

/** Chooses the mode (tests and benchmarks compare them); `direct` needs Node's write binding. */
export function setTransportMode(next: TransportMode): void {
  mode = next === 'direct' && !streamWrap ? 'stream' : next;
}

/** The TCP socket under a `ws` socket, or null in `ws` mode or where `ws` has none. */
export function rawSocketOf(socket: WebSocket): Socket | null {
  if (mode === 'ws') return null;
  const tcp = (socket as unknown as { _socket?: Socket })._socket;
  return tcp && typeof tcp.write === 'function' ? tcp : null;
}

/** The socket's TCP handle when direct writes are on; null otherwise or once it is destroyed. */
export function handleOf(tcp: Socket): TcpHandle | null {
  if (mode !== 'direct') return null;
  return (tcp as unknown as { _handle?: TcpHandle | null })._handle ?? null;
}

function ignoreCompletion(): void {}

/** A write request no write holds; allocating one per write showed up in profiles of large rooms. */
let spareRequest: WriteRequest | null = null;
function newRequest(): WriteRequest {
  const req = new streamWrap!.WriteWrap();
  req.oncomplete = ignoreCompletion;
  req.async = false;
  req.bytes = 0;
  req.buffer = null;
  return req;
}

/** True when the handle took the whole write at once; false when libuv queued part of it. */
function wroteAtOnce(handle: TcpHandle): boolean {
  const state = streamWrap!.streamBaseState;
  const key = streamWrap!.kLastWriteWasAsync;
  if (state && typeof key === 'number') return state[key] === 0;
  return handle.writeQueueSize === 0;
}

/**
 * Hands `data` to the TCP handle itself. Returns the bytes libuv still holds (0 when the kernel
 * took everything); for those, `onSent(bytes, status)` is called once they leave or fail. A failed
 * write destroys the socket (what the socket's own write does on EPIPE, ECONNRESET …) and returns 0.
 * The caller keeps order: it only writes here when none of its frames are queued elsewhere, and
 * libuv queues later writes of either kind behind this one.
 */
export function writeToHandle(tcp: Socket, handle: TcpHandle, data: Buffer, onSent: (bytes: number, status: number) => void): number {
  const req = spareRequest ?? newRequest();
  spareRequest = null;
  req.handle = handle;
  const err = handle.writeBuffer(req, data);
  if (err !== 0) {
    // The request may have been given to libuv before it failed, so it is not reused.
    tcp.destroy();
    return 0;
  }
  if (wroteAtOnce(handle)) {
    // Node keeps no reference to a request the kernel took at once: the next write reuses it.
    spareRequest = req;
    return 0;
  }
  const pending = handle.writeQueueSize;
  req.async = true;
  req.buffer = data;
  req.oncomplete = (status: number) => onSent(pending, status);
  return pending;
}

const SELF_TEST_TIMEOUT_MS = 5_000;
/** Larger than a loopback socket's send buffer, so the test also covers writes libuv queues. */
const SELF_TEST_LARGE_BYTES = 8 * 1024 * 1024;

/** Writes a small and a large buffer through a handle to a loopback peer; resolves to what went wrong, or null. */
export async function transportSelfTest(): Promise<string | null> {
  if (!streamWrap) return "process.binding('stream_wrap').WriteWrap is not available";
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const client = connect(port, '127.0.0.1');
  try {
    const [accepted] = (await once(server, 'connection')) as [Socket];
    const handle = (accepted as unknown as { _handle?: TcpHandle | null })._handle;
    if (!handle || typeof handle.writeBuffer !== 'function') return 'a TCP socket has no _handle.writeBuffer';
    const small = Buffer.from('salon transport self-test');
    const large = Buffer.alloc(SELF_TEST_LARGE_BYTES, 0x5a);
    const expected = small.length + large.length;
    const chunks: Buffer[] = [];
    let received = 0;
    const arrived = new Promise<void>((resolve) => {
      client.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (received >= expected) resolve();
      });
    });
    let failed: number | null = null;
    for (const data of [small, large]) writeToHandle(accepted, handle, data, (_bytes, status) => status < 0 && (failed = status));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), SELF_TEST_TIMEOUT_MS)));
    const outcome = await Promise.race([arrived, timedOut]);
    clearTimeout(timer);
    accepted.destroy();
    if (outcome === 'timeout') return `only ${received} of ${expected} bytes arrived`;
    if (failed !== null) return `a queued write completed with status ${failed}`;
    const got = Buffer.concat(chunks);
    // Buffer#equals compares natively: a callback per byte (`some`) took ~100 ms of every server start.
    if (!got.subarray(0, small.length).equals(small) || !got.subarray(small.length).equals(large)) return 'the bytes arrived changed';
    return null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    client.destroy();
    server.close();
  }
}

let checked: Promise<void> | null = null;

/**
 * Checks once per process that direct handle writes work here; if they do not, every room socket
 * from then on uses `ws`'s own send, and the reason is logged. Resolves to the mode in use.
 * `probe` replaces the loopback self-test (tests: the fallback, or the self-test itself in a
 * process where an app already ran it); it is not cached.
 */
export async function checkTransport(log: Logger, probe?: () => Promise<string | null>): Promise<TransportMode> {
  const run = async (test: () => Promise<string | null>) => {
    const problem = await test();
    if (problem === null) {
      log.info(
        { node: process.versions.node },
        `room sockets write frames straight to the TCP handle (transport self-test passed on Node ${process.versions.node})`,
      );
    } else {
      mode = 'ws';
      log.warn(
        { node: process.versions.node, problem },
        `direct TCP writes failed their self-test on Node ${process.versions.node} (${problem}); room frames go through ws's own send`,
      );
    }
  };
  if (probe) await run(probe);
  else await (checked ??= run(transportSelfTest));
  return mode;
}
