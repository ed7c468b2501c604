/**
 * bench:ws load generator (a child process driven over IPC by bench/ws.ts): opens its share of the
 * clients from several 127.0.0.x source addresses, joins them to the bench rooms, sends `say`
 * frames at its share of the rate, and times every receipt against the send time carried in the
 * text. Latencies go into a 10 µs histogram so millions of receipts cost no memory. A receipt is
 * read in place from the shared read buffer: byte compares and a hand-rolled number parse, no
 * JSON.parse, no string or Buffer per frame, so the generator's own queueing stays out of the figures.
 */
import { performance } from 'node:perf_hooks';
import { RawClient } from './ws-client.js';
import { PhaseMeter } from './ws-proc.js';

/** Source addresses get at most this many clients each (the ephemeral port range is ~28k). */
export const CLIENTS_PER_ADDRESS = 12_000;
const BUCKET_MS = 0.01;
const BUCKETS = 1_000_000;
const SEND_TICK_MS = 2;
const WELCOME_TIMEOUT_MS = 30_000;
const WELCOME = Buffer.from('{"type":"welcome"');
const MESSAGE = Buffer.from('{"type":"message"');
const TEXT_MARK = Buffer.from('"text":"b:');
const WARMUP_MARK = Buffer.from('"text":"w:');
const ERROR = Buffer.from('{"type":"error"');
const DOT = 0x2e;
const ZERO = 0x30;

export type LoadCommand =
  /** One port per node; the members of a room alternate between them (client i: ports[⌊i / rooms⌋ mod n]). */
  | { cmd: 'connect'; ports: number[]; first: number; count: number; rooms: number; concurrency: number }
  /** `phase` (0 ≤ phase < 1): where in its send period this generator starts, so generators take turns. */
  | { cmd: 'run'; rate: number; seconds: number; phase: number }
  /** One unmeasured message to each of `rooms`, so the measured ones find code compiled and caches warm. */
  | { cmd: 'warmup'; rooms: number[]; count: number }
  | { cmd: 'progress' }
  | { cmd: 'report' }
  | { cmd: 'exit' };

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
const nowMs = () => performance.timeOrigin + performance.now();

const hist = new Uint32Array(BUCKETS);
let overflow = 0;
let delivered = 0;
let warmed = 0;
const slowestBySend = new Map<number, number>();
let errors = 0;
const clients: { client: RawClient; room: number; joined: boolean }[] = [];
const meter = new PhaseMeter();

/** True when `buf[start..]` begins with `prefix`. */
function startsWith(buf: Buffer, start: number, end: number, prefix: Buffer): boolean {
  if (end - start < prefix.length) return false;
  for (let i = prefix.length - 1; i >= 0; i--) if (buf[start + i] !== prefix[i]) return false;
  return true;
}

/** The decimal number (digits with one optional point) at `buf[at..]`, up to the first other byte. */
function numberAt(buf: Buffer, at: number, end: number): number {
  let value = 0;
  let scale = 0;
  for (; at < end; at++) {
    const c = buf[at];
    if (c === DOT && scale === 0) scale = 1;
    else if (c >= ZERO && c <= ZERO + 9) {
      value = value * 10 + (c - ZERO);
      if (scale) scale *= 10;
    } else break;
  }
  return scale ? value / scale : value;
}

function onText(buf: Buffer, start: number, end: number): void {
  if (startsWith(buf, start, end, MESSAGE)) {
    const at = buf.indexOf(TEXT_MARK, start);
    if (at < 0 || at >= end) {
      const w = buf.indexOf(WARMUP_MARK, start);
      if (w >= 0 && w < end) warmed++;
      return;
    }
    const sentAt = numberAt(buf, at + TEXT_MARK.length, end);
    const latency = nowMs() - sentAt;
    delivered++;
    // The send time names the message: its slowest receipt here is when this generator's members all had it.
    const slowest = slowestBySend.get(sentAt);
    if (slowest === undefined || latency > slowest) slowestBySend.set(sentAt, latency);
    const bucket = Math.round(latency / BUCKET_MS);
    if (bucket < BUCKETS) hist[Math.max(0, bucket)]++;
    else overflow++;
  } else if (startsWith(buf, start, end, ERROR)) {
    errors++;
  }
}

async function connectAll(
  cmd: Extract<LoadCommand, { cmd: 'connect' }>,
): Promise<{ connected: number; failed: number; perRoom: number[]; failures: Record<string, number> }> {
  /** Why clients did not join: `close <code>`, `no welcome` (timed out) or the connect error. */
  const failures: Record<string, number> = {};
  let next = 0;
  let failed = 0;
  const perRoom = new Array<number>(cmd.rooms).fill(0);
  const one = async (index: number) => {
    const room = index % cmd.rooms;
    const entry = { client: null as unknown as RawClient, room, joined: false };
    let closedWith: number | null = null;
    let welcomed: () => void = () => {};
    const welcome = new Promise<void>((resolve) => (welcomed = resolve));
    entry.client = new RawClient({
      onText: (buf, start, end) => {
        if (!entry.joined && startsWith(buf, start, end, WELCOME)) {
          entry.joined = true;
          return welcomed();
        }
        onText(buf, start, end);
      },
      onClose: (code) => {
        if (!entry.joined) closedWith = code;
        welcomed();
      },
    });
    const address = `127.0.0.${2 + Math.floor(index / CLIENTS_PER_ADDRESS)}`;
    await entry.client.open(cmd.ports[Math.floor(index / cmd.rooms) % cmd.ports.length], `/ws/rooms/news_bench${room}`, address);
    entry.client.sendText(JSON.stringify({ type: 'hello', name: `c${index}` }));
    const timer = setTimeout(welcomed, WELCOME_TIMEOUT_MS);
    await welcome;
    clearTimeout(timer);
    if (!entry.joined) {
      entry.client.destroy();
      throw new Error(closedWith === null ? 'no welcome' : `close ${closedWith}`);
    }
    clients.push(entry);
    perRoom[room]++;
  };
  const worker = async () => {
    while (next < cmd.count) {
      const index = cmd.first + next++;
      await one(index).catch((err: unknown) => {
        failed++;
        const why = (err as Error)?.message ?? String(err);
        failures[why] = (failures[why] ?? 0) + 1;
      });
    }
  };
  await Promise.all(Array.from({ length: cmd.concurrency }, worker));
  return { connected: clients.length, failed, perRoom, failures };
}

function run(cmd: Extract<LoadCommand, { cmd: 'run' }>, rooms: number): Promise<{ sent: number; sentPerRoom: number[] }> {
  const sentPerRoom = new Array<number>(rooms).fill(0);
  let sent = 0;
  let cursor = 0;
  const start = nowMs();
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const elapsed = nowMs() - start;
      const target = Math.floor((cmd.rate * Math.min(elapsed, cmd.seconds * 1000)) / 1000 + cmd.phase);
      while (sent < target && clients.length) {
        const entry = clients[cursor++ % clients.length];
        if (entry.client.closed) continue;
        sent++;
        sentPerRoom[entry.room]++;
        entry.client.sendText(`{"type":"say","text":"b:${nowMs().toFixed(3)}:${sent}","clientId":"k${sent}"}`);
      }
      if (elapsed >= cmd.seconds * 1000) {
        clearInterval(timer);
        resolve({ sent, sentPerRoom });
      }
    }, SEND_TICK_MS);
  });
}

/** Non-empty histogram buckets as [bucket, count] pairs. */
function sparseHistogram(): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < BUCKETS; i++) if (hist[i]) out.push([i, hist[i]]);
  return out;
}

let rooms = 1;
process.on('message', async (cmd: LoadCommand) => {
  const reply = (m: object) => process.send!(m);
  switch (cmd.cmd) {
    case 'connect':
      rooms = cmd.rooms;
      return reply({ evt: 'connected', ...(await connectAll(cmd)) });
    case 'run':
      meter.start();
      return reply({ evt: 'ran', ...(await run(cmd, rooms)) });
    case 'warmup':
      for (const room of cmd.rooms) {
        // Each message from another member: one member sending them all in a burst met the
        // per-connection frame rate (`--warmup 30` failed with ERR_RATE_LIMITED).
        const senders = clients.filter((c) => c.room === room && !c.client.closed);
        for (let i = 0; i < cmd.count && senders.length; i++)
          senders[i % senders.length].client.sendText(`{"type":"say","text":"w:${room}:${i}","clientId":"w${room}.${i}"}`);
      }
      return reply({ evt: 'warming' });
    case 'progress':
      return reply({ evt: 'progress', delivered, warmed });
    case 'report':
      return reply({
        evt: 'report',
        delivered,
        overflow,
        errors,
        ...meter.read(),
        closed: clients.filter((c) => c.client.closed).length,
        histogram: sparseHistogram(),
        bucketMs: BUCKET_MS,
        slowest: [...slowestBySend],
      });
    case 'exit':
      for (const c of clients) c.client.destroy();
      process.exit(0);
  }
});
// Spawned in its own session (for its own scheduler group), so it must not outlive the bench.
process.on('disconnect', () => process.exit(0));
process.send!({ evt: 'ready' });
