/**
 * One scan pool for every vector index of a process (documents and conversation memory): the
 * indexes that share it are its users, it starts when the first of them needs threads (an app
 * without vectors starts none) and closes when the last of them closes, whichever order they close
 * in. Two pools had meant twice SEARCH_WORKERS threads on a machine with SEARCH_WORKERS cores, and,
 * on a server with content, the memory's own pool started at the first window of chat, in front of
 * that room's messages (docs/benchmarks.md, "Twentieth session").
 */
import { ScanPool, type ScanPoolOptions } from './scan-pool.js';

/** One index's hold on a SharedScanPool. */
export interface ScanPoolUser {
  /** The pool, started now if no user has needed it yet. */
  pool(): ScanPool;
  /** The pool if some user has started it, else null (nothing is started). */
  readonly started: ScanPool | null;
  /** This user is done; the last one to release closes the pool. Releasing again does nothing. */
  release(): Promise<void>;
}

export class SharedScanPool {
  private current: ScanPool | null = null;
  private users = 0;
  private closed = false;

  constructor(private readonly options: ScanPoolOptions) {}

  /** Registers a user (an index, when it is created: it holds the pool open until it releases). */
  user(): ScanPoolUser {
    if (this.closed) throw new Error('SharedScanPool: closed (its last user released it)');
    this.users++;
    let released = false;
    const shared = this;
    return {
      pool: () => {
        if (released) throw new Error('SharedScanPool: this user released the pool');
        return (shared.current ??= new ScanPool(shared.options));
      },
      get started() {
        return shared.current;
      },
      release: async () => {
        if (released) return;
        released = true;
        if (--shared.users > 0) return;
        shared.closed = true;
        const pool = shared.current;
        shared.current = null;
        await pool?.close();
      },
    };
  }
}
