/**
 * What the loopback fakes of model servers share: request recording, JSON bodies, timed
 * behaviours (slow first byte, slow chunks, dropping the connection), deterministic vectors.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body, or undefined. */
  body: any;
}

export interface ChatTurn {
  role: string;
  content: string;
}

/** How a fake model server behaves; change it at any time with `setBehaviour`. */
export interface FakeBehaviour {
  /** Models the server has. A request for another one gets the API's real "model not found" 404. */
  models: string[];
  /** Length of the vectors it returns. */
  dimensions: number;
  /** The chat reply: a fixed text, or made from the request's messages. */
  reply: string | ((messages: ChatTurn[]) => string);
  /** Characters per streamed piece. */
  chunkChars: number;
  /** Wait before sending anything (status line included). */
  firstByteDelayMs: number;
  /** Wait between streamed pieces. */
  chunkDelayMs: number;
  /** Answer every model call (embed, chat) with this status: 404 (model missing) or 500. */
  failWith: 404 | 500 | null;
  /** Destroy the connection after this many streamed pieces. */
  dropAfterChunks: number | null;
  /**
   * Answers every request itself, in place of the API (a hostile or broken server: endless lines,
   * huge or deeply nested bodies, wrong shapes). The request is recorded first as usual.
   */
  raw: ((req: RecordedRequest, res: ServerResponse) => Promise<void> | void) | null;
}

/** Echoes the last user message, so tests can tell which prompt produced a reply. */
export function echoReply(messages: ChatTurn[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return `You asked: ${(last?.content ?? '').replace(/\s+/g, ' ').slice(0, 80)}`;
}

export function defaultBehaviour(models: string[], dimensions: number): FakeBehaviour {
  return { models, dimensions, reply: echoReply, chunkChars: 4, firstByteDelayMs: 0, chunkDelayMs: 0, failWith: null, dropAfterChunks: null, raw: null };
}

/** A unit vector derived from sha256(text): same text, same vector. */
export function fakeVector(text: string, dimensions: number): number[] {
  const out: number[] = [];
  for (let block = 0; out.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i + 1 < digest.length && out.length < dimensions; i += 2) out.push(digest.readInt16LE(i) / 32768);
  }
  const norm = Math.sqrt(out.reduce((s, x) => s + x * x, 0)) || 1;
  return out.map((x) => x / norm);
}

export function replyText(b: FakeBehaviour, messages: ChatTurn[]): string {
  return typeof b.reply === 'function' ? b.reply(messages) : b.reply;
}

/** `text` cut into pieces of `size` characters. */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += Math.max(1, size)) out.push(text.slice(i, i + Math.max(1, size)));
  return out;
}

/** Pause before a drop, so the pieces already written are delivered. */
const DROP_FLUSH_MS = 30;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/**
 * Writes `lines` one by one with the behaviour's delays; destroys the socket after
 * `dropAfterChunks` pieces. Stops quietly when the client goes away.
 */
export async function streamLines(res: ServerResponse, b: FakeBehaviour, contentType: string, lines: string[], trailer: string[]): Promise<void> {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
  res.flushHeaders();
  for (let i = 0; i < lines.length; i++) {
    if (res.destroyed) return;
    if (b.dropAfterChunks !== null && i >= b.dropAfterChunks) {
      // Let what was written reach the client first, as when a server dies mid-answer.
      await sleep(DROP_FLUSH_MS);
      res.socket?.destroy();
      return;
    }
    if (i > 0 && b.chunkDelayMs > 0) await sleep(b.chunkDelayMs);
    if (res.destroyed) return;
    res.write(lines[i]);
  }
  for (const t of trailer) res.write(t);
  res.end();
}

export interface FakeServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Every request so far, oldest first. */
  requests: RecordedRequest[];
  /** Changes part of the behaviour for the following requests. */
  setBehaviour(change: Partial<FakeBehaviour>): void;
  readonly behaviour: FakeBehaviour;
  close(): Promise<void>;
}

type Handler = (req: RecordedRequest, res: ServerResponse, b: FakeBehaviour) => Promise<void> | void;

/** Starts a loopback server on 127.0.0.1, port 0, that records requests and calls `handle`. */
export async function startFake(initial: FakeBehaviour, handle: Handler): Promise<FakeServer> {
  let behaviour = initial;
  const requests: RecordedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const recorded = { method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0], headers: req.headers, body };
    requests.push(recorded);
    const b = behaviour;
    if (b.firstByteDelayMs > 0) await sleep(b.firstByteDelayMs);
    if (res.destroyed) return;
    try {
      if (b.raw) await b.raw(recorded, res);
      else await handle(recorded, res, b);
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, { error: String(err) });
      else res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setBehaviour: (change) => {
      behaviour = { ...behaviour, ...change };
    },
    get behaviour() {
      return behaviour;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
