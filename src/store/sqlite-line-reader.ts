/**
 * The memory line search off the event loop. An ask's line search (sqlite-lines.ts) is 0.5–1 ms of
 * FTS5 work on a thread with a long memory; the event loop meanwhile embeds the question and walks
 * the document graph. Here a worker thread with its own read-only connection to the store's file
 * answers line searches in order, while the ask goes on. In WAL mode a reader sees every commit made
 * before its statement starts, so a search sees every line stored before it was asked for, as it
 * would on the store's own connection.
 *
 * Until the worker has opened the file, or after it failed, the store searches on its own connection.
 */
import { Worker } from 'node:worker_threads';
import { builtWorkerFile } from '../worker-files.js';
import type { LineHit } from './memory-lines.js';

/** What the worker is started with. */
export interface LineReaderData {
  filename: string;
  busyTimeoutMs: number;
}

/** A line search for the worker. */
export interface LineReaderRequest {
  id: number;
  query: string;
  scopes: string[];
  limit: number;
}

/** The worker's messages: ready once its connection is open, then one answer per request, in order. */
export type LineReaderReply = { ready: true } | { id: number; hits: LineHit[] } | { id: number; error: string };

export class SqliteLineReader {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(hits: LineHit[]): void; reject(err: Error): void }>();
  private next = 0;
  private state: 'starting' | 'ready' | 'failed' | 'closed' = 'starting';
  private settle!: (ready: boolean) => void;
  /** Resolves once searches go to the worker (true), or never will (false: it failed or closed first). */
  readonly started = new Promise<boolean>((resolve) => (this.settle = resolve));

  constructor(data: LineReaderData) {
    this.worker = new Worker(builtWorkerFile('memory-lines.js'), { workerData: data });
    this.worker.unref();
    this.worker.on('message', (reply: LineReaderReply) => this.received(reply));
    this.worker.on('error', (err) => this.failed(err));
    this.worker.on('exit', (code) => this.failed(new Error(`the line reader stopped (exit code ${code})`)));
  }

  /** Whether searches go to the worker now. */
  get ready(): boolean {
    return this.state === 'ready';
  }

  /** Store.searchMemoryLines on the worker's connection. */
  search(query: string, scopes: string[], limit: number): Promise<LineHit[]> {
    if (this.state !== 'ready') return Promise.reject(new Error('the line reader is not running'));
    const id = this.next++;
    // Referenced only while it owes an answer: an idle reader never keeps the process alive.
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, query, scopes, limit } satisfies LineReaderRequest);
    });
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.settle(false);
    this.rejectPending(new Error('the line reader closed'));
    await this.worker.terminate();
  }

  private received(reply: LineReaderReply): void {
    if ('ready' in reply) {
      if (this.state === 'starting') this.state = 'ready';
      this.settle(this.state === 'ready');
      return;
    }
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if ('error' in reply) waiting.reject(new Error(reply.error));
    else waiting.resolve(reply.hits);
  }

  private failed(err: Error): void {
    if (this.state === 'closed') return;
    this.state = 'failed';
    this.settle(false);
    this.rejectPending(err);
  }

  private rejectPending(err: Error): void {
    for (const { reject } of this.pending.values()) reject(err);
    this.pending.clear();
    this.worker.unref();
  }
}
