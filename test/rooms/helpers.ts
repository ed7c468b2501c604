/** Room test helpers: an app with a few stored items, and a client that collects frames. */
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { vi } from 'vitest';
import type { AppOverrides } from '../../src/app.js';
import type { ServerMessage } from '../../src/protocol/messages.js';
import type { Logger } from '../../src/logger.js';
import { RoomHub, type RoomHubDeps } from '../../src/rooms/hub.js';
import { Identity } from '../../src/rooms/identity.js';
import { InProcessBusNetwork, type InProcessBus } from '../../src/rooms/in-process-bus.js';
import type { RoomOptions } from '../../src/rooms/options.js';
import type { Connection } from '../../src/rooms/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/types.js';
import { tempStore, testApp } from '../helpers.js';
import { item } from '../store/contract.js';

export { item };

/** A connection the rooms core writes to without a socket: every frame kept, back-pressure set by hand. */
export class FakeConnection implements Connection {
  readonly sent: string[] = [];
  bufferedAmount = 0;
  closedWith: number | null = null;
  constructor(readonly id: string) {}
  send(frame: string): void {
    this.sent.push(frame);
  }
  close(code: number): void {
    this.closedWith = code;
  }
  frames(type: string): Record<string, any>[] {
    return this.sent.map((s) => JSON.parse(s)).filter((f) => f.type === type);
  }
}

export const ROOM = 'news_1';
export const OTHER_ROOM = 'post_2';

/**
 * A ready app whose store holds news_1 (Tech), post_2 (Science) and video_3 (Tech). Shutdown waits
 * only briefly for sockets: injectWS sockets never report their close to the server.
 */
export async function roomsApp(env: Record<string, string> = {}, overrides: AppOverrides = {}) {
  const t = await testApp(env as never, { ...overrides, roomOptions: { shutdownGraceMs: 100, ...overrides.roomOptions } });
  const { store } = t.app.salon;
  await store.upsertItem(item('news_1', { title: 'Rust 2.0 released', description: 'The Rust team shipped a new edition.' }));
  await store.upsertItem(item('post_2', { category: 'Science', title: 'Why the sky is blue' }));
  await store.upsertItem(item('video_3', { title: 'Compilers in 10 minutes' }));
  await t.app.ready();
  return t;
}

type Frame = ServerMessage & Record<string, any>;

/** A room client that keeps every frame it got and lets tests wait for the next matching one. */
export class Client {
  readonly frames: Frame[] = [];
  private cursor = 0;
  private waiters: (() => void)[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)));
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        resolve({ code, reason: String(reason) });
        this.wake();
      });
    });
  }

  send(frame: Record<string, unknown> | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The next frame (after those already taken) of `type` matching `where`; earlier non-matching frames are skipped. */
  next(type: string, where: (f: Frame) => boolean = () => true, timeoutMs = 3000): Promise<Frame> {
    return this.waitFor(type, timeoutMs, () => {
      while (this.cursor < this.frames.length) {
        const f = this.frames[this.cursor++];
        if (f.type === type && where(f)) return f;
      }
      return undefined;
    });
  }

  /**
   * A frame of `type` matching `where` among those received from index `since` on, taken or not:
   * for frames whose order among themselves is not fixed (a resync's presence and its replayed
   * messages), waited for without moving the cursor `next` reads from.
   */
  arrived(type: string, where: (f: Frame) => boolean, since: number, timeoutMs = 3000): Promise<Frame> {
    return this.waitFor(type, timeoutMs, () => this.frames.slice(since).find((f) => f.type === type && where(f)));
  }

  private async waitFor(type: string, timeoutMs: number, find: () => Frame | undefined): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        // The frames of that type in full (a flaky wait is diagnosed from what did arrive), the others by type.
        const got = this.frames.map((f) => (f.type === type ? f : f.type));
        throw new Error(`no ${type} frame within ${timeoutMs} ms; got ${JSON.stringify(got)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Frames of `type` received so far. */
  all(type: string): Frame[] {
    return this.frames.filter((f) => f.type === type);
  }

  /** Joins with `hello` and returns the welcome. */
  async hello(name: string, extra: Record<string, unknown> = {}): Promise<Frame> {
    this.send({ type: 'hello', name, ...extra });
    return this.next('welcome');
  }

  close(): void {
    this.ws.close();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

/** Opens a room socket through app.injectWS (no port). */
export async function inject(app: FastifyInstance, roomId = ROOM, headers: Record<string, string> = {}): Promise<Client> {
  let client: Client | undefined;
  await app.injectWS(`/ws/rooms/${roomId}`, { headers }, { onInit: (ws) => (client = new Client(ws)) });
  return client!;
}

/** Joins a room through injectWS and returns the client and its welcome. */
export async function joined(app: FastifyInstance, name: string, roomId = ROOM, extra: Record<string, unknown> = {}) {
  const client = await inject(app, roomId);
  const welcome = await client.hello(name, extra);
  return { client, welcome };
}

/** Listens on 127.0.0.1 port 0; returns the room socket URL of `roomId`. */
export async function listen(app: FastifyInstance): Promise<(roomId?: string) => string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return (roomId = ROOM) => `ws://127.0.0.1:${port}/ws/rooms/${roomId}`;
}

/** Opens a real socket to a listening app. */
export async function connect(url: string, options: WebSocket.ClientOptions = {}): Promise<Client> {
  const ws = new WebSocket(url, options);
  const client = new Client(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return client;
}

/** Waits until `check` is true, polling. */
/** Connects to `url` and says hello as `name`: the client and its welcome. */
export async function member(url: string, name: string) {
  const client = await connect(url);
  const welcome = await client.hello(name);
  return { client, welcome };
}

/**
 * Makes an in-process bus node one that can be cut off, as a Redis one can (an in-process bus never
 * is); the returned function tells its listeners it was cut off (false) or is back (true).
 */
export function cuttable(node: InProcessBus): (connected: boolean) => void {
  const listeners: ((connected: boolean) => void)[] = [];
  (node as { onConnectionChange: (listener: (connected: boolean) => void) => void }).onConnectionChange = (listener) => void listeners.push(listener);
  return (connected) => listeners.forEach((listener) => listener(connected));
}

export async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** What a test adds to `hubBesideOtherNode`'s hub: listeners of its deliveries, and work on its bus before the hub exists. */
export interface BesideOtherNodeSetup extends Pick<RoomHubDeps, 'onMessage' | 'onGap'> {
  /** Runs on node `here`'s bus before the hub is built on it: a hub takes what the bus is then (a cut-off switch, a recheck interval). */
  prepare?: (here: InProcessBus) => void;
}

/** A hub of node `here` on a fresh store, and node `other` on the same in-process bus network, following ROOM; any room id resolves. */
export async function hubBesideOtherNode(
  log: Logger,
  options: Partial<RoomOptions> = {},
  setup: BesideOtherNodeSetup = {},
): Promise<{
  store: SqliteStore;
  hub: RoomHub;
  here: InProcessBus;
  other: InProcessBus;
  close(): Promise<void>;
}> {
  const { prepare, ...listeners } = setup;
  const temp = tempStore();
  const network = new InProcessBusNetwork();
  const other = network.node('other');
  await other.join(ROOM);
  const here = network.node('here');
  prepare?.(here);
  const hub = new RoomHub({
    store: temp.store,
    identity: new Identity(Buffer.alloc(32, 7)),
    bus: here,
    resolver: async (id) => ({ id, kind: 'news', title: 'T', url: null, context: 'T' }),
    log,
    options: { maxConnectionsPerIp: 100_000, ...options },
    ...listeners,
  });
  return {
    store: temp.store,
    hub,
    here,
    other,
    async close() {
      await hub.close();
      await other.close();
      await temp.close();
    },
  };
}

/** Holds the store's first read of `threadId` until `release` (a spy: restore it with vi.restoreAllMocks); `reached` when it began. */
export function holdThreadRead(store: Store, threadId: string): { reached: Promise<void>; release: () => void } {
  const read = store.getThread.bind(store);
  let began!: () => void;
  const reached = new Promise<void>((resolve) => (began = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  vi.spyOn(store, 'getThread').mockImplementation(async (id: string) => {
    if (id === threadId && !held) {
      held = true;
      began();
      await gate;
    }
    return read(id);
  });
  return { reached, release };
}
