/**
 * The room assistant (RoomAssistant): limits and queues asks fairly, runs each through the RAG
 * pipeline and streams the answer to the room through the RoomOutlet the rooms core attaches.
 *
 * Private asks: every frame goes to the asker only (sendToUser), the answer is not stored and is
 * not listed in `pending` for others; `onAnswer` hooks see `private: true` and may keep the exchange
 * only where its asker alone can reach it (conversation memory keeps it as a privileged chunk, as
 * it keeps any exchange asked in a privileged thread), unless its asker forgot their private asks
 * in the room while it ran: on this node (`forgetPrivateAsks`), or on any node, which the store
 * tells by the forget mark each ask reads as it is asked and hands to onAnswer
 * (Store.privateForgetMark).
 */
import { randomUUID } from 'node:crypto';
import type { ChatModel } from '../ai/types.js';
import { errors } from '../errors.js';
import type { ServerMessage } from '../protocol/messages.js';
import type { AskAdmission, AskRequest, AskResult, PendingAnswer, RoomAssistant, RoomOutlet } from '../rooms/types.js';
import type { SearchService } from '../search/types.js';
import type { Store } from '../store/types.js';
import { runAnswer, toSalonError, type AnswerDeps } from './answer-run.js';
import { DELTA_INTERVAL_MS } from './delta-batcher.js';
import { FairQueue, type FairQueueOptions, type QueueHold } from './fair-queue.js';
import { RagPipeline } from './pipeline.js';
import { WindowLimiter, refuseOverLimit, type WindowLimit } from './rate-limit.js';
import { type RoomView } from './types.js';
import type { MemorySearch } from '../memory/types.js';
import { silentLogger, type Logger } from '../logger.js';
import type { ForegroundHolds } from '../idle-gate.js';
import { required, wholeNumber, positiveNumber } from '../options.js';
import { plural } from '../text.js';

export const DEFAULT_USER_LIMIT: WindowLimit = { limit: 6, windowMs: 60_000 };
export const DEFAULT_ROOM_LIMIT: WindowLimit = { limit: 20, windowMs: 60_000 };
/** Twice a member's: people sharing one address (a household, an office) are not locked out by one of them. */
export const DEFAULT_ADDRESS_LIMIT: WindowLimit = { limit: 12, windowMs: 60_000 };
/**
 * Asks that may wait for one room at once (`maxWaitingPerRoom`). 0 is a room without a line: an
 * ask is taken when the room's answer can start at once, and refused ERR_ASSISTANT_BUSY while one
 * is being written (or one admitted before it is being posted).
 */
export const DEFAULT_MAX_WAITING_PER_ROOM = 4;

/**
 * Asks one asker may have waiting in one room: half the room's places, rounded up, so one member
 * asking again and again leaves the others a place in line. One client address (`addressKey`) may
 * have as many, over every identity it asks under: a name is free to take, and an address with
 * many of them took every place.
 */
export function askerWaitingCap(maxWaitingPerRoom: number): number {
  return Math.ceil(maxWaitingPerRoom / 2);
}
export const DEFAULT_ANSWER_TIMEOUT_MS = 60_000;

export interface AssistantOptions {
  store: Store;
  search: SearchService;
  chat: ChatModel;
  /** The room's title and context; null for no such room. */
  resolveRoom(roomId: string): Promise<RoomView | null>;
  log?: Logger;
  queue?: FairQueueOptions;
  /** DEFAULT_MAX_WAITING_PER_ROOM; 0: no line, an ask is answered at once or refused. */
  maxWaitingPerRoom?: number;
  userLimit?: WindowLimit;
  roomLimit?: WindowLimit;
  /** Per client address, across every identity it uses (ASK_LIMIT_IP). */
  addressLimit?: WindowLimit;
  /** Longest a whole answer may take (ERR_AI_TIMEOUT after). */
  answerTimeoutMs?: number;
  rerankTimeoutMs?: number;
  /** The threads' conversation memory (PipelineOptions.memory). */
  memory?: MemorySearch;
  /** Whole-prompt budget in characters (PipelineOptions.promptMaxChars). */
  promptMaxChars?: number;
  /** Cosine under which indexed content does not cover a question: the embedder's relevanceThreshold (PipelineOptions.relevanceThreshold). */
  relevanceThreshold?: number;
  deltaIntervalMs?: number;
  /**
   * Told of every finished answer (conversation memory hooks in here), with its asker's forget mark
   * in the room as it was asked (Store.privateForgetMark; null when it could not be read), under
   * which the store refuses its exchange, if it is filed as theirs alone (a private ask's, or one
   * asked in a privileged thread), once they have forgotten their private asks there since.
   */
  onAnswer?(request: AskRequest, result: AskResult, forgetMark: number | null): void;
  /**
   * Background work held back while each answer is prepared (the conversation memory's IdleGate):
   * its tasks start in the gaps of the model's writing or between asks, not between an answer's stages.
   */
  background?: ForegroundHolds;
  /** Told how every ask ended, refusals included (the metrics hook in here). */
  onOutcome?(outcome: 'answered' | 'abstained' | 'failed' | 'refused', result?: AskResult): void;
}

/** An ask's place in the assistant's rate limits, taken before its question was posted. */
export type Admission = AskAdmission;

/** What one admission counted and holds, so that `release` can give it back. */
interface Counted {
  askerId: string;
  address?: string;
  at: number;
  /** Counted against the room's limit too (a visible ask; a private one spends only its asker's). */
  inRoom: boolean;
  /** Its place in the queue, held while its question is posted. */
  hold: QueueHold;
  /**
   * Whether it will wait for its turn: held while the room's answer slot is free and no ask waits,
   * it starts at once, and is no question of its asker's waiting (waitingOf): counted as one, an
   * asker's next ask in a room with no line was refused as "you have 1 question waiting".
   */
  waits: boolean;
}

/** An ask on this node, waiting in the queue or being answered. */
interface OpenAsk {
  request: AskRequest;
  /** Taken from the queue: being answered (in `answers`). */
  running: boolean;
  /**
   * Why it ends unanswered when its turn comes, set while it waited: its asker left (a private
   * ask, `askerLeft`) or its thread was deleted (`threadDeleted`); null while it is to be answered.
   */
  abandoned: string | null;
  /**
   * Its asker forgot their private asks in the room meanwhile (`forgetPrivateAsks`): resolves
   * whether that took this one (private, or asked in a thread privileged when they forgot), which
   * is then not told to onAnswer; null until then.
   */
  forgotten: Promise<boolean> | null;
  /**
   * Its asker's forget mark in the room as it was asked; null when it could not be read (the store
   * then refuses the exchange if it is filed as theirs alone).
   */
  forgetMark: Promise<number | null>;
}

export class SalonAssistant implements RoomAssistant {
  readonly pipeline: RagPipeline;
  private outlet: RoomOutlet | null = null;
  private readonly queue: FairQueue;
  private readonly users: WindowLimiter;
  private readonly rooms: WindowLimiter;
  private readonly addresses: WindowLimiter;
  private readonly maxWaitingPerRoom: number;
  private readonly maxWaitingPerAsker: number;
  /** Places held by admissions not yet taken by an ask, per room and asker, and per room and address (`waiterKey`). */
  private readonly heldBy = new Map<string, number>();
  /** Admissions given and not yet taken by an ask (or released), with what each counted. */
  private readonly admissions = new WeakMap<Admission, Counted>();
  private readonly answers = new Map<string, { request: AskRequest; pending: PendingAnswer; controller: AbortController; settled: Promise<unknown> }>();
  /** Asks on this node from `ask` until they are answered, fail or are cancelled, by answer id. */
  private readonly asks = new Map<string, OpenAsk>();
  /** Answers being run, each until its result has been handed to onAnswer (idle). */
  private readonly runs = new Set<Promise<unknown>>();
  private readonly deps: AnswerDeps;
  private readonly log: Logger;

  constructor(private readonly options: AssistantOptions) {
    for (const name of ['store', 'search', 'chat', 'resolveRoom'] as const) required('SalonAssistant', name, options[name]);
    this.log = options.log ?? silentLogger;
    this.pipeline = new RagPipeline({
      store: options.store,
      search: options.search,
      chat: options.chat,
      log: this.log,
      rerankTimeoutMs: options.rerankTimeoutMs,
      promptMaxChars: options.promptMaxChars,
      memory: options.memory,
      relevanceThreshold: options.relevanceThreshold,
    });
    this.queue = new FairQueue(options.queue);
    this.users = new WindowLimiter(options.userLimit ?? DEFAULT_USER_LIMIT, 'SalonAssistant: options.userLimit');
    this.rooms = new WindowLimiter(options.roomLimit ?? DEFAULT_ROOM_LIMIT, 'SalonAssistant: options.roomLimit');
    this.addresses = new WindowLimiter(options.addressLimit ?? DEFAULT_ADDRESS_LIMIT, 'SalonAssistant: options.addressLimit');
    this.maxWaitingPerRoom = options.maxWaitingPerRoom ?? DEFAULT_MAX_WAITING_PER_ROOM;
    wholeNumber('SalonAssistant', 'maxWaitingPerRoom', this.maxWaitingPerRoom, 0);
    this.maxWaitingPerAsker = askerWaitingCap(this.maxWaitingPerRoom);
    const timeoutMs = options.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
    positiveNumber('SalonAssistant', 'answerTimeoutMs', timeoutMs);
    this.deps = {
      store: options.store,
      chat: options.chat,
      pipeline: this.pipeline,
      log: this.log,
      resolveRoom: options.resolveRoom,
      emit: (request, frame, answerId) => this.emit(request, frame, answerId),
      deltaIntervalMs: options.deltaIntervalMs ?? DELTA_INTERVAL_MS,
      timeoutMs,
      background: options.background,
    };
  }

  attach(outlet: RoomOutlet): void {
    this.outlet = outlet;
  }

  /**
   * Throws what `ask` would throw for this request now (ERR_BAD_MESSAGE, ERR_RATE_LIMITED,
   * ERR_ASSISTANT_BUSY) without queueing it, so a caller can refuse before writing anything; an
   * ask it lets through is counted against the rate limits at once and holds its place in the
   * queue, and `ask` then takes the admission instead of checking it again: asks that arrive
   * together cannot all pass the check while the first are still being posted, and none of them
   * can take the place of a question posted meanwhile (refused ERR_ASSISTANT_BUSY once posted).
   */
  admit(request: AskRequest): Admission {
    this.refusing(() => this.check(request));
    const waits = !this.queue.startsNow(request.roomId);
    const hold = this.queue.hold(request.roomId);
    const at = Date.now();
    this.count(request, at);
    const admission = { roomId: request.roomId };
    this.admissions.set(admission, { askerId: request.asker.id, address: request.address, at, hold, inRoom: !request.private, waits });
    if (waits) this.countHeld(request.roomId, request.asker.id, request.address, 1);
    return admission;
  }

  /** Uncounts an admission that no ask will take (its question was a resend, or could not be posted). */
  release(admission: Admission): void {
    const counted = this.admissions.get(admission);
    if (!counted) return;
    this.admissions.delete(admission);
    this.queue.release(counted.hold);
    if (counted.waits) this.countHeld(admission.roomId, counted.askerId, counted.address, -1);
    this.users.forget(counted.askerId, counted.at);
    if (counted.inRoom) this.rooms.forget(admission.roomId, counted.at);
    if (counted.address) this.addresses.forget(counted.address, counted.at);
  }

  /** Runs a check; a refusal is told to onOutcome and thrown. */
  private refusing(check: () => void): void {
    try {
      check();
    } catch (err) {
      this.options.onOutcome?.('refused');
      throw err;
    }
  }

  /** The question, then (unless an admission checked them already) the rate limits and the queue's places. */
  private check(request: AskRequest, admitted = false): void {
    if (!request.text.trim()) throw new errors.ERR_BAD_MESSAGE('the question is empty');
    if (admitted) return;
    const now = Date.now();
    refuseOverLimit(this.users, request.asker.id, 'each member', now);
    // A private ask spends its asker's budget alone: counted against the room's, one member's
    // private questions, which nobody else sees, would leave the room's visible assistant none.
    if (!request.private) refuseOverLimit(this.rooms, request.roomId, 'each room', now);
    if (request.address) refuseOverLimit(this.addresses, request.address, 'each address', now);
    // Checked before the room's places: an asker who holds half of them is told it is their doing.
    // An ask that starts at once takes no waiting place: with no line (maxWaitingPerRoom 0, a cap
    // of 0) it is taken, and one that would wait is refused busy, not told of asks it has none of.
    const { roomId, asker } = request;
    const startsNow = this.queue.startsNow(roomId);
    this.refuseOverWaitingCap(
      this.waitingOf(roomId, (r) => r.asker.id === asker.id, waiterKey(roomId, 'asker', asker.id)),
      (n) => `you have ${plural(n, 'question', 'questions')}`,
    );
    // The same cap per address, whatever names it asks under.
    const address = request.address;
    if (address)
      this.refuseOverWaitingCap(
        this.waitingOf(roomId, (r) => r.address === address, waiterKey(roomId, 'address', address)),
        (n) => `${plural(n, 'question', 'questions')} from your address ${n === 1 ? 'is' : 'are'}`,
      );
    if ((!startsNow && this.queue.waitingIn(roomId) >= this.maxWaitingPerRoom) || !this.queue.accepts(roomId)) throw new errors.ERR_ASSISTANT_BUSY();
  }

  /**
   * Refuses ERR_RATE_LIMITED when one asker or one address has `waiting` asks in the room and may
   * have no more (askerWaitingCap); `whoseWaiting(n)` begins the refusal ("you have 2 questions").
   */
  private refuseOverWaitingCap(waiting: number, whoseWaiting: (n: number) => string): void {
    if (waiting > 0 && waiting >= this.maxWaitingPerAsker)
      throw new errors.ERR_RATE_LIMITED(`${whoseWaiting(waiting)} waiting for the assistant in this room; ask again once one is answered`);
  }

  /**
   * The asks of one asker or one address (`theirs`; `held`: its key in `heldBy`) waiting in the
   * room on this node: queued and not started, and admitted and not yet asked (their places are
   * held in the queue).
   */
  private waitingOf(roomId: string, theirs: (request: AskRequest) => boolean, held: string): number {
    let n = this.heldBy.get(held) ?? 0;
    for (const ask of this.asks.values()) if (!ask.running && ask.request.roomId === roomId && theirs(ask.request)) n++;
    return n;
  }

  private countHeld(roomId: string, askerId: string, address: string | undefined, by: 1 | -1): void {
    const keys = [waiterKey(roomId, 'asker', askerId)];
    if (address) keys.push(waiterKey(roomId, 'address', address));
    for (const key of keys) {
      const n = (this.heldBy.get(key) ?? 0) + by;
      if (n > 0) this.heldBy.set(key, n);
      else this.heldBy.delete(key);
    }
  }

  private count(request: AskRequest, now = Date.now()): void {
    this.users.record(request.asker.id, now);
    if (!request.private) this.rooms.record(request.roomId, now);
    if (request.address) this.addresses.record(request.address, now);
  }

  /** Queues an ask; with an admission from `admit` for its room, its rate limits were counted already. */
  ask(request: AskRequest, admission?: Admission): { id: string; position: number; done: Promise<AskResult> } {
    const counted = admission !== undefined && admission.roomId === request.roomId ? this.admissions.get(admission) : undefined;
    if (counted) {
      this.admissions.delete(admission!);
      if (counted.waits) this.countHeld(request.roomId, counted.askerId, counted.address, -1);
    }
    const admitted = counted !== undefined;
    try {
      this.refusing(() => this.check(request, admitted));
    } catch (err) {
      if (counted) this.queue.release(counted.hold);
      throw err;
    }
    const text = request.text.trim();
    const id = `ans_${randomUUID()}`;
    const req = { ...request, text };
    let settle!: { resolve(r: AskResult): void; reject(e: unknown): void };
    const done = new Promise<AskResult>((resolve, reject) => (settle = { resolve, reject }));
    // Callers may ignore `done`; a failure must not become an unhandled rejection.
    done.catch(() => {});
    // Read for a public ask too: whether its exchange is its asker's alone is decided as it is filed
    // (its thread may be made privileged meanwhile), and the store checks the mark only then.
    this.asks.set(id, { request: req, running: false, abandoned: null, forgotten: null, forgetMark: this.forgetMarkOf(req) });
    let position: number;
    try {
      position = this.queue.push(
        {
          roomId: req.roomId,
          run: () =>
            this.runUnlessAbandoned(id, req).then(
              (result) => {
                this.options.onOutcome?.(result.abstained ? 'abstained' : 'answered', result);
                settle.resolve(result);
              },
              (err) => {
                this.options.onOutcome?.('failed');
                settle.reject(err);
                throw err;
              },
            ),
          cancel: (reason) => {
            this.asks.delete(id);
            settle.reject(toSalonError(reason));
          },
        },
        counted?.hold,
      );
    } catch (err) {
      // Refused by a full line (or a closed queue): `done` never settles.
      this.asks.delete(id);
      throw err;
    }
    if (!admitted) this.count(req);
    if (position > 0) {
      this.log.info({ roomId: req.roomId, answerId: id, position }, 'ask queued');
      this.outlet?.sendToUser(req.roomId, req.asker.id, {
        type: 'warning',
        code: 'ASSISTANT_QUEUED',
        message: `The assistant is busy; your question is number ${position} in line.`,
      });
    }
    return { id, position, done };
  }

  /** Asks waiting for their turn. */
  get queueDepth(): number {
    return this.queue.size;
  }

  pending(roomId: string, forUserId?: string): PendingAnswer[] {
    const out: PendingAnswer[] = [];
    for (const a of this.answers.values()) {
      if (a.request.roomId !== roomId || (a.request.private && a.request.asker.id !== forUserId)) continue;
      out.push({ ...a.pending });
    }
    return out;
  }

  /** Whether `userId` has a private ask in the room waiting or being answered here. */
  hasPrivateAsks(roomId: string, userId: string): boolean {
    for (const ask of this.asks.values())
      if (ask.request.private && (ask.running || ask.abandoned === null) && ask.request.roomId === roomId && ask.request.asker.id === userId) return true;
    return false;
  }

  /**
   * The asker has no connection left in the room, on any node: their private asks end, waiting or
   * being answered, since nobody else may read them. A public answer goes on: the room reads it.
   */
  askerLeft(roomId: string, userId: string): void {
    for (const [id, ask] of this.asks) {
      if (!ask.request.private || ask.request.roomId !== roomId || ask.request.asker.id !== userId) continue;
      this.abandon(id, ask, 'the asker left the room');
    }
  }

  /**
   * A thread was deleted, here or on another node: the asks made in it end, waiting or being
   * answered. Its answer could not be stored (the thread takes no message now), and writing it
   * would keep the model busy for a room that no longer shows the thread.
   */
  threadDeleted(threadId: string): void {
    for (const [id, ask] of this.asks) if (ask.request.threadId === threadId) this.abandon(id, ask, 'its thread was deleted');
  }

  /** Ends an ask unanswered: aborted if it is being answered, else when its turn comes. */
  private abandon(id: string, ask: OpenAsk, reason: string): void {
    if (ask.running) this.answers.get(id)?.controller.abort(new errors.ERR_ASSISTANT_FAILED(reason));
    else ask.abandoned ??= reason;
  }

  /**
   * `/forget private`: `userId`'s asks in the room on this node, waiting or being answered, whose
   * exchanges would be their private memory (private asks, and those asked in a thread that is
   * privileged now) are never told to onAnswer (conversation memory does not keep them); their
   * answers still reach whoever they reach. They are marked before this returns; it resolves with
   * how many it marked that will still be answered (not those the asker left, which end
   * unanswered, nor those a forget before marked). Asks on other nodes, and one whose thread is
   * made privileged after this, are the store's to refuse (their forget marks), uncounted.
   */
  async forgetPrivateAsks(roomId: string, userId: string): Promise<number> {
    const marked: Promise<boolean>[] = [];
    const privileged = new Map<string, Promise<boolean>>();
    for (const [id, ask] of this.asks) {
      if (ask.forgotten || ask.request.roomId !== roomId || ask.request.asker.id !== userId) continue;
      ask.forgotten = ask.request.private ? Promise.resolve(true) : this.privilegedNow(ask.request.threadId, privileged);
      const left = ask.abandoned !== null || this.answers.get(id)?.controller.signal.aborted;
      if (!left) marked.push(ask.forgotten);
    }
    return (await Promise.all(marked)).filter(Boolean).length;
  }

  /**
   * Whether a public ask's thread is privileged now (each thread read once per forget). A thread
   * that cannot be read counts as privileged, logged: its ask is answered but not remembered.
   */
  private privilegedNow(threadId: string, read: Map<string, Promise<boolean>>): Promise<boolean> {
    let privileged = read.get(threadId);
    if (!privileged) {
      privileged = this.options.store.getThread(threadId).then(
        (thread) => thread?.privileged === true,
        (err: unknown) => {
          this.log.warn({ threadId, err: (err as Error)?.message }, 'thread not read: its asker’s ask is answered but not remembered');
          return true;
        },
      );
      read.set(threadId, privileged);
    }
    return privileged;
  }

  /**
   * Refuses new asks, cancels waiting ones and aborts those being answered; resolves once every
   * aborted answer has told its room it failed, so a shutdown can close the sockets after that.
   */
  async close(): Promise<void> {
    this.queue.close(new errors.ERR_ASSISTANT_FAILED('the server is shutting down'));
    const running = [...this.answers.values()];
    for (const a of running) a.controller.abort(new errors.ERR_ASSISTANT_FAILED('the server is shutting down'));
    await Promise.allSettled(running.map((a) => a.settled));
  }

  /**
   * Resolves once no answer is being run on this node, each that ended handed to onAnswer. Its
   * `assistant.done` frame leaves before that: its asker's forget mark is read in between (a round
   * trip on PostgreSQL), so a caller that must see the exchange remembered waits here, then for the
   * memory. Asks still waiting for their turn are not waited for.
   */
  async idle(): Promise<void> {
    while (this.runs.size) await Promise.allSettled([...this.runs]);
  }

  private runUnlessAbandoned(id: string, request: AskRequest): Promise<AskResult> {
    const ask = this.asks.get(id);
    if (ask && ask.abandoned !== null) {
      this.asks.delete(id);
      return Promise.reject(new errors.ERR_ASSISTANT_FAILED(ask.abandoned));
    }
    if (ask) ask.running = true;
    return this.run(id, request);
  }

  /** An ask's forget mark, read now (as it is asked); null, logged, when the store fails. */
  private forgetMarkOf(request: AskRequest): Promise<number | null> {
    return this.options.store.privateForgetMark(request.asker.id, request.roomId).catch((err: unknown) => {
      this.log.warn({ roomId: request.roomId, err: (err as Error)?.message }, 'forget mark not read: the exchange will not be remembered if it is private');
      return null;
    });
  }

  private run(id: string, request: AskRequest): Promise<AskResult> {
    const running = this.answerAndTell(id, request);
    this.runs.add(running);
    void running.then(
      () => this.runs.delete(running),
      () => this.runs.delete(running),
    );
    return running;
  }

  private async answerAndTell(id: string, request: AskRequest): Promise<AskResult> {
    const pending: PendingAnswer = { id, stage: 'searching', text: '' };
    const controller = new AbortController();
    const answer = runAnswer(this.deps, request, pending, controller.signal);
    this.answers.set(id, { request, pending, controller, settled: answer.catch(() => {}) });
    try {
      const result = await answer;
      const ask = this.asks.get(id)!;
      const forgetMark = await ask.forgetMark;
      // Its asker forgot their private asks in the room while it ran: it is theirs to read, not to keep.
      // (Looked at after the mark's wait, which a forget may have come during.)
      const forgotten = ask.forgotten !== null && (await ask.forgotten);
      try {
        if (!forgotten) this.options.onAnswer?.(request, result, forgetMark);
      } catch (err) {
        this.log.warn({ roomId: request.roomId, err: (err as Error).message }, 'onAnswer hook failed');
      }
      return result;
    } finally {
      this.answers.delete(id);
      this.asks.delete(id);
    }
  }

  private emit(request: AskRequest, frame: ServerMessage, answerId: string): void {
    if (!this.outlet) return;
    if (request.private) this.outlet.sendToUser(request.roomId, request.asker.id, frame);
    else this.outlet.broadcast(request.roomId, frame, { answer: answerId, ...(request.questionSeq !== undefined ? { questionSeq: request.questionSeq } : {}) });
  }
}

/** One asker, or one client address, in one room, as a map key (ids may hold any character). */
function waiterKey(roomId: string, kind: 'asker' | 'address', id: string): string {
  return JSON.stringify([roomId, kind, id]);
}
