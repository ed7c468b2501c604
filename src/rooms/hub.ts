/**
 * The rooms core of one node: live rooms (created on first join, dropped when empty), the
 * connections of every client, delivery on this node first and then on the RoomBus (own echoes
 * dropped), presence across nodes (node-sync.ts), and the RoomOutlet the assistant streams
 * through. Knows connections only as `Connection` (docs/architecture.md).
 */
import { errors, withRetryAfterMs, type SalonError } from '../errors.js';
import { CloseCode, type CloseCodeValue } from '../protocol/close-codes.js';
import type { AskFrame, HelloFrame, Member, Message, SayFrame, ServerMessage } from '../protocol/messages.js';
import type { Store } from '../store/types.js';
import { Chat } from './chat.js';
import { CommandRegistry } from './commands.js';
import { isServerFrame, parseBusMessage } from './bus-message.js';
import { decodeEnvelope, encodeEnvelope, parseThreadMove, type Delivery, type ThreadMove } from './envelope.js';
import type { Identity } from './identity.js';
import { AddressLimits } from './address-limits.js';
import { AddressRate } from './address-rate.js';
import { addressKey } from './address.js';
import { roomOptions, type RoomOptions } from './options.js';
import { loadRoom, readReplay, replayHistory, welcomeFrame } from './loading.js';
import { FreshReading } from './fresh-reading.js';
import { withMessage, type Held, type HeldFrame } from './held-messages.js';
import { ACTIVE_ROOMS_FRESH_MS, MAX_SEQ_LEAD, NodeSync } from './node-sync.js';
import { Room, type LoadState } from './room.js';
import { DEFAULT_SEQ_WINDOW, type SeqRun } from './seq-window.js';
import { Session, errorFrame, type SessionHost } from './session.js';
import { SendBudget } from './send-budget.js';
import { shareWords } from './sender-shares.js';
import { storeResolver } from './resolver.js';
import { ThreadLookups } from './thread-lookups.js';
import {
  shownRoom,
  type AnswerTag,
  type Connection,
  type PendingAnswer,
  type RoomAssistant,
  type RoomBus,
  type RoomOutlet,
  type RoomResolver,
} from './types.js';
import { silentLogger, type Logger } from '../logger.js';
import { RepeatedFailureLog } from '../repeated-failure-log.js';
import { required } from '../options.js';

/**
 * How an answer's last frame begins, here or from another node: every frame is an object literal
 * with its `type` first, which JSON.stringify keeps first.
 */
const ASSISTANT_DONE_FRAME = '{"type":"assistant.done"';

/** How a notice begins (`warning`). */
const WARNING_FRAME = '{"type":"warning"';

/** How a failure begins (`error`): a failed answer's last frame. */
const ERROR_FRAME = '{"type":"error"';

/** How a frame of an answer in progress begins (`assistant.progress`, `assistant.delta`). */
const ASSISTANT_FRAME = '{"type":"assistant.';

/** How a piece of an answer begins as JSON.stringify writes it here and on every other node: its `id` second. */
const ANSWER_PIECE = /^\{"type":"assistant\.(?:progress|delta)","id":"([^"\\]*)"/;

/** The answer a frame is a piece of (`assistant.progress` or `assistant.delta`: its `id`). */
function answerOf(frame: string): string | undefined {
  if (!frame.startsWith(ASSISTANT_FRAME) || frame.startsWith(ASSISTANT_DONE_FRAME)) return undefined;
  // Every piece of every answer comes here: its id is read off its start, not parsed.
  const id = ANSWER_PIECE.exec(frame)?.[1];
  if (id !== undefined) return id;
  try {
    const v = JSON.parse(frame) as { id?: unknown };
    return typeof v.id === 'string' ? v.id : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a stored message is an assistant's answer: its `clientId` is the id its pieces streamed under. */
function isAnswer(m: Message): boolean {
  return m.author.kind === 'assistant' && !!m.clientId;
}

/**
 * The frame of a message read back from the store (a catch-up): an answer's is an `assistant.done`,
 * as live, since that is what ends the answer for a client showing it in progress (a welcome's
 * `pending` promises one). The store keeps no `abstained`: the text says so.
 */
function storedFrame(m: Message): string {
  return JSON.stringify({ type: isAnswer(m) ? 'assistant.done' : 'message', message: m });
}

/**
 * Dropped rooms the hub remembers how far its listener heard (RoomHub.leftRooms): a room loaded
 * again after more have been dropped since only costs the listener a gap told that was not one.
 */
export const MAX_LEFT_ROOMS = 4_096;

/** Rooms GET /api/v1/rooms lists at most (the busiest). */
export const MAX_LISTED_ROOMS = 500;
/** How often the node's queued bytes are counted again from every socket (see SendBudget). */
const BUDGET_SWEEP_MS = 1_000;
/** Addresses whose rate of new sockets, and whose budgets, are remembered at most (see AddressRate, AddressLimits). */
export const CONNECT_RATE_ADDRESSES = 100_000;

/** Why a new connection was refused: the address opens sockets too fast, holds too many, or the node is full. */
export type RefusedConnection = 'rate' | 'address' | 'node';

export interface RoomHubDeps {
  store: Store;
  identity: Identity;
  /** Defaults to the store-backed resolver (content and topic rooms). */
  resolver?: RoomResolver;
  /** How rooms reach the other nodes (src/parts.ts chooses it). */
  bus: RoomBus;
  /** Looked up on every ask, so the assistant may be wired after the hub is built. */
  assistant?: () => RoomAssistant | undefined;
  /**
   * Told of every stored message this node delivers to its members, its own and those the bus
   * brings, once per room and in the room's order (conversation memory hooks in here: every node
   * in a room windows all that is said in it, src/memory/windows.ts).
   */
  onMessage?: (message: Message) => void;
  /**
   * Told before the next message onMessage hears of a room when that message may not follow on from
   * the last one it heard there: messages of the room went out that this node never delivered (it
   * had left the room, the room's last member gone, and its load took newer messages as delivered;
   * or it left while a catch-up was still to bring some). Not told when a room left and loaded again
   * runs on from the last seq heard (a lone member's reload). Memory ends the room's windows there.
   */
  onGap?: (roomId: string) => void;
  /** Told of every stored message this node delivered to its members, once per room (delivery lag is measured here). */
  onDelivered?: (message: Message) => void;
  /**
   * Told when a thread is gone: deleted, or merged into another (and archived), on this node or on
   * another whose word reached this one on the room's channel. What is kept per thread for live
   * chat (memory windows, bridge sums) is dropped here.
   */
  onThreadGone?: (threadId: string, how: ThreadGone) => void;
  /**
   * Told when messages moved to other threads of a room (a split), on this node or on another whose
   * word reached this one on the room's channel: memory windows still open follow them.
   */
  onMessagesMoved?: (moves: readonly { ids: readonly string[]; threadId: string }[]) => void;
  /** Told of every new connection refused (and closed), with the limit that refused it (metrics). */
  onRefused?: (why: RefusedConnection) => void;
  log?: Logger;
  options?: Partial<RoomOptions>;
}

/** How a thread went: its messages and memory deleted, or merged into another thread. */
export type ThreadGone = 'deleted' | 'merged';

/** An active room as `GET /api/v1/rooms` lists it. */
export interface RoomSummary {
  id: string;
  kind: string;
  title: string;
  members: number;
}

/** One room as `GET /api/v1/rooms/:id` shows it. */
export interface RoomDetail {
  id: string;
  kind: string;
  title: string;
  url: string | null;
  context: string;
  members: Member[];
  memberCount: number;
}

export class RoomHub implements SessionHost, RoomOutlet {
  readonly options: Readonly<RoomOptions>;
  readonly commands = new CommandRegistry();
  readonly store: Store;
  readonly resolve: RoomResolver;
  readonly bus: RoomBus;
  /** Issues and checks member ids (also the ids of HTTP askers). */
  readonly identity: Identity;
  private readonly log: Logger;
  /** A store outage fails every frame: the first is logged, then a summary a minute, then that frames work again. */
  private readonly frameFailures: RepeatedFailureLog;
  private readonly getAssistant: () => RoomAssistant | undefined;
  private readonly onMessage?: (message: Message) => void;
  private readonly onGap?: (roomId: string) => void;
  /**
   * Rooms dropped (the newest MAX_LEFT_ROOMS) → the newest seq onMessage heard of each, every seq
   * since the last gap told heard too: a room loaded again runs on from there if its load took
   * nothing newer as delivered (heard).
   */
  private readonly leftRooms = new Map<string, number>();
  /**
   * Rooms whose first message told to onMessage was checked against leftRooms → whether onMessage
   * heard one of the room since the last gap told (a second gap in a row tells nothing more).
   */
  private readonly heardRooms = new WeakMap<Room, boolean>();
  private readonly onDelivered?: (message: Message) => void;
  private readonly onThreadGone?: (threadId: string, how: ThreadGone) => void;
  private readonly onMessagesMoved?: RoomHubDeps['onMessagesMoved'];
  private readonly onRefused?: (why: RefusedConnection) => void;
  private readonly rooms = new Map<string, Room>();
  /** Members gone from a room whose private asks end unless they are back in time (roomId\nuserId → timer). */
  private readonly leftAskers = new Map<string, NodeJS.Timeout>();
  /**
   * Messages heard on the bus for a room still loading, delivered in order once it has loaded; past
   * MAX_SEQ_LEAD of them, null: the room reads the store instead (a load that hangs until its
   * query's timeout must not keep every message of a busy room meanwhile).
   */
  private readonly heardWhileLoading = new Map<Room, { frame: string; message: Message }[] | null>();
  private readonly sessions = new Set<Session>();
  private readonly sendBudget: SendBudget;
  private readonly budgetSweep: NodeJS.Timeout;
  private readonly addresses: AddressLimits;
  private readonly connects: AddressRate;
  private readonly chat: Chat;
  private readonly sync: NodeSync;
  private readonly threadLookups: ThreadLookups;
  private closing = false;

  constructor(deps: RoomHubDeps) {
    required('RoomHub', 'store', deps.store);
    required('RoomHub', 'identity', deps.identity);
    this.options = roomOptions(deps.options);
    this.store = deps.store;
    this.identity = deps.identity;
    this.addresses = new AddressLimits({
      maxConnectionsPerAddress: this.options.maxConnectionsPerIp,
      framesPerSecondPerAddress: this.options.framesPerSecondPerAddress,
      newIdentitiesPerMinute: this.options.newIdentitiesPerMinute,
      commandsPerMinute: this.options.commandsPerMinutePerAddress,
      maxAddresses: CONNECT_RATE_ADDRESSES,
    });
    // An address may fill what it may hold at once (all its members reconnecting after a restart),
    // then open connectsPerMinutePerAddress a minute.
    this.connects = new AddressRate({
      perMinute: this.options.connectsPerMinutePerAddress,
      burst: Math.max(this.options.connectsPerMinutePerAddress, this.options.maxConnectionsPerIp),
      maxAddresses: CONNECT_RATE_ADDRESSES,
    });
    this.resolve = deps.resolver ?? storeResolver(deps.store, this.options.contextChars);
    this.bus = required('RoomHub', 'bus', deps.bus);
    this.log = deps.log ?? silentLogger;
    this.frameFailures = new RepeatedFailureLog({ log: this.log, what: 'room frames' });
    this.getAssistant = deps.assistant ?? (() => undefined);
    this.onMessage = deps.onMessage;
    this.onGap = deps.onGap;
    this.onDelivered = deps.onDelivered;
    this.onThreadGone = deps.onThreadGone;
    this.onMessagesMoved = deps.onMessagesMoved;
    this.onRefused = deps.onRefused;
    this.chat = new Chat({
      store: this.store,
      commands: this.commands,
      assistant: () => this.getAssistant(),
      publishMessage: (room, message) => this.publishMessage(room, message),
      sendTyping: (room, member, active) => this.sendTyping(room, member, active),
      admitPost: (room, address) => this.admitPost(room, address),
      admitCommand: (session, now) => this.addresses.command(session.address, now),
      commandWaitMs: (session, now) => this.addresses.commandWaitMs(session.address, now),
      warn: (details, msg) => this.log.warn(details, msg),
    });
    this.sync = new NodeSync({
      bus: this.bus,
      store: this.store,
      room: (id) => this.rooms.get(id),
      rooms: () => this.rooms.values(),
      deliverMissed: (room, m) => {
        const live = room.held.take(m.seq);
        if (live) return this.deliverMessage(room, live.frame, live.message);
        // A catch-up rereads up to a window of seqs, mostly delivered already: no frame is built for those.
        return room.hasDelivered(m.seq) ? 0 : this.deliverMessage(room, storedFrame(m), m);
      },
      deliverHeld: (room, held) => this.deliverHeld(room, held),
      pageSize: this.options.replayLimit,
      memberSliceBytes: this.options.softBufferedBytes,
      log: this.log,
    });
    this.threadLookups = new ThreadLookups(this.store, this.log);
    this.bus.subscribe((roomId, payload) => this.fromBus(roomId, payload));
    this.sendBudget = new SendBudget(this.options.nodeBufferedBytes);
    this.budgetSweep = setInterval(() => {
      if (this.sendBudget.queued > 0) this.sendBudget.recount();
    }, BUDGET_SWEEP_MS);
    this.budgetSweep.unref();
  }

  /**
   * Messages stored in `roomId` after `afterSeq` that were never published (an import): every node's
   * live room delivers to its members those they did not get, in seq order (NodeSync.storedUnpublished).
   * `tellOthers` false: this node alone (each node read the change log entry that told it, room-changes.ts).
   * `runs`: the seqs it made readable, delivered however old (NodeSync.storedUnpublished).
   */
  storedUnpublished(roomId: string, afterSeq: number, tellOthers = true, runs: readonly SeqRun[] = []): void {
    this.sync.storedUnpublished(roomId, afterSeq, tellOthers, runs);
  }

  /** Ids of the rooms live on this node (loaded or loading). */
  liveRoomIds(): Iterable<string> {
    return this.rooms.keys();
  }

  /**
   * A thread was deleted (its messages are gone from the store): a live room on this node forgets
   * its messages, and a deleted main thread is replaced by a new one for what is said next.
   */
  async threadDeleted(roomId: string, threadId: string): Promise<void> {
    this.route(roomId, 'threads', JSON.stringify({ deleted: threadId }));
    this.threadGone(roomId, threadId, 'deleted');
    await this.forgetThread(roomId, threadId);
  }

  private threadGone(roomId: string, threadId: string, how: ThreadGone): void {
    try {
      this.onThreadGone?.(threadId, how);
    } catch (err) {
      this.log.warn({ roomId, threadId, err }, 'thread listener failed');
    }
  }

  private movedListener(roomId: string, moves: { ids: string[]; threadId: string }[]): void {
    try {
      this.onMessagesMoved?.(moves);
    } catch (err) {
      this.log.warn({ roomId, err }, 'thread listener failed');
    }
  }

  private async forgetThread(roomId: string, threadId: string): Promise<void> {
    const room = this.rooms.get(roomId);
    if (!room) return;
    room.forgetThread(threadId);
    if (room.threadId === threadId) room.threadId = (await this.store.ensureMainThread(roomId)).id;
  }

  /** Messages moved between threads of a room (a merge or split): a live room's history follows. */
  messagesMoved(roomId: string, moves: { ids: string[]; threadId: string }[]): void {
    this.applyThreadMove(roomId, { moves });
    this.route(roomId, 'threads', JSON.stringify({ moves }));
  }

  /** A thread was merged into another: a live room's history follows, on every node. */
  threadMerged(roomId: string, absorbedId: string, survivorId: string): void {
    this.applyThreadMove(roomId, { merged: { absorbedId, survivorId } });
    this.route(roomId, 'threads', JSON.stringify({ merged: { absorbedId, survivorId } }));
  }

  /** A live room's cached history follows messages moved between its threads (or a thread deleted); a thread gone is told. */
  private applyThreadMove(roomId: string, move: ThreadMove): void {
    if ('deleted' in move) this.threadGone(roomId, move.deleted, 'deleted');
    else if ('merged' in move) this.threadGone(roomId, move.merged.absorbedId, 'merged');
    else this.movedListener(roomId, move.moves);
    const room = this.rooms.get(roomId);
    if (!room) return;
    if ('deleted' in move) {
      this.forgetThread(roomId, move.deleted).catch((err: unknown) => this.log.warn({ roomId, err }, 'a deleted thread could not be replaced'));
    } else if ('merged' in move) room.mergeThread(move.merged.absorbedId, move.merged.survivorId);
    else for (const { ids, threadId } of move.moves) room.moveMessages(new Set(ids), threadId);
  }

  /** Open connections on this node. */
  get connectionCount(): number {
    return this.sessions.size;
  }

  /** Bytes the node's sockets have queued and not yet sent, as last counted (at most a second old). */
  get queuedBytes(): number {
    return this.sendBudget.queued;
  }

  /**
   * Accepts a new connection for `roomId` from the client address `ip`; null when it was refused
   * (and closed): 4429 past the address's rate of new sockets, 1013 past the node's socket cap,
   * 4429 past the address's. Every new socket counts toward the rate, refused or not, before it
   * costs a hello, a join and presence frames.
   */
  connect(conn: Connection, meta: { roomId: string; ip: string }): Session | null {
    if (this.closing) {
      conn.close(CloseCode.GOING_AWAY);
      return null;
    }
    const address = addressKey(meta.ip);
    const now = Date.now();
    if (!this.connects.take(address, now)) {
      const perMinute = this.options.connectsPerMinutePerAddress;
      const err = withRetryAfterMs(
        new errors.ERR_RATE_LIMITED(`at most ${perMinute} room sockets a minute from one address`),
        this.connects.waitMs(address, now),
      );
      return this.refuse(conn, 'rate', err, CloseCode.RATE_LIMITED);
    }
    if (this.sessions.size >= this.options.maxConnections) return this.refuse(conn, 'node', new errors.ERR_SERVER_FULL(), CloseCode.TRY_AGAIN_LATER);
    if (!this.addresses.open(address, now)) return this.refuse(conn, 'address', new errors.ERR_TOO_MANY_CONNECTIONS(), CloseCode.RATE_LIMITED);
    const session = new Session(conn, meta.roomId, address, this, this.options, this.sendBudget);
    this.sessions.add(session);
    return session;
  }

  private refuse(conn: Connection, why: RefusedConnection, err: SalonError, code: CloseCodeValue): null {
    conn.send(errorFrame(err));
    conn.close(code);
    this.onRefused?.(why);
    return null;
  }

  /** Takes a frame from the budget its address shares with all of the address's sockets. */
  admitFrame(session: Session, now: number): boolean {
    return this.addresses.frame(session.address, now);
  }

  frameWaitMs(session: Session, now: number): number {
    return this.addresses.frameWaitMs(session.address, now);
  }

  /** Takes a typing frame from the budget its address shares with all of the address's sockets for them. */
  admitTyping(session: Session, now: number): boolean {
    return this.addresses.typing(session.address, now);
  }

  async join(session: Session, hello: HelloFrame): Promise<void> {
    const now = Date.now();
    if (!hello.token && !this.addresses.newIdentity(session.address, now)) {
      const err = new errors.ERR_RATE_LIMITED(`at most ${this.options.newIdentitiesPerMinute} new identities a minute from one address`);
      return session.fail(withRetryAfterMs(err, this.addresses.newIdentityWaitMs(session.address, now)), CloseCode.RATE_LIMITED);
    }
    const who = this.whoIs(hello.token);
    if ('refused' in who) return session.fail(who.refused, CloseCode.BAD_TOKEN);
    session.userId = who.id;
    const room = this.roomFor(session.roomId);
    room.pendingJoins++;
    try {
      const state = await room.ready;
      if (state === 'missing') return session.fail(new errors.ERR_ROOM_NOT_FOUND(session.roomId), CloseCode.ROOM_NOT_FOUND);
      if (state === 'failed') return session.fail(new errors.ERR_INTERNAL(), CloseCode.INTERNAL_ERROR);
      await room.run(async () => {
        const { replayLimit, replayMaxBytes } = this.options;
        const read = await readReplay(this.store, room, hello.lastSeq, replayLimit, replayMaxBytes);
        if (session.state !== 'joining') return read.stop();
        // The history is built and the session joined in one tick: no message is delivered between.
        const replay = replayHistory(room, read, hello.lastSeq, replayLimit, replayMaxBytes);
        const { member, isNew, renamed, since } = room.join(session, hello.name);
        Object.assign(session, { member, room, state: 'joined', welcomedAhead: room.notDelivered(replay.history), heldFramesFrom: room.held.framesHeld });
        this.askerBack(room.id, member.id);
        session.deliver(JSON.stringify(welcomeFrame(room, member, who.token, replay, this.pending(room.id, member.id))));
        // Closed by its own welcome (a send limit): the member left already, and is not written back.
        if (!room.members.get(member.id)) return;
        session.announced = true;
        if (!isNew && !renamed) return;
        this.sync.memberSet(room, member, since);
        // A user already listed through another node is not announced again.
        if (renamed || !room.members.elsewhere(member.id)) room.presence(isNew ? { joined: member } : {}, Date.now());
      });
    } catch (err) {
      this.log.error({ roomId: session.roomId, err }, 'join failed');
      session.fail(new errors.ERR_INTERNAL(), CloseCode.INTERNAL_ERROR);
    } finally {
      room.pendingJoins--;
      this.dropIfEmpty(room);
    }
  }

  /**
   * The member a hello's token proves, with a token issued now (sliding renewal: an active member
   * never expires, and a `v1` token becomes a `v2` one); a new member without a token; or why the
   * token is refused.
   */
  private whoIs(token: string | undefined): { id: string; token: string } | { refused: SalonError } {
    if (!token) return this.identity.issue();
    const check = this.identity.check(token);
    if (check.ok) return { id: check.userId, token: this.identity.renew(check.userId) };
    return { refused: check.reason === 'expired' ? new errors.ERR_TOKEN_EXPIRED(this.identity.tokenTtlDays) : new errors.ERR_BAD_TOKEN() };
  }

  /** What a say frame asks for: a message, a question or a command (Chat, which counts what is posted in the room's rate). */
  say(session: Session, frame: SayFrame): Promise<void> {
    return this.chat.say(session, frame);
  }

  ask(session: Session, frame: AskFrame): Promise<void> {
    return this.chat.ask(session, frame);
  }

  /**
   * Takes a place in the room's message rate for a question about to be posted over HTTP from
   * `address` (`POST …/ask`), as a socket's post takes one; the refusal when there is none. A room
   * no member holds on this node has no rate here: a socket's posts count on its own node only.
   */
  admitHttpPost(roomId: string, address: string): SalonError | null {
    const room = this.rooms.get(roomId);
    return room ? this.admitPost(room, address) : null;
  }

  /**
   * Takes a place in the room's message rate for a message about to be posted from `address`; the
   * refusal when the room takes no more this second, or this address has sent its share of it.
   */
  private admitPost(room: Room, address: string): SalonError | null {
    const now = Date.now();
    const verdict = room.admitMessage(address, now);
    if (verdict === 'ok') return null;
    const err =
      verdict === 'room'
        ? new errors.ERR_RATE_LIMITED(`this room takes at most ${this.options.roomMessagesPerSecond} messages a second`)
        : new errors.ERR_RATE_LIMITED(shareWords(room.messageShare()));
    return withRetryAfterMs(err, room.messageWaitMs(address, verdict, now));
  }

  typing(session: Session, active: boolean): void {
    const { room, member } = session;
    if (!room || !member) return;
    if (room.typing.update(member.id, active, Date.now())) this.sendTyping(room, member, active);
    room.scheduleTypingExpiry();
  }

  detach(session: Session): void {
    if (!this.sessions.delete(session)) return;
    this.addresses.close(session.address, Date.now());
    const room = session.room;
    if (!room) return;
    session.room = null;
    const left = room.leave(session);
    if (left) {
      if (room.typing.clear(left.id, Date.now())) this.sendTyping(room, left, false);
      this.sync.memberGone(room, left);
      if (!room.members.elsewhere(left.id)) {
        // Closed by its own welcome, a member was never announced: no one is told it left either.
        if (session.announced) room.presence({ left }, Date.now());
        this.awaitAskerReturn(room.id, left.id);
      }
    }
    this.dropIfEmpty(room);
  }

  /**
   * A member left the room with no connection in it anywhere: their private asks end unless they
   * are back within `askerReturnGraceMs` (a reload, a dropped connection), on this node or another,
   * when the answer goes on to their new connection (over the bus from here); a welcome here lists it
   * among the answers being written.
   */
  private awaitAskerReturn(roomId: string, userId: string): void {
    // Closing: the assistant ended every ask first, and each socket closed leaves its room after
    // `close` cleared these timers; one armed now would read the presence of a closed bus.
    if (this.closing) return;
    const key = `${roomId}\n${userId}`;
    clearTimeout(this.leftAskers.get(key));
    const timer = setTimeout(() => {
      this.leftAskers.delete(key);
      // Only a private ask of theirs here has anything to end. Reading the presence for every member
      // who left copied and sorted the whole room's entries each time, and members who leave together
      // (a dropped network, one address closing its sockets) have their graces end in one turn.
      const assistant = this.getAssistant();
      if (!assistant || assistant.hasPrivateAsks?.(roomId, userId) === false) return;
      void this.askerGone(roomId, userId).then((gone) => {
        // Gone again meanwhile after a return: that leaving's own wait decides.
        if (this.leftAskers.has(key) || this.closing) return;
        if (gone) assistant.askerLeft?.(roomId, userId);
        // Back on another node only: nothing here hears them leave it, so look again a grace later
        // while an ask of theirs still runs here (it streams to them there).
        else if (!this.rooms.get(roomId)?.members.get(userId) && assistant.hasPrivateAsks?.(roomId, userId)) this.awaitAskerReturn(roomId, userId);
      });
    }, this.options.askerReturnGraceMs);
    timer.unref();
    this.leftAskers.set(key, timer);
  }

  /**
   * Whether a member who left has no connection in the room on any node. A room whose last member
   * here left is no longer followed here, so another node's members of it are read from the shared
   * presence (this node's own entries aside: its room says); unreadable, the asker counts as gone.
   */
  private async askerGone(roomId: string, userId: string): Promise<boolean> {
    const here = () => this.rooms.get(roomId);
    const known = here();
    if (known && (known.members.get(userId) || known.members.elsewhere(userId))) return false;
    const entries = await this.bus.presence.list(roomId).catch((err: unknown) => {
      this.log.warn({ roomId, err }, 'reading the room presence failed; a private asker who left counts as gone');
      return [];
    });
    if (entries.some((e) => e.id === userId && e.node !== this.bus.nodeId)) return false;
    return !here()?.members.get(userId);
  }

  /** A member (re)joined: a private ask of theirs waiting for their return goes on. */
  private askerBack(roomId: string, userId: string): void {
    const key = `${roomId}\n${userId}`;
    clearTimeout(this.leftAskers.get(key));
    this.leftAskers.delete(key);
  }

  failed(session: Session, err: unknown): void {
    this.frameFailures.failed(err, { roomId: session.roomId }, 'room frame failed');
  }

  worked(): void {
    this.frameFailures.succeeded();
  }

  /** RoomOutlet: a frame for every member on every node; messages and answers join the history. `tag`: the answer it is part of. */
  broadcast(roomId: string, frame: ServerMessage, tag?: AnswerTag): void {
    const text = JSON.stringify(frame);
    const message = frame.type === 'message' || frame.type === 'assistant.done' ? frame.message : undefined;
    this.route(roomId, message ? 'history' : 'all', text, undefined, message, message ? undefined : tag);
  }

  /** RoomOutlet: a frame for one user's connections in the room, on every node. */
  sendToUser(roomId: string, userId: string, frame: ServerMessage): void {
    this.route(roomId, 'user', JSON.stringify(frame), userId);
  }

  /** Active rooms on this node, busiest first; only `ids` when given. */
  listRooms(ids?: string[]): RoomSummary[] {
    const wanted = ids ? new Set(ids) : null;
    const out: RoomSummary[] = [];
    for (const room of this.rooms.values()) {
      if (!room.info || !room.members.size || (wanted && !wanted.has(room.id))) continue;
      out.push({ id: room.id, kind: room.info.kind, title: room.info.title, members: room.memberCount });
    }
    return out.sort((a, b) => b.members - a.members || a.id.localeCompare(b.id));
  }

  /**
   * Active rooms on every node, busiest first; only `ids` when given. Rooms live here count as
   * this node sees them; the others come from the shared presence (at most MAX_LISTED_ROOMS).
   */
  async listActiveRooms(ids?: string[]): Promise<RoomSummary[]> {
    const local = this.listRooms(ids);
    const known = new Set(local.map((r) => r.id));
    const wanted = ids ? new Set(ids) : null;
    const remote = (await this.remoteSummaries.get(await this.sync.activeRooms(MAX_LISTED_ROOMS))).filter(
      (r) => !known.has(r.id) && (!wanted || wanted.has(r.id)),
    );
    const all = [...local, ...remote];
    return all.sort((a, b) => b.members - a.members || a.id.localeCompare(b.id)).slice(0, MAX_LISTED_ROOMS);
  }

  /**
   * The rooms of one reading of every node's active rooms, described once for every listing made
   * from that reading: each is resolved from the store (an item read whole, ~0.3 ms for a long
   * article), and resolving all 500 per request made every GET /api/v1/rooms cost ~150 ms.
   */
  private readonly remoteSummaries = new FreshReading(ACTIVE_ROOMS_FRESH_MS, async (active: { roomId: string; count: number }[]) => {
    const described = await Promise.all(
      active.map(async (r): Promise<RoomSummary[]> => {
        const info = await this.resolve(r.roomId).catch(() => null);
        return info ? [{ id: r.roomId, kind: info.kind, title: info.title, members: r.count }] : [];
      }),
    );
    return described.flat();
  });

  /** A room, live or not; null when there is no such room. */
  async describe(roomId: string): Promise<RoomDetail | null> {
    const live = this.rooms.get(roomId);
    const resolved = live?.info ?? (await this.resolve(roomId));
    if (!resolved) return null;
    const info = shownRoom(resolved);
    if (live) return { ...info, members: live.listedMembers(), memberCount: live.memberCount };
    const { members, count } = await this.sync.members(roomId, this.options.maxListedMembers);
    return { ...info, members, memberCount: count };
  }

  /**
   * The name an HTTP asker asking as `name` goes by in `roomId`: as a joining member's, suffixed
   * (`Ana (2)`) when a member of the room on any node uses it, so an asker cannot post as them.
   */
  async askerName(roomId: string, askerId: string, name: string): Promise<string> {
    const live = this.rooms.get(roomId);
    if (live?.info) return live.members.nameFor(askerId, name);
    return (await this.sync.membersOf(roomId)).nameFor(askerId, name);
  }

  /** Closes every connection with `code` (1001 on shutdown) and refuses new ones. */
  async close(code: CloseCodeValue = CloseCode.GOING_AWAY): Promise<void> {
    this.closing = true;
    clearInterval(this.budgetSweep);
    this.frameFailures.close();
    for (const timer of this.leftAskers.values()) clearTimeout(timer);
    this.leftAskers.clear();
    // Answers being written end first, so their members hear why before their sockets close.
    await this.getAssistant()
      ?.close()
      .catch((err: unknown) => this.log.warn({ err }, 'closing the assistant failed'));
    for (const session of [...this.sessions]) session.close(code);
    for (const room of this.rooms.values()) room.dispose();
    this.rooms.clear();
    await this.sync.close();
    await this.bus.close().catch((err: unknown) => this.log.warn({ err }, 'room bus close failed'));
  }

  /** Sends a typing frame to the room (not to the typist) on every node. */
  sendTyping(room: Room, member: Member, active: boolean): void {
    this.route(room.id, 'typing', JSON.stringify({ type: 'typing', user: member, active }), member.id);
  }

  private publishMessage(room: Room, message: Message): void {
    this.route(room.id, 'history', JSON.stringify({ type: 'message', message }), undefined, message);
  }

  /** Delivers on this node, then publishes for the others; a failing bus never blocks local delivery. */
  private route(roomId: string, delivery: Delivery, frame: string, user?: string, message?: Message, tag?: AnswerTag): void {
    this.deliverLocal(roomId, delivery, frame, user, message, tag);
    const failed = (err: unknown) => {
      this.log.warn({ roomId, err }, 'room bus publish failed');
      if (message && message.seq > 0 && !this.closing) this.sync.publishFailed(roomId, message.seq);
    };
    try {
      this.bus.publish(roomId, encodeEnvelope({ node: this.bus.nodeId, delivery, frame, user, answer: tag })).catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  private deliverLocal(roomId: string, delivery: Delivery, frame: string, user?: string, message?: Message, tag?: AnswerTag): void {
    const room = this.rooms.get(roomId);
    if (!room || delivery === 'threads') return;
    if (delivery === 'typing') return room.offerAll(frame, user);
    if (delivery === 'user') return user ? this.toUser(room, user, frame) : undefined;
    if (delivery === 'all') return this.toEveryone(room, frame, tag);
    const m = message ?? (JSON.parse(frame) as { message: Message }).message;
    if (!(m?.seq > 0)) return this.toEveryone(room, frame);
    // A catch-up is under way: the message waits behind the missed ones (Room.held).
    if (room.held.hold({ frame, message: m }, frame.startsWith(ASSISTANT_DONE_FRAME))) return this.heldOne(room);
    this.deliverMessage(room, frame, m);
  }

  /**
   * A frame for every member without a seq (an answer's progress or delta, a failure, a notice):
   * while the room catches up it waits behind the messages held before it (held-messages.ts),
   * unless it is part of an answer streaming to the members already, or of one whose question they
   * have (`tag`). A failed answer's `error` names its question's clientId, so only the tag says
   * which answer it ends: untagged (from a node that tags none) it waits as any notice does.
   */
  private toEveryone(room: Room, frame: string, tag?: AnswerTag): void {
    const piece = answerOf(frame);
    const tagged = tag !== undefined && (piece === undefined || piece === tag.answer) ? tag : undefined;
    const answer = piece ?? (tagged && frame.startsWith(ERROR_FRAME) ? tagged.answer : undefined);
    if (room.held.holding) {
      const asked = tagged?.questionSeq !== undefined && room.hasDelivered(tagged.questionSeq);
      if (room.held.holdFrame(frame, answer, undefined, asked)) return this.heldOne(room);
    }
    if (answer !== undefined) {
      if (piece === undefined) room.held.failed(answer);
      else if (!room.held.holding) room.held.streamed(answer);
    }
    room.sendAll(frame);
  }

  /**
   * A frame for one member: a notice waits during a catch-up like one for everyone, as it may be
   * about a message the room holds (the asker's "queued" warning, about their question). The frames
   * of a private answer do not: a private ask posts nothing that could be held.
   */
  private toUser(room: Room, user: string, frame: string): void {
    if (room.held.holding && frame.startsWith(WARNING_FRAME) && room.held.holdFrame(frame, undefined, user)) return this.heldOne(room);
    room.sendToUser(user, frame);
  }

  /**
   * Past its caps, what the room holds goes out now, in slices, rather than after a catch-up that
   * may hang. Past twice them (arrivals outrunning the slices), the oldest it holds goes out at once
   * for the one that came, which waits behind it: order kept, and memory bounded.
   */
  private heldOne(room: Room): void {
    while (room.held.overfull) {
      const oldest = room.held.oldest();
      if (!oldest) break;
      this.deliverHeld(room, oldest);
    }
    if (room.held.full || room.held.releasing) this.sync.releaseHeld(room);
  }

  /** Delivers a live frame the room held (a message once); the bytes of its frame, 0 when none was sent. */
  private deliverHeld(room: Room, held: Held): number {
    return held.message ? this.deliverMessage(room, held.frame, held.message) : this.sendHeldFrame(room, held);
  }

  /**
   * Delivers a stored message to the room's members unless it was delivered; the bytes of its
   * frame, 0 when it was. One of a thread merged meanwhile goes out under the survivor (Room.filed).
   */
  private deliverMessage(room: Room, frame: string, message: Message): number {
    const m = room.filed(message);
    // An answer's stored end holds its whole text: pieces of it still waiting are dropped.
    if (isAnswer(m)) room.held.ended(m.clientId!);
    if (!room.remember(m)) return 0;
    const sent = m === message ? frame : withMessage(frame, m);
    room.sendAll(sent, m.seq, sent.startsWith(ASSISTANT_DONE_FRAME));
    this.onDelivered?.(m);
    this.heard(room, m);
    return Buffer.byteLength(sent);
  }

  /** Sends a held frame without a seq to the room's members who were there when it came; the bytes of the frame. */
  private sendHeldFrame(room: Room, held: HeldFrame): number {
    room.sendHeldFrame(held.frame, held.n, held.user);
    return Buffer.byteLength(held.frame);
  }

  /** What another node sent on a room's channel: each kind is checked here, and a malformed one dropped with a warning. */
  private fromBus(roomId: string, payload: string): void {
    const envelope = decodeEnvelope(payload);
    if (!envelope) return this.log.warn({ roomId }, 'malformed envelope on the room bus dropped');
    if (envelope.node === this.bus.nodeId) return;
    const { node, delivery, frame, user } = envelope;
    try {
      if (delivery === 'presence' || delivery === 'sync') return this.sync.heard(roomId, envelope);
      if (delivery === 'threads') {
        const move = parseThreadMove(frame);
        return move ? this.applyThreadMove(roomId, move) : this.log.warn({ roomId, node }, 'bad thread move on the room bus dropped');
      }
      if (delivery === 'history') {
        const message = parseBusMessage(frame, roomId);
        return message ? this.historyFromBus(roomId, frame, message) : this.log.warn({ roomId, node }, 'malformed message on the room bus dropped');
      }
      if (!isServerFrame(frame)) return this.log.warn({ roomId, node, delivery }, 'malformed frame on the room bus dropped');
      this.deliverLocal(roomId, delivery, frame, user, undefined, envelope.answer);
    } catch (err) {
      this.log.warn({ roomId, node, err }, 'room bus payload not delivered');
    }
  }

  /**
   * A message another node stored. Within MAX_SEQ_LEAD of the newest seq the room heard (delivered,
   * or held during a catch-up) it is delivered as it came; further ahead the room reads what came
   * since from the store instead of taking the seq on the envelope's word. A room still loading
   * learns its seq first.
   */
  private historyFromBus(roomId: string, frame: string, message: Message): void {
    const room = this.rooms.get(roomId);
    if (!room) return;
    if (!room.info) return this.heardLoading(room, frame, message);
    const before = room.heardSeq;
    if (message.seq > before + MAX_SEQ_LEAD) return this.sync.readAhead(room);
    this.deliverLocal(roomId, 'history', frame, undefined, message);
    if (message.seq > 0) this.threadLookups.lookUp(room, message.threadId);
    if (message.seq > before + 1) this.sync.gap(room, before, message.seq);
  }

  /** historyFromBus for a room still loading: kept (one wait a room) until it has loaded. */
  private heardLoading(room: Room, frame: string, message: Message): void {
    const heard = this.heardWhileLoading.get(room);
    if (heard === null) return;
    if (heard) {
      if (heard.length < MAX_SEQ_LEAD) heard.push({ frame, message });
      else this.heardWhileLoading.set(room, null);
      return;
    }
    this.heardWhileLoading.set(room, [{ frame, message }]);
    room.ready
      .then((state) => {
        const kept = this.heardWhileLoading.get(room);
        this.heardWhileLoading.delete(room);
        if (state !== 'ok' || this.rooms.get(room.id) !== room) return;
        if (kept === null) return this.sync.readAhead(room);
        for (const m of kept ?? []) this.historyFromBus(room.id, m.frame, m.message);
      })
      .catch((err: unknown) => this.log.warn({ roomId: room.id, err }, 'room bus payload not delivered'));
  }

  private pending(roomId: string, forUserId: string): PendingAnswer[] {
    try {
      return this.getAssistant()?.pending(roomId, forUserId) ?? [];
    } catch (err) {
      this.log.warn({ roomId, err }, 'assistant.pending failed');
      return [];
    }
  }

  private roomFor(roomId: string): Room {
    const existing = this.rooms.get(roomId);
    if (existing) return existing;
    const room = new Room(roomId, this.options, (r, ids) => this.typingExpired(r, ids));
    this.rooms.set(roomId, room);
    room.ready = this.openRoom(room).catch((err: unknown) => {
      this.log.error({ roomId, err }, 'room failed to load');
      return 'failed' as const;
    });
    void room.ready.then((state) => {
      if (state !== 'ok') this.drop(room);
    });
    return room;
  }

  /**
   * Resolves the room; a room that exists is heard on the bus, then loaded, and learns who is in
   * it on other nodes. A made-up id (any client may name one, 20 a second per address) costs the
   * lookup alone, not a subscription to its channel and back.
   */
  private async openRoom(room: Room): Promise<LoadState> {
    const info = await this.resolve(room.id);
    if (!info) return 'missing';
    room.heard = true;
    await this.sync.open(room.id);
    const state = await loadRoom(this.store, shownRoom(info), room, this.options.historySize);
    if (state === 'ok') await this.sync.opened(room);
    return state;
  }

  private typingExpired(room: Room, userIds: string[]): void {
    for (const id of userIds) {
      const member = room.members.get(id)?.member;
      if (member) this.sendTyping(room, member, false);
    }
  }

  private dropIfEmpty(room: Room): void {
    if (room.empty) this.drop(room);
  }

  /** Tells the message listener (conversation memory) of a message this node heard in `room`. */
  private heard(room: Room, message: Message): void {
    this.hearing(room);
    this.heardRooms.set(room, true);
    try {
      this.onMessage?.(message);
    } catch (err) {
      // A listener's failure is its own; the message is stored and delivered already.
      this.log.warn({ roomId: room.id, err: (err as Error)?.message }, 'message listener failed');
    }
  }

  /**
   * Before the listener hears its first message of `room`: a gap, unless it heard the room, when it
   * was last dropped, up to what this room's load took as delivered (Room.loadedSeq).
   */
  private hearing(room: Room): void {
    if (this.heardRooms.has(room)) return;
    this.heardRooms.set(room, true);
    const left = this.leftRooms.get(room.id);
    this.leftRooms.delete(room.id);
    if (left === undefined || left < room.loadedSeq) this.gap(room);
  }

  /** Tells the message listener that what it hears of `room` next does not follow on from what it heard. */
  private gap(room: Room): void {
    if (this.heardRooms.get(room) === false) return;
    this.heardRooms.set(room, false);
    try {
      this.onGap?.(room.id);
    } catch (err) {
      this.log.warn({ roomId: room.id, err: (err as Error)?.message }, 'message listener failed');
    }
  }

  private drop(room: Room): void {
    if (this.rooms.get(room.id) !== room) return;
    this.rooms.delete(room.id);
    this.hearHeld(room);
    room.dispose();
    if (!this.closing && room.heard) this.sync.closed(room.id);
  }

  /**
   * Messages held behind a catch-up still count as heard as the room is dropped: on a lone node no
   * other node windows them, and before every node windowed what it delivered, the node storing one
   * did. The seqs the catch-up was to bring never reach the listener now: it is told of a gap where
   * one lies below or between them. The room is remembered as heard up to the newest seq told.
   */
  private hearHeld(room: Room): void {
    if (!room.info) return;
    const held = room.held.messages();
    if (held.length) this.hearing(room);
    // A seq skipped below what went out (heard from another node ahead of it) was left to the catch-up.
    const since = Math.max(room.loadedSeq, room.seq - DEFAULT_SEQ_WINDOW);
    if (this.heardRooms.has(room) && !room.heardThrough(since, room.seq)) this.gap(room);
    let newest = room.seq;
    for (const m of held) {
      if (m.seq > newest + 1) this.gap(room);
      newest = Math.max(newest, m.seq);
      this.heard(room, room.filed(m));
    }
    if (!this.heardRooms.has(room)) return;
    this.leftRooms.delete(room.id);
    this.leftRooms.set(room.id, newest);
    if (this.leftRooms.size > MAX_LEFT_ROOMS) this.leftRooms.delete(this.leftRooms.keys().next().value!);
  }
}
