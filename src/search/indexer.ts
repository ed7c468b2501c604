/**
 * Keeps the vector index in step with the store's chunks (the ChunkSink ingestion calls): embeds
 * added chunks, upserts them with their metadata, removes removed rows. At start it loads the
 * index from the store (rebuilding one an earlier built-in embedder made); `reindex` re-embeds
 * everything after a change of embedder. It records
 * which embedder built the index (store meta `index-embedder`, read by the AI area's model check).
 */
import { INDEX_EMBEDDER_META_KEY, checkIndexModel } from '../ai/model-check.js';
import type { Embedder } from '../ai/types.js';
import type { ChunkRow, ChunkSink } from '../content/types.js';
import type { Store } from '../store/types.js';
import { chunkGroup } from './chunk-refs.js';
import type { VectorEntry, VectorIndex, VectorMeta } from './types.js';
import type { Logger } from '../logger.js';
import { required, wholeNumber } from '../options.js';
import { RepeatedFailureLog } from '../repeated-failure-log.js';

/** Texts per embed call: large enough to amortise a remote round trip, small enough to retry cheaply. */
export const EMBED_BATCH = 64;
/** Chunks read from the store per page while loading. */
const SCAN_PAGE = 512;
/** How often chunks whose embedding failed (provider down) are tried again. */
export const DEFAULT_RETRY_MS = 30_000;
/**
 * Most row ids of chunks waiting for the embedder kept in memory (~1 MB). Past it the store is
 * searched again, once the embedder is back, for the chunks the index lacks: an outage lasting
 * through a large ingest (or a start) must not hold every chunk it touched.
 */
export const DEFAULT_MAX_WAITING = 50_000;
/** Waiting chunks read from the store and embedded per retry step (one serial step each, so ingestion interleaves). */
export const RETRY_BATCH = EMBED_BATCH * 4;

/** A chunk as the indexer takes it: conversation memory may add its scope and privilege. */
export type IndexableChunk = ChunkRow & { scope?: string | null; privileged?: boolean };

/** `mismatch`: the stored index was built by another embedder; search falls back to text until `salon reindex`. */
export type IndexerState = 'idle' | 'loading' | 'ready' | 'mismatch';

/** An index that can defer its flat ↔ HNSW switch during bulk loads and be emptied (SearchIndex). */
export type IndexTarget = VectorIndex & { bulk?<T>(fn: () => Promise<T>): Promise<T>; reset?(): Promise<void> };

export interface IndexerOptions {
  store: Store;
  index: IndexTarget;
  embedder: Embedder;
  log?: Logger;
  retryMs?: number;
  /** Most waiting row ids kept in memory (default DEFAULT_MAX_WAITING). */
  maxWaiting?: number;
  /** Told the row ids of each change this node made (src/sync tells the other nodes), not of changes followed from them. */
  onChanged?: (rowIds: number[]) => void;
  /** Told of every embedder call that failed (metrics), however few of them the log shows. */
  onEmbedFailure?: () => void;
  /**
   * Aborted when the process shuts down: the load stops between pages and embedding between
   * batches (the embedder's call in progress is aborted too), rejecting with the signal's reason.
   * Safe at any of those points: the index lives in memory and is rebuilt from the store at the
   * next start, and a chunk is in the store before it is embedded.
   */
  signal?: AbortSignal;
}

/** Progress of load and reindex, e.g. a CLI ProgressBar. */
export interface IndexProgress {
  setTotal(total: number): void;
  tick(ok?: boolean): void;
}

export function metaOf(chunk: IndexableChunk): VectorMeta {
  return {
    kind: chunk.itemKind,
    sourceType: chunk.sourceType,
    scope: chunk.scope ?? null,
    privileged: chunk.privileged === true,
    group: chunkGroup(chunk),
    title: chunk.part === 'title',
  };
}

export class Indexer implements ChunkSink {
  state: IndexerState = 'idle';
  /**
   * Row ids of chunks whose embedding failed, retried later: ids only, the text is in the store.
   * At most maxWaiting of them; those past it are found again in the store (`rescanAfter`).
   */
  private readonly waiting = new Set<number>();
  /**
   * Set when a failed chunk found `waiting` full: rows after this id may lack a vector, and the
   * retry scans the store from here (a cursor, so the scan is paged) once `waiting` is empty.
   */
  private rescanAfter: number | null = null;
  private retrying = false;
  private queue: Promise<unknown> = Promise.resolve();
  private recorded = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly retryMs: number;
  private readonly maxWaiting: number;
  /** An embedder that is down fails every batch: the first is logged, then a summary a minute. */
  private readonly embedFailures: RepeatedFailureLog;
  /** A store that fails every retry (it is away or locked): the first is logged, then a summary a minute. */
  private readonly retryFailures: RepeatedFailureLog;

  constructor(private readonly options: IndexerOptions) {
    for (const name of ['store', 'index', 'embedder'] as const) required('Indexer', name, options[name]);
    this.retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
    this.maxWaiting = wholeNumber('Indexer', 'maxWaiting', options.maxWaiting ?? DEFAULT_MAX_WAITING, 1);
    this.embedFailures = new RepeatedFailureLog({ log: options.log, what: 'embedding chunks for the index' });
    this.retryFailures = new RepeatedFailureLog({ log: options.log, what: 'retrying the embedding of waiting chunks' });
  }

  /** Chunks known to wait for a retry of their embedding (more may, past maxWaiting: see `behind`). */
  get pending(): number {
    return this.waiting.size;
  }

  /** Whether chunks past maxWaiting failed and will be found again in the store by a retry. */
  get behind(): boolean {
    return this.rescanAfter !== null;
  }

  async chunksChanged(change: { added: IndexableChunk[]; removed: number[] }): Promise<void> {
    try {
      await this.serial(() => this.follow(change));
    } finally {
      // The store holds the change whether or not this index could follow it (a shutdown stopped
      // the embedding): the other nodes read the rows themselves, and would otherwise never hear of them.
      this.options.onChanged?.([...change.added.map((c) => c.rowId), ...change.removed]);
    }
  }

  /** Follows another node's change (src/sync): indexes the rows `rowIds` that are stored, drops the others. */
  applyStored(rowIds: number[]): Promise<void> {
    return this.serial(async () => {
      const added = await this.options.store.getChunks(rowIds);
      const found = new Set(added.map((c) => c.rowId));
      await this.follow({ added, removed: rowIds.filter((id) => !found.has(id)) });
    });
  }

  /** Indexes every stored chunk (at start); refuses, leaving state `mismatch`, when another embedder built the index. */
  load(progress?: IndexProgress): Promise<void> {
    return this.serial(async () => {
      if (!(await this.checkModel())) return;
      this.state = 'loading';
      await this.indexAll(progress);
      this.state = 'ready';
    });
  }

  /** Empties the index, re-embeds every chunk with the configured embedder and records it. */
  reindex(progress?: IndexProgress): Promise<void> {
    return this.serial(async () => {
      this.state = 'loading';
      this.waiting.clear();
      this.rescanAfter = null;
      await this.options.index.reset?.();
      this.recorded = false;
      await this.indexAll(progress);
      this.state = 'ready';
    });
  }

  private async follow(change: { added: IndexableChunk[]; removed: number[] }): Promise<void> {
    if (this.state === 'idle') await this.checkModel();
    if (this.state === 'mismatch') return; // `salon reindex` picks them up
    for (const id of change.removed) this.waiting.delete(id);
    await this.options.index.remove(change.removed);
    await this.embedAndUpsert(change.added);
  }

  /** Compares the configured embedder with the one that built the index; false (state `mismatch`) when they differ. */
  private async checkModel(): Promise<boolean> {
    const check = await checkIndexModel(this.options.store, this.options.embedder);
    if (check.ok && check.outdated) {
      // Every start embeds every chunk again (the index lives in memory): this one's vectors replace the earlier ones.
      this.options.log?.info({ was: check.stored?.model, now: check.current.model }, 'the index was built by an earlier built-in embedder; rebuilding it');
    }
    if (check.ok) return true;
    this.state = 'mismatch';
    this.options.log?.error({ code: 'ERR_INDEX_MODEL_MISMATCH' }, `${check.message} Until then search matches text only.`);
    return false;
  }

  /** Stops retrying; waits for work in progress. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.embedFailures.close();
    this.retryFailures.close();
    await this.queue.catch(() => undefined);
  }

  private async indexAll(progress?: IndexProgress): Promise<void> {
    const { store, index } = this.options;
    progress?.setTotal(await store.countChunks());
    const run = async () => {
      for (let after = 0; ;) {
        this.options.signal?.throwIfAborted();
        const rows = await store.scanChunks(after, SCAN_PAGE);
        if (rows.length === 0) break;
        after = rows[rows.length - 1].rowId;
        await this.embedAndUpsert(rows, progress);
      }
    };
    await (index.bulk ? index.bulk(run) : run());
    const waiting = this.waiting.size ? `, ${this.waiting.size}${this.behind ? ' or more' : ''} waiting for the embedder` : '';
    this.options.log?.info({ vectors: index.size, waiting: this.waiting.size }, `vector index loaded: ${index.size} chunks${waiting}`);
  }

  /**
   * Embeds in batches; a failing batch waits for a retry instead of failing ingestion. With
   * `stopOnFailure` (a retry) the batches after a failing one wait too, untried: the embedder is
   * still down. Resolves to whether every chunk was embedded.
   */
  private async embedAndUpsert(chunks: IndexableChunk[], progress?: IndexProgress, stopOnFailure = false): Promise<boolean> {
    const { signal } = this.options;
    let ok = true;
    for (let i = 0; i < chunks.length; i += EMBED_BATCH) {
      signal?.throwIfAborted();
      const batch = chunks.slice(i, i + EMBED_BATCH);
      let vectors: Float32Array[];
      try {
        vectors = await this.options.embedder.embed(
          batch.map((c) => c.text),
          signal,
          'document',
        );
        if (vectors.length !== batch.length) throw new Error(`the embedder returned ${vectors.length} vectors for ${batch.length} texts`);
        this.embedFailures.succeeded();
      } catch (err) {
        // Shutting down, not a failing embedder: no retry, and the load or the ingest stops here.
        signal?.throwIfAborted();
        const failed = stopOnFailure ? chunks.slice(i) : batch;
        this.wait(failed.map((c) => c.rowId));
        batch.forEach(() => progress?.tick(false));
        this.options.onEmbedFailure?.();
        this.embedFailures.failed(err, { chunks: failed.length }, `embedding ${failed.length} chunks failed; retrying in ${this.retryMs / 1000} s`);
        this.scheduleRetry();
        ok = false;
        if (stopOnFailure) break;
        continue;
      }
      const entries: VectorEntry[] = batch.map((c, j) => ({ rowId: c.rowId, vector: vectors[j], meta: metaOf(c) }));
      await this.options.index.upsert(entries);
      for (const c of batch) this.waiting.delete(c.rowId);
      batch.forEach(() => progress?.tick(true));
      await this.record(vectors[0].length);
      // A batch is CPU work on the event loop with the built-in embedder: let sockets and other
      // requests through between batches of a large item.
      if (i + EMBED_BATCH < chunks.length) await new Promise((resolve) => setImmediate(resolve));
    }
    return ok;
  }

  /** Remembers rows to retry; past maxWaiting only where to look for them in the store. */
  private wait(rowIds: number[]): void {
    for (const id of rowIds) {
      if (this.waiting.has(id)) continue;
      if (this.waiting.size < this.maxWaiting) this.waiting.add(id);
      else this.rescanAfter = Math.min(this.rescanAfter ?? Infinity, id - 1);
    }
  }

  /** Writes `index-embedder` once the index holds this embedder's vectors. */
  private async record(dimensions: number): Promise<void> {
    if (this.recorded) return;
    await this.options.store.setMeta(INDEX_EMBEDDER_META_KEY, JSON.stringify({ model: this.options.embedder.model, dimensions }));
    this.recorded = true;
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.retry();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  /**
   * Embeds what waits, one step of at most RETRY_BATCH chunks at a time, each its own serial job:
   * the ids kept in memory first, then the rows a store scan finds without a vector. Stops at the
   * first failure (the failed step scheduled the next retry).
   */
  private async retry(): Promise<void> {
    // One retry at a time: an ingest failing meanwhile schedules another, which finds this one going.
    if (this.retrying) return;
    this.retrying = true;
    try {
      while (!this.closed && (await this.serial(() => this.retryStep()))) {
        // Let requests through between steps (the built-in embedder runs on the event loop).
        await new Promise((resolve) => setImmediate(resolve));
      }
      this.retryFailures.succeeded();
    } catch (err) {
      // A shutdown stopped the retry: the chunks are in the store, and the next start embeds them.
      if (!this.options.signal?.aborted) {
        // A store that stays away fails every retry: logged once, then summarised.
        this.retryFailures.failed(
          err,
          { waiting: this.waiting.size },
          `retrying the embedding of waiting chunks failed; trying again in ${this.retryMs / 1000} s`,
        );
        this.scheduleRetry();
      }
    } finally {
      this.retrying = false;
    }
  }

  /** One retry step; true when it succeeded and more may wait. */
  private async retryStep(): Promise<boolean> {
    if (this.state === 'mismatch' || this.closed) return false;
    const { store, index } = this.options;
    if (this.waiting.size > 0) {
      const ids = [...take(this.waiting, RETRY_BATCH)];
      // Rows removed meanwhile are no longer in the store and are skipped.
      const rows = await store.getChunks(ids);
      for (const id of ids) this.waiting.delete(id);
      return (await this.embedAndUpsert(rows, undefined, true)) && (this.waiting.size > 0 || this.rescanAfter !== null);
    }
    if (this.rescanAfter === null) return false;
    const rows = await store.scanChunks(this.rescanAfter, RETRY_BATCH);
    if (rows.length === 0) {
      this.rescanAfter = null;
      return false;
    }
    this.rescanAfter = rows[rows.length - 1].rowId;
    const heads = index.heads?.(rows.map((r) => r.rowId));
    const missing = heads ? rows.filter((_, i) => heads[i] === undefined) : rows;
    // A failure puts the cursor back to the first row it could not keep.
    return (await this.embedAndUpsert(missing, undefined, true)) && (this.waiting.size > 0 || this.rescanAfter !== null);
  }

  /** Runs index changes one at a time, in call order. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** The first `n` values of `set`, in insertion order. */
function* take<T>(set: Set<T>, n: number): Generator<T> {
  if (n <= 0) return;
  let i = 0;
  for (const v of set) {
    yield v;
    if (++i >= n) return;
  }
}
