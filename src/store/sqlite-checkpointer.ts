/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the commit that
 * crosses 1000 WAL pages: it copies pages into the database and fsyncs twice, stalling the
 * committing thread 5–60 ms on a busy disk (measured on the project VM, docs/benchmarks.md). Chat
 * messages commit on the event loop, so such a stall delays every room. Here a worker thread with
 * its own connection checkpoints instead (PASSIVE: it never blocks the writer), and the writer's
 * own automatic checkpoint is raised to a safety net that only fires if the worker falls far
 * behind. Should the worker fail, the writer goes back to SQLite's default.
 *
 * Why it waits for a long WAL: once a checkpoint has copied every frame, the next commit starts
 * the WAL over, and that commit fsyncs the new WAL header, on the writer's thread (SQLite does this
 * so a reordered write after the restart cannot corrupt the database). Checkpointing every second
 * put that fsync (0.2–50 ms here) in front of nearly every message of a quiet room. So the worker
 * reads the WAL's length from the wal-index header in `-shm` (format: sqlite.org/walformat.html)
 * and checkpoints only past `walFrames` frames: one WAL restart per `walFrames` pages instead of a
 * checkpoint per 1000 (and with synchronous normal the writer skips the header's fsync altogether
 * while this worker runs: sqlite-writer-sync.ts). A PASSIVE checkpoint copies the frames that existed when
 * it began, and the WAL only starts over after one that left nothing behind, so each round
 * checkpoints again while frames keep arriving, up to `catchUpTries` times. Where the header cannot
 * be read, the worker checkpoints every `intervalMs` instead. Work that writes for seconds without
 * a pause (a large deletion) asks for a catch-up itself and waits for it (`catchUp`,
 * sqlite-wal-pace.ts): otherwise no checkpoint would ever leave nothing behind.
 */
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { Worker } from 'node:worker_threads';
import { wholeNumber } from '../options.js';
import { WAL_INDEX_HEADER_BYTES, walFramesOf } from './wal-index.js';

/** How often the worker reads the WAL's length. */
export const DEFAULT_POLL_MS = 200;
/** WAL frames (pages) past which the worker checkpoints: 32 MiB at 4 KiB pages. */
export const DEFAULT_WAL_FRAMES = 8_192;
/** Without a readable wal-index header: how often the worker checkpoints. */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 5_000;
/** Checkpoints per round while new frames keep arriving. */
export const DEFAULT_CATCH_UP_TRIES = 6;
/** WAL pages at which the writer checkpoints itself while the worker runs (SQLite's default is 1000). */
export const SAFETY_NET_PAGES = 4 * DEFAULT_WAL_FRAMES;
/** SQLite's default `wal_autocheckpoint`, restored when the worker stops or fails. */
export const SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES = 1_000;
const STOP_TIMEOUT_MS = 2_000;

// CommonJS: eval workers cannot import. The driver's path comes from the main thread, so the
// worker loads the same better-sqlite3 wherever the process was started.
const WORKER_SOURCE = `
const fs = require('node:fs');
const os = require('node:os');
const { parentPort, workerData } = require('node:worker_threads');
// Copying pages may wait; the event loop sharing a core with this thread should not. SCHED_IDLE
// (the native binding's backgroundThread) yields to a waking event loop at once; nice 19, where the
// binding is missing, only at the end of a slice (docs/architecture.md). On Linux both apply to the
// calling thread alone (elsewhere a priority applies to the whole process).
let scheduling = 'normal';
if (process.platform === 'linux') {
  try {
    if (workerData.binding && require(workerData.binding).backgroundThread()) scheduling = 'idle';
  } catch {}
  if (scheduling === 'normal') {
    try {
      os.setPriority(19);
      scheduling = 'nice';
    } catch {}
  }
}
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
db.pragma('synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const truncate = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)');

const walFramesOf = ${walFramesOf.toString()};
const header = Buffer.alloc(${WAL_INDEX_HEADER_BYTES});
let shm = null;
/** Frames in the WAL; -1 while a commit is writing the header; null when it cannot be read. */
function walFrames() {
  try {
    if (shm === null) shm = fs.openSync(workerData.filename + '-shm', 'r');
    if (fs.readSync(shm, header, 0, header.length, 0) < header.length) return null;
  } catch {
    return null;
  }
  return walFramesOf(header, workerData.littleEndian);
}

let lastLog = -1;
/**
 * Checkpoints up to catchUpTries times, until done(r, changed) says to stop (changed: this
 * checkpoint found the WAL at another length than the one seen last), telling the main thread of
 * each such change; returns the last checkpoint's result.
 */
function checkpointUntil(done) {
  let r = { busy: 1, log: -1, checkpointed: -1 };
  for (let i = 0; i < workerData.catchUpTries; i++) {
    r = checkpoint.get();
    const changed = r.log !== lastLog;
    if (changed) {
      lastLog = r.log;
      parentPort.postMessage({ type: 'checkpointed', log: r.log, checkpointed: r.checkpointed });
    }
    if (done(r, changed)) break;
  }
  return r;
}
/**
 * When asked for (a deletion paced by the WAL, sqlite-wal-pace.ts): until a checkpoint leaves
 * nothing behind (the next commit then starts the WAL over).
 */
const leftNothing = (r) => r.busy === 0 && r.checkpointed === r.log;
/** The poll's rounds: until no frames arrived since the checkpoint before. */
const walUnchanged = (r, changed) => !changed;
let sinceCheckpoint = 0;
function poll() {
  sinceCheckpoint += workerData.pollMs;
  const frames = walFrames();
  if (frames === null ? sinceCheckpoint >= workerData.intervalMs : frames >= workerData.walFrames) {
    sinceCheckpoint = 0;
    checkpointUntil(walUnchanged);
  }
}
function stop() {
  clearInterval(timer);
  if (shm !== null) fs.closeSync(shm);
  db.close();
  parentPort.close();
}
const timer = setInterval(() => {
  try {
    poll();
  } catch (err) {
    parentPort.postMessage({ type: 'failed', message: String((err && err.message) || err) });
    stop();
  }
}, workerData.pollMs);
parentPort.on('message', (m) => {
  if (m === 'stop') stop();
  else if (m && m.type === 'catchUp') {
    try {
      const r = checkpointUntil(leftNothing);
      parentPort.postMessage({ type: 'caughtUp', id: m.id, log: r.log, checkpointed: r.checkpointed });
    } catch (err) {
      parentPort.postMessage({ type: 'caughtUp', id: m.id, log: -1, checkpointed: -1, message: String((err && err.message) || err) });
    }
  } else if (m && m.type === 'truncate') {
    try {
      const r = truncate.get();
      lastLog = r.log;
      parentPort.postMessage({ type: 'truncated', id: m.id, emptied: r.busy === 0 });
    } catch (err) {
      parentPort.postMessage({ type: 'truncated', id: m.id, emptied: false, message: String((err && err.message) || err) });
    }
  }
});
parentPort.postMessage({ type: 'ready', scheduling });
`;

/** What the worker answers a request with: `truncated` (emptied) or `caughtUp` (log, checkpointed). */
interface WorkerReply {
  emptied?: boolean;
  log?: number;
  checkpointed?: number;
}

/** How the checkpoint thread yields to the event loop (see the worker's source). */
export type CheckpointerScheduling = 'idle' | 'nice' | 'normal';

/** The native binding's path, for the worker's scheduling; null where it is not installed. */
function bindingPath(require: NodeRequire): string | null {
  try {
    return require.resolve('salon-hnsw');
  } catch {
    return null;
  }
}

export interface CheckpointerOptions {
  /** The database file (not ':memory:'). */
  filename: string;
  busyTimeoutMs: number;
  pollMs?: number;
  walFrames?: number;
  intervalMs?: number;
  catchUpTries?: number;
  /** Called once the worker runs (raise the writer's auto-checkpoint) and once it is gone (restore it). */
  onRunning(running: boolean): void;
  /** Told about every checkpoint the worker made (tests, troubleshooting). */
  onCheckpoint?(frames: { log: number; checkpointed: number }): void;
}

/**
 * A worker thread checkpointing one SQLite file until `stop()`. It keeps the process alive only while a
 * request waits for its reply (a deletion paced by `catchUp` finishes before the process may end).
 */
export class SqliteCheckpointer {
  /** How the worker's thread is scheduled, once it runs: `idle` (SCHED_IDLE), `nice` (19) or `normal`. */
  scheduling: CheckpointerScheduling | null = null;
  private readonly worker: Worker;
  private running = false;
  /** Requests to the worker (truncateWal, catchUp) by id: each settles with its reply, or null once the worker is gone. */
  private readonly requests = new Map<number, (reply: WorkerReply | null) => void>();
  private nextRequest = 0;
  private readonly exited: Promise<void>;

  constructor(private readonly options: CheckpointerOptions) {
    if (!options.filename || options.filename === ':memory:') throw new TypeError('SqliteCheckpointer filename: expected a database file');
    const tunables = {
      pollMs: options.pollMs ?? DEFAULT_POLL_MS,
      walFrames: options.walFrames ?? DEFAULT_WAL_FRAMES,
      intervalMs: options.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
      catchUpTries: options.catchUpTries ?? DEFAULT_CATCH_UP_TRIES,
    };
    for (const [name, value] of Object.entries(tunables)) wholeNumber('SqliteCheckpointer', name, value, 1);
    const require = createRequire(import.meta.url);
    const driver = require.resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      name: 'salon-sqlite-checkpoint',
      workerData: {
        driver,
        binding: bindingPath(require),
        filename: options.filename,
        busyTimeoutMs: options.busyTimeoutMs,
        littleEndian: endianness() === 'LE',
        ...tunables,
      },
    });
    this.worker.on('message', (m: WorkerReply & { type: string; id?: number; scheduling?: CheckpointerScheduling }) => {
      if (m.type === 'truncated' || m.type === 'caughtUp') this.settle(m.id!, m);
      else if (m.type === 'ready') {
        this.scheduling = m.scheduling ?? 'normal';
        this.setRunning(true);
      } else if (m.type === 'checkpointed') options.onCheckpoint?.({ log: m.log!, checkpointed: m.checkpointed! });
      else if (m.type === 'failed') this.setRunning(false);
    });
    // A failed worker only costs the latency it saved: the writer checkpoints itself again.
    this.worker.on('error', () => this.setRunning(false));
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    // After the listeners: adding a 'message' listener refs the worker's port again.
    this.worker.unref();
    void this.exited.then(() => {
      this.setRunning(false);
      for (const id of [...this.requests.keys()]) this.settle(id, null);
    });
  }

  /**
   * Checkpoints every frame and truncates the WAL to nothing, on the worker's connection (the
   * writer may not checkpoint while the worker runs: sqlite-writer-sync.ts). The WAL keeps every
   * page version a commit wrote, deleted rows' text among them, until it is overwritten or
   * truncated. Resolves to whether the WAL was emptied (false: a reader or writer kept it busy past
   * the busy timeout), or null when the worker is gone.
   */
  async truncateWal(): Promise<boolean | null> {
    const reply = await this.request('truncate');
    return reply ? reply.emptied! : null;
  }

  /**
   * Checkpoints now, on the worker's connection (PASSIVE: writers go on meanwhile), again while
   * frames keep arriving, up to `catchUpTries` times: the last checkpoint's WAL length (`log`) and
   * frames copied (`checkpointed`; equal: the next commit starts the WAL over; -1 both: it could
   * not checkpoint), or null when the worker is gone. A deletion paced by the WAL waits for this
   * (sqlite-wal-pace.ts) instead of letting the writer checkpoint itself.
   */
  async catchUp(): Promise<{ log: number; checkpointed: number } | null> {
    const reply = await this.request('catchUp');
    return reply ? { log: reply.log!, checkpointed: reply.checkpointed! } : null;
  }

  private request(type: 'truncate' | 'catchUp'): Promise<WorkerReply | null> {
    if (!this.running) return Promise.resolve(null);
    const id = this.nextRequest++;
    return new Promise((resolve) => {
      this.requests.set(id, resolve);
      this.worker.ref();
      this.worker.postMessage({ type, id });
    });
  }

  private settle(id: number, reply: WorkerReply | null): void {
    const settle = this.requests.get(id);
    this.requests.delete(id);
    if (this.requests.size === 0) this.worker.unref();
    settle?.(reply);
  }

  /** Stops the worker and waits for its connection to close. */
  async stop(): Promise<void> {
    this.worker.postMessage('stop');
    const timer = setTimeout(() => void this.worker.terminate(), STOP_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
  }

  private setRunning(running: boolean): void {
    if (this.running === running) return;
    this.running = running;
    this.options.onRunning(running);
  }
}
