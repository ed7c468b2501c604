/**
 * A stand-in for what deleteStaged (src/store/sqlite-staging.ts) needs of the SQLite store: the
 * tables its slices delete from, one thread staged for deletion, and a host that does nothing the
 * test does not give it. Tests wrap the database's transactions to see or cost each slice.
 */
import Database from 'better-sqlite3';
import type { StagingHost } from '../../src/store/sqlite-staging.js';

/** The thread the fake database has staged for deletion. */
export const STAGED_THREAD = 'thr_gone';

/** An in-memory database with the tables deleteStaged reads and STAGED_THREAD staged for deletion. */
export function stagingDb(): Database.Database {
  const db = new Database(':memory:');
  db.exec(`
    CREATE TABLE threads (id TEXT PRIMARY KEY);
    CREATE TABLE messages (id INTEGER PRIMARY KEY, thread_id TEXT);
    CREATE TABLE memory_chunks (id INTEGER PRIMARY KEY, thread_id TEXT);
    CREATE TABLE memory_staging (thread_id TEXT PRIMARY KEY, started_at TEXT);`);
  db.prepare("INSERT INTO memory_staging VALUES (?, '1970-01-01T00:00:00.000Z')").run(STAGED_THREAD);
  return db;
}

/** Adds `count` messages to STAGED_THREAD. */
export function addStagedMessages(db: Database.Database, count: number): void {
  db.prepare('INSERT INTO messages (thread_id) SELECT ? FROM json_each(?)').run(STAGED_THREAD, JSON.stringify(Array(count).fill(0)));
}

/** `db` as deleteStaged sees it, every transaction (immediate ones too) run inside `around`. */
export function aroundTransactions(db: Database.Database, around: <T>(run: () => T) => T): Database.Database {
  return {
    transaction(fn: (...args: never[]) => unknown) {
      const tx = db.transaction(fn);
      const wrapped =
        (run: (...args: never[]) => unknown) =>
        (...args: never[]) =>
          around(() => run(...args));
      return Object.assign(wrapped(tx), { immediate: wrapped(tx.immediate) });
    },
  } as unknown as Database.Database;
}

/** A host over `db` that stores and merges nothing; `over` gives the parts a test watches. */
export function stagingHost(db: Database.Database, over: Partial<StagingHost> = {}): StagingHost {
  return {
    db,
    sql: (text) => db.prepare(text),
    insertMemory: () => [],
    deleteMemory: () => {},
    deletingMemory: () => ({ row: () => {}, done: () => {} }),
    apply: () => ({ addedMemoryIds: [], movedMemoryIds: [], appended: [] }),
    merges: { slice: () => false, drive: (work) => work() },
    pace: () => null,
    ...over,
  };
}
