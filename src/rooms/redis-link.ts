/**
 * The two Redis connections of one node's room bus: `cmd` for commands and publishes, `sub` for
 * subscriptions (a subscribed connection takes no other commands). The link is up when both are;
 * ioredis reconnects each with the backoff below, and the link tells its owner once per outage
 * that it went down and once that it is back. It also keeps Redis's clock, so that presence
 * expiry scores written by different nodes compare on one clock, whatever the nodes' own clocks say.
 */
import type { Redis } from 'ioredis';
import { lazyPackage } from '../lazy-package.js';
import { silentLogger, type Logger } from '../logger.js';
import { positiveNumber, required } from '../options.js';

/** ioredis, loaded by the first link made: parts.ts imports the Redis bus, and a lone node needs none of it. */
const ioredis = lazyPackage<typeof import('ioredis')>('ioredis');

export const DEFAULT_RETRY_MIN_MS = 100;
export const DEFAULT_RETRY_MAX_MS = 5_000;
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

/**
 * Whether a command's error is Redis refusing it (NOPERM: the user's ACL does not allow the channel
 * or key) rather than failing to answer. An ACL is the same on every node, so a refusal is not this
 * node's fault and `/readyz` does not fail for it; a timeout is, and it does.
 */
export function refusedByAcl(err: unknown): boolean {
  return /^NOPERM\b/.test(err instanceof Error ? err.message : String(err));
}

export interface RedisLinkOptions {
  /** `redis://` or `rediss://` URL (REDIS_URL). */
  url: string;
  /** First wait before reconnecting; doubles per failed attempt up to `retryMaxMs`. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** A command without an answer this long fails, and a connection whose ping times out is replaced. */
  commandTimeoutMs?: number;
  /** Names the connections in `CLIENT LIST`. */
  name?: string;
  log?: Logger;
}

export class RedisLink {
  readonly cmd: Redis;
  readonly sub: Redis;
  /** host:port, for messages (never the credentials). */
  readonly where: string;
  private readonly log: Logger;
  private readonly listeners: ((up: boolean) => void)[] = [];
  private waiters: (() => void)[] = [];
  /** Null until the first attempt to connect succeeds or fails: a start with Redis away is an outage too. */
  private up: boolean | null = null;
  private closed = false;
  private lastError = '';
  private downSince = Date.now();
  private clockOffset = 0;
  private clockRead = false;
  /**
   * Connections dropped by `probe` whose socket has not closed yet. A frozen peer never answers the
   * FIN, so the socket lingers until ioredis destroys it (2 s) and the connection still says
   * `ready`: probed again meanwhile, each drop added a listener to the same socket.
   */
  private readonly dropping = new Set<Redis>();

  constructor(options: RedisLinkOptions) {
    const url = new URL(required('RedisLink', 'url', options.url));
    this.where = `${url.hostname}:${url.port || 6379}`;
    this.log = options.log ?? silentLogger;
    const min = positiveNumber('RedisLink', 'retryMinMs', options.retryMinMs ?? DEFAULT_RETRY_MIN_MS);
    const max = positiveNumber('RedisLink', 'retryMaxMs', options.retryMaxMs ?? DEFAULT_RETRY_MAX_MS);
    const timeout = positiveNumber('RedisLink', 'commandTimeoutMs', options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS);
    this.cmd = new (ioredis().Redis)(options.url, {
      connectionName: options.name,
      commandTimeout: timeout,
      connectTimeout: timeout,
      // Traffic of a cut-off node is dropped, not queued: it would arrive late and out of order,
      // and what matters (messages, presence) is resynced from the store and rewritten on return.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResubscribe: false,
      retryStrategy: (times) => Math.min(min * 2 ** Math.min(times - 1, 20), max) + Math.floor(Math.random() * min),
    });
    this.sub = this.cmd.duplicate();
    for (const client of [this.cmd, this.sub]) {
      client.on('ready', () => this.changed());
      client.on('close', () => {
        this.dropping.delete(client);
        this.changed(true);
      });
      client.on('error', (err: Error) => {
        this.lastError = err.message;
      });
    }
  }

  /** Both connections are ready. */
  get isUp(): boolean {
    return this.up === true;
  }

  /** Why the link is down, for `/readyz`; null when it is up. */
  problem(): string | null {
    if (this.closed) return 'closed';
    if (this.up) return null;
    const why = this.lastError ? ` (${this.lastError})` : '';
    return `Redis at ${this.where} unreachable since ${new Date(this.downSince).toISOString()}${why}; this node serves its own members and keeps reconnecting`;
  }

  /**
   * Called with `false` when the link goes down, or when the first attempt to connect fails, and
   * `true` when it is up (both connections ready). Returns what stops the calls, for a part that closes before the link (the change feed).
   */
  onChange(listener: (up: boolean) => void): () => void {
    this.listeners.push(listener);
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners.splice(at, 1);
    };
  }

  /** Resolves when the link is up (at once when it is). */
  whenUp(): Promise<void> {
    if (this.up) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Now on Redis's clock (ms), as of the last `syncClock`. */
  now(): number {
    return Date.now() + this.clockOffset;
  }

  /** Whether Redis's clock was read since the link last came up (a Redis back may be another machine). */
  get clockKnown(): boolean {
    return this.clockRead;
  }

  /** Reads Redis's clock (TIME), halving the round trip. */
  async syncClock(): Promise<void> {
    const before = Date.now();
    const [seconds, micros] = (await this.cmd.time()).map(Number);
    const after = Date.now();
    this.clockOffset = seconds * 1000 + Math.floor(micros / 1000) - Math.round((before + after) / 2);
    this.clockRead = this.up === true;
  }

  /**
   * Pings both connections; one that does not answer in time is dropped and reconnected (a
   * half-open TCP connection would otherwise look alive until the kernel gives up on it).
   */
  async probe(): Promise<void> {
    await Promise.all(
      [this.cmd, this.sub].map(async (client) => {
        if (client.status !== 'ready' || this.dropping.has(client)) return;
        try {
          await client.ping();
        } catch (err) {
          this.lastError = (err as Error).message;
          if (this.dropping.has(client)) return;
          this.dropping.add(client);
          client.disconnect(true);
        }
      }),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [this.cmd, this.sub].map(async (client) => {
        if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
        else client.disconnect();
      }),
    );
  }

  /** `closing`: a connection closed (or an attempt to connect failed), rather than one came up. */
  private changed(closing = false): void {
    const up = !this.closed && this.cmd.status === 'ready' && this.sub.status === 'ready';
    // Before the first connection, one ready before the other is no outage: only a failure is.
    if (up === this.up || (this.up === null && !up && !closing)) return;
    const starting = this.up === null;
    this.up = up;
    if (up) {
      this.lastError = '';
      this.log.info({ redis: this.where }, 'room bus connected to Redis');
    } else {
      // Down since the start when it never came up.
      if (!starting) this.downSince = Date.now();
      this.clockRead = false;
      if (!this.closed)
        this.log.warn(
          { redis: this.where, err: this.lastError || undefined },
          starting
            ? 'room bus cannot reach Redis; serving local members only until it can'
            : 'room bus lost Redis; serving local members only until it is back',
        );
    }
    for (const listener of this.listeners.slice()) {
      try {
        listener(up);
      } catch (err) {
        this.log.error({ err }, 'room bus link listener failed');
      }
    }
    if (up) for (const resolve of this.waiters.splice(0)) resolve();
  }
}
