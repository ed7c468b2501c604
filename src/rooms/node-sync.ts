/**
 * Keeps one node's rooms in step with the other nodes of the bus. Presence: every local join and
 * leave is written to the bus's shared presence and announced with a `presence` envelope carrying
 * the change, which the other nodes apply to their member lists; they read the room's whole
 * presence only when they must (first load, resync, a dead node, a change they cannot apply). Rooms are rechecked every
 * `presence.recheckMs` for members whose node died. Resync: when the bus was cut off, each room
 * remembers its seq at the cut; once the bus is back the node delivers what it missed from the
 * store and sends a `sync` envelope so the others fetch what it could not publish meanwhile.
 * What a node delivers from the store goes out in slices, one per turn of the event loop, while the
 * room holds its live messages back (held-messages.ts).
 */
import type { Logger } from '../logger.js';
import type { Message, Member } from '../protocol/messages.js';
import type { Store } from '../store/types.js';
import { encodeEnvelope, parsePresenceDelta, type Envelope, type PresenceDelta } from './envelope.js';
import { FreshReading } from './fresh-reading.js';
import type { Held } from './held-messages.js';
import { ReadSlots } from './read-slots.js';
import type { Room } from './room.js';
import { RoomMembers } from './room-members.js';
import { DEFAULT_SEQ_WINDOW, isSeq, REOPENED_RUNS_KEPT, type SeqRun } from './seq-window.js';
import type { RoomBus } from './types.js';

/** Most messages a resync reads to check the in-memory history against the store. */
const MAX_HISTORY_RELOAD = 1_000;
/** Seqs before the cut a resync reads again: messages in flight while the cut went unnoticed. */
const RESYNC_SLACK = 100;
/**
 * How far past a room's seq a message heard on the bus is delivered as it came. Between two
 * messages this node hears, the others store at most a burst each (ROOM_MESSAGES_PER_SECOND × 2,
 * 60 by default) plus answers; a message further ahead means this node missed some, or the
 * envelope is wrong. Either way the store says what came since (NodeSync.readAhead): a seq taken
 * on an envelope's word alone became the room's seq and the floor of every joiner's welcome.
 */
export const MAX_SEQ_LEAD = 128;
/**
 * How long a room waits for the seqs a message heard on the bus skipped before reading them from
 * the store: two nodes' messages may arrive in another order than they were stored, a moment apart.
 */
export const GAP_WAIT_MS = 1_000;
/** How long a node waits after a message's publish failed before telling the others to read the store (a `sync`). */
export const SYNC_AFTER_FAILED_PUBLISH_MS = 1_000;
/**
 * Bytes of frames a catch-up hands to one room's sockets in one turn of the event loop, all members
 * together (a frame sent to 1,000 members counts 1,000 times): about what one live message to a
 * room of 10,000 costs. A slice is one message at least, however many members get it.
 */
export const CATCH_UP_TURN_BYTES = 4 * 1024 * 1024;
/**
 * Store reads of catch-ups and history reloads one node runs at once. After Redis comes back every
 * node reads every room's missed messages and history, and every other node's `sync` for each room
 * asks for a read too: those wait in line instead of taking all of a PostgreSQL pool's connections
 * (DEFAULT_POOL_SIZE, 10) from the posts being stored meanwhile, every node at the same moment.
 */
export const CATCH_UP_READS_AT_ONCE = 4;
/**
 * Reads of a room's whole shared presence one node runs at once. After Redis comes back every room
 * reads its members again, as do the other nodes for each room's `sync`: those wait in line, as
 * the store reads do (CATCH_UP_READS_AT_ONCE), instead of all going to Redis in one instant.
 */
export const PRESENCE_READS_AT_ONCE = 4;
/** How long a reading of every node's active rooms serves (browsers refresh their counts every 10 s). */
export const ACTIVE_ROOMS_FRESH_MS = 1_000;

export interface NodeSyncDeps {
  bus: RoomBus;
  store: Store;
  /** The live room `roomId` of this node. */
  room(roomId: string): Room | undefined;
  /** Every live room of this node. */
  rooms(): Iterable<Room>;
  /**
   * Delivers a stored message this node's members of the room missed, once (the live copy the room
   * holds of it, if any, in its place); the bytes of the frame each member got, 0 when none was sent.
   */
  deliverMissed(room: Room, message: Message): number;
  /** Delivers a live frame the room held during a catch-up (a message once); the bytes of its frame, 0 when none was sent. */
  deliverHeld(room: Room, held: Held): number;
  /** Messages per store read when resyncing. */
  pageSize: number;
  /**
   * Bytes of frames one member gets from a catch-up in one turn (the soft send limit): the
   * send limits see a socket's queue only once a turn's frames are written.
   */
  memberSliceBytes: number;
  log: Logger;
}

export class NodeSync {
  private connected = true;
  /** room.seq when the bus was cut off, for rooms open then or opened since, or when the bus stopped hearing the room alone. */
  private readonly marks = new Map<string, number>();
  /**
   * Rooms the bus does not hear though it is connected (their SUBSCRIBE failed): `true` once heard
   * again before the room finished loading, for `opened` to resync it, as is a room loading when
   * the bus came back from an outage.
   */
  private readonly unheard = new Map<string, boolean>();
  /**
   * Rooms loading when another node's `sync` came, with the lowest seq it said to read after: the
   * load may have read the store before what that node could not publish was stored. Read once loaded.
   */
  private readonly loadingSyncs = new Map<string, Reading>();
  private readonly refreshing = new Map<Room, Promise<void>>();
  /** Rooms whose last read of the shared presence failed: read again at the next recheck. */
  private readonly unrefreshed = new Set<Room>();
  private readonly again = new Set<Room>();
  /**
   * roomId → this node's presence changes not yet announced (userId → the entry, or null when they
   * left), or null when the others must read the room's presence again (lapsed entries).
   */
  private readonly pokes = new Map<string, Map<string, { name: string; since: number } | null> | null>();
  /** Presence writes under way: a closing node waits for them, to tell the others what they wrote. */
  private readonly presenceWrites = new Set<Promise<void>>();
  /**
   * Rooms with a catch-up waiting for its turn in the room's queue, with the seq it reads after: a
   * `sync` heard meanwhile lowers it instead of queueing a read of its own. After Redis came back,
   * every node sends one per room, and each node read the store once per other node and room.
   */
  private readonly catchUps = new Map<Room, Reading & { run: Promise<void> }>();
  /** Rooms with a read of the store queued by a message far ahead of them (readAhead). */
  private readonly readingAhead = new Set<Room>();
  /** Rooms whose held frames are being sent (sendHeld), each by the last sender queued for it. */
  private readonly releasing = new Map<Room, Promise<void>>();
  /** Rooms waiting to see whether seqs a bus message skipped arrive (gap), with the wait's timer. */
  private readonly gaps = new Map<Room, { after: number; upTo: number; timer: NodeJS.Timeout }>();
  /** roomId → the lowest seq whose publish failed, for the `sync` to send (publishFailed), and its timer. */
  private readonly failedPublishes = new Map<string, { seq: number; timer: NodeJS.Timeout }>();
  private readonly timer: NodeJS.Timeout | null = null;
  /** The store reads of catch-ups and history reloads, CATCH_UP_READS_AT_ONCE at a time. */
  private readonly reads = new ReadSlots(CATCH_UP_READS_AT_ONCE);
  /** Reads of rooms' whole shared presence, PRESENCE_READS_AT_ONCE at a time. */
  private readonly presenceReads = new ReadSlots(PRESENCE_READS_AT_ONCE);

  constructor(private readonly deps: NodeSyncDeps) {
    deps.bus.onConnectionChange((connected) => (connected ? this.reconnected() : this.cutOff()));
    deps.bus.onRoomHeard?.((roomId, heard) => (heard ? this.roomHeard(roomId) : this.roomUnheard(roomId)));
    deps.bus.presence.onLapsed((roomIds) => this.lapsed(roomIds));
    const every = deps.bus.presence.recheckMs;
    if (every > 0) {
      this.timer = setInterval(() => void this.recheck(), every);
      this.timer.unref();
    }
  }

  /** Hears the room before its history is read, so nothing said in between is missed. */
  open(roomId: string): Promise<void> {
    return this.deps.bus.join(roomId);
  }

  /** The room loaded: learn who is in it on other nodes. */
  async opened(room: Room): Promise<void> {
    const unheard = this.unheard.get(room.id);
    if (!this.connected || unheard !== undefined) this.marks.set(room.id, room.seq);
    // Heard again while it loaded (its channel, or the bus after an outage): the load may have read
    // the store before what it missed was stored.
    if (unheard === true && this.connected) {
      this.unheard.delete(room.id);
      this.resync(room, false);
    }
    const waiting = this.loadingSyncs.get(room.id);
    if (waiting !== undefined) {
      this.loadingSyncs.delete(room.id);
      void this.catchUp(room, waiting.from, waiting.runs);
    }
    await this.refresh(room);
  }

  /** The room was dropped on this node: a gap it waited for is read by nobody. */
  closed(roomId: string): void {
    this.marks.delete(roomId);
    this.unheard.delete(roomId);
    this.loadingSyncs.delete(roomId);
    for (const room of this.unrefreshed) if (room.id === roomId) this.unrefreshed.delete(room);
    for (const [room, gap] of this.gaps) {
      if (room.id !== roomId) continue;
      clearTimeout(gap.timer);
      this.gaps.delete(room);
    }
    this.deps.bus.leave(roomId);
  }

  /**
   * A member of this node joined the room or took another name. The other nodes are told once the
   * presence write succeeded: told of an entry the store lacks, they listed a member their next
   * read of the presence dropped again. A failed write is logged and told to nobody; this node's
   * room lists the member all the same, the others once a later write (a heartbeat's) holds it.
   */
  memberSet(room: Room, member: Member, since: number): void {
    const entry = { name: member.name, since };
    this.written(this.deps.bus.presence.set(room.id, member, since), () => this.poke(room.id, member.id, entry), room.id);
  }

  /**
   * A member's last connection on this node left the room: told to the other nodes once the entry
   * is removed (a failed removal is logged and told to nobody; the entry lapses, or is removed when
   * the node closes, and the others drop the member at their next read of the presence).
   */
  memberGone(room: Room, member: Member): void {
    this.written(this.deps.bus.presence.remove(room.id, member.id), () => this.poke(room.id, member.id, null), room.id);
  }

  /** Runs `then` once `write` succeeded; a failure is logged and runs nothing. */
  private written(write: Promise<void>, then: () => void, roomId: string): void {
    const done: Promise<void> = write
      .then(then, (err: unknown) => this.deps.log.debug({ roomId, err }, 'presence write failed'))
      .finally(() => this.presenceWrites.delete(done));
    this.presenceWrites.add(done);
  }

  /** A `presence` or `sync` envelope from another node. */
  heard(roomId: string, envelope: Envelope): void {
    const room = this.deps.room(roomId);
    if (!room) return;
    const sync = envelope.delivery === 'sync' ? parseSync(envelope.frame) : undefined;
    if (sync) room.reopen(sync.runs);
    if (!room.info) {
      // Loading: `opened` reads its members, and the messages a `sync` names once it is loaded (the
      // load may have read the store before they were stored; dropped, they never reached the room).
      if (sync && room.heard) this.waitLoaded(roomId, sync.from, sync.runs);
      return;
    }
    const delta = envelope.delivery === 'presence' ? parsePresenceDelta(envelope.frame, envelope.node) : null;
    if (delta) this.applyDelta(room, envelope.node, delta);
    else void this.refresh(room);
    if (sync) void this.catchUp(room, sync.from, sync.runs);
  }

  /** A catch-up after `from` (and of `runs`) for the room `opened` is told of once it loaded. */
  private waitLoaded(roomId: string, from: number, runs: readonly SeqRun[]): void {
    const waiting = this.loadingSyncs.get(roomId);
    if (waiting) {
      waiting.from = Math.min(waiting.from, from);
      waiting.runs = keptRuns([...waiting.runs, ...runs]);
    } else this.loadingSyncs.set(roomId, { from, runs: keptRuns(runs) });
  }

  /**
   * Messages were stored in the room after `from` and published by nobody (an import, readable all
   * at once when its last write commits): this node's room delivers those its members did not get,
   * as for a `sync`, and the other nodes are told to by one unless `tellOthers` is false. `runs`:
   * the seqs the import made readable, never readable before, delivered however far below the
   * room's window they lie (SeqWindow.reopen): a re-run of an import that had failed settles the
   * first run's seqs, and thousands of live messages may have come since.
   */
  storedUnpublished(roomId: string, from: number, tellOthers = true, runs: readonly SeqRun[] = []): void {
    const kept = keptRuns(runs);
    const room = this.deps.room(roomId);
    room?.reopen(kept);
    if (room?.info) void this.catchUp(room, from, kept);
    else if (room?.heard) this.waitLoaded(roomId, from, kept);
    if (tellOthers && this.connected) this.publish(roomId, 'sync', JSON.stringify(kept.length ? { from, runs: kept } : { from }));
  }

  /**
   * Applies another node's presence change to the room's member list, without a read. While a read
   * of the room's presence runs, the change goes to one more read instead: the read may have been
   * answered before the change was written, and would replace the room's view after it.
   */
  private applyDelta(room: Room, node: string, delta: PresenceDelta): void {
    if (this.refreshing.has(room)) return void this.refresh(room);
    const changes = room.members.applyRemote(node, { joined: delta.joined, left: delta.left.map((l) => l.id) });
    if (room.sessions.size) for (const change of changes) room.presence(change, Date.now());
  }

  /**
   * A message more than MAX_SEQ_LEAD past the room's seq arrived on the bus: delivers the room's
   * stored messages after its seq instead (that message among them when it is real), in order.
   * However many such envelopes arrive, each room has at most one read waiting.
   */
  readAhead(room: Room): void {
    if (this.readingAhead.has(room)) return;
    this.readingAhead.add(room);
    void this.fromStore(room, () => {
      this.readingAhead.delete(room);
      return [[room.seq, Infinity]];
    });
  }

  /**
   * A message heard on the bus skipped the seqs after `after`: another node's publish may still be
   * on its way, or lost (a publish that failed while the connection stayed up). Those still missing
   * GAP_WAIT_MS later are read from the store and delivered, in the room's queue. One wait per room
   * at a time, covering every gap found meanwhile.
   */
  gap(room: Room, after: number, upTo: number): void {
    const waiting = this.gaps.get(room);
    if (waiting) {
      waiting.after = Math.min(waiting.after, after);
      waiting.upTo = Math.max(waiting.upTo, upTo);
      return;
    }
    const span = { after, upTo };
    const timer = setTimeout(() => {
      this.gaps.delete(room);
      if (this.deps.room(room.id) !== room || room.heardThrough(span.after, span.upTo - 1)) return;
      void this.fromStore(room, () => [[Math.max(span.after, room.seq - DEFAULT_SEQ_WINDOW), Infinity]]);
    }, GAP_WAIT_MS);
    timer.unref();
    // The wait widens `span` itself (above) while it runs.
    this.gaps.set(room, Object.assign(span, { timer }));
  }

  /**
   * This node's publish of a stored message failed while the bus seemed up: the other nodes did not
   * hear it and, when nothing follows it, would never notice. A `sync` from before it, sent a moment
   * later (once per room meanwhile), makes them read the store.
   */
  publishFailed(roomId: string, seq: number): void {
    const waiting = this.failedPublishes.get(roomId);
    if (waiting !== undefined) {
      waiting.seq = Math.min(waiting.seq, seq);
      return;
    }
    const timer = setTimeout(() => this.flushFailedPublish(roomId), SYNC_AFTER_FAILED_PUBLISH_MS);
    timer.unref();
    this.failedPublishes.set(roomId, { seq, timer });
  }

  /** Sends the `sync` a failed publish in `roomId` waits for (publishFailed), now. */
  private flushFailedPublish(roomId: string): void {
    const waiting = this.failedPublishes.get(roomId);
    if (!waiting) return;
    clearTimeout(waiting.timer);
    this.failedPublishes.delete(roomId);
    // Cut off meanwhile: the return's own `sync` covers it.
    if (this.connected) this.publish(roomId, 'sync', JSON.stringify({ from: waiting.seq - 1 }));
  }

  /** Members of a room this node has no live copy of, from the shared presence. */
  async members(roomId: string, max: number): Promise<{ members: Member[]; count: number }> {
    const seen = new Map<string, Member>();
    try {
      for (const e of await this.deps.bus.presence.list(roomId)) if (!seen.has(e.id)) seen.set(e.id, { id: e.id, name: e.name });
    } catch (err) {
      this.deps.log.debug({ roomId, err }, 'presence read failed');
    }
    return { members: [...seen.values()].slice(0, max), count: seen.size };
  }

  /** Who is in a room this node has no live copy of, from the shared presence (nobody when it cannot be read). */
  async membersOf(roomId: string): Promise<RoomMembers> {
    const members = new RoomMembers();
    try {
      members.setRemote(await this.deps.bus.presence.list(roomId));
    } catch (err) {
      this.deps.log.debug({ roomId, err }, 'presence read failed');
    }
    return members;
  }

  /**
   * Rooms with members on any node (at most `max`, busiest first). A reading serves every caller
   * for ACTIVE_ROOMS_FRESH_MS: it goes over every member of every room, and each open page polls
   * it. When the shared presence cannot be read, the last good reading serves ([] before any),
   * and the failure is not kept: the next call reads again.
   */
  async activeRooms(max: number): Promise<{ roomId: string; count: number }[]> {
    try {
      return await this.activeReading.get(max);
    } catch (err) {
      this.deps.log.debug({ err }, 'presence read failed');
      return this.lastActive?.max === max ? this.lastActive.rooms : [];
    }
  }

  /** The last reading of every node's active rooms that succeeded. */
  private lastActive: { max: number; rooms: { roomId: string; count: number }[] } | null = null;

  private readonly activeReading = new FreshReading(ACTIVE_ROOMS_FRESH_MS, async (max: number) => {
    const rooms = await this.deps.bus.presence.activeRooms(max);
    this.lastActive = { max, rooms };
    return rooms;
  });

  /**
   * Stops rechecking and sends the announcements still pending: the leaves of a closing node, and
   * the `sync` of a publish that failed in its last second (sent when its timer fired, it found the
   * bus closed, and the other nodes never read the message). The rooms' gap waits end unread.
   */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const gap of this.gaps.values()) clearTimeout(gap.timer);
    this.gaps.clear();
    // The leaves of the sessions just closed are told once written, before the bus closes.
    await Promise.all([...this.presenceWrites]);
    for (const roomId of [...this.pokes.keys()]) this.flushPoke(roomId);
    for (const roomId of [...this.failedPublishes.keys()]) this.flushFailedPublish(roomId);
  }

  /** This node's members of `roomIds` were back in the shared presence after it was late: the others read them again. */
  private lapsed(roomIds: string[]): void {
    for (const roomId of roomIds) if (this.deps.room(roomId)?.info) this.poke(roomId);
  }

  /**
   * Tells the other nodes, once per room per turn of the event loop, what changed in the room's
   * presence here: `userId`'s entry (null: they left), or, with no user, that they must read it again.
   */
  private poke(roomId: string, userId?: string, entry?: { name: string; since: number } | null): void {
    const pending = this.pokes.get(roomId);
    if (pending === undefined) {
      this.pokes.set(roomId, userId === undefined ? null : new Map([[userId, entry ?? null]]));
      // Poked once the presence write succeeded, so the others read or apply the change after it.
      queueMicrotask(() => this.flushPoke(roomId));
    } else if (userId === undefined) this.pokes.set(roomId, null);
    else if (pending) {
      // Last change last: a user who left and came back in one turn is announced as joined.
      pending.delete(userId);
      pending.set(userId, entry ?? null);
    }
  }

  private flushPoke(roomId: string): void {
    const pending = this.pokes.get(roomId);
    if (pending === undefined) return;
    this.pokes.delete(roomId);
    this.publish(roomId, 'presence', pending ? this.deltaFrame(pending) : '');
  }

  /** A `presence` frame of this node's changes (PresenceDelta), the last change of each user. */
  private deltaFrame(pending: Map<string, { name: string; since: number } | null>): string {
    const node = this.deps.bus.nodeId;
    const delta: PresenceDelta = { joined: [], left: [] };
    for (const [id, entry] of pending) {
      if (entry) delta.joined.push({ id, name: entry.name, since: entry.since, node });
      else delta.left.push({ id, node });
    }
    return JSON.stringify(delta);
  }

  private publish(roomId: string, delivery: 'presence' | 'sync', frame: string): void {
    const { bus, log } = this.deps;
    bus.publish(roomId, encodeEnvelope({ node: bus.nodeId, delivery, frame })).catch((err: unknown) => log.warn({ roomId, err }, 'room bus publish failed'));
  }

  /** Reads the room's members on other nodes again; announces the changes to its members here. */
  private refresh(room: Room): Promise<void> {
    const running = this.refreshing.get(room);
    if (running) {
      this.again.add(room);
      return running;
    }
    const run = this.refreshLoop(room).finally(() => this.refreshing.delete(room));
    this.refreshing.set(room, run);
    return run;
  }

  private async refreshLoop(room: Room): Promise<void> {
    const { bus, log } = this.deps;
    do {
      this.again.delete(room);
      let entries;
      try {
        entries = await this.presenceReads.run(() => bus.presence.list(room.id));
      } catch (err) {
        // The room keeps the members it knew until a read succeeds: the next recheck's, or the
        // resync when the bus is back. Left to whatever read it next, a dead node's members whose
        // expiry this read was for stayed listed.
        log.debug({ roomId: room.id, err }, 'presence read failed');
        this.unrefreshed.add(room);
        return;
      }
      this.unrefreshed.delete(room);
      if (this.deps.room(room.id) !== room) return;
      const changes = room.members.setRemote(entries.filter((e) => e.node !== bus.nodeId));
      if (room.sessions.size) for (const change of changes) room.presence(change, Date.now());
    } while (this.again.has(room));
  }

  /** Looks for members whose node died (their entries expired). */
  private async recheck(): Promise<void> {
    if (!this.connected) return;
    const ids = [...this.deps.rooms()].filter((r) => r.info).map((r) => r.id);
    for (const room of [...this.unrefreshed]) {
      this.unrefreshed.delete(room);
      if (this.deps.room(room.id) === room) void this.refresh(room);
    }
    try {
      for (const id of await this.deps.bus.presence.stale(ids)) {
        const room = this.deps.room(id);
        if (room) void this.refresh(room);
      }
    } catch (err) {
      this.deps.log.debug({ err }, 'presence recheck failed');
    }
  }

  private cutOff(): void {
    this.connected = false;
    for (const room of this.deps.rooms()) if (room.info && !this.marks.has(room.id)) this.marks.set(room.id, room.seq);
  }

  private reconnected(): void {
    this.connected = true;
    // The bus subscribed every room again.
    this.unheard.clear();
    for (const room of this.deps.rooms()) {
      if (room.info) this.resync(room, true);
      // Loading: its load may have read the store before what the outage kept from this node was
      // stored, and nothing publishes that again; `opened` resyncs it. Left unread, it reached
      // neither its members nor its welcomes while the room stayed live.
      else if (room.heard) this.unheard.set(room.id, true);
    }
  }

  /** The bus does not hear this room though it is connected: the room alone misses what the others say. */
  private roomUnheard(roomId: string): void {
    this.unheard.set(roomId, false);
    const room = this.deps.room(roomId);
    if (room?.info && !this.marks.has(roomId)) this.marks.set(roomId, room.seq);
  }

  /** The bus hears the room again: that room alone reads what it missed (every room does after an outage). */
  private roomHeard(roomId: string): void {
    if (!this.unheard.has(roomId)) return;
    const room = this.deps.room(roomId);
    if (!room) return void this.unheard.delete(roomId);
    // Still loading: `opened` resyncs it.
    if (!room.info) return void this.unheard.set(roomId, true);
    this.unheard.delete(roomId);
    // Cut off meanwhile: the reconnection resyncs every room.
    if (this.connected) this.resync(room, false);
  }

  /**
   * Reads what the room missed while the bus did not hear it: its members elsewhere, its history
   * again, the messages after its mark. `tellOthers` (after an outage): a `sync` makes the other
   * nodes read what this one could not publish meanwhile.
   */
  private resync(room: Room, tellOthers: boolean): void {
    const from = Math.max(0, (this.marks.get(room.id) ?? room.seq) - RESYNC_SLACK);
    this.marks.delete(room.id);
    void this.refresh(room);
    void this.reloadHistory(room);
    void this.catchUp(room, from);
    if (tellOthers) this.publish(room.id, 'sync', JSON.stringify({ from }));
  }

  /**
   * Reads the in-memory history's messages again from the store, in the room's queue: thread
   * deletions, merges and splits made on other nodes while the bus was away were not heard, and a
   * newcomer's welcome would serve a deleted thread's messages until the room emptied.
   */
  private async reloadHistory(room: Room): Promise<void> {
    const { store, log } = this.deps;
    try {
      await room.run(async () => {
        const held = room.recent();
        if (!held.length) return;
        const first = held[0].seq;
        const span = held[held.length - 1].seq - first + 1;
        const limit = Math.min(span, MAX_HISTORY_RELOAD);
        const stored = await this.reads.run(() => store.messagesAfter(room.id, first - 1, limit));
        room.keepStored(stored, stored.length < limit ? Infinity : stored[stored.length - 1].seq);
      });
    } catch (err) {
      log.warn({ roomId: room.id, err }, 'reloading the history from the store failed');
    }
  }

  /**
   * Delivers the room's stored messages after `from` that this node's members did not get, within
   * the room's window, and those of `runs` (reopened, Room.reopen) below it. One waiting for its
   * turn takes in the later ones: what they name was stored before they were heard, so before it
   * reads the store.
   */
  private catchUp(room: Room, from: number, runs: readonly SeqRun[] = []): Promise<void> {
    const waiting = this.catchUps.get(room);
    if (waiting) {
      waiting.from = Math.min(waiting.from, from);
      waiting.runs = keptRuns([...waiting.runs, ...runs]);
      return waiting.run;
    }
    const next = { from, runs: keptRuns(runs), run: Promise.resolve() };
    this.catchUps.set(room, next);
    next.run = this.fromStore(room, () => {
      this.catchUps.delete(room);
      const after = Math.max(next.from, room.seq - DEFAULT_SEQ_WINDOW);
      // The runs below the window first, in seq order, each read only as far as it goes.
      const below: [number, number][] = next.runs.filter(([first]) => first - 1 < after).map(([first, last]) => [first - 1, Math.min(last, after)]);
      return [...below.sort((x, y) => x[0] - y[0]), [after, Infinity]];
    });
    return next.run;
  }

  /**
   * Delivers the room's stored messages in the spans `start` gives (after the first seq of each, up
   * to its second), in order, once the room's queue reaches the read. Live messages wait from the moment it is asked for (Room.held) and go out after it,
   * or in their place among the missed ones. Every message goes out in slices of at most
   * `memberSliceBytes` a member and CATCH_UP_TURN_BYTES for the room, one per turn of the event
   * loop: frames a turn sends are written at its end, so the send limits (per socket and the node's
   * budget) see them only from the next turn on, and a catch-up of 500 messages to thousands of
   * members in one turn held the event loop and a copy of every message per member.
   */
  private async fromStore(room: Room, start: () => [after: number, upTo: number][]): Promise<void> {
    const { store, pageSize, log } = this.deps;
    room.held.begin();
    try {
      await room.run(async () => {
        try {
          for (let [after, upTo] of start()) {
            for (;;) {
              const page = await this.reads.run(() => store.messagesAfter(room.id, after, pageSize));
              const missed = page.filter((m) => m.seq <= upTo).values();
              if (
                !(await this.sendSliced(
                  room,
                  () => missed.next().value,
                  (m) => this.deps.deliverMissed(room, m),
                ))
              )
                return;
              if (page.length < pageSize || page[page.length - 1].seq >= upTo) break;
              after = page[page.length - 1].seq;
            }
          }
        } finally {
          await this.sendHeld(room, () => room.held.last);
        }
      });
    } catch (err) {
      log.warn({ roomId: room.id, err }, 'resync from the store failed');
    } finally {
      for (const held of room.held.end()) this.deps.deliverHeld(room, held);
    }
  }

  /**
   * The room holds as much as its caps allow (a catch-up whose store read hangs, in a busy room):
   * what it holds goes out now, in slices, without waiting for the catch-up, and the room holds
   * again from there. It went out in one turn: up to 1,000 messages to every member at once, the
   * burst the slices are there to prevent.
   */
  releaseHeld(room: Room): void {
    if (!this.releasing.has(room)) void this.sendHeld(room, () => room.held.full);
  }

  /**
   * Sends what the room holds, in slices, holding what arrives while it does, for as long as `go`
   * says and something is held: the room's last catch-up does so before it ends (an earlier one
   * leaves them to the next, whose messages may be older), and so does a room past its caps. One
   * sender per room at a time, so that held messages go out in order; what it took out to send is
   * taken a piece at a time (HeldMessages.next), so a room past twice its caps can send the oldest
   * of it at once, ahead of the sender and in order.
   */
  private sendHeld(room: Room, go: () => boolean): Promise<void> {
    const send = async () => {
      for (;;) {
        if (!room.held.releasing) {
          if (!go()) return;
          room.held.release();
          if (!room.held.releasing) return;
        }
        if (
          !(await this.sendSliced(
            room,
            () => room.held.next(),
            (h) => this.deps.deliverHeld(room, h),
          ))
        )
          return;
      }
    };
    const run: Promise<void> = (this.releasing.get(room) ?? Promise.resolve())
      .then(send)
      .catch((err: unknown) => this.deps.log.warn({ roomId: room.id, err }, 'sending held messages failed'))
      .finally(() => {
        if (this.releasing.get(room) === run) this.releasing.delete(room);
      });
    this.releasing.set(room, run);
    return run;
  }

  /**
   * Sends what `next` gives a slice per turn of the event loop, taking each item only as it sends
   * it; false once the room was dropped.
   */
  private async sendSliced<T>(room: Room, next: () => T | undefined, send: (item: T) => number): Promise<boolean> {
    for (let done = false; !done;) {
      if (this.deps.room(room.id) !== room) return false;
      const limit = Math.min(this.deps.memberSliceBytes, Math.floor(CATCH_UP_TURN_BYTES / Math.max(1, room.sessions.size)));
      let bytes = 0;
      while (bytes < limit) {
        const item = next();
        if (item === undefined) {
          done = true;
          break;
        }
        bytes += send(item);
      }
      // The next slice (of this page, the next one or the held messages) goes out in a later turn.
      if (bytes > 0) await nextTurn();
    }
    return this.deps.room(room.id) === room;
  }
}

/** A catch-up asked for: after `from` within the room's window, and `runs` below it. */
interface Reading {
  from: number;
  runs: readonly SeqRun[];
}

/** `runs` a room takes: seqs, first ≤ last, the newest REOPENED_RUNS_KEPT (what its window keeps). */
function keptRuns(runs: readonly unknown[]): SeqRun[] {
  const kept = runs.filter((r): r is SeqRun => Array.isArray(r) && r.length === 2 && isSeq(r[0]) && isSeq(r[1]) && r[0] <= r[1]);
  return kept.slice(-REOPENED_RUNS_KEPT);
}

/** The seq a `sync` frame says to read the store after, and the runs it reopens; undefined when it names no seq. */
function parseSync(frame: string): Reading | undefined {
  let sync: { from?: unknown; runs?: unknown } | null;
  try {
    sync = JSON.parse(frame) as { from?: unknown; runs?: unknown } | null;
  } catch {
    return undefined;
  }
  const from = sync?.from;
  if (typeof from !== 'number' || !Number.isSafeInteger(from)) return undefined;
  return { from, runs: Array.isArray(sync?.runs) ? keptRuns(sync.runs) : [] };
}

/** Resolves in a later turn of the event loop, after the frames of this one were written. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
