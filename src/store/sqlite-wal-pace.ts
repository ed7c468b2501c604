/**
 * Work that writes in slices for seconds (deleting a fused source thread: ~240,000 WAL frames in
 * ~7 s) paced by the WAL's length, so that the writer never checkpoints on the event loop.
 *
 * The checkpoint worker (sqlite-checkpointer.ts) copies frames while the writes go on, but the WAL
 * only starts over at a commit after a checkpoint that left nothing behind, and no checkpoint does
 * while commits follow each other a turn apart. So the WAL grew to ~80,000 frames, the writer went
 * back to `synchronous = NORMAL` with its own checkpoint at SAFETY_NET_PAGES
 * (sqlite-writer-sync.ts), and commits of 33–46 ms that were those checkpoints and their fsyncs
 * held the event loop (docs/benchmarks.md, "Thirty-sixth session: deleting a fused source").
 *
 * Here, after each of its slices, such work asks `pace()`: past `nudgeFrames` (the frames the worker
 * checkpoints at by itself) the worker is asked to checkpoint at once, without waiting, so that it
 * copies beside the writes; past `paceFrames` (below the writer's DEFAULT_BEHIND_FRAMES) the work
 * awaits that checkpoint, and asks again, until one has left nothing behind: its next commit (or a
 * chat message's) starts the WAL over. The work waits on a reply from the worker, not on a timer;
 * other writers are not held meanwhile (the checkpoint is PASSIVE, and the work holds no lock
 * between slices). Should the worker not catch up in `tries` asks (a reader's snapshot keeps frames
 * in the WAL), the work goes on and waits again only `paceFrames - nudgeFrames` frames later; the
 * writer's own checkpoint remains the safety net.
 */
import { wholeNumber } from '../options.js';
import { DEFAULT_WAL_FRAMES } from './sqlite-checkpointer.js';
import { DEFAULT_BEHIND_FRAMES } from './sqlite-writer-sync.js';

/** Frames past which the worker is asked to checkpoint now: those it checkpoints at by itself. */
export const DEFAULT_NUDGE_FRAMES = DEFAULT_WAL_FRAMES;
/** Frames past which paced work waits for the worker: midway to where the writer would sync again. */
export const DEFAULT_PACE_FRAMES = (DEFAULT_WAL_FRAMES + DEFAULT_BEHIND_FRAMES) / 2;
/** Asks for a checkpoint per wait before the work goes on regardless. */
export const DEFAULT_PACE_TRIES = 4;

/** The WAL's length (WalIndexReader): null unknown, -1 while a commit writes the header. */
export interface WalLength {
  frames(): number | null;
}

/** The checkpoint worker's catch-up (SqliteCheckpointer.catchUp). */
export interface WalCatchUp {
  catchUp(): Promise<{ log: number; checkpointed: number } | null>;
}

export interface WalPaceOptions {
  nudgeFrames?: number;
  paceFrames?: number;
  tries?: number;
}

export class WalPacer {
  /** What pacing did (tests, troubleshooting): checkpoints asked for, waits, waits that saw the worker catch up, waits given up. */
  readonly counts = { asked: 0, waits: 0, caughtUp: 0, gaveUp: 0 };
  private readonly nudgeFrames: number;
  private readonly paceFrames: number;
  private readonly tries: number;
  /** Frames at which the next wait begins (raised after a wait given up). */
  private limit: number;
  private asking: Promise<{ log: number; checkpointed: number } | null> | null = null;
  private waiting: Promise<void> | null = null;

  constructor(
    private readonly wal: WalLength,
    private readonly worker: WalCatchUp,
    options: WalPaceOptions = {},
  ) {
    this.nudgeFrames = options.nudgeFrames ?? DEFAULT_NUDGE_FRAMES;
    this.paceFrames = options.paceFrames ?? DEFAULT_PACE_FRAMES;
    this.tries = options.tries ?? DEFAULT_PACE_TRIES;
    wholeNumber('WalPacer', 'nudgeFrames', this.nudgeFrames, 1);
    wholeNumber('WalPacer', 'paceFrames', this.paceFrames, this.nudgeFrames + 1);
    wholeNumber('WalPacer', 'tries', this.tries, 1);
    this.limit = this.paceFrames;
  }

  /**
   * Call between slices: null to go on at once, or a promise to await first (the WAL is long and
   * the worker catching up). Never rejects.
   */
  pace(): Promise<void> | null {
    if (this.waiting) return this.waiting;
    const frames = this.wal.frames();
    // Unknown (or a commit writing the header): the next slice looks again.
    if (frames === null || frames < 0) return null;
    if (frames < this.nudgeFrames) {
      // The WAL started over (or never grew): the next wait at the usual length.
      this.limit = this.paceFrames;
      return null;
    }
    if (!this.asking) this.ask();
    if (frames < this.limit) return null;
    const waiting = this.wait().finally(() => (this.waiting = null));
    this.waiting = waiting;
    return waiting;
  }

  private ask(): Promise<{ log: number; checkpointed: number } | null> {
    this.counts.asked++;
    const asking = this.worker.catchUp().catch(() => null);
    this.asking = asking;
    void asking.then(() => {
      if (this.asking === asking) this.asking = null;
    });
    return asking;
  }

  private async wait(): Promise<void> {
    this.counts.waits++;
    let frames: number | null = null;
    for (let i = 0; i < this.tries; i++) {
      const done = await (this.asking ?? this.ask());
      // The worker is gone: the writer checkpoints itself again (sqlite-writer-sync.ts).
      if (done === null) return;
      frames = this.wal.frames();
      // Started over since (a chat message's commit), or everything copied and nothing written since.
      if (frames !== null && frames >= 0 && (frames < done.log || (done.checkpointed === done.log && frames === done.log))) {
        this.counts.caughtUp++;
        return;
      }
    }
    this.counts.gaveUp++;
    this.limit = Math.max(frames ?? 0, this.limit) + this.paceFrames - this.nudgeFrames;
  }
}
