/**
 * Read-only statements on a thread of their own. The memory's line search is the largest single
 * read of an ask (a full-text match scored over up to COMMON_TERM_LINES lines a term: ~0.6 ms of
 * an ask's overhead at 10,000 chunks, docs/benchmarks.md, twenty-sixth session), and on the main
 * connection it held the event loop while the ask's document search waited behind it. Here a
 * worker with its own read-only connection runs it while the main thread goes on with the rest of
 * the ask; WAL lets it read beside the writer, and each statement reads what was committed when it
 * began, as on the main connection (every write there commits before an ask's reads are sent).
 *
 * Whatever stops the thread (it cannot open the file, it crashed) only costs the time it saved:
 * `all` answers null and the caller reads on its own connection, from then on.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Row } from './rows.js';

const STOP_TIMEOUT_MS = 2_000;
/** Statements the worker keeps prepared (the texts it is sent vary only with the number of scopes). */
const STATEMENT_CACHE_SIZE = 64;

// CommonJS: eval workers cannot import. The driver's path comes from the main thread, so the
// worker loads the same better-sqlite3 wherever the process was started.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
const statements = new Map();
function statement(sql) {
  let stmt = statements.get(sql);
  if (!stmt) {
    if (statements.size >= ${STATEMENT_CACHE_SIZE}) statements.clear();
    stmt = db.prepare(sql);
    statements.set(sql, stmt);
  }
  return stmt;
}
parentPort.on('message', (m) => {
  if (m === 'stop') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ id: m.id, rows: statement(m.sql).all(...m.params) });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) });
  }
});
`;

export interface SqliteReaderOptions {
  /** The database file (not ':memory:'), opened read-only. */
  filename: string;
  busyTimeoutMs: number;
}

/** A worker thread running read-only statements on one SQLite file; started at the first read, never keeping the process alive while idle. */
export class SqliteReader {
  private worker: Worker | null = null;
  private stopped = false;
  private next = 0;
  private readonly waiting = new Map<number, (rows: Row[] | null) => void>();
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly options: SqliteReaderOptions) {
    if (!options.filename || options.filename === ':memory:') throw new TypeError('SqliteReader filename: expected a database file');
  }

  /** The rows of a read-only statement, read on the worker; null when it cannot read them (then read them yourself). */
  all(sql: string, params: unknown[]): Promise<Row[] | null> {
    if (this.stopped) return Promise.resolve(null);
    const worker = this.worker ?? this.start();
    const id = ++this.next;
    if (!this.waiting.size) worker.ref();
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      worker.postMessage({ id, sql, params });
    });
  }

  /** Stops the worker (reads after it answer null) and waits for its connection to close. */
  async stop(): Promise<void> {
    this.stopped = true;
    const worker = this.worker;
    if (!worker) return;
    worker.postMessage('stop');
    const timer = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
  }

  private start(): Worker {
    const require = createRequire(import.meta.url);
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      name: 'salon-sqlite-reader',
      workerData: { driver: require.resolve('better-sqlite3'), filename: this.options.filename, busyTimeoutMs: this.options.busyTimeoutMs },
    });
    worker.unref();
    worker.on('message', (m: { id: number; rows?: Row[]; error?: string }) => {
      const resolve = this.waiting.get(m.id);
      if (!resolve) return;
      this.waiting.delete(m.id);
      if (!this.waiting.size) worker.unref();
      // A statement that failed here is read again on the main connection, which reports its error.
      resolve(m.error === undefined ? m.rows! : null);
    });
    // The worker failing to open the file or crashing: every read from now on is the caller's.
    worker.on('error', () => this.giveUp());
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    void this.exited.then(() => this.giveUp());
    this.worker = worker;
    return worker;
  }

  private giveUp(): void {
    this.stopped = true;
    for (const resolve of this.waiting.values()) resolve(null);
    this.waiting.clear();
  }
}
