/**
 * How the store's own connection (the writer, on the event loop) syncs and checkpoints while the
 * checkpoint worker runs (sqlite-checkpointer.ts).
 *
 * With `synchronous = NORMAL` a WAL commit is never fsynced; the one fsync left on the writer is
 * the WAL header's, in the first commit after a checkpoint has copied every frame (the WAL starts
 * over). SQLite syncs that header so that a reordered write after the restart cannot let frames of
 * the new WAL reach the database while the disk still holds the old header (sqlite.org/src/info/
 * ff5be73dee). Frames reach the database only through a checkpoint, and every checkpoint the
 * worker makes (its own connection, `NORMAL`) fsyncs the WAL, header included, before it copies a
 * frame. So while the worker is the only one checkpointing, the writer can run with `synchronous
 * = OFF`: its commits are as durable as before (a killed process loses nothing; a power loss the
 * commits since the last checkpoint, as with NORMAL), and the header's fsync (0.2–50 ms on this
 * VM's disk) leaves the event loop. For that the writer must never checkpoint itself while OFF:
 * its automatic checkpoint is off too, and a timer watches the WAL's length. When the worker falls
 * behind (the WAL past `behindFrames`), or the length cannot be read, the writer goes back to
 * NORMAL with its own automatic checkpoint as the safety net; when the worker stops, to SQLite's
 * defaults. `synchronous = FULL` (every commit fsynced) is kept as it is.
 */
import type Database from 'better-sqlite3';
import { wholeNumber } from '../options.js';
import { SAFETY_NET_PAGES, SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES } from './sqlite-checkpointer.js';
import { WalIndexReader } from './wal-index.js';

/** WAL frames past which the worker counts as behind: twice the frames it checkpoints at. */
export const DEFAULT_BEHIND_FRAMES = SAFETY_NET_PAGES / 2;
/** How often the writer reads the WAL's length while it runs unsynced. */
export const DEFAULT_GUARD_MS = 1_000;

/** The writer's settings: `synchronous` and `wal_autocheckpoint` (pages; 0 = never). */
export interface WriterSettings {
  synchronous: 'OFF' | 'NORMAL' | 'FULL';
  autocheckpoint: number;
}

export interface WriterSyncOptions {
  /** The writer's durability as configured (SQLITE_SYNCHRONOUS). */
  synchronous: 'normal' | 'full';
  /** The database file (its `-shm` holds the WAL's length). */
  filename: string;
  behindFrames?: number;
  guardMs?: number;
}

/**
 * The writer's settings for a state: whether the checkpoint worker runs and how many frames the
 * WAL holds (null: unknown, -1: a commit is writing the header).
 */
export function writerSettings(synchronous: 'normal' | 'full', workerRunning: boolean, walFrames: number | null, behindFrames: number): WriterSettings {
  if (!workerRunning) return { synchronous: synchronous === 'full' ? 'FULL' : 'NORMAL', autocheckpoint: SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES };
  if (synchronous === 'full') return { synchronous: 'FULL', autocheckpoint: SAFETY_NET_PAGES };
  if (walFrames === null || walFrames >= behindFrames) return { synchronous: 'NORMAL', autocheckpoint: SAFETY_NET_PAGES };
  return { synchronous: 'OFF', autocheckpoint: 0 };
}

/** Applies writerSettings to the writer as the worker starts and stops and the WAL grows. */
export class WriterSync {
  private workerRunning = false;
  private applied: WriterSettings | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private lastFrames: number | null = null;
  private readonly wal: WalIndexReader;
  private readonly behindFrames: number;
  private readonly guardMs: number;

  constructor(
    private readonly db: Database.Database,
    private readonly options: WriterSyncOptions,
  ) {
    this.behindFrames = options.behindFrames ?? DEFAULT_BEHIND_FRAMES;
    this.guardMs = options.guardMs ?? DEFAULT_GUARD_MS;
    wholeNumber('WriterSync', 'behindFrames', this.behindFrames, 1);
    wholeNumber('WriterSync', 'guardMs', this.guardMs, 1);
    this.wal = new WalIndexReader(options.filename);
    this.apply();
  }

  /** The checkpoint worker started (true) or stopped or failed (false). */
  setWorkerRunning(running: boolean): void {
    this.workerRunning = running;
    if (running && !this.timer) {
      this.timer = setInterval(() => this.apply(), this.guardMs);
      this.timer.unref();
    } else if (!running && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    this.apply();
  }

  /** The settings in force now (tests, troubleshooting). */
  get current(): WriterSettings {
    return this.applied!;
  }

  /** Back to SQLite's defaults for the configured durability; the timer stops. */
  close(): void {
    this.setWorkerRunning(false);
    this.wal.close();
  }

  private apply(): void {
    // -1: a commit is writing the header right now; the length it had is still the best guess.
    const read = this.workerRunning ? this.wal.frames() : null;
    const frames = read === -1 ? this.lastFrames : read;
    this.lastFrames = frames;
    const next = writerSettings(this.options.synchronous, this.workerRunning, frames, this.behindFrames);
    if (!this.db.open) return;
    // Checkpoint first when turning syncs off, syncs first when turning them on: the writer never
    // checkpoints unsynced, even for one commit.
    if (next.synchronous !== this.applied?.synchronous && next.synchronous !== 'OFF') this.db.pragma(`synchronous = ${next.synchronous}`);
    if (next.autocheckpoint !== this.applied?.autocheckpoint) this.db.pragma(`wal_autocheckpoint = ${next.autocheckpoint}`);
    if (next.synchronous !== this.applied?.synchronous && next.synchronous === 'OFF') this.db.pragma('synchronous = OFF');
    this.applied = next;
  }
}
