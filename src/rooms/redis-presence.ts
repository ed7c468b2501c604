/**
 * RoomPresence in Redis: one sorted set per room, `<prefix>presence:<roomId>`, whose members are
 * this node's and every other node's entries (`[node, id, name, since]` as JSON) scored by when
 * they expire on Redis's clock. Each node rewrites its own entries every heartbeat with a new
 * expiry, so the entries of a node that dies stop being listed within `ttlMs`; entries expired
 * for another `ttlMs` are deleted by whichever node next writes the room (nodes notice the
 * expiry in between), and a room nobody writes any more expires as a key. `<prefix>presence-rooms`
 * lists the rooms with entries, each scored by when its newest entry expires, so any node can list
 * every active room without scanning keys. A heartbeat that comes after this node's entries may
 * have expired (the node was late) tells the node's listeners which rooms to announce again.
 *
 * A dead node's entries are seen expired only until the next writer of the room deletes them (a
 * `ttlMs` later): a node whose rechecks all missed that window (Redis errors, a stalled loop, an
 * outage) kept listing the dead node's members for good. So each listing also notes, per other
 * node, one of its entries and when that expires (`watched`); once that time is past, a recheck
 * asks for the entry's score (ZSCORE): gone, or still expired, and the room is read again.
 */
import { MAX_ENVELOPE_NAME_CHARS } from './envelope.js';
import type { RedisLink } from './redis-link.js';
import { compareJoins, type PresenceEntry, type RoomPresence } from './types.js';

/** Members per ZADD when a heartbeat rewrites a large room. */
const ZADD_BATCH = 500;
/** Longest entry read back: three names of MAX_ENVELOPE_NAME_CHARS, each character escaped (`\uXXXX`), and a time. */
const MAX_ENTRY_CHARS = 3 * 6 * MAX_ENVELOPE_NAME_CHARS + 64;

/** What RedisPresence shares with its bus: the connections, the node id, the key prefix and the timings. */
export interface RedisPresenceOptions {
  link: RedisLink;
  nodeId: string;
  prefix: string;
  heartbeatMs: number;
  ttlMs: number;
}

/**
 * Runs a pipeline or MULTI and throws the first command's error: ioredis resolves `exec` with each
 * command's error beside its reply (WRONGTYPE, OOM, a refused command), so a rewrite Redis refused
 * passed for done and the node's members silently expired from every other node's lists.
 */
async function execAll(batch: { exec(): Promise<[Error | null, unknown][] | null> }): Promise<void> {
  const replies = await batch.exec();
  const failed = replies?.find(([err]) => err);
  if (failed) throw failed[0];
}

const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_ENVELOPE_NAME_CHARS;

/**
 * An entry read from Redis; null unless it is one a node writes: a node, member id and name of 1 to
 * MAX_ENVELOPE_NAME_CHARS characters (as an envelope's header), and a join time that is a number
 * (JSON reads 1e400 as Infinity). Anything else written there reached every member's presence frames.
 */
function parseEntry(raw: string): PresenceEntry | null {
  if (raw.length > MAX_ENTRY_CHARS) return null;
  try {
    const [node, id, name, since] = JSON.parse(raw) as unknown[];
    if (!isName(node) || !isName(id) || !isName(name) || typeof since !== 'number' || !Number.isFinite(since)) return null;
    return { node, id, name, since };
  } catch {
    return null;
  }
}

export class RedisPresence implements RoomPresence {
  readonly recheckMs: number;
  private readonly link: RedisLink;
  private readonly node: string;
  private readonly prefix: string;
  private readonly ttlMs: number;
  /** This node's entries as written: roomId → userId → encoded entry. The source of every rewrite. */
  private readonly own = new Map<string, Map<string, string>>();
  /** roomId → when this node's oldest entry in the room expires as last written (Redis's clock). */
  private readonly expiresAt = new Map<string, number>();
  private readonly lapseListeners: ((roomIds: string[]) => void)[] = [];
  /**
   * roomId → this node's entries replaced or removed while Redis was away, deleted at the next
   * heartbeat: left there, another node listed a member who had left (or their old name) until the
   * entry expired, up to `ttlMs` after the link came back.
   */
  private readonly stranded = new Map<string, Set<string>>();
  /**
   * When the newest entry this node sent to Redis expires (Redis's clock). Past it, during an
   * outage, no entry of this node is listed any more, so none needs deleting at the return: kept
   * for every leave and rename of a long outage, the stranded entries grew without bound.
   */
  private writtenUntil = 0;
  /**
   * roomId → other node → one of its entries in the room as last listed, and when it expires (its
   * entries in a room are renewed together). A node missing from a later listing stays watched
   * until `stale` finds its entry gone: the listing may not be the one a room's members came from.
   * Kept for the rooms `stale` is asked about.
   */
  private readonly watched = new Map<string, Map<string, { entry: string; expires: number }>>();

  constructor(options: RedisPresenceOptions) {
    this.link = options.link;
    this.node = options.nodeId;
    this.prefix = options.prefix;
    this.recheckMs = options.heartbeatMs;
    this.ttlMs = options.ttlMs;
  }

  async set(roomId: string, member: { id: string; name: string }, since: number): Promise<void> {
    let room = this.own.get(roomId);
    if (!room) this.own.set(roomId, (room = new Map()));
    const entry = JSON.stringify([this.node, member.id, member.name, since]);
    const old = room.get(member.id);
    room.set(member.id, entry);
    if (!this.link.isUp) {
      if (old && old !== entry) this.strand(roomId, old);
      return;
    }
    const key = this.key(roomId);
    const tx = this.link.cmd.multi();
    if (old && old !== entry) tx.zrem(key, old);
    const expires = this.link.now() + this.ttlMs;
    this.writtenUntil = Math.max(this.writtenUntil, expires);
    if (!this.expiresAt.has(roomId)) this.expiresAt.set(roomId, expires);
    try {
      await execAll(
        tx
          .zadd(key, expires, entry)
          .pexpire(key, this.ttlMs * 2)
          .zadd(this.roomsKey, 'GT', expires, roomId),
      );
    } catch (err) {
      // The old entry may still be listed: the next heartbeat deletes it (the new one it writes anyway).
      if (old && old !== entry) this.strand(roomId, old);
      throw err;
    }
  }

  async remove(roomId: string, userId: string): Promise<void> {
    const room = this.own.get(roomId);
    const old = room?.get(userId);
    if (!room || !old) return;
    room.delete(userId);
    if (!room.size) {
      this.own.delete(roomId);
      this.expiresAt.delete(roomId);
    }
    if (!this.link.isUp) return this.strand(roomId, old);
    try {
      await this.link.cmd.zrem(this.key(roomId), old);
    } catch (err) {
      // Lost with the connection, or timed out: the entry may still be listed, the next heartbeat deletes it.
      this.strand(roomId, old);
      throw err;
    }
  }

  private strand(roomId: string, entry: string): void {
    // Every entry it ever sent has expired (a heartbeat of margin for the other nodes' readings of
    // the clock): nothing of it is listed, the entries stranded so far included.
    if (this.link.now() > this.writtenUntil + this.recheckMs) return void this.stranded.clear();
    let entries = this.stranded.get(roomId);
    if (!entries) this.stranded.set(roomId, (entries = new Set()));
    entries.add(entry);
  }

  async list(roomId: string): Promise<PresenceEntry[]> {
    this.ensureUp();
    const raw = await this.link.cmd.zrangebyscore(this.key(roomId), this.link.now(), '+inf', 'WITHSCORES');
    const entries: PresenceEntry[] = [];
    const others = new Map<string, { entry: string; expires: number }>();
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const e = parseEntry(raw[i]);
      if (!e) continue;
      entries.push(e);
      const expires = Number(raw[i + 1]);
      const seen = others.get(e.node);
      if (e.node !== this.node && (!seen || expires < seen.expires)) others.set(e.node, { entry: raw[i], expires });
    }
    if (others.size) this.watched.set(roomId, new Map([...(this.watched.get(roomId) ?? []), ...others]));
    return entries.sort((a, b) => compareJoins(a.since, a.id, b.since, b.id));
  }

  /**
   * Of `roomIds`, those holding entries that expired (their node stopped writing them), and those
   * where an entry listed last has expired since, whether or not Redis still holds it: the room's
   * writers delete an expired entry a `ttlMs` later, and a recheck that came only then saw nothing.
   */
  async stale(roomIds: string[]): Promise<string[]> {
    const asked = new Set(roomIds);
    // Rooms no longer rechecked (left, or read for a listing) need no watch.
    for (const roomId of this.watched.keys()) if (!asked.has(roomId)) this.watched.delete(roomId);
    if (!roomIds.length) return [];
    this.ensureUp();
    const pipe = this.link.cmd.pipeline();
    const now = this.link.now();
    for (const id of roomIds) pipe.zcount(this.key(id), '-inf', `(${now}`);
    const due: { roomId: string; node: string; watch: { entry: string; expires: number } }[] = [];
    for (const [roomId, nodes] of this.watched)
      for (const [node, watch] of nodes)
        if (watch.expires < now) {
          due.push({ roomId, node, watch });
          pipe.zscore(this.key(roomId), watch.entry);
        }
    const replies = (await pipe.exec()) ?? [];
    const stale = new Set(roomIds.filter((_, i) => Number(replies[i]?.[1] ?? 0) > 0));
    due.forEach(({ roomId, node, watch }, i) => {
      const [err, score] = replies[roomIds.length + i] ?? [];
      if (err) return void stale.add(roomId);
      const expires = score === null || score === undefined ? NaN : Number(score);
      // Renewed: its node lives, and the next look is at the new expiry.
      if (expires >= now) return void (watch.expires = expires);
      // Gone or expired: the room is read again (NodeSync reads it again until a read succeeds).
      stale.add(roomId);
      const nodes = this.watched.get(roomId);
      if (nodes?.get(node) === watch) nodes.delete(node);
      if (nodes?.size === 0) this.watched.delete(roomId);
    });
    return roomIds.filter((id) => stale.has(id));
  }

  async activeRooms(max: number): Promise<{ roomId: string; count: number }[]> {
    this.ensureUp();
    const now = this.link.now();
    const ids = await this.link.cmd.zrangebyscore(this.roomsKey, now, '+inf');
    if (!ids.length) return [];
    const pipe = this.link.cmd.pipeline();
    for (const id of ids) pipe.zrangebyscore(this.key(id), now, '+inf');
    const replies = (await pipe.exec()) ?? [];
    const out: { roomId: string; count: number }[] = [];
    ids.forEach((roomId, i) => {
      const users = new Set<string>();
      for (const raw of (replies[i]?.[1] as string[] | undefined) ?? []) {
        const e = parseEntry(raw);
        if (e) users.add(e.id);
      }
      if (users.size) out.push({ roomId, count: users.size });
    });
    return out.sort((a, b) => b.count - a.count || a.roomId.localeCompare(b.roomId)).slice(0, max);
  }

  onLapsed(listener: (roomIds: string[]) => void): void {
    this.lapseListeners.push(listener);
  }

  /**
   * Rewrites every entry of this node with a fresh expiry, and deletes long-expired ones. Rooms
   * whose entries it rewrote within a heartbeat of their expiry or later go to the lapse
   * listeners: another node's recheck may have dropped those members, and would not notice
   * them back (a rewritten entry is no longer stale). The heartbeat of margin covers the nodes'
   * readings of Redis's clock differing a little. The entries are written first, on the clock as
   * last read (it drifts by microseconds between heartbeats), and the clock read after, for the
   * next: reading it first delayed every renewal by a round trip. A link that came back reads it first.
   */
  async heartbeat(): Promise<void> {
    if (!this.link.isUp) return;
    if (!this.link.clockKnown) {
      await this.link.syncClock();
      return this.renew();
    }
    await this.renew();
    await this.link.syncClock();
  }

  private async renew(): Promise<void> {
    const stranded = [...this.stranded];
    if (!this.own.size && !stranded.length) return;
    this.stranded.clear();
    const now = this.link.now();
    const rooms = [...this.own.keys()];
    if (rooms.length) this.writtenUntil = Math.max(this.writtenUntil, now + this.ttlMs);
    const pipe = this.link.cmd.pipeline();
    // Before the rewrite: an entry removed and then written again as it was stays.
    for (const [roomId, entries] of stranded) pipe.zrem(this.key(roomId), ...entries);
    for (const [roomId, room] of this.own) {
      const key = this.key(roomId);
      const entries = [...room.values()];
      for (let i = 0; i < entries.length; i += ZADD_BATCH) {
        pipe.zadd(key, ...entries.slice(i, i + ZADD_BATCH).flatMap((e) => [now + this.ttlMs, e]));
      }
      pipe.zremrangebyscore(key, '-inf', `(${now - this.ttlMs}`);
      pipe.pexpire(key, this.ttlMs * 2);
    }
    if (rooms.length) {
      pipe.zadd(this.roomsKey, 'GT', ...rooms.flatMap((roomId) => [now + this.ttlMs, roomId]));
      pipe.zremrangebyscore(this.roomsKey, '-inf', `(${now - this.ttlMs}`);
    }
    try {
      await execAll(pipe);
    } catch (err) {
      for (const [roomId, entries] of stranded) for (const entry of entries) this.strand(roomId, entry);
      throw err;
    }
    this.renewed(rooms, now + this.ttlMs);
  }

  /** Deletes this node's entries (a clean close); the node writes nothing after this. */
  async clear(): Promise<void> {
    const rooms = [...this.own];
    this.own.clear();
    this.expiresAt.clear();
    if (!rooms.length || !this.link.isUp) return;
    const pipe = this.link.cmd.pipeline();
    for (const [roomId, room] of rooms) pipe.zrem(this.key(roomId), ...room.values());
    await execAll(pipe);
  }

  /** Records the rooms a heartbeat rewrote to expire at `expires`; tells the listeners those that had lapsed. */
  private renewed(rooms: string[], expires: number): void {
    const landed = this.link.now() + this.recheckMs;
    const lapsed: string[] = [];
    for (const roomId of rooms) {
      if (!this.own.has(roomId)) continue;
      const was = this.expiresAt.get(roomId);
      if (was !== undefined && landed >= was) lapsed.push(roomId);
      this.expiresAt.set(roomId, expires);
    }
    if (!lapsed.length) return;
    for (const listener of this.lapseListeners) listener(lapsed);
  }

  private get roomsKey(): string {
    return `${this.prefix}presence-rooms`;
  }

  private key(roomId: string): string {
    return `${this.prefix}presence:${roomId}`;
  }

  private ensureUp(): void {
    if (!this.link.isUp) throw new Error(`Redis at ${this.link.where} is unreachable`);
  }
}
