/**
 * The RoomBus of many nodes: Redis pub/sub, one channel per room (`<prefix>room:<roomId>`) that a
 * node subscribes to while the room has members on it, and presence in Redis sorted sets
 * (redis-presence.ts). Redis echoes a publish to its own node too; the rooms core drops it by node
 * id. While Redis is away the bus drops what is published (local delivery never waits for it),
 * and when it is back it subscribes every room again, rewrites this node's presence and tells the
 * rooms core, which resyncs from the store (docs/architecture.md).
 */
import { randomUUID } from 'node:crypto';
import { silentLogger, type Logger } from '../logger.js';
import { positiveNumber, required } from '../options.js';
import { RedisLink, type RedisLinkOptions } from './redis-link.js';
import { RedisPresence } from './redis-presence.js';
import type { RoomBus } from './types.js';

export const DEFAULT_REDIS_PREFIX = 'salon:';
/** How often a node rewrites its presence entries and probes its connections. */
export const DEFAULT_HEARTBEAT_MS = 2_000;
/** How long an entry outlives its node's last heartbeat: three missed heartbeats. */
export const DEFAULT_PRESENCE_TTL_MS = 6_000;
/** Channels per SUBSCRIBE when a reconnection subscribes every room again. */
const SUBSCRIBE_BATCH = 1_000;

export interface RedisRoomBusOptions extends RedisLinkOptions {
  nodeId?: string;
  /** Prefix of every key and channel (REDIS_KEY_PREFIX): deployments or tests sharing one Redis stay apart. */
  prefix?: string;
  heartbeatMs?: number;
  /** At least twice `heartbeatMs`. */
  presenceTtlMs?: number;
}

type Handler = (roomId: string, payload: string) => void;

export class RedisRoomBus implements RoomBus {
  readonly nodeId: string;
  readonly presence: RedisPresence;
  /** The bus's two connections, which the index change feed shares (src/sync/redis-change-feed.ts). */
  readonly link: RedisLink;
  /** REDIS_KEY_PREFIX. */
  readonly prefix: string;
  private readonly channelPrefix: string;
  private readonly log: Logger;
  private readonly handlers: Handler[] = [];
  private readonly changeHandlers: ((connected: boolean) => void)[] = [];
  /** Rooms this node hears: subscribed while the link is up, subscribed again when it comes back. */
  private readonly rooms = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private readyWaiters: (() => void)[] = [];
  /** Rooms and presence are not yet restored since the link last came up. */
  private behind = true;
  private restoring: Promise<void> | null = null;
  private connectedOnce = false;
  private closed = false;

  constructor(options: RedisRoomBusOptions) {
    this.nodeId = options.nodeId ?? randomUUID();
    required('RedisRoomBus', 'nodeId', this.nodeId);
    const prefix = (this.prefix = options.prefix ?? DEFAULT_REDIS_PREFIX);
    const heartbeatMs = positiveNumber('RedisRoomBus', 'heartbeatMs', options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    const ttlMs = positiveNumber('RedisRoomBus', 'presenceTtlMs', options.presenceTtlMs ?? DEFAULT_PRESENCE_TTL_MS);
    if (ttlMs < 2 * heartbeatMs) throw new RangeError('RedisRoomBus: options.presenceTtlMs must be at least twice options.heartbeatMs');
    this.log = options.log ?? silentLogger;
    this.channelPrefix = `${prefix}room:`;
    this.link = new RedisLink({ ...options, name: options.name ?? `salon-${this.nodeId}` });
    this.presence = new RedisPresence({ link: this.link, nodeId: this.nodeId, prefix, heartbeatMs, ttlMs });
    this.link.sub.on('message', (channel: string, payload: string) => this.deliver(channel, payload));
    this.link.onChange((up) => (up ? void this.restore() : this.cutOff()));
    this.timer = setInterval(() => void this.beat(), heartbeatMs);
    this.timer.unref();
  }

  /** Resolves once the bus is connected and hears its rooms (tests; start-up checks). */
  ready(): Promise<void> {
    if (!this.behind && this.link.isUp) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  async publish(roomId: string, payload: string): Promise<void> {
    if (this.closed) throw new Error('the room bus is closed');
    if (!this.link.isUp) return;
    await this.link.cmd.publish(this.channelPrefix + roomId, payload);
  }

  subscribe(handler: Handler): void {
    this.handlers.push(handler);
  }

  async join(roomId: string): Promise<void> {
    this.rooms.add(roomId);
    if (this.link.sub.status !== 'ready') return;
    await this.link.sub.subscribe(this.channelPrefix + roomId).catch((err: unknown) => this.subscribeFailed(roomId, err));
  }

  /**
   * A link going down subscribes every room again when it is back. A SUBSCRIBE that fails on a link
   * that stays up (a timeout, a refusal) left the room unheard on this node until the next outage,
   * its members missing every other node's messages: the next heartbeat now subscribes every room
   * again and tells the rooms core, which reads what they missed from the store, as after an outage.
   */
  private subscribeFailed(roomId: string, err: unknown): void {
    if (this.closed || !this.link.isUp) return;
    this.log.warn({ roomId, err }, 'room bus could not hear a room; subscribing every room again at the next heartbeat');
    this.behind = true;
  }

  leave(roomId: string): void {
    this.rooms.delete(roomId);
    if (this.link.sub.status === 'ready') this.link.sub.unsubscribe(this.channelPrefix + roomId).catch(() => {});
  }

  onConnectionChange(handler: (connected: boolean) => void): void {
    this.changeHandlers.push(handler);
  }

  async health() {
    const problem = this.link.problem();
    if (problem) return { ok: false, provider: 'redis', detail: problem };
    try {
      await this.link.cmd.ping();
      return { ok: true, provider: 'redis', detail: `Redis at ${this.link.where}; ${this.rooms.size} room(s) heard on this node` };
    } catch (err) {
      return { ok: false, provider: 'redis', detail: `Redis at ${this.link.where}: ${(err as Error).message}` };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.presence.clear().catch((err: unknown) => this.log.warn({ err }, 'removing presence from Redis failed'));
    await this.link.close();
  }

  private deliver(channel: string, payload: string): void {
    if (this.closed || !channel.startsWith(this.channelPrefix)) return;
    const roomId = channel.slice(this.channelPrefix.length);
    if (!this.rooms.has(roomId)) return;
    for (const handler of this.handlers) {
      try {
        handler(roomId, payload);
      } catch {
        // One failing subscriber must not keep the payload from the others; handlers log their own errors.
      }
    }
  }

  private cutOff(): void {
    this.behind = true;
    if (this.connectedOnce && !this.closed) this.announce(false);
  }

  /** The link is back: hear every room again, rewrite presence, then tell the rooms core. */
  private restore(): Promise<void> {
    this.restoring ??= this.restoreOnce().finally(() => (this.restoring = null));
    return this.restoring;
  }

  private async restoreOnce(): Promise<void> {
    try {
      const channels = [...this.rooms].map((id) => this.channelPrefix + id);
      for (let i = 0; i < channels.length; i += SUBSCRIBE_BATCH) await this.link.sub.subscribe(...channels.slice(i, i + SUBSCRIBE_BATCH));
      await this.presence.heartbeat();
    } catch (err) {
      this.log.warn({ err }, 'room bus could not restore its rooms; retrying at the next heartbeat');
      return;
    }
    if (!this.link.isUp || this.closed) return;
    this.behind = false;
    this.connectedOnce = true;
    this.announce(true);
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  private async beat(): Promise<void> {
    if (!this.link.isUp) return;
    if (this.behind) return this.restore();
    // Entries are renewed beside the probe, not after it: a ping of a stalled subscriber
    // connection waits up to the command timeout, and the entries' margin before they expire with it.
    await Promise.all([this.presence.heartbeat().catch((err: unknown) => this.log.debug({ err }, 'presence heartbeat failed')), this.link.probe()]);
  }

  private announce(connected: boolean): void {
    for (const handler of this.changeHandlers) {
      try {
        handler(connected);
      } catch (err) {
        this.log.error({ err }, 'room bus connection handler failed');
      }
    }
  }
}
