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
import { RepeatedFailureLog } from '../repeated-failure-log.js';
import { RedisLink, refusedByAcl, type RedisLinkOptions } from './redis-link.js';
import { RedisPresence } from './redis-presence.js';
import type { RoomBus } from './types.js';

export const DEFAULT_REDIS_PREFIX = 'salon:';
/** How often a node rewrites its presence entries and probes its connections. */
export const DEFAULT_HEARTBEAT_MS = 2_000;
/** How long an entry outlives its node's last heartbeat: three missed heartbeats. */
export const DEFAULT_PRESENCE_TTL_MS = 6_000;
/** Channels per SUBSCRIBE when a reconnection subscribes every room again. */
const SUBSCRIBE_BATCH = 1_000;
/**
 * Longest wait between two SUBSCRIBEs of a room whose SUBSCRIBE failed while the link stayed up.
 * The first is tried again at the next heartbeat, and the wait doubles with each failure up to this:
 * a refusal for good (an ACL forbidding the channel: NOPERM) is not sent again every heartbeat.
 */
export const RESUBSCRIBE_MAX_MS = 60_000;

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
  private readonly roomHandlers: ((roomId: string, heard: boolean) => void)[] = [];
  /**
   * Rooms this node hears (subscribed while the link is up, subscribed again when it comes back),
   * each with the number of its join: the answer to a SUBSCRIBE sent for a join since left (the room
   * maybe joined again) is about no room of this node, and is ignored.
   */
  private readonly rooms = new Map<string, number>();
  private joins = 0;
  /**
   * Rooms whose SUBSCRIBE failed while the link stayed up, not heard until one succeeds: the
   * heartbeats before the next try (doubling with each failure), why the last one failed, and
   * whether Redis refused it (an ACL's NOPERM) rather than failing to answer.
   */
  private readonly unheard = new Map<string, { waitBeats: number; left: number; reason: string; refused: boolean }>();
  /** Those SUBSCRIBEs' failures: the first is logged, then a summary a minute, then that they work again. */
  private readonly subscribeFailures: RepeatedFailureLog;
  /** Heartbeats whose rewrite of this node's presence entries failed on a link that is up. */
  private readonly presenceFailures: RepeatedFailureLog;
  private resubscribing = false;
  private readonly heartbeatMs: number;
  private readonly timer: NodeJS.Timeout;
  private readyWaiters: (() => void)[] = [];
  /** Rooms and presence are not yet restored since the link last came up. */
  private behind = true;
  private restoring: Promise<void> | null = null;
  /** Times the link went down: a restore that saw it go down meanwhile subscribed its rooms on a connection since replaced. */
  private cuts = 0;
  private closed = false;

  constructor(options: RedisRoomBusOptions) {
    this.nodeId = options.nodeId ?? randomUUID();
    required('RedisRoomBus', 'nodeId', this.nodeId);
    const prefix = (this.prefix = options.prefix ?? DEFAULT_REDIS_PREFIX);
    const heartbeatMs = (this.heartbeatMs = positiveNumber('RedisRoomBus', 'heartbeatMs', options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS));
    const ttlMs = positiveNumber('RedisRoomBus', 'presenceTtlMs', options.presenceTtlMs ?? DEFAULT_PRESENCE_TTL_MS);
    if (ttlMs < 2 * heartbeatMs) throw new RangeError('RedisRoomBus: options.presenceTtlMs must be at least twice options.heartbeatMs');
    this.log = options.log ?? silentLogger;
    this.subscribeFailures = new RepeatedFailureLog({ log: this.log, what: 'subscribing rooms on the room bus' });
    this.presenceFailures = new RepeatedFailureLog({ log: this.log, what: 'renewing presence entries' });
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
    const join = ++this.joins;
    this.rooms.set(roomId, join);
    if (this.link.sub.status !== 'ready') return;
    await this.link.sub.subscribe(this.channelPrefix + roomId).catch((err: unknown) => this.subscribeFailed(roomId, join, err));
  }

  /**
   * A link going down subscribes every room again when it is back. A SUBSCRIBE that fails on a link
   * that stays up (a timeout, a refusal) leaves only this room unheard: it is subscribed again at
   * the next heartbeat, then after twice as many at each failure (up to RESUBSCRIBE_MAX_MS), and
   * the rooms core is told when it is heard again, to read what it missed from the store (that
   * room alone; an outage resyncs every room).
   */
  private subscribeFailed(roomId: string, join: number | undefined, err: unknown): void {
    if (this.closed || !this.link.isUp || this.rooms.get(roomId) !== join) return;
    const was = this.unheard.get(roomId);
    const maxBeats = Math.max(1, Math.ceil(RESUBSCRIBE_MAX_MS / this.heartbeatMs));
    const waitBeats = was ? Math.min(was.waitBeats * 2, maxBeats) : 1;
    const reason = err instanceof Error ? err.message : String(err);
    this.unheard.set(roomId, { waitBeats, left: waitBeats, reason, refused: refusedByAcl(err) });
    this.subscribeFailures.failed(
      err,
      { roomId, unheard: this.unheard.size },
      'room bus could not hear a room; subscribing it again at the next heartbeat, then less often while it fails',
    );
    if (!was) this.tellRoom(roomId, false);
  }

  /** Subscribes again the unheard rooms whose wait is over, each on its own: one refused channel fails the whole command. */
  private async resubscribe(): Promise<void> {
    if (this.resubscribing || !this.unheard.size) return;
    const due = [...this.unheard].filter(([, u]) => --u.left <= 0).map(([roomId]) => roomId);
    if (!due.length) return;
    this.resubscribing = true;
    try {
      await Promise.all(
        due.map((roomId) => {
          const join = this.rooms.get(roomId);
          return this.link.sub.subscribe(this.channelPrefix + roomId).then(
            () => this.heardAgain(roomId, join),
            (err: unknown) => this.subscribeFailed(roomId, join, err),
          );
        }),
      );
    } finally {
      this.resubscribing = false;
    }
  }

  private heardAgain(roomId: string, join: number | undefined): void {
    if (this.closed || this.rooms.get(roomId) !== join || !this.unheard.delete(roomId)) return;
    if (!this.unheard.size) this.subscribeFailures.succeeded();
    this.tellRoom(roomId, true);
  }

  /**
   * Rooms with members on this node whose channel is not subscribed though the link is up (the
   * gauge `salon_bus_rooms_unheard`): their SUBSCRIBE failed, for a reason of their own. 0 while
   * the link is down: every room is unheard then, for the outage, which `/readyz` reports.
   */
  get unheardRooms(): number {
    return this.link.isUp ? this.unheard.size : 0;
  }

  onRoomHeard(handler: (roomId: string, heard: boolean) => void): void {
    this.roomHandlers.push(handler);
  }

  leave(roomId: string): void {
    this.rooms.delete(roomId);
    // The last room not heard is gone, not heard again: its failures end, without a "works again".
    if (this.unheard.delete(roomId) && !this.unheard.size) this.subscribeFailures.finish();
    if (this.link.sub.status === 'ready') this.link.sub.unsubscribe(this.channelPrefix + roomId).catch(() => {});
  }

  onConnectionChange(handler: (connected: boolean) => void): void {
    this.changeHandlers.push(handler);
  }

  /** The link is up and every room is subscribed again since it came up: as `onConnectionChange` last said (false before the first connection). */
  get connected(): boolean {
    return this.link.isUp && !this.behind;
  }

  async health() {
    const problem = this.link.problem();
    if (problem) return { ok: false, provider: 'redis', detail: problem };
    // Ready only once the rooms are heard again: a node ready before that got new members whose
    // rooms missed every other node's messages until the restore ended.
    if (this.behind) {
      const detail = `Redis at ${this.link.where} answers; this node is subscribing its ${this.rooms.size} room(s) again and rewriting its presence: other nodes' messages for them are not heard yet`;
      return { ok: false, provider: 'redis', detail };
    }
    try {
      await this.link.cmd.ping();
      // Not ready while a room's SUBSCRIBE goes unanswered: this node's link is failing it, and new
      // members of that room are better served by another node. A refusal (NOPERM) leaves it ready:
      // an ACL refuses the channel on every node alike, and failing them all would shut every room.
      return {
        ok: ![...this.unheard.values()].some((u) => !u.refused),
        provider: 'redis',
        detail: `Redis at ${this.link.where}; ${this.rooms.size - this.unheard.size} room(s) heard on this node${this.unheardDetail()}`,
      };
    } catch (err) {
      return { ok: false, provider: 'redis', detail: `Redis at ${this.link.where}: ${(err as Error).message}` };
    }
  }

  /** The rooms not heard for a failed SUBSCRIBE, for /readyz's bus detail: how many, the one failing longest, why, and the next try. */
  private unheardDetail(): string {
    if (!this.unheard.size) return '';
    const [roomId, last] = [...this.unheard].reduce((a, b) => (b[1].waitBeats > a[1].waitBeats ? b : a));
    const seconds = Math.round((last.left * this.heartbeatMs) / 1000);
    return `; ${this.unheard.size} room(s) not heard, their SUBSCRIBE failed (${roomId}: ${last.reason}; tried again in ${seconds} s)`;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.subscribeFailures.close();
    this.presenceFailures.close();
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
    this.cuts++;
    this.behind = true;
    // A start with Redis away is told too: the link says so once, when its first attempt fails.
    if (!this.closed) this.announce(false);
  }

  /** The link is back: hear every room again, rewrite presence, then tell the rooms core. */
  private restore(): Promise<void> {
    this.restoring ??= this.restoreOnce().finally(() => (this.restoring = null));
    return this.restoring;
  }

  private async restoreOnce(): Promise<void> {
    const cuts = this.cuts;
    const refused: [string, unknown][] = [];
    const restored = new Map(this.rooms);
    try {
      const rooms = [...restored.keys()];
      for (let i = 0; i < rooms.length; i += SUBSCRIBE_BATCH) {
        // A room left while the batches before its own were answered is not subscribed: its leave's
        // UNSUBSCRIBE went first, and the node heard the channel (every message of that room) until the next outage.
        const batch = rooms.slice(i, i + SUBSCRIBE_BATCH).filter((id) => this.rooms.get(id) === restored.get(id));
        if (!batch.length) continue;
        await this.link.sub.subscribe(...batch.map((id) => this.channelPrefix + id)).catch(async (err: unknown) => {
          if (!this.link.isUp || this.closed) throw err;
          // One refused channel (NOPERM) fails the whole command: each room on its own, so that the
          // refused ones alone stay unheard, not every room of the node at every heartbeat.
          const still = batch.filter((id) => this.rooms.get(id) === restored.get(id));
          await Promise.all(still.map((id) => this.link.sub.subscribe(this.channelPrefix + id).catch((one: unknown) => void refused.push([id, one]))));
        });
      }
      await this.presence.heartbeat();
    } catch (err) {
      this.log.warn({ err }, 'room bus could not restore its rooms; retrying at the next heartbeat');
      return;
    }
    // A link that went down and came back during the restore asked for a restore and got this one:
    // the bus stays behind, and the next heartbeat subscribes the rooms on the new connections.
    if (!this.link.isUp || this.closed || this.cuts !== cuts) return;
    this.behind = false;
    // Every room of the list was subscribed again: what was unheard of it is heard, and every room
    // resyncs. A room joined meanwhile (or left and joined again) is not in the list: its own
    // SUBSCRIBE may have failed, and it stays unheard, told again once the rooms core heard that every room is.
    const wasUnheard = this.unheard.size > 0;
    const joinedMeanwhile = [...this.unheard.keys()].filter((roomId) => restored.get(roomId) !== this.rooms.get(roomId));
    for (const [roomId, join] of restored) if (this.rooms.get(roomId) === join) this.unheard.delete(roomId);
    this.announce(true);
    for (const roomId of joinedMeanwhile) if (this.unheard.has(roomId)) this.tellRoom(roomId, false);
    for (const [roomId, err] of refused) this.subscribeFailed(roomId, restored.get(roomId), err);
    if (wasUnheard && !this.unheard.size) this.subscribeFailures.succeeded();
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  private async beat(): Promise<void> {
    if (!this.link.isUp) return;
    if (this.behind) return this.restore();
    // Entries are renewed beside the probe, not after it: a ping of a stalled subscriber
    // connection waits up to the command timeout, and the entries' margin before they expire with it.
    await Promise.all([
      this.presence.heartbeat().then(
        () => this.presenceFailures.succeeded(),
        // A link that went down meanwhile is the outage, which the link reports.
        (err: unknown) =>
          this.link.isUp
            ? this.presenceFailures.failed(err, {}, "presence entries not renewed: other nodes stop listing this node's members once they expire")
            : this.log.debug({ err }, 'presence heartbeat failed'),
      ),
      this.link.probe(),
      this.resubscribe(),
    ]);
  }

  private tellRoom(roomId: string, heard: boolean): void {
    for (const handler of this.roomHandlers) {
      try {
        handler(roomId, heard);
      } catch (err) {
        this.log.error({ err }, 'room bus room handler failed');
      }
    }
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
