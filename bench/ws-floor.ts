/**
 * `npm run bench:ws-floor -- --sockets 10000 --rounds 15 --readers 2 [--spin 1]`
 *
 * The floor under bench:ws's 10,000-member room: no Salon, no rooms, no JSON, just one process
 * writing the same 300-byte WebSocket frame to N accepted loopback sockets, as fast as it can, and
 * reader processes (the load generator's receive path: one shared read buffer per process, no
 * parsing) timing each receipt. Pinned like bench:ws (writer on core 0, readers on the rest).
 * Three ways to write, alternating round by round:
 * - `write`: `socket.write(frame)`, Node's stream path;
 * - `handle`: the frame handed straight to each socket's TCP handle (what rooms-ws-connection.ts
 *   does when nothing is queued);
 * - `connection`: the server's own WsConnection (send, then its end-of-turn flush).
 * Prints per mode the medians over the rounds: the write loop's wall and CPU time (µs per write)
 * and the time until the last reader had every frame. `--spin 1` makes the readers busy-poll, so
 * no write has to wake a sleeping reader (on loopback the writer's syscall pays for that wake-up
 * and for the receiving socket's TCP input; over a network the clients' machines do).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { WsConnection } from '../src/routes/rooms-ws-connection.js';
import { cpuMs } from './ws-proc.js';
import { benchOptions } from './args.js';

const MODES = ['write', 'handle', 'connection'] as const;
type Mode = (typeof MODES)[number];
const PER_ADDRESS = 12_000;
const PAUSE_MS = 300;
const FRAME_BYTES = 300;

const USAGE = 'npm run bench:ws-floor -- [--sockets N] [--rounds N] [--readers N] [--spin 0|1]';
// --role, --port, --first and --count are how the main process starts its writer and readers.
const values = benchOptions(
  USAGE,
  Object.fromEntries(['sockets', 'rounds', 'readers', 'spin', 'role', 'port', 'first', 'count'].map((name) => [name, 'string' as const])),
  (a) => ({
    sockets: a.number('sockets', 10_000, { integer: true, min: 1 }),
    rounds: a.number('rounds', 15, { integer: true, min: 1 }),
    readers: a.number('readers', 2, { integer: true, min: 1 }),
    spin: a.choice('spin', ['0', '1'], '0'),
    role: a.choice('role', ['main', 'writer', 'reader'], 'main'),
    port: a.number('port', 0, { integer: true, min: 0, max: 65_535 }),
    first: a.number('first', 0, { integer: true, min: 0 }),
    count: a.number('count', 0, { integer: true, min: 0 }),
  }),
);
const nowMs = () => performance.timeOrigin + performance.now();
type Msg = { evt: string } & Record<string, any>;

function next(child: ChildProcess, evt: string): Promise<Msg> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`child exited (${code}) while waiting for ${evt}`));
    const onMessage = (m: Msg) => {
      if (m.evt !== evt) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** The writer: accepts the sockets, then writes one frame to each on every `go`. */
function writer(): void {
  const sockets: Socket[] = [];
  const connections: WsConnection[] = [];
  const server = createServer({ noDelay: true }, (s) => {
    s.on('error', () => {});
    sockets.push(s);
    connections.push(new WsConnection(`c${sockets.length}`, { readyState: 1, _socket: s } as never));
  });
  server.listen(0, '127.0.0.1', 4096, () => process.send!({ evt: 'listening', port: (server.address() as { port: number }).port }));
  const { WriteWrap } = (process as unknown as { binding(n: string): { WriteWrap: new () => Record<string, unknown> } }).binding('stream_wrap');
  process.on('message', (m: { cmd: string; mode: Mode }) => {
    if (m.cmd === 'count') return process.send!({ evt: 'count', sockets: sockets.length });
    if (m.cmd === 'exit') process.exit(0);
    const t0 = nowMs();
    const c0 = cpuMs();
    // The send time goes in the frame: readers time each receipt against it.
    const text = `${t0.toFixed(3)} `.padEnd(FRAME_BYTES - 4, 'x');
    const frame = Buffer.alloc(FRAME_BYTES);
    frame[0] = 0x81;
    frame[1] = 126;
    frame.writeUInt16BE(FRAME_BYTES - 4, 2);
    frame.write(text, 4, 'latin1');
    const done = () => process.send!({ evt: 'wrote', loopMs: nowMs() - t0, cpuMs: cpuMs() - c0 });
    if (m.mode === 'write') for (const s of sockets) s.write(frame);
    else if (m.mode === 'handle') {
      const req = new WriteWrap();
      Object.assign(req, { oncomplete() {}, async: false, bytes: 0, buffer: frame });
      for (const s of sockets) {
        const handle = (s as unknown as { _handle: { writeBuffer(r: unknown, b: Buffer): number } })._handle;
        // Reused: a write the kernel takes at once leaves nothing behind (frames this small always are).
        handle.writeBuffer(req, frame);
      }
    } else {
      for (const c of connections) c.send(text);
      // The connections flush in a setImmediate of this turn; this one runs after it.
      return setImmediate(done);
    }
    done();
  });
}

/** A reader: opens its share of the sockets and reports each round's last receipt. */
async function reader(port: number, first: number, count: number): Promise<void> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let got = 0;
  let firstMs = 0;
  let lastMs = 0;
  const onread = (n: number) => {
    if (n < 4) return true;
    const t = nowMs();
    const sentAt = Number(buffer.toString('latin1', 4, 18));
    if (got === 0) firstMs = t - sentAt;
    lastMs = t - sentAt;
    if (++got === count) {
      process.send!({ evt: 'round', firstMs, lastMs });
      got = 0;
    }
    return true;
  };
  let opened = 0;
  await new Promise<void>((resolve, reject) => {
    for (let i = 0; i < count; i++) {
      const localAddress = `127.0.0.${2 + Math.floor((first + i) / PER_ADDRESS)}`;
      const s = connect({ port, host: '127.0.0.1', localAddress, noDelay: true, onread: { buffer, callback: onread } });
      s.once('connect', () => ++opened === count && resolve());
      s.once('error', reject);
    }
  });
  process.send!({ evt: 'connected' });
  // Busy-polling: the reader never sleeps in epoll_wait, so writes never have to wake it.
  if (values.spin === '1') {
    const spin = () => setImmediate(spin);
    spin();
  }
}

const median = (xs: number[]) => {
  const s = xs.slice().sort((a, b) => a - b);
  return Number(s[Math.floor(s.length / 2)].toFixed(2));
};

async function main(): Promise<void> {
  const { sockets, rounds, readers: readerCount } = values;
  const script = fileURLToPath(import.meta.url);
  const cores = availableParallelism();
  const pinned = cores > 1 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  const start = (cpus: string, args: string[]) => {
    const [cmd, argv] = pinned ? ['taskset', ['-c', cpus, process.execPath, script, ...args]] : [process.execPath, [script, ...args]];
    return spawn(cmd, argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
  };
  const w = start('0', ['--role', 'writer']);
  const readers: ChildProcess[] = [];
  try {
    const { port } = await next(w, 'listening');
    const share = Math.ceil(sockets / readerCount);
    for (let i = 0; i < readerCount; i++) {
      const count = Math.min(share, sockets - i * share);
      readers.push(
        start(cores > 1 ? `1-${cores - 1}` : '0', [
          '--role',
          'reader',
          '--port',
          String(port),
          '--first',
          String(i * share),
          '--count',
          String(count),
          '--spin',
          values.spin,
        ]),
      );
    }
    await Promise.all(readers.map((r) => next(r, 'connected')));
    while ((await (w.send({ cmd: 'count' }), next(w, 'count'))).sockets < sockets) await new Promise((r) => setTimeout(r, 50));
    const results = new Map<Mode, { loop: number[]; usPerWrite: number[]; delivered: number[] }>(
      MODES.map((m) => [m, { loop: [], usPerWrite: [], delivered: [] }]),
    );
    for (let round = 0; round < rounds; round++) {
      for (const mode of MODES) {
        await new Promise((r) => setTimeout(r, PAUSE_MS));
        const received = Promise.all(readers.map((r) => next(r, 'round')));
        w.send({ cmd: 'go', mode });
        const wrote = await next(w, 'wrote');
        const last = Math.max(...(await received).map((r) => r.lastMs));
        const r = results.get(mode)!;
        r.loop.push(wrote.loopMs);
        r.usPerWrite.push((wrote.cpuMs * 1000) / sockets);
        r.delivered.push(last);
      }
    }
    const out: Record<string, unknown> = { sockets, rounds, readers: readerCount, pinned };
    for (const [mode, r] of results)
      out[mode] = {
        loop_ms_p50: median(r.loop),
        cpu_us_per_write_p50: median(r.usPerWrite),
        delivered_ms_p50: median(r.delivered),
        delivered_ms_max: Number(Math.max(...r.delivered).toFixed(2)),
      };
    console.log(JSON.stringify(out));
  } finally {
    for (const r of readers) r.kill('SIGKILL');
    w.kill('SIGKILL');
  }
}

if (values.role === 'writer') writer();
else if (values.role === 'reader') {
  process.on('disconnect', () => process.exit(0));
  void reader(values.port, values.first, values.count);
} else {
  main().catch((err) => {
    console.error(`ws-floor: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
