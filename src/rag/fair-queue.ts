/**
 * The assistant's queue: one answer at a time per room, at most `concurrency` answers at once
 * overall, and a bounded global FIFO of waiting asks (the backpressure that keeps a busy server
 * from promising answers it cannot give). Each room gets a fair share of the waiting places: with
 * n rooms waiting, none may hold more than maxWaiting / (n + 1) of them, so there is always room
 * in line for a room that has not asked yet, however busy the others are.
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

  constructor(options: FairQueueOptions = {}) {
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.maxWaiting = options.maxWaiting ?? DEFAULT_MAX_WAITING;
    wholeNumber('FairQueue', 'concurrency', this.concurrency, 1);
    wholeNumber('FairQueue', 'maxWaiting', this.maxWaiting, 0);
  }

  /** Jobs waiting for this room (not counting one running). */
  waitingIn(roomId: string): number {
    return this.waiting.reduce((n, j) => n + (j.roomId === roomId ? 1 : 0), 0);
  }

  /** Whether `push` would take a job for this room now. */
  accepts(roomId: string): boolean {
    return !this.closed && (this.canStart(roomId) || this.hasPlaceFor(roomId));
  }

  /** Waiting places one room may hold now: its fair share of the line. */
  shareOf(roomId: string): number {
    const rooms = new Set(this.waiting.map((j) => j.roomId));
    rooms.delete(roomId);
    // The +1 keeps a share free for a room that is not in line yet.
    return Math.max(1, Math.floor(this.maxWaiting / (rooms.size + 2)));
  }

  get size(): number {
    return this.waiting.length;
  }

  /**
   * Queues a job. Returns 0 when it starts at once, else its place in line (1 = next).
   * Throws ERR_ASSISTANT_BUSY when the line is full.
   */
  push(job: QueueJob): number {
    if (this.closed) throw new errors.ERR_ASSISTANT_BUSY();
    if (this.canStart(job.roomId)) {
      this.start(job);
      return 0;
    }
    if (!this.hasPlaceFor(job.roomId)) throw new errors.ERR_ASSISTANT_BUSY();
    this.waiting.push(job);
    return this.waiting.length;
  }

  /** Cancels every waiting job; running ones finish (their owner aborts them). */
  close(reason: Error): void {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.cancel(reason);
  }

  private hasPlaceFor(roomId: string): boolean {
    return this.waiting.length < this.maxWaiting && this.waitingIn(roomId) < this.shareOf(roomId);
  }

  private canStart(roomId: string): boolean {
    return this.running < this.concurrency && !this.busyRooms.has(roomId);
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
    for (let i = 0; i < this.waiting.length && this.running < this.concurrency;) {
      const job = this.waiting[i];
      if (this.busyRooms.has(job.roomId)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.start(job);
    }
  }
}
