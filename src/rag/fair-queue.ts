/**
 * The assistant's queue: one answer at a time per room, at most `concurrency` answers at once
 * overall, and a bounded global FIFO of waiting asks (the backpressure that keeps a busy server
 * from promising answers it cannot give). Each room gets a fair share of the waiting places: with
 * n rooms waiting, none may hold more than maxWaiting / (n + 1) of them, so there is always room
 * in line for a room that has not asked yet, however busy the others are.
 *
 * A place can be held before its job exists (`hold`): an ask is admitted, its question posted (a
 * store write), then queued. A held place counts as a waiting job until `push` takes it or
 * `release` gives it back, so asks arriving in that gap cannot fill the line and leave a posted
 * question refused. A place held for a room whose job would start at once keeps that start (an
 * answer slot and the room) until its job is pushed or the place released: jobs pushed meanwhile
 * wait behind it, and in a room without a line (the assistant's maxWaitingPerRoom 0) an admitted
 * ask is never left waiting for a slot another room's ask took while it was being posted.
 */
import { errors } from '../errors.js';
import { wholeNumber } from '../options.js';

export const DEFAULT_CONCURRENCY = 2;
export const DEFAULT_MAX_WAITING = 32;

export interface QueueJob {
  roomId: string;
  /** Runs the job; the queue moves on when it settles. */
  run(): Promise<void>;
  /** Called instead of run when the queue closes before the job started. */
  cancel(reason: Error): void;
}

/** A place in line held for a job not pushed yet (FairQueue.hold). */
export interface QueueHold {
  readonly roomId: string;
}

export interface FairQueueOptions {
  concurrency?: number;
  maxWaiting?: number;
}

export class FairQueue {
  private readonly concurrency: number;
  private readonly maxWaiting: number;
  private readonly waiting: QueueJob[] = [];
  private readonly busyRooms = new Set<string>();
  private running = 0;
  private closed = false;
  /** Places held per room (hold), and their sum. */
  private readonly held = new Map<string, number>();
  private heldTotal = 0;
  private readonly holds = new WeakSet<QueueHold>();
  /** Held places that keep their room's start, and those rooms (one each: a kept start is not waited behind). */
  private readonly startHolds = new WeakSet<QueueHold>();
  private readonly startRooms = new Set<string>();

  constructor(options: FairQueueOptions = {}) {
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.maxWaiting = options.maxWaiting ?? DEFAULT_MAX_WAITING;
    wholeNumber('FairQueue', 'concurrency', this.concurrency, 1);
    wholeNumber('FairQueue', 'maxWaiting', this.maxWaiting, 0);
  }

  /** Jobs waiting for this room (not counting one running), places held for it included. */
  waitingIn(roomId: string): number {
    return this.waiting.reduce((n, j) => n + (j.roomId === roomId ? 1 : 0), this.held.get(roomId) ?? 0);
  }

  /** Whether `push` would take a job for this room now. */
  accepts(roomId: string): boolean {
    return !this.closed && (this.canStart(roomId) || this.hasPlaceFor(roomId));
  }

  /** Whether a job for this room pushed now would start at once, no place held or job waiting for the room before it. */
  startsNow(roomId: string): boolean {
    return !this.closed && this.canStart(roomId) && this.waitingIn(roomId) === 0;
  }

  /** Waiting places one room may hold now: its fair share of the line. */
  shareOf(roomId: string): number {
    const rooms = new Set([...this.waiting.map((j) => j.roomId), ...this.held.keys()]);
    rooms.delete(roomId);
    // The +1 keeps a share free for a room that is not in line yet.
    return Math.max(1, Math.floor(this.maxWaiting / (rooms.size + 2)));
  }

  /** Jobs waiting, places held included. */
  get size(): number {
    return this.waiting.length + this.heldTotal;
  }

  /** Holds a place for a job of `roomId` to be pushed later; ERR_ASSISTANT_BUSY when `push` would refuse it now. */
  hold(roomId: string): QueueHold {
    if (!this.accepts(roomId)) throw new errors.ERR_ASSISTANT_BUSY();
    const startsNow = this.startsNow(roomId);
    const hold: QueueHold = { roomId };
    this.holds.add(hold);
    if (startsNow) {
      this.startHolds.add(hold);
      this.startRooms.add(roomId);
    }
    this.held.set(roomId, (this.held.get(roomId) ?? 0) + 1);
    this.heldTotal++;
    return hold;
  }

  /** Gives a held place back (no job will come for it); a place pushed or released already is ignored. */
  release(hold: QueueHold): void {
    // A start it kept goes to the jobs waiting.
    if (this.giveBack(hold)) this.pump();
  }

  /** Gives a held place back, without passing on a start it kept; whether it kept one. */
  private giveBack(hold: QueueHold): boolean {
    if (!this.holds.delete(hold)) return false;
    const n = this.held.get(hold.roomId)! - 1;
    if (n > 0) this.held.set(hold.roomId, n);
    else this.held.delete(hold.roomId);
    this.heldTotal--;
    if (!this.startHolds.delete(hold)) return false;
    this.startRooms.delete(hold.roomId);
    return true;
  }

  /**
   * Queues a job. Returns 0 when it starts at once, else its place in line (1 = next).
   * Throws ERR_ASSISTANT_BUSY when the line is full, unless `hold` held a place for it (the line
   * may then run over its size); a job whose held place kept a start starts at once.
   */
  push(job: QueueJob, hold?: QueueHold): number {
    if (this.closed) throw new errors.ERR_ASSISTANT_BUSY();
    const held = hold !== undefined && hold.roomId === job.roomId && this.holds.has(hold);
    // Not `release`: a start the place kept is this job's, not the line's.
    if (held) this.giveBack(hold);
    if (this.canStart(job.roomId)) {
      this.start(job);
      return 0;
    }
    if (!held && !this.hasPlaceFor(job.roomId)) throw new errors.ERR_ASSISTANT_BUSY();
    this.waiting.push(job);
    return this.waiting.length;
  }

  /** Cancels every waiting job; running ones finish (their owner aborts them). */
  close(reason: Error): void {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.cancel(reason);
  }

  private hasPlaceFor(roomId: string): boolean {
    return this.size < this.maxWaiting && this.waitingIn(roomId) < this.shareOf(roomId);
  }

  private canStart(roomId: string): boolean {
    return this.running + this.startRooms.size < this.concurrency && !this.busyRooms.has(roomId) && !this.startRooms.has(roomId);
  }

  private start(job: QueueJob): void {
    this.running++;
    this.busyRooms.add(job.roomId);
    void job
      .run()
      .catch(() => {})
      .finally(() => {
        this.running--;
        this.busyRooms.delete(job.roomId);
        this.pump();
      });
  }

  private pump(): void {
    if (this.closed) return;
    for (let i = 0; i < this.waiting.length && this.running + this.startRooms.size < this.concurrency;) {
      const job = this.waiting[i];
      if (!this.canStart(job.roomId)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.start(job);
    }
  }
}
