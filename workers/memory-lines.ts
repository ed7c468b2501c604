/**
 * The memory line reader's thread (src/store/sqlite-line-reader.ts is its only client): a read-only
 * connection to the store's file, answering line searches in the order they come.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { searchLinesIn } from '../src/store/sqlite-lines.js';
import type { LineReaderData, LineReaderReply, LineReaderRequest } from '../src/store/sqlite-line-reader.js';

/** Page cache of this connection, in KiB: the line index's pages stay here between asks. */
const PAGE_CACHE_KIB = 16 * 1024;
/** Prepared statements kept (IN lists of scopes make a statement per count of scopes). */
const STATEMENT_CACHE_SIZE = 64;

const { filename, busyTimeoutMs } = workerData as LineReaderData;
const db = new Database(filename, { readonly: true, fileMustExist: true });
db.pragma(`busy_timeout = ${busyTimeoutMs}`);
db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);

const statements = new Map<string, Database.Statement>();
function sql(text: string): Database.Statement {
  let stmt = statements.get(text);
  if (!stmt) {
    if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
    stmt = db.prepare(text);
    statements.set(text, stmt);
  }
  return stmt;
}

const port = parentPort!;
port.on('message', ({ id, query, scopes, limit }: LineReaderRequest) => {
  let reply: LineReaderReply;
  try {
    reply = { id, hits: searchLinesIn(sql, query, scopes, limit) };
  } catch (err) {
    reply = { id, error: (err as Error).message };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies LineReaderReply);
