/**
 * Background work that gives way to the event loop's foreground. Tasks run one at a time through
 * the gate (`run`). Each first lets the loop turn twice (so I/O already waiting is handled), then
 * looks at how much the loop worked since the previous task ended:
 * - next to nothing (an import storing its windows one after another, a quiet server): the task
 *   starts at once, and a queue of them runs as fast as the work allows;
 * - more (chat messages were handled, an answer written): the task waits until the loop has been
 *   idle, blocked waiting for I/O, for a while between two looks, so it runs in a gap between
 *   messages rather than in front of them. While messages queue up (a busy spell, a garbage
 *   collection, a burst of windows) the gate stays shut and the backlog drains without the
 *   background's share on top (docs/architecture.md, "Background work gives way to chat").
 *   However busy the loop stays, a task starts after `maxWaitMs`, and without waiting while more
 *   than `maxQueued` wait behind it: the background must neither starve nor pile up.
 * What the task itself does, awaits included, does not count: the look starts when it ends.
 *
 * Foreground work that the loop's times cannot see can hold the gate shut (`hold`): an ask being
 * prepared waits on other threads between its stages (the memory's line search on the store's
 * reader thread, ~2–3 ms), and the loop idles then, but the ask comes back within milliseconds. A
 * task started in that gap made the ask wait for it: 1–5 ms each (an exchange embedded, filed and
 * indexed), several back to back since the loop did nothing else between them
 * (docs/benchmarks.md, "Thirty-ninth session: the ask overhead's tail"). While held, no task
 * starts for idleness, a quiet loop or `maxWaitMs`, until the holds are released; then the rules
 * above apply again. Two bounds still hold. More than `maxQueued` waiting starts the next as soon
 * as the holds are released, or at once when holds have followed one another without a break for
 * `longQueueHeldMs` (asks in many rooms keeping the gate held: the memory's queue must not grow
 * then). An ask asked right after another, with the built-in model, leaves the loop no idle moment
 * (the model writes on it), so the queue sits past `maxQueued` and one exchange starts at every
 * look: started inside the hold, it lands in the next ask's preparation, ~0.4 ms of its stages
 * (docs/benchmarks.md, "Fortieth session"); started at the release, it runs beside the model's
 * writing instead, where with a model server the loop idles. And however long holds follow one
 * another, a task starts after `maxHeldMs`.
 */
import { performance } from 'node:perf_hooks';
// The real timers even where a test fakes the global ones: the gate watches the real loop.
import { clearTimeout as realClearTimeout, setImmediate as realImmediate, setTimeout as realTimeout } from 'node:timers';
import { positiveNumber, wholeNumber } from './options.js';

/** How often a waiting task looks at the loop. */
export const DEFAULT_IDLE_POLL_MS = 1;
/** Idle time between two looks that opens the gate (the loop blocked waiting for I/O this long). */
export const DEFAULT_MIN_IDLE_MS = 0.5;
/** The loop's work since the last task ended under which the next one need not wait for idleness. */
export const DEFAULT_MIN_FOREGROUND_MS = 0.5;
/** Longest wait, however busy the loop. */
export const DEFAULT_MAX_WAIT_MS = 250;
/** Tasks waiting beyond which the next starts without waiting for idleness (the queue stays bounded). */
export const DEFAULT_MAX_QUEUED = 64;
/** Longest wait while holds keep the gate shut (the bound on `hold`, as maxWaitMs bounds a busy loop). */
export const DEFAULT_MAX_HELD_MS = 1_000;
/**
 * Unbroken holds past which a queue longer than maxQueued starts its next task at once, held or not;
 * below it the task waits for the release. Several times an ask's preparation (~5–15 ms here).
 */
export const DEFAULT_LONG_QUEUE_HELD_MS = 50;

export interface IdleGateOptions {
  pollMs?: number;
  minIdleMs?: number;
  minForegroundMs?: number;
  maxWaitMs?: number;
  maxQueued?: number;
  maxHeldMs?: number;
  longQueueHeldMs?: number;
  /** The loop's time so far, idle and active, in ms (tests replace it). */
  loopTime?: () => { idle: number; active: number };
  /** A monotonic clock in ms (tests replace it). */
  now?: () => number;
}

/** Runs background tasks one at a time, in the order given, when it sees fit. */
export interface BackgroundRunner {
  run<T>(task: () => Promise<T>): Promise<T>;
}

/** Keeps background tasks from starting while foreground work is under way; the function returned releases the hold (once). */
export interface ForegroundHolds {
  hold(): () => void;
}

export class IdleGate implements BackgroundRunner, ForegroundHolds {
  private readonly pollMs: number;
  private readonly minIdleMs: number;
  private readonly minForegroundMs: number;
  private readonly maxWaitMs: number;
  private readonly maxQueued: number;
  private readonly maxHeldMs: number;
  private readonly longQueueHeldMs: number;
  private readonly loopTime: () => { idle: number; active: number };
  private readonly now: () => number;
  /** The loop's active time when the last task ended. */
  private activeAtEnd: number;
  private tail: Promise<unknown> = Promise.resolve();
  /** Tasks given and not finished, the one running included. */
  private queued = 0;
  /** Holds not released (`hold`). */
  private held = 0;
  /** When the holds under way began without a break (the clock's ms), while held. */
  private heldSince = 0;
  /** Looks at once (a turn later) instead of at the next poll: the last release with a long queue waiting. */
  private lookNow?: () => void;

  constructor(options: IdleGateOptions = {}) {
    this.pollMs = options.pollMs ?? DEFAULT_IDLE_POLL_MS;
    this.minIdleMs = options.minIdleMs ?? DEFAULT_MIN_IDLE_MS;
    this.minForegroundMs = options.minForegroundMs ?? DEFAULT_MIN_FOREGROUND_MS;
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.maxHeldMs = options.maxHeldMs ?? DEFAULT_MAX_HELD_MS;
    this.longQueueHeldMs = options.longQueueHeldMs ?? DEFAULT_LONG_QUEUE_HELD_MS;
    wholeNumber('IdleGate', 'maxQueued', this.maxQueued);
    for (const name of ['pollMs', 'minIdleMs', 'minForegroundMs', 'maxWaitMs', 'maxHeldMs', 'longQueueHeldMs'] as const)
      positiveNumber('IdleGate', name, this[name]);
    this.loopTime = options.loopTime ?? (() => performance.eventLoopUtilization());
    this.now = options.now ?? (() => performance.now());
    this.activeAtEnd = this.loopTime().active;
  }

  /**
   * Holds the gate shut until the function returned is called (the first call counts; holds may
   * overlap): a task that is waiting does not start meanwhile, one already running goes on.
   */
  hold(): () => void {
    if (this.held++ === 0) this.heldSince = this.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // A long queue's task waited for this release: it starts now, not at the next poll (an ask's
      // release is followed by the model's writing, which may leave the loop no timer turn before
      // the next ask holds it again).
      if (--this.held === 0 && this.queued > this.maxQueued) this.lookNow?.();
    };
  }

  /** Runs `task` once the gate opens, after every task given before it (one at a time). */
  run<T>(task: () => Promise<T>): Promise<T> {
    this.queued++;
    const next = this.tail.then(() => this.runNow(task)).finally(() => this.queued--);
    this.tail = next.catch(() => {});
    return next;
  }

  private async runNow<T>(task: () => Promise<T>): Promise<T> {
    await this.wait();
    try {
      return await task();
    } finally {
      this.activeAtEnd = this.loopTime().active;
    }
  }

  /** Whether the queue is past maxQueued and no hold keeps it waiting (none, or unbroken for longQueueHeldMs). */
  private longQueueStarts(): boolean {
    return this.queued > this.maxQueued && (!this.held || this.now() - this.heldSince >= this.longQueueHeldMs);
  }

  /** Resolves when a background task may start (see the module's comment). */
  private wait(): Promise<void> {
    // Two turns: the loop polls between them, so I/O that was waiting has been handled (and
    // counted) before the look, with the frames of any broadcast from the turn before.
    return new Promise((resolve) =>
      realImmediate(() =>
        realImmediate(() => {
          // A long queue means the loop has been busy for a while: waiting more would only let it grow.
          if (this.longQueueStarts() || (!this.held && this.loopTime().active - this.activeAtEnd < this.minForegroundMs)) return resolve();
          const since = this.now();
          let idleBefore = this.loopTime().idle;
          const look = () => {
            const { idle } = this.loopTime();
            const waited = this.now() - since;
            if (this.longQueueStarts() || (this.held ? waited >= this.maxHeldMs : idle - idleBefore >= this.minIdleMs || waited >= this.maxWaitMs))
              return resolve();
            idleBefore = idle;
            later();
          };
          const later = () => {
            const timer = realTimeout(() => {
              this.lookNow = undefined;
              look();
            }, this.pollMs);
            this.lookNow = () => {
              this.lookNow = undefined;
              realClearTimeout(timer);
              realImmediate(look);
            };
          };
          later();
        }),
      ),
    );
  }
}
