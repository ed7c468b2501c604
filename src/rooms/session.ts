/**
 * One client connection: the hello deadline, flood control, frame parsing and dispatch, and
 * back-pressure. It knows its Connection only through the transport-free interface (docs/architecture.md).
 */
import { SalonError, clientMessage, errors, withRetryAfterMs } from '../errors.js';
import { CloseCode, type CloseCodeValue } from '../protocol/close-codes.js';
import type { ClientMessage, Member } from '../protocol/messages.js';
import { FloodGuard } from './flood-guard.js';
import { parseClientFrame } from './frames.js';
import type { RoomOptions } from './options.js';
import type { Room, RoomSession } from './room.js';
import type { QueuedBytesHolder, SendBudget } from './send-budget.js';
import type { Connection } from './types.js';

/** What a session asks of the hub once a frame is valid and admitted. */
export interface SessionHost {
  join(session: Session, frame: Extract<ClientMessage, { type: 'hello' }>): Promise<void>;
  say(session: Session, frame: Extract<ClientMessage, { type: 'say' }>): Promise<void>;
  ask(session: Session, frame: Extract<ClientMessage, { type: 'ask' }>): Promise<void>;
  typing(session: Session, active: boolean): void;
  /** Takes a frame from the budget the session's address shares with its other sockets. */
  admitFrame(session: Session, now: number): boolean;
  /** Milliseconds from `now` until the address's frame budget holds a frame again (0: it does now). */
  frameWaitMs(session: Session, now: number): number;
  /** Takes a typing frame from the address's budget for them, apart from other frames'. */
  admitTyping(session: Session, now: number): boolean;
  /** The connection is gone (closed by either side) or must leave its room now. */
  detach(session: Session): void;
  /** Logs an unexpected failure of a frame handler. */
  failed(session: Session, err: unknown): void;
  /** A frame handler's work ended well: after failures, the log says frames work again. */
  worked(): void;
}

type State = 'new' | 'joining' | 'joined' | 'closed';

const PONG = JSON.stringify({ type: 'pong' });

/** Serialises an `error` frame; one for ERR_RATE_LIMITED says, when known, how long to wait (`retryAfterMs`). */
export function errorFrame(err: SalonError, clientId?: string): string {
  const retryAfterMs = err.code === 'ERR_RATE_LIMITED' ? err.retryAfterMs : undefined;
  return JSON.stringify({
    type: 'error',
    code: err.code,
    message: clientMessage(err),
    ...(clientId ? { clientId } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

export class Session implements RoomSession, QueuedBytesHolder {
  state: State = 'new';
  userId = '';
  member: Member | null = null;
  room: Room | null = null;
  welcomedAhead = new Set<number>();
  heldFramesFrom = 0;
  /** Whether this member's arrival was announced to the room (set once its welcome went out and it stayed). */
  announced = false;
  countedBytes = 0;
  private helloTimer: NodeJS.Timeout | null;
  private readonly guard: FloodGuard;
  /** The turn of the last say/ask frame that waits for one (`inTurn`); null when none does. */
  private lastTurn: Promise<unknown> | null = null;
  /** Say/ask frames whose turn has not come yet (`inTurn`): at most `rateBurst`. */
  private waitingTurns = 0;

  constructor(
    readonly conn: Connection,
    readonly roomId: string,
    /** The client's address key (src/rooms/address.ts): what per-address limits count. */
    readonly address: string,
    private readonly host: SessionHost,
    private readonly options: Readonly<RoomOptions>,
    /** The bytes all of the node's sockets may queue together. */
    private readonly budget: SendBudget,
  ) {
    this.guard = new FloodGuard(options, Date.now());
    budget.add(this);
    this.helloTimer = setTimeout(() => this.fail(new errors.ERR_HELLO_TIMEOUT(options.helloTimeoutMs), CloseCode.HELLO_TIMEOUT), options.helloTimeoutMs);
    this.helloTimer.unref();
  }

  /** Handles one text frame from the client. */
  receive(raw: string): void {
    if (this.state === 'closed') return;
    const now = Date.now();
    const parsed = parseClientFrame(raw, this.options.maxTextChars);
    if (!parsed.ok) return this.refuse(parsed.error, parsed.clientId, this.guard.reject(now), CloseCode.BAD_MESSAGE);
    const frame = parsed.frame;
    if (frame.type === 'typing') return this.receiveTyping(frame, now);
    const clientId = 'clientId' in frame ? frame.clientId : undefined;
    if (this.waitingTurns >= this.options.rateBurst && (frame.type === 'say' || frame.type === 'ask')) {
      // As many as a burst are waiting behind a frame whose thread is still being read: the next waits for them,
      // not in memory. How long they take is the store's, which the server cannot know: no retryAfterMs.
      const err = new errors.ERR_RATE_LIMITED(`at most ${this.options.rateBurst} messages waiting their turn on one connection`);
      return this.refuse(err, clientId, this.guard.reject(now), CloseCode.RATE_LIMITED);
    }
    const admission = this.guard.admit(now);
    if (admission !== 'ok') {
      const err = withRetryAfterMs(new errors.ERR_RATE_LIMITED(`at most ${this.options.ratePerSecond} frames per second`), this.guard.waitMs(now));
      return this.refuse(err, clientId, admission, CloseCode.RATE_LIMITED);
    }
    if (!this.host.admitFrame(this, now)) {
      const err = withRetryAfterMs(
        new errors.ERR_RATE_LIMITED(`at most ${this.options.framesPerSecondPerAddress} frames per second from one address`),
        this.host.frameWaitMs(this, now),
      );
      return this.refuse(err, clientId, this.guard.reject(now), CloseCode.RATE_LIMITED);
    }
    this.dispatch(frame, clientId);
  }

  /**
   * A typing frame is admitted from budgets of its own (per connection and per address), never
   * from those of the other frames: a client announcing typing before each message spent half of
   * them, and a member sending a few short messages quickly had the last ones refused. Past those
   * budgets it is dropped without an error (typing is best-effort), and counted as refused.
   */
  private receiveTyping(frame: Extract<ClientMessage, { type: 'typing' }>, now: number): void {
    let admission = this.guard.admitTyping(now);
    if (admission === 'ok' && !this.host.admitTyping(this, now)) admission = this.guard.reject(now);
    if (admission === 'abuse')
      return this.fail(new errors.ERR_RATE_LIMITED(`at most ${this.options.ratePerSecond} typing frames per second`), CloseCode.RATE_LIMITED);
    if (admission === 'ok') this.dispatch(frame, undefined);
  }

  /**
   * A WebSocket ping or pong from the client. `ws` answers a ping itself, before any frame limit
   * could refuse it, and counted nowhere, a client could stream pings (each answered) or pongs for
   * as long as it liked at the cost of the node's CPU. Each takes a frame's place now: past the
   * connection's rate it counts as refused, and too many refusals close the socket with 4429. A
   * browser sends neither but the pong to the server's heartbeat, which is not counted (rooms-ws.ts).
   */
  receiveControl(): void {
    if (this.state === 'closed') return;
    if (this.guard.admit(Date.now()) === 'abuse')
      this.fail(new errors.ERR_RATE_LIMITED(`at most ${this.options.ratePerSecond} frames per second, pings and pongs included`), CloseCode.RATE_LIMITED);
  }

  /** Handles a binary frame, which the protocol does not use. */
  receiveBinary(): void {
    if (this.state === 'closed') return;
    this.refuse(new errors.ERR_BAD_MESSAGE('binary frames are not part of the protocol'), undefined, this.guard.reject(Date.now()), CloseCode.BAD_MESSAGE);
  }

  /** The transport is gone (closed by either side): so is what it had queued. */
  closed(): void {
    this.budget.release(this);
    this.leave();
  }

  deliver(frame: string): void {
    if (this.state === 'closed') return;
    this.conn.send(frame);
    const queued = this.conn.bufferedAmount;
    const nodeOverBudget = this.budget.update(this, queued);
    if (queued > this.options.hardBufferedBytes || (nodeOverBudget && queued > this.options.softBufferedBytes)) this.overflow();
  }

  get queuedBytes(): number {
    return this.conn.bufferedAmount;
  }

  offer(frame: string): void {
    if (this.state === 'closed' || this.conn.bufferedAmount > this.options.softBufferedBytes) return;
    this.deliver(frame);
  }

  /** Sends an `error` frame. */
  error(err: SalonError, clientId?: string): void {
    this.deliver(errorFrame(err, clientId));
  }

  /** Sends an `error` frame, then closes with `code`. */
  fail(err: SalonError, code: CloseCodeValue): void {
    if (this.state === 'closed') return;
    this.error(err);
    this.close(code);
  }

  /**
   * Closes the connection and leaves the room at once. What it still has queued stays in the
   * node's budget until the transport is gone (`closed`): a client that stopped reading never
   * answers the close, and its queue is held until the close timeout cuts it.
   */
  close(code: CloseCodeValue): void {
    if (this.state === 'closed') return;
    this.conn.close(code);
    this.leave();
  }

  private leave(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.clearHelloTimer();
    this.host.detach(this);
  }

  /** Marks the hello as handled. */
  clearHelloTimer(): void {
    if (this.helloTimer) clearTimeout(this.helloTimer);
    this.helloTimer = null;
  }

  private refuse(err: SalonError, clientId: string | undefined, admission: 'rejected' | 'abuse', abuseCode: CloseCodeValue): void {
    if (admission === 'abuse') return this.fail(err, abuseCode);
    this.error(err, clientId);
  }

  private overflow(): void {
    // A consumer this far behind (or behind at all while the node's sockets hold too much) would
    // hold unbounded memory; it can reconnect with lastSeq.
    this.close(CloseCode.TRY_AGAIN_LATER);
  }

  private dispatch(frame: ClientMessage, clientId: string | undefined): void {
    if (frame.type === 'ping') return this.deliver(PONG);
    if (frame.type === 'hello') {
      if (this.state !== 'new') return this.error(new errors.ERR_BAD_MESSAGE('already joined'));
      this.state = 'joining';
      this.clearHelloTimer();
      return this.track(this.host.join(this, frame), clientId);
    }
    if (this.state !== 'joined') return this.error(new errors.ERR_NOT_JOINED(frame.type), clientId);
    if (frame.type === 'say') return this.track(this.host.say(this, frame), clientId);
    if (frame.type === 'ask') return this.track(this.host.ask(this, frame), clientId);
    this.host.typing(this, frame.active);
  }

  /**
   * `prelude` (a say, ask or command frame's thread, found or being read), once every such frame
   * this socket sent before has had its turn: its caller acts (posts, asks, runs the command) as
   * its await returns, before anything else runs, so one socket's frames act in the order they
   * arrived, whatever each one's prelude awaited; what they do after acting (a post's write, an
   * answer's stream, a command's reads) runs concurrently, as before. Called as the frame is
   * dispatched (no await before it), and awaited at once. A frame's turn comes when the one before
   * it has acted or failed: its error is its own. With nothing waiting and the thread known (the
   * hot path) it costs what the await alone did: one microtask, nothing kept.
   */
  inTurn<T>(prelude: T | Promise<T>): Promise<T> {
    const ahead = this.lastTurn;
    if (!ahead && !(prelude instanceof Promise)) return Promise.resolve(prelude);
    // A prelude that fails before its turn: handled here, still thrown to its own frame when its turn comes.
    if (prelude instanceof Promise) prelude.catch(() => {});
    const own = () => prelude;
    // Registered on `ahead` after the frame before's own await: that frame acts first (microtasks run in order).
    const turn: Promise<T> = ahead ? ahead.then(own, own) : (prelude as Promise<T>);
    this.lastTurn = turn;
    this.waitingTurns++;
    const done = () => {
      this.waitingTurns--;
      if (this.lastTurn === turn) this.lastTurn = null;
    };
    turn.then(done, done);
    return turn;
  }

  private track(work: Promise<void>, clientId: string | undefined): void {
    work.then(
      () => this.host.worked(),
      (err: unknown) => {
        if (err instanceof SalonError && err.statusCode < 500) return this.error(err, clientId);
        this.host.failed(this, err);
        this.error(new errors.ERR_INTERNAL(), clientId);
      },
    );
  }
}
