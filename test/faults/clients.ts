/**
 * Outside clients for the faults suite: a raw room socket that records every frame, fuzzing
 * sessions that check each hostile frame is answered, odd HTTP upgrades sent byte by byte, and
 * timed chat between quiet members.
 */
import { connect as tcpConnect } from 'node:net';
import WebSocket from 'ws';
import { parseClientFrame } from '../../src/rooms/frames.js';
import { FrameFuzzer, type FuzzFrame } from './frame-fuzz.js';

type Frame = Record<string, any>;

/** Frame types that answer a client's frame (presence and typing come unasked). */
const ANSWERS = new Set(['error', 'welcome', 'pong']);
const ANSWER_TIMEOUT_MS = 5_000;
const MAX_TEXT_CHARS = 4_000;

/** A room socket that keeps every frame and its close code. */
export class RawClient {
  readonly frames: Frame[] = [];
  closeCode: number | null = null;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.frames.push(JSON.parse(String(data)));
      this.wake();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      this.wake();
    });
    ws.on('error', () => this.wake());
  }

  /** Opens a socket to `url`, from `localAddress` when given (127.0.0.x spreads per-address limits). */
  static async open(url: string, localAddress?: string): Promise<RawClient> {
    const ws = new WebSocket(url, { localAddress, maxPayload: 64 * 1024 * 1024 });
    const client = new RawClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return client;
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(frame: Frame | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Waits until a frame after index `from` matches, or the socket closes; false on timeout. */
  async waitFor(from: number, match: (f: Frame) => boolean, timeoutMs: number): Promise<Frame | 'closed' | null> {
    const deadline = Date.now() + timeoutMs;
    for (let i = from; ;) {
      for (; i < this.frames.length; i++) if (match(this.frames[i])) return this.frames[i];
      if (this.closeCode !== null) return 'closed';
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.ws.terminate();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** True when the protocol expects no answer to this frame (a valid `typing`). */
/** The clientId a text frame carries, whose echo answers it. */
function clientIdOf(frame: FuzzFrame): string | undefined {
  if (frame.kind !== 'text') return undefined;
  try {
    const value = JSON.parse(frame.data);
    return typeof value?.clientId === 'string' ? value.clientId : undefined;
  } catch {
    return undefined;
  }
}

function expectsNoAnswer(frame: FuzzFrame): boolean {
  if (frame.kind !== 'text') return false;
  const parsed = parseClientFrame(frame.data, MAX_TEXT_CHARS);
  return parsed.ok && parsed.frame.type === 'typing';
}

/** A valid private ask is answered to the asker alone, by the assistant's own frames. */
function isPrivateAsk(frame: FuzzFrame): boolean {
  if (frame.kind !== 'text') return false;
  const parsed = parseClientFrame(frame.data, MAX_TEXT_CHARS);
  return parsed.ok && parsed.frame.type === 'ask' && parsed.frame.private === true;
}

export interface FuzzFigures {
  frames: number;
  answered: number;
  unanswered: number;
  connections: number;
  closeCodes: Record<string, number>;
  /** The first few unanswered frames, to replay. */
  unansweredSamples: string[];
}

/**
 * Sends at least `total` fuzzed frames over `parallel` sockets at a time, one frame in flight per
 * socket, and checks each is answered (an answering frame or the socket's close). A socket the
 * server closed is replaced by a new one, half of which say a valid `hello` first.
 */
export async function fuzzFrames(roomUrl: () => string, options: { total: number; parallel: number; seed: number }): Promise<FuzzFigures> {
  const fuzzer = new FrameFuzzer(options.seed);
  const figures: FuzzFigures = { frames: 0, answered: 0, unanswered: 0, connections: 0, closeCodes: {}, unansweredSamples: [] };
  let lane = 0;
  const worker = async () => {
    while (figures.frames < options.total) {
      const address = `127.0.0.${2 + (lane++ % 250)}`;
      const client = await RawClient.open(roomUrl(), address);
      figures.connections++;
      if (lane % 2 === 0) client.send({ type: 'hello', name: `fuzz${lane}` });
      while (client.open && figures.frames < options.total) {
        const frame = fuzzer.next();
        const from = client.frames.length;
        client.ws.send(frame.data, { binary: frame.kind === 'binary' });
        figures.frames++;
        if (expectsNoAnswer(frame)) continue;
        const clientId = clientIdOf(frame);
        const privateAsk = isPrivateAsk(frame);
        const answers = (f: Frame) =>
          ANSWERS.has(f.type) ||
          (clientId !== undefined && f.type === 'message' && f.message?.clientId === clientId) ||
          (privateAsk && f.type.startsWith('assistant.'));
        const answer = await client.waitFor(from, answers, ANSWER_TIMEOUT_MS);
        if (answer !== null) figures.answered++;
        else if (++figures.unanswered <= 5) figures.unansweredSamples.push(String(frame.data).slice(0, 300));
      }
      await client.waitFor(client.frames.length, () => false, client.open ? 0 : 1_000);
      const code = String(client.closeCode ?? 'open');
      figures.closeCodes[code] = (figures.closeCodes[code] ?? 0) + 1;
      client.close();
    }
  };
  await Promise.all(Array.from({ length: options.parallel }, worker));
  return figures;
}

/** The status line a raw HTTP upgrade request got, or `closed` when the server hung up without one. */
export function rawUpgrade(port: number, request: Buffer | string, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    let received = '';
    const done = (result: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(received ? received.split('\r\n')[0] : 'no answer'), timeoutMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n')) done(received.split('\r\n')[0]);
    });
    socket.on('error', () => done(received ? received.split('\r\n')[0] : 'closed'));
    socket.on('close', () => done(received ? received.split('\r\n')[0] : 'closed'));
    socket.write(request);
  });
}

/** An upgrade request to `path` with extra header lines (raw bytes allowed). */
export function upgradeRequest(path: string, extraHeaders: string[] = []): Buffer {
  const lines = [
    `GET ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: Upgrade',
    'Upgrade: websocket',
    'Sec-WebSocket-Version: 13',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    ...extraHeaders,
    '',
    '',
  ];
  return Buffer.from(lines.join('\r\n'), 'latin1');
}

/** A member who says one message every `everyMs` and times each until its own echo. */
export async function quietMember(
  url: string,
  name: string,
  localAddress?: string,
): Promise<{ client: RawClient; chat: (count: number, everyMs: number) => Promise<{ latencies: number[]; lost: number }> }> {
  const client = await RawClient.open(url, localAddress);
  client.send({ type: 'hello', name });
  const welcome = await client.waitFor(0, (f) => f.type === 'welcome', 10_000);
  if (!welcome || welcome === 'closed') throw new Error(`${name} was not welcomed`);
  const chat = async (count: number, everyMs: number) => {
    const latencies: number[] = [];
    let lost = 0;
    for (let i = 0; i < count; i++) {
      const clientId = `${name}-${i}-${Math.random().toString(36).slice(2)}`;
      const from = client.frames.length;
      const started = performance.now();
      client.send({ type: 'say', text: `quiet ${i}`, clientId });
      const echo = await client.waitFor(from, (f) => f.type === 'message' && f.message?.clientId === clientId, 10_000);
      if (echo && echo !== 'closed') latencies.push(performance.now() - started);
      else lost++;
      await new Promise((r) => setTimeout(r, everyMs));
    }
    return { latencies, lost };
  };
  return { client, chat };
}
