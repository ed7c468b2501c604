/**
 * One room's WebSocket, kept alive: reconnects with jittered, capped backoff after the socket
 * drops, pings while idle, treats a silent socket as dead, and waits for the browser to be online
 * (going offline closes the socket at once: one left open would hang until the silence watchdog).
 * It knows nothing of the room's state: frames go out to `handlers`, and the owner decides after
 * each close whether to try again.
 */
import type { ClientMessage, ServerMessage } from '../../../src/protocol/messages.js';
import { Backoff } from './backoff.js';
import { parseUntrustedJson } from './untrusted-json.js';

export type ConnectionStatus = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'offline' | 'stopped';

export interface ConnectionHandlers {
  /** The socket is open: send `hello` now. */
  open(): void;
  frame(frame: ServerMessage): void;
  /** The socket closed; return 'retry' to reconnect with backoff, 'now' to reconnect at once, 'stop' to give up. */
  closed(code: number, reason: string): 'retry' | 'now' | 'stop';
  status(status: ConnectionStatus, retryInMs?: number): void;
}

export interface ConnectionOptions {
  backoff?: Backoff;
  /** Ping after this much quiet, in ms. */
  pingAfterMs?: number;
  /** Give the socket up as dead after this much silence, in ms. */
  deadAfterMs?: number;
  /** Give up on a connect attempt that has not opened after this long, in ms. */
  openTimeoutMs?: number;
}

const DEFAULT_PING_AFTER_MS = 25_000;
const DEFAULT_DEAD_AFTER_MS = 60_000;
const DEFAULT_OPEN_TIMEOUT_MS = 10_000;
const WATCHDOG_INTERVAL_MS = 5_000;
/**
 * How long a connection must have stayed joined for its end to start the backoff from the bottom
 * again. Reset at the welcome itself, a server that welcomes and then closes at once (a socket too
 * far behind for its catch-up, 1013; a flood, 4429) was asked again every quarter second for good.
 */
const STABLE_AFTER_MS = 10_000;
/** A client may close only with 1000 or 3000–4999; this one means "we gave up on a silent socket". */
const CLOSE_STALE = 4000;
/** The browser went offline: the socket is given up at once, and the next one opens when it is back online. */
const CLOSE_OFFLINE = 4001;

export class RoomConnection {
  private readonly backoff: Backoff;
  private readonly pingAfterMs: number;
  private readonly deadAfterMs: number;
  private readonly openTimeoutMs: number;
  private socket: WebSocket | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private lastHeard = 0;
  private lastSent = 0;
  /** When the server accepted the current socket (`joined`); 0 when it has not. */
  private joinedAt = 0;
  private running = false;
  private _status: ConnectionStatus = 'idle';

  constructor(
    private readonly url: string,
    private readonly handlers: ConnectionHandlers,
    options: ConnectionOptions = {},
  ) {
    this.backoff = options.backoff ?? new Backoff();
    this.pingAfterMs = options.pingAfterMs ?? DEFAULT_PING_AFTER_MS;
    this.deadAfterMs = options.deadAfterMs ?? DEFAULT_DEAD_AFTER_MS;
    this.openTimeoutMs = options.openTimeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
  }

  get status(): ConnectionStatus {
    return this._status;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    window.addEventListener('online', this.onOnline);
    window.addEventListener('offline', this.onOffline);
    this.watchdog = setInterval(this.checkHealth, WATCHDOG_INTERVAL_MS);
    this.connect();
  }

  /** Closes for good (leaving the room). */
  stop(): void {
    this.running = false;
    clearTimeout(this.retryTimer);
    clearInterval(this.watchdog);
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('offline', this.onOffline);
    this.drop(1000, 'leaving');
    this.setStatus('stopped');
  }

  /** Sends a frame if the socket is open; false when it is not. */
  send(frame: ClientMessage): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(frame));
    this.lastSent = Date.now();
    return true;
  }

  /** The server accepted us (`welcome`): once this socket has lasted STABLE_AFTER_MS, its end starts the backoff from the bottom. */
  joined(): void {
    this.joinedAt = Date.now();
  }

  /** The current socket ended (closed, given up, dropped): a long-lived one starts the backoff afresh. */
  private ended(): void {
    if (this.joinedAt && Date.now() - this.joinedAt >= STABLE_AFTER_MS) this.backoff.reset();
    this.joinedAt = 0;
  }

  /** Skips the wait before the next attempt ("Retry now"). */
  reconnectNow(): void {
    if (!this.running || this.socket) return;
    clearTimeout(this.retryTimer);
    this.connect();
  }

  private connect(): void {
    if (!this.running) return;
    if (!navigator.onLine) {
      this.setStatus('offline');
      return;
    }
    this.setStatus(this.backoff.attempts > 0 ? 'reconnecting' : 'connecting');
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.url);
    } catch {
      this.scheduleRetry('retry');
      return;
    }
    this.socket = socket;
    this.lastHeard = Date.now();
    socket.onopen = () => {
      this.lastHeard = Date.now();
      this.setStatus('open');
      this.handlers.open();
    };
    socket.onmessage = (ev) => {
      this.lastHeard = Date.now();
      if (typeof ev.data !== 'string') return;
      let frame: ServerMessage;
      try {
        frame = parseUntrustedJson(ev.data) as ServerMessage;
      } catch {
        return;
      }
      if (frame && typeof frame.type === 'string') this.handlers.frame(frame);
    };
    socket.onclose = (ev) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.ended();
      if (!this.running) return;
      this.scheduleRetry(this.handlers.closed(ev.code, ev.reason));
    };
  }

  private scheduleRetry(decision: 'retry' | 'now' | 'stop'): void {
    if (decision === 'stop') {
      this.stop();
      return;
    }
    const delay = decision === 'now' ? 0 : this.backoff.next();
    if (decision === 'now') this.backoff.next();
    this.setStatus(navigator.onLine ? 'reconnecting' : 'offline', delay);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  private drop(code: number, reason: string): void {
    const socket = this.socket;
    this.socket = null;
    if (!socket) return;
    this.ended();
    socket.onopen = socket.onmessage = socket.onclose = null;
    try {
      socket.close(code, reason);
    } catch {
      // Already closing.
    }
  }

  /**
   * The watchdog gave up on the socket: the owner is told as for any close (so commands waiting
   * on it fail now rather than at their own timeout), and its answer decides the retry.
   */
  private giveUp(reason: string): void {
    this.drop(CLOSE_STALE, reason);
    this.scheduleRetry(this.handlers.closed(CLOSE_STALE, reason));
  }

  private readonly checkHealth = () => {
    const socket = this.socket;
    if (!socket) return;
    const now = Date.now();
    const silentFor = now - this.lastHeard;
    if (socket.readyState === WebSocket.CONNECTING && silentFor > this.openTimeoutMs) {
      this.giveUp('open timeout');
    } else if (socket.readyState === WebSocket.OPEN && silentFor > this.deadAfterMs) {
      this.giveUp('silent');
    } else if (socket.readyState === WebSocket.OPEN && now - Math.max(this.lastHeard, this.lastSent) > this.pingAfterMs) {
      this.send({ type: 'ping' });
    }
  };

  private readonly onOnline = () => {
    if (this.running && !this.socket) {
      clearTimeout(this.retryTimer);
      this.connect();
    }
  };

  /**
   * The browser says it is offline. A socket open then does not close by itself: it hangs until
   * the silence watchdog gives up on it (a minute), while the member saw nothing and their
   * messages sat at "Sending…". So it is closed now, the owner is told as for any close, and no
   * retry is scheduled: `online` connects again.
   */
  private readonly onOffline = () => {
    if (!this.running) return;
    clearTimeout(this.retryTimer);
    if (this.socket) {
      this.drop(CLOSE_OFFLINE, 'offline');
      this.handlers.closed(CLOSE_OFFLINE, 'offline');
    }
    this.setStatus('offline');
  };

  private setStatus(status: ConnectionStatus, retryInMs?: number): void {
    this._status = status;
    this.handlers.status(status, retryInMs);
  }
}
