/**
 * The room socket's backoff across sockets the server accepts and then closes: it starts from the
 * bottom again only after a connection that lasted, so a server that welcomes and closes at once
 * (a socket too far behind, 1013) is not asked again every quarter second by every page.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Backoff } from '../../public/src/lib/backoff.js';
import { RoomConnection } from '../../public/src/lib/room-connection.js';

/** A WebSocket the test opens and closes by hand. */
class FakeSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  static made: FakeSocket[] = [];
  readyState = FakeSocket.CONNECTING;
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;

  constructor(readonly url: string) {
    FakeSocket.made.push(this);
  }

  send(): void {}

  close(): void {
    this.readyState = FakeSocket.CLOSED;
  }

  /** The server accepted the socket. */
  opened(): void {
    this.readyState = FakeSocket.OPEN;
    this.onopen?.();
  }

  /** The server closed it with `code`. */
  closedBy(code: number): void {
    this.readyState = FakeSocket.CLOSED;
    this.onclose?.({ code, reason: '' });
  }
}

describe('RoomConnection backoff', () => {
  let connection: RoomConnection | undefined;

  beforeEach(() => {
    vi.useFakeTimers();
    FakeSocket.made = [];
    vi.stubGlobal('window', { addEventListener: () => {}, removeEventListener: () => {} });
    vi.stubGlobal('navigator', { onLine: true });
    vi.stubGlobal('WebSocket', FakeSocket);
  });

  afterEach(() => {
    connection?.stop();
    connection = undefined;
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  /** A connection whose every socket is welcomed as soon as it opens; the waits it announced before each retry. */
  function start(): number[] {
    const waits: number[] = [];
    const conn = new RoomConnection(
      'ws://127.0.0.1/ws/rooms/news_1',
      {
        // The room's welcome follows the hello at once.
        open: () => conn.joined(),
        frame: () => {},
        closed: () => 'retry',
        status: (_status, retryInMs) => {
          if (retryInMs !== undefined) waits.push(retryInMs);
        },
      },
      // The top of each jitter range: the waits are the backoff's ceilings.
      { backoff: new Backoff({ random: () => 1 }) },
    );
    connection = conn;
    conn.start();
    return waits;
  }

  /** The newest socket is welcomed, lives `lifeMs`, and is closed by the server; the retry's wait then runs out. */
  function welcomeAndClose(waits: number[], lifeMs = 0): void {
    const socket = FakeSocket.made.at(-1)!;
    socket.opened();
    vi.advanceTimersByTime(lifeMs);
    socket.closedBy(1013);
    vi.advanceTimersByTime(waits.at(-1)!);
  }

  it('grows while each socket is closed right after its welcome', () => {
    const waits = start();
    for (let i = 0; i < 6; i++) welcomeAndClose(waits);
    expect(waits).toEqual([500, 1_000, 2_000, 4_000, 8_000, 15_000]);
    expect(FakeSocket.made).toHaveLength(7);
  });

  it('starts from the bottom again after a connection that lasted', () => {
    const waits = start();
    for (let i = 0; i < 3; i++) welcomeAndClose(waits);
    expect(waits).toEqual([500, 1_000, 2_000]);
    welcomeAndClose(waits, 30_000);
    expect(waits.at(-1)).toBe(500);
    welcomeAndClose(waits);
    expect(waits.at(-1)).toBe(1_000);
  });

  /** A connection that records each close its owner was told of, and what it answered. */
  function startTellingCloses(answer: 'retry' | 'now' | 'stop' = 'retry'): Array<[number, string]> {
    const closes: Array<[number, string]> = [];
    const conn = new RoomConnection(
      'ws://127.0.0.1/ws/rooms/news_1',
      {
        open: () => conn.joined(),
        frame: () => {},
        closed: (code, reason) => {
          closes.push([code, reason]);
          return answer;
        },
        status: () => {},
      },
      { backoff: new Backoff({ random: () => 1 }), pingAfterMs: 1_000_000, deadAfterMs: 60_000, openTimeoutMs: 10_000 },
    );
    connection = conn;
    conn.start();
    return closes;
  }

  // Commands waiting on the socket fail only when the owner hears of its end; a watchdog that
  // retried on its own left them to wait out their own timeout.
  it('tells its owner when the watchdog gives up on a silent socket', () => {
    const closes = startTellingCloses();
    FakeSocket.made[0]!.opened();
    vi.advanceTimersByTime(70_000);
    expect(closes).toEqual([[4000, 'silent']]);
    expect(FakeSocket.made.length).toBeGreaterThan(1);
  });

  it('tells its owner when a socket never opens', () => {
    const closes = startTellingCloses();
    vi.advanceTimersByTime(15_000);
    expect(closes).toEqual([[4000, 'open timeout']]);
  });

  it('stops when its owner answers a watchdog close with stop', () => {
    startTellingCloses('stop');
    vi.advanceTimersByTime(15_000);
    expect(connection!.status).toBe('stopped');
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.made).toHaveLength(1);
  });
});
