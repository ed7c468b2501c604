/**
 * Conversation memory (docs/architecture.md): after each answer the exchange, and after each
 * window of people's messages the window, become memory chunks of their thread, embedded into a
 * vector index of their own and searched beside the documents. All of it happens in the
 * background, in order, so an answer never waits for memory.
 *
 * Privacy is a matter of scopes inside the index: a public chunk's scope is its thread, a private
 * exchange's is its thread and owner together, so a search only ever scans the scopes the asker
 * may see (a filter before ranking, never a cut after it).
 */
import { STOPWORDS, words } from '../ai/local/extractive-text.js';
import type { Embedder } from '../ai/types.js';
import { uncached } from '../ai/cached-embedder.js';
import { cosine } from '../ai/vectors.js';
import type { Message } from '../protocol/messages.js';
import type { AskRequest, AskResult } from '../rooms/types.js';
import type { CopyEntry, VectorEntry, VectorFilter, VectorIndex, VectorMeta } from '../search/types.js';
import { ClaimedMessages, ForgottenExchange, MovedMessages, type Store, type StoredMemoryChunk } from '../store/types.js';
import { silentLogger, type Logger } from '../logger.js';
import { errors } from '../errors.js';
import { squash, withoutCitations } from '../text.js';
import { wholeNumber } from '../options.js';
import { MessageWindows, windowChunk, type WindowOptions } from './windows.js';
import { isImported } from './imported.js';
import { chatLine } from '../rag/recent-chat.js';
import { scopeOf, scopesFor } from './scopes.js';
import { namedPeriods, saidWithin } from './named-dates.js';
import type { MemoryAsker, MemoryChunk, MemoryHit, MemorySearch, NewMemoryChunk } from './types.js';
import { IdleGate, type BackgroundRunner } from '../idle-gate.js';
import { RepeatedFailureLog } from '../repeated-failure-log.js';
import { survivorOf } from '../store/thread-survivor.js';
import { Turns } from './threads/turns.js';

export const DEFAULT_MAX_CHUNKS_PER_THREAD = 5_000;
export const DEFAULT_RETENTION_DAYS = 90;
/** A new chunk this close to an existing one of its scope (cosine), with the same words, refreshes it instead. */
export const DUPLICATE_COSINE = 0.97;
const DAY_MS = 86_400_000;
/** Weight of a chunk's best line's text match beside its cosine when ranking memory hits. */
export const LINE_WEIGHT = 0.3;
/** What a chunk said within the time the question names (named-dates.ts) adds to its rank, a third of a best line's. */
export const DATE_WEIGHT = 0.1;
/** Chunks read per page while rebuilding the index. */
const LOAD_PAGE = 256;
/** Vectors copied from the index between two event-loop turns (8 MB at 2,048 dimensions). */
const COPY_PAGE = 1024;

/**
 * Writes of a chunk that found a repeat candidate where it goes at most (MemoryService.fileOrRefresh):
 * without a change committed meanwhile two do (the candidate, then the chunk or its refresh), and
 * each more follows a chunk with its words brought there, or deleted before it was refreshed.
 */
export const FILING_ROUNDS = 4;

/**
 * The rows the memory index was told to reindex or drop (reindex, applyStored, forget,
 * forgetThread, retention) while a write of new rows was under way (MemoryService.watchIndex):
 * those of the new rows among them are indexed again as the store holds them once the rows are
 * indexed (settle).
 */
export interface IndexWatch {
  /** Those of `ids` touched since it began or since the last call. */
  touchedOf(ids: readonly number[]): number[];
  /** Stops recording (always call it: the write failed, or its rows are indexed). */
  release(): void;
}

/**
 * How long a live window's claim on its messages is kept (Store.pruneMemoryClaims): a node holds a
 * message in an open window for WINDOW_QUIET_MS, and a closed one waits in the queue for minutes at
 * worst; a day covers a node that was stalled meanwhile.
 */
export const CLAIM_KEEP_MS = 86_400_000;
/**
 * A live window whose first message was said longer ago than this may find another node's claims
 * of its messages pruned (they are kept CLAIM_KEEP_MS from that node's filing, which came after the
 * message was said): its thread's stored windows are read for them instead (MemoryService.filedAlready).
 * Half the keep time leaves half a day for clocks that disagree.
 */
export const CLAIMS_TRUSTED_MS = CLAIM_KEEP_MS / 2;

/** Reads of a member's private memory forgetPrivate makes at most: another after each that found some (a fusion may have copied it meanwhile). */
const FORGET_PASSES = 3;

/** How often expired chunks are looked for while chunks are being stored (and at every load). */
export const RETENTION_SWEEP_MS = 60_000;
/**
 * Chunks one retention or forget transaction deletes at most, the event loop turning between two:
 * a private chunk's erasure costs ~2–5 ms (its lines deleted with FTS5's secure-delete), so a
 * backlog of expired chunks (a server started after weeks down), or a member's hundreds of private
 * exchanges forgotten at once, would otherwise hold the loop for seconds.
 */
export const DELETE_SLICE = 16;

export interface MemoryOptions {
  store: Store;
  embedder: Embedder;
  /** The memory's own vector index (src/parts.ts). */
  index: VectorIndex;
  log?: Logger;
  /** MEMORY_MAX_CHUNKS_PER_THREAD. */
  maxChunksPerThread?: number;
  /** MEMORY_RETENTION_DAYS. */
  retentionDays?: number;
  windows?: Omit<WindowOptions, 'onWindow'>;
  /** Told of each chunk once it is stored (or refreshed a repeat), e.g. a CLI progress bar. */
  onStored?: (chunk: NewMemoryChunk) => void;
  /** The clock, for tests. */
  now?: () => number;
  /** Told the ids of chunks this node stored, moved or removed (src/sync tells the other nodes), not of changes followed from them. */
  onChanged?: (ids: number[]) => void;
  /** Told of every chunk whose embedding failed as it was stored (metrics), however few of them the log shows. */
  onEmbedFailure?: () => void;
  /**
   * Runs each queued chunk's storing, one at a time: by default an IdleGate, so that storing memory
   * gives way to chat.
   */
  background?: BackgroundRunner;
}

/**
 * A thread's memory as `GET /api/v1/threads/:id` and `/memory` show it, to anyone: what everyone
 * may read only, so that private asks cannot be seen coming and going by their count.
 */
export interface MemoryStats {
  /** Chunks every reader may be given (not privileged). */
  chunks: number;
  /** Messages in open windows plus public chunks waiting to be stored. */
  pending: number;
}

function metaOf(chunk: NewMemoryChunk): VectorMeta {
  return { kind: 'thread', sourceType: 'conversation', scope: scopeOf(chunk), privileged: chunk.privileged, group: null };
}

/** What the asker may see in the vector index (scopesFor). */
export function filterFor(asker: MemoryAsker): VectorFilter {
  return { scopes: scopesFor(asker), includePrivileged: asker.private };
}

/**
 * `Q: …` and `A: …` of an answer, one line each (as the recent chat shows a message), without its
 * citation markers (their numbers belonged to that prompt). A question of several lines, `where is
 * it?` then `A: at Pier 9`, had put words in the assistant's mouth for every later prompt.
 */
export function exchangeText(question: string, answer: string): string {
  return `Q: ${squash(question)}\nA: ${squash(withoutCitations(answer))}`;
}

/** The vectors of chunks read without them, left where the memory index keeps them (MemoryService.indexedVectors). */
export interface IndexedVectors {
  /**
   * The vector of chunk `i` (of the chunks given), copied out of the index when first asked for;
   * ERR_THREAD_CHANGED when the index no longer holds it (the chunk was deleted meanwhile).
   */
  get(i: number): Float32Array;
}

export class MemoryService implements MemorySearch {
  private readonly windows: MessageWindows;
  private readonly log: Logger;
  private readonly maxChunksPerThread: number;
  private readonly retentionMs: number;
  private readonly now: () => number;
  /** The background queue: chunks are stored one after another. */
  private tail: Promise<void> = Promise.resolve();
  /** Public chunks waiting to be stored, by thread (private ones are nobody else's business). */
  private readonly queuedPublic = new Map<string, number>();
  /** Exchanges waiting to be stored (each has its asker as owner): forgetPrivate looks through them. */
  private readonly queuedExchanges = new Set<NewMemoryChunk>();
  /** Queued exchanges whose asker forgot their private memory meanwhile: not stored if they are private (forgetPrivate). */
  private readonly forgotten = new WeakSet<NewMemoryChunk>();
  /** The row a forgotten queued exchange was written to before remember saw it forgotten: forgetPrivate counts it once. */
  private readonly forgottenRows = new WeakMap<NewMemoryChunk, number>();
  /** The messages of each live window queued (realign reads them when another node filed some). */
  private readonly windowMessages = new WeakMap<NewMemoryChunk, readonly Message[]>();
  /** Live windows queued or being filed: a split moving their messages meanwhile rewrites them (messagesMoved). */
  private readonly queuedLive = new Set<NewMemoryChunk>();
  /** Each thread's live window closed last, while it is queued: realign reopens only in front of the window after it. */
  private readonly lastClosed = new Map<string, NewMemoryChunk>();
  private closed = false;
  private readonly indexListeners: ((chunk: MemoryChunk, vector: Float32Array) => void)[] = [];
  /**
   * Chunks each thread can still take before it may pass its cap (cap − its count when last
   * counted): a thread is counted and pruned when this runs out, not after every chunk (the cap
   * query reads the thread's newest `cap` rows). Forgotten whenever memory changes another way.
   */
  private readonly headroom = new Map<string, number>();
  private nextRetentionSweep = -Infinity;
  /** The watches under way (watchIndex), each with the rows reindexed or dropped since it began. */
  private readonly watches = new Set<Set<number>>();
  private readonly background: BackgroundRunner;
  private readonly options: MemoryOptions;
  /** An embedder that is down fails every chunk: the first is logged, then a summary a minute. */
  private readonly embedFailures: RepeatedFailureLog;

  constructor(options: MemoryOptions) {
    // A chunk keeps its vector in its row: through a remote embedder's cache its text's hash and
    // vector would stay behind when the chunk is deleted (its thread, retention, a compaction).
    this.options = { ...options, embedder: uncached(options.embedder) };
    this.log = options.log ?? silentLogger;
    this.embedFailures = new RepeatedFailureLog({ log: this.log, what: 'embedding conversation memory' });
    this.maxChunksPerThread = options.maxChunksPerThread ?? DEFAULT_MAX_CHUNKS_PER_THREAD;
    wholeNumber('MemoryService', 'maxChunksPerThread', this.maxChunksPerThread, 1);
    const days = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    wholeNumber('MemoryService', 'retentionDays', days, 1);
    this.retentionMs = days * DAY_MS;
    this.now = options.now ?? Date.now;
    this.background = options.background ?? new IdleGate();
    this.windows = new MessageWindows({
      ...options.windows,
      live: true,
      onWindow: (chunk, messages) => {
        this.lastClosed.set(chunk.threadId, chunk);
        this.enqueueLive(chunk, messages);
      },
    });
  }

  /**
   * A member's message, stored already and delivered on this node (its own or another node's): it
   * joins its thread's open window. Every node in the room windows it; the first to file a window
   * holding it files it (ClaimedMessages, realign).
   */
  onMessage(message: Message): void {
    if (this.closed || message.author.kind !== 'user' || !message.text.trim()) return;
    // An import's message, which a live room hears in its catch-up: rememberMessages windows those.
    if (isImported(message)) return;
    this.windows.add(message);
  }

  /**
   * What this node hears of the room next does not follow on from what it heard (RoomHubDeps.onGap):
   * the room's open windows end here, and their last lines are no context for the next.
   */
  roomGap(roomId: string): void {
    if (!this.closed) this.windows.endRoom(roomId);
  }

  /**
   * A finished answer: its exchange is remembered (a private one only for its asker). `forgetMark`:
   * its asker's in the room, read as it was asked (Store.privateForgetMark; null when it could not
   * be); the store refuses the exchange if it is filed as its asker's own (a private ask's, or one
   * asked in a privileged thread) and they have forgotten their private asks in the room since, on
   * any node.
   */
  onAnswer(request: AskRequest, result: AskResult, forgetMark?: number | null): void {
    if (this.closed || result.abstained) return;
    const asked = new Date(this.now()).toISOString();
    this.enqueue({
      threadId: request.threadId,
      roomId: request.roomId,
      kind: 'exchange',
      text: exchangeText(request.text, result.message.text),
      messageIds: request.private ? [] : [request.questionId, result.message.id].filter((id): id is string => typeof id === 'string'),
      authors: [request.asker.name, result.message.author.name],
      firstTs: asked,
      lastTs: result.message.ts,
      privileged: request.private === true,
      // Kept for a public exchange too: in a privileged thread it becomes the asker's alone (remember).
      owner: request.asker.id,
      ...(forgetMark !== undefined ? { forgetMark } : {}),
    });
  }

  /**
   * Two searches of the asker's scopes: chunk vectors (a whole window's meaning) and the words of
   * single lines (a fact said once inside a long window, which averaging into the window's vector
   * dilutes). A chunk ranks by its cosine plus LINE_WEIGHT × its best line's text score (scaled so
   * the best line scores 1), plus DATE_WEIGHT when it was said within a time the question names; a
   * chunk only the line search found is scored exactly for its cosine.
   */
  async search(question: string, asker: MemoryAsker, k: number, signal?: AbortSignal, questionVector?: Promise<Float32Array | null>): Promise<MemoryHit[]> {
    const { store, index, embedder } = this.options;
    const thread = await store.getThread(asker.threadId);
    if (!thread?.memoryEnabled) return [];
    // The pipeline's document search embeds the same question: its vector is used when it has one.
    const copyOf = async () => (await questionVector) ?? (await embedder.embed([question], signal, 'query'))[0];
    const vector = index.size ? copyOf() : null;
    const [vectorHits, lineHits] = await Promise.all([
      vector ? vector.then((v) => index.search(v, k, filterFor(asker))) : [],
      store.searchMemoryLines(lineQuery(question), scopesFor(asker), k),
    ]);
    const found = new Map<number, { score: number; lexical: number; line?: string }>();
    for (const h of vectorHits) found.set(h.rowId, { score: h.score, lexical: 0 });
    const top = lineHits[0]?.score || 1;
    for (const h of lineHits) {
      const entry = found.get(h.chunkId) ?? { score: 0, lexical: 0 };
      found.set(h.chunkId, { ...entry, lexical: h.score / top, line: h.line });
    }
    // A chunk found by its words alone ranks by its own cosine too, not by 0: the vector search's
    // top k leaves out most chunks whose one line says the fact.
    const scanned = new Set(vectorHits.map((h) => h.rowId));
    const unscored = lineHits.filter((h) => !scanned.has(h.chunkId)).map((h) => h.chunkId);
    if (vector && unscored.length) {
      const cosines = this.cosines(await vector, unscored);
      unscored.forEach((id, i) => (found.get(id)!.score = cosines[i] ?? 0));
    }
    // A question naming a time ("camping in June") favours what was said then, and a line two
    // candidates share may be one's context line: all candidates are read to know when and which
    // (only then; otherwise just the chunks returned).
    const periods = namedPeriods(question);
    const lines = [...found.values()].flatMap((f) => (f.line ? [f.line] : []));
    const readAll = periods.length > 0 || new Set(lines).size < lines.length;
    const read = new Map((readAll ? await store.getMemoryChunkTexts([...found.keys()]) : []).map((c) => [c.id, c]));
    const dated = new Set([...read.values()].filter((c) => saidWithin(periods, c.firstTs, c.lastTs)).map((c) => c.id));
    const rank = (id: number, f: { score: number; lexical: number }) => f.score + LINE_WEIGHT * f.lexical + (dated.has(id) ? DATE_WEIGHT : 0);
    const sorted = [...found.entries()].sort(([x, a], [y, b]) => rank(y, b) - rank(x, a)).map(([id, f]) => ({ id, ...f }));
    const ranked = ownersFollowContext(sorted, (id) => {
      const chunk = read.get(id);
      return chunk && contextLineOf(chunk);
    }).slice(0, k);
    const chunks = readAll ? read : new Map((await store.getMemoryChunkTexts(ranked.map((r) => r.id))).map((c) => [c.id, c]));
    return ranked.flatMap((r) => (chunks.has(r.id) ? [{ chunk: chunks.get(r.id)!, score: r.score, ...(r.line ? { line: r.line } : {}) }] : []));
  }

  async stats(threadId: string): Promise<MemoryStats> {
    const chunks = await this.options.store.countMemoryChunks(threadId, 'public');
    return { chunks, pending: this.windows.waiting(threadId) + (this.queuedPublic.get(threadId) ?? 0) };
  }

  /** Closes open windows now (all threads without an argument), e.g. after an import. */
  flush(threadId?: string): void {
    this.windows.close(threadId);
  }

  /** Resolves once every chunk queued so far is stored and indexed. */
  async idle(): Promise<void> {
    let seen: Promise<void> | undefined;
    while (seen !== this.tail) {
      seen = this.tail;
      await seen;
    }
  }

  /**
   * Rebuilds the index from the store (at start, and after `salon reindex` changes the embedder):
   * stored vectors of the current embedder are used as they are; other chunks are embedded again
   * and their new vectors kept. `signal` (a shutdown) stops it between pages, before the prune.
   */
  async load(signal?: AbortSignal): Promise<number> {
    let after = 0;
    let loaded = 0;
    // Texts a remote model refuses may be many (its length limit): the first is logged, then a
    // summary a minute and one when the load ends.
    const refused = new RepeatedFailureLog({ log: this.log, what: 'indexing memory chunks at load' });
    try {
      for (;;) {
        signal?.throwIfAborted();
        const page = await this.options.store.scanMemoryChunks(after, LOAD_PAGE);
        if (!page.length) break;
        after = page[page.length - 1].id;
        loaded += await this.indexLoaded(page, refused);
      }
    } finally {
      refused.finish();
    }
    await this.prune(null);
    return loaded;
  }

  /**
   * Indexes a page of the load. A chunk whose text the embedder refuses (anyone's words: a remote
   * model's length limit, or a bug like the stemmer's `constructor`) is left out and logged, not
   * the page and every page after it; when no chunk of the page can be embedded the embedder
   * itself is failing, and the load stops as before.
   */
  private async indexLoaded(page: StoredMemoryChunk[], refused: RepeatedFailureLog): Promise<number> {
    try {
      return (await this.indexChunks(page)).length;
    } catch (err) {
      let indexed = 0;
      for (const chunk of page) {
        try {
          await this.indexChunks([chunk]);
          indexed++;
        } catch (one) {
          refused.failed((one as Error)?.message, { chunkId: chunk.id, threadId: chunk.threadId }, 'memory chunk not indexed: its text could not be embedded');
        }
      }
      if (!indexed) throw err;
      return indexed;
    }
  }

  /** Tells `listen` of every new chunk indexed from now on (thread bridges follow their centroids this way). */
  onIndexed(listen: (chunk: MemoryChunk, vector: Float32Array) => void): void {
    this.indexListeners.push(listen);
  }

  /**
   * Begins recording the rows reindexed or dropped from here on: taken before a change that adds
   * memory commits, and given to indexStored with its new rows, which are then indexed as the store
   * holds them if another change moved or deleted them meanwhile (settle).
   */
  watchIndex(): IndexWatch {
    const touched = new Set<number>();
    this.watches.add(touched);
    return {
      touchedOf: (ids) => {
        const out = ids.filter((id) => touched.has(id));
        touched.clear();
        return out;
      },
      release: () => this.watches.delete(touched),
    };
  }

  /** Notes rows about to be reindexed or dropped in every watch under way. */
  private touch(ids: readonly number[]): void {
    for (const watch of this.watches) for (const id of ids) watch.add(id);
  }

  /** What stored vectors must have been made by to be used as they are. */
  get vectorModel(): string {
    return `${this.options.embedder.model}@${this.options.embedder.dimensions}`;
  }

  /** The vectors of `chunks`: stored ones of the current embedder, the others embedded now (and stored). */
  async vectorsOf(chunks: StoredMemoryChunk[]): Promise<Float32Array[]> {
    const model = this.vectorModel;
    const stale = chunks.filter((c) => !c.vector || c.vectorModel !== model);
    const fresh = stale.length ? await this.embed(stale) : [];
    const made = new Map(stale.map((c, i) => [c.id, fresh[i]]));
    for (const [id, vector] of made) await this.options.store.setMemoryVector(id, vector, model);
    return chunks.map((c) => made.get(c.id) ?? c.vector!);
  }

  /**
   * The vectors of chunks read without them (Store.scanThreadMemory with `vectors` false): copied
   * from the memory index, which holds every stored chunk's vector of the current embedder
   * (normalised, as they are stored), without reading 8 KB a chunk from the store; the chunks it
   * does not hold (not indexed yet) are read from the store as vectorsOf does.
   */
  async indexedVectorsOf(chunks: MemoryChunk[]): Promise<Float32Array[]> {
    const { index, store } = this.options;
    const out = new Array<Float32Array | undefined>(chunks.length);
    const d = index.dimensions;
    if (index.copyVectors && d > 0 && d === this.options.embedder.dimensions) {
      // A page at a time, with event-loop turns between: 10,000 vectors are 80 MB to copy.
      for (let from = 0; from < chunks.length; from += COPY_PAGE) {
        if (from > 0) await new Promise((resolve) => setImmediate(resolve));
        const page = chunks.slice(from, from + COPY_PAGE);
        const packed = new Float32Array(page.length * d);
        const slot = new Map(
          index
            .copyVectors(
              page.map((c) => c.id),
              packed,
            )
            .map((id, j) => [id, j]),
        );
        page.forEach((c, i) => {
          const j = slot.get(c.id);
          if (j !== undefined) out[from + i] = packed.subarray(j * d, (j + 1) * d);
        });
      }
    }
    const missing = chunks.flatMap((c, i) => (out[i] ? [] : [i]));
    for (let from = 0; from < missing.length; from += LOAD_PAGE) {
      const page = missing.slice(from, from + LOAD_PAGE);
      const stored = new Map((await store.getMemoryChunks(page.map((i) => chunks[i].id))).map((c) => [c.id, c]));
      // A chunk deleted meanwhile is embedded from its text.
      const read = page.map((i) => stored.get(chunks[i].id) ?? { ...chunks[i], vector: null, vectorModel: null });
      (await this.vectorsOf(read)).forEach((v, j) => (out[page[j]] = v));
    }
    return out as Float32Array[];
  }

  /**
   * indexedVectorsOf without the copies: a chunk's vector stays in the index until `get` asks for
   * it (a fusion of two threads of 10,000 reads ~6,000 of them, and copying all 160 MB out into
   * fresh memory had cost as much as reading the rows). Only the chunks the index does not hold
   * (not indexed yet) are read beforehand, as indexedVectorsOf reads them.
   */
  async indexedVectors(chunks: MemoryChunk[]): Promise<IndexedVectors> {
    const held = new Uint8Array(chunks.length);
    this.visitIndexedVectors(
      chunks.map((c) => c.id),
      (i) => (held[i] = 1),
    );
    const missing = chunks.flatMap((c, i) => (held[i] ? [] : [i]));
    const read = new Map<number, Float32Array>();
    if (missing.length) (await this.indexedVectorsOf(missing.map((i) => chunks[i]))).forEach((v, j) => read.set(missing[j], v));
    return {
      get: (i) => {
        const known = read.get(i);
        if (known) return known;
        const [vector] = this.copyIndexed([chunks[i].id]);
        if (!vector) throw new errors.ERR_THREAD_CHANGED(chunks[i].threadId);
        return vector;
      },
    };
  }

  /**
   * Calls `visit(i, vector)` for each of the chunks `ids` the memory index holds, with its vector
   * where the index keeps it (a view, valid only during the call, which is synchronous); returns
   * how many it visited.
   */
  visitIndexedVectors(ids: number[], visit: (i: number, vector: Float32Array) => void): number {
    const { index } = this.options;
    if (!index.visitVectors || index.dimensions !== this.options.embedder.dimensions) return 0;
    return index.visitVectors(ids, visit);
  }

  /** The indexed vectors of `ids`, copied out (undefined for a chunk the index does not hold). */
  private copyIndexed(ids: number[]): (Float32Array | undefined)[] {
    const out = new Array<Float32Array | undefined>(ids.length);
    this.visitIndexedVectors(ids, (i, v) => (out[i] = v.slice()));
    return out;
  }

  /**
   * Exact cosines of `query` with the indexed chunks `ids`, scored by the flat index's kernel (the
   * one every memory search scans with); undefined for a chunk the index does not hold. When the
   * query is the vector of an indexed chunk, `queryId` names it: the index then reads it where it
   * is stored instead of taking, checking and normalising it again (and `query`, when a function,
   * is called only if the index does not hold that chunk).
   */
  cosines(query: Float32Array | (() => Float32Array), ids: number[], queryId?: number): (number | undefined)[] {
    const { index } = this.options;
    const none = () => ids.map(() => undefined);
    if (!index.rescore || !ids.length) return none();
    const hits = ids.map((rowId) => ({ rowId, score: 0 }));
    let scored = queryId !== undefined ? (index.rescoreByRow?.(queryId, hits) ?? null) : null;
    if (!scored) {
      const q = typeof query === 'function' ? query() : query;
      if (index.dimensions !== q.length) return none();
      scored = index.rescore(q, hits);
    }
    const scores = new Map(scored.map((h) => [h.rowId, h.score]));
    return ids.map((id) => scores.get(id));
  }

  /**
   * cosines for many indexed chunks at once: for each of `queryIds`, its exact cosine with each
   * chunk of `candidateIds[i]` (undefined where the index does not hold one of the two), in one
   * call to the kernel; null when the index cannot (cosines then serves one query at a time).
   */
  cosinesOfChunks(queryIds: number[], candidateIds: number[][]): (number | undefined)[][] | null {
    return this.options.index.cosinesOfRows?.(queryIds, candidateIds) ?? null;
  }

  /** Vectors for chunks not stored yet (nothing is kept): e.g. compaction's summaries. */
  vectorsForNew(chunks: NewMemoryChunk[]): Promise<Float32Array[]> {
    return this.embed(chunks);
  }

  /** Most chunks a thread keeps (MEMORY_MAX_CHUNKS_PER_THREAD). */
  get chunkCap(): number {
    return this.maxChunksPerThread;
  }

  /**
   * Indexes chunks a thread operation just stored (`ids` in the order of `chunks`), with the vectors
   * it already holds; a chunk that copies a stored one (`copyOf`) takes that row's vector inside the
   * index. Each kind goes in as one batch, so the index decides how a large one reaches its graph
   * (TieredIndex rebuilds it in its worker instead of adding thousands of rows on the event loop).
   * `watch`: taken before the change committed (watchIndex), released here.
   */
  async indexStored(ids: number[], chunks: { chunk: NewMemoryChunk; vector: Float32Array; copyOf?: number }[], watch?: IndexWatch): Promise<void> {
    this.recount();
    const { index } = this.options;
    const entries: VectorEntry[] = [];
    const copies: CopyEntry[] = [];
    ids.forEach((rowId, i) => {
      // A copy's vector is not read: it may be one that is copied out of the index only when read (ThreadService.fuse).
      const { chunk, copyOf } = chunks[i];
      if (copyOf !== undefined && index.copyRows) copies.push({ rowId, from: copyOf, meta: metaOf(chunk) });
      else entries.push({ rowId, vector: chunks[i].vector, meta: metaOf(chunk) });
    });
    // The rows are stored: the other nodes are told even when this node's index refuses them (full,
    // its worker gone), which ThreadService logs and leaves to this node's next start. Untold, the
    // others never indexed them (nor dropped, nor moved what forget and reindex name) until theirs.
    try {
      if (copies.length) {
        const position = new Map(ids.map((id, i) => [id, i]));
        for (const e of await index.copyRows!(copies)) entries.push({ rowId: e.rowId, vector: chunks[position.get(e.rowId)!].vector, meta: e.meta });
      }
      await index.upsert(entries);
      if (watch) await this.settle(ids, watch);
    } finally {
      watch?.release();
      this.changed(ids);
    }
  }

  /**
   * Gets the memory index ready for `chunks` new chunks (VectorIndex.reserve): their pages are
   * mapped on a scan thread, so that indexing a fusion's 17,000 chunks after it is a copy rather
   * than ~140 MB of page faults on the event loop. Never rejects.
   */
  async reserve(chunks: number): Promise<void> {
    await this.options.index.reserve?.(chunks).catch((err: unknown) => this.log.warn({ err: (err as Error)?.message }, 'memory index not reserved'));
  }

  /**
   * (Re)indexes stored chunks by id: after a thread operation moved or added them. An embedder that
   * fails does not fail it: the operation has committed, and what follows it (the rooms told, the
   * announcement) must run.
   * A chunk that cannot be (a chunk without a vector of the current embedder, and the embedder
   * down) leaves the index instead of staying under its old thread, and is indexed at the next
   * start's load.
   */
  async reindex(ids: number[]): Promise<void> {
    this.recount();
    // SQLite answers each page at once: a merge of 3,000 chunks read them all without a turn.
    const turns = new Turns();
    try {
      for (let i = 0; i < ids.length; i += LOAD_PAGE) {
        if (turns.due()) await turns.next();
        await this.followed(ids.slice(i, i + LOAD_PAGE), (page) => this.reindexPage(page));
      }
    } finally {
      // Moved in the store: the other nodes are told even when this node's index failed (indexStored).
      this.changed(ids);
    }
  }

  /** Indexes the chunks `ids` as stored; those that cannot be embedded leave the index (reindex). */
  private async reindexPage(ids: number[]): Promise<void> {
    const model = this.vectorModel;
    const chunks = await this.options.store.getMemoryChunks(ids);
    try {
      await this.indexChunks(chunks);
    } catch (err) {
      const unembedded = chunks.filter((c) => !c.vector || c.vectorModel !== model);
      this.log.warn({ chunks: unembedded.length, err: (err as Error)?.message }, 'memory chunks not reindexed; they are indexed at the next start');
      await this.options.index.remove(unembedded.map((c) => c.id));
      await this.indexChunks(chunks.filter((c) => !unembedded.includes(c)));
    }
    // Deleted since the change that asked for it (a redo's read, settle).
    const found = new Set(chunks.map((c) => c.id));
    await this.options.index.remove(ids.filter((id) => !found.has(id)));
  }

  /**
   * Runs `index` (a read of the chunks `page` from the store, then their indexing) as a change of
   * theirs is followed: another call reading them later may write to the index first, when this
   * one waits longer between its read and its write (an embedding), and this one's older read
   * would land last. So the rows are noted in the watches under way before the read, and those
   * another call touched meanwhile are read and indexed again (settle).
   */
  private async followed(page: number[], index: (ids: number[]) => Promise<void>): Promise<void> {
    this.touch(page);
    const watch = this.watchIndex();
    try {
      await index(page);
      await this.settle(page, watch, index);
    } finally {
      watch.release();
    }
  }

  /**
   * Forgets `owner`'s private memory of `roomId` (`/forget private`): their privileged chunks,
   * wherever thread operations took them, that belong to the room or came from it (a fusion's copy
   * elsewhere: its lineage names the room or, in a lineage older than that, one of `threadIds`, the
   * room's threads and the fusions made from them; such an older lineage naming a thread that is
   * gone may come from any room, and goes too), deleted from the store with their lines, dropped
   * from the index (and from other nodes' through onChanged); an exchange of theirs still
   * queued is not stored, nor one being stored. Returns how many exchanges were forgotten: the
   * chunks deleted, and the private exchanges queued on this node that will not be stored (each
   * once, even when its row was written meanwhile and deleted here). An answer still being written
   * is not queued yet: the assistant leaves it unremembered (RoomAssistant.forgetPrivateAsks) on
   * this node; on any node, its exchange carries the forget mark read as it was asked, which this
   * moves on in the store (Store.markPrivateForget) before reading it, so the store refuses it.
   * Those are not counted here: nothing on this node knows of them. The room's queued exchanges
   * are marked and the mark's move is called before this returns (`threadIds` may still be being
   * read): an ask asked after the call reads the moved mark, and its exchange, filed on any node
   * under that mark, is kept, even while this still reads the store (Store.scanPrivateMemory's
   * `filedSince` leaves it out).
   */
  forgetPrivate(owner: string, roomId: string, threadIds: readonly string[] | Promise<readonly string[]>): Promise<number> {
    const { store } = this.options;
    const queued = [...this.queuedExchanges];
    const marked: NewMemoryChunk[] = [];
    const mark = (theirs: (c: NewMemoryChunk) => boolean) => {
      for (const c of queued) {
        if (c.owner !== owner || this.forgotten.has(c) || !theirs(c)) continue;
        this.forgotten.add(c);
        marked.push(c);
      }
    };
    // Before anything is awaited (the caller need not await either): the room's exchanges queued
    // here are marked and the store's mark is moving, so an ask asked after this call reads the new
    // mark (Store.privateForgetMark waits for this node's move) and its exchange is kept.
    mark((c) => c.roomId === roomId || (c.lineage?.roomIds ?? []).includes(roomId));
    const moved = store.markPrivateForget(owner, roomId);
    return this.forgetPrivateAfter(
      owner,
      roomId,
      Promise.all([moved, threadIds]).then(([to, ids]) => ({ to, ids })),
      mark,
      marked,
    );
  }

  private async forgetPrivateAfter(
    owner: string,
    roomId: string,
    onceMarked: Promise<{ to: number; ids: readonly string[] }>,
    mark: (theirs: (c: NewMemoryChunk) => boolean) => void,
    marked: NewMemoryChunk[],
  ): Promise<number> {
    const { store } = this.options;
    // From the mark's commit on, no node stores an exchange of theirs asked before it
    // (NewMemoryChunk.forgetMark), and what one stored before is found by the scan below; what one
    // stores after it, under the new mark (asked after this forget), the scan leaves alone.
    const { to, ids: threadIds } = await onceMarked;
    const filedSince = { roomId, mark: to };
    const named = new Set(threadIds);
    const theirs = (c: NewMemoryChunk) =>
      c.owner === owner && (c.roomId === roomId || (c.lineage?.roomIds ?? []).includes(roomId) || (c.lineage?.threadIds ?? []).some((t) => named.has(t)));
    // Those queued before the call that only an older lineage's threads tie to the room: marked
    // before the store is read, so whatever is stored from here on is caught by remember's checks
    // or by the scan below. (Not those queued since: asked after the forget, they are kept.)
    mark(theirs);
    // A lineage from before lineages named rooms, one of whose threads is gone (deleted with its
    // history): the room its exchange was asked in cannot be told any more, so any of its asker's
    // forgets takes it (theirs, wherever they forget) rather than none.
    const gone = new Map<string, Promise<boolean>>();
    const isGone = (id: string) => {
      let answer = gone.get(id);
      if (!answer) gone.set(id, (answer = store.getThread(id).then((t) => t === null)));
      return answer;
    };
    const unplaced = async (c: NewMemoryChunk) => {
      if (c.owner !== owner || !c.lineage || c.lineage.roomIds) return false;
      for (const id of c.lineage.threadIds) if (await isGone(id)) return true;
      return false;
    };
    const deleted = new Set<number>();
    // Read by owner, in every thread: a merge moving a chunk meanwhile keeps its id, and a copy in
    // a fusion whose source thread is gone is found. Read again after deleting: a fusion that
    // committed between the read and the deletions made copies under new ids (one that commits
    // after them fails, as the deletions changed its sources' versions).
    for (let pass = 0; pass < FORGET_PASSES; pass++) {
      const ids: number[] = [];
      for (let after = 0; ;) {
        const page = await store.scanPrivateMemory(owner, after, LOAD_PAGE, filedSince);
        if (!page.length) break;
        after = page[page.length - 1].id;
        for (const c of page) if (theirs(c) || (await unplaced(c))) ids.push(c.id);
      }
      if (!ids.length) break;
      for (let i = 0; i < ids.length; i += DELETE_SLICE) {
        if (i > 0) await new Promise((resolve) => setImmediate(resolve));
        const slice = ids.slice(i, i + DELETE_SLICE);
        await store.applyThreadChange({ at: new Date(this.now()).toISOString(), expect: [], deleteMemory: slice });
        this.recount();
        await this.forget(slice);
        for (const id of slice) deleted.add(id);
      }
    }
    if (deleted.size) await this.purge();
    // A private exchange marked here is one forgotten, unless the scan found its row (counted there).
    // A public one is counted only when the scan finds it (whether it is its asker's alone, in a
    // privileged thread, is decided as it is stored): the count never claims one that is kept.
    const unfiled = marked.filter((c) => c.privileged && !deleted.has(this.forgottenRows.get(c) ?? -1)).length;
    return deleted.size + unfiled;
  }

  /** What was forgotten goes from the store's files too (Store.purgeDeleted); a failure is only logged: the next forget tries again. */
  private async purge(): Promise<void> {
    try {
      if (!(await this.options.store.purgeDeleted()))
        this.log.warn({}, 'forgotten memory may stay in the store’s files until the next forget: the WAL stayed busy');
    } catch (err) {
      this.log.warn({ err: (err as Error)?.message }, 'forgotten memory may stay in the store’s files until the next forget');
    }
  }

  /** Drops chunks from the index (the store deleted them). */
  async forget(ids: number[]): Promise<void> {
    this.touch(ids);
    try {
      if (ids.length) await this.options.index.remove(ids);
    } finally {
      // Deleted from the store: the other nodes are told even when this node's index failed (indexStored).
      this.changed(ids);
    }
  }

  /** Follows another node's change (src/sync): indexes the chunks `ids` that are stored, drops the others. */
  async applyStored(ids: number[]): Promise<void> {
    this.recount();
    for (let i = 0; i < ids.length; i += LOAD_PAGE) await this.followed(ids.slice(i, i + LOAD_PAGE), (page) => this.indexAsStored(page, true));
  }

  /**
   * Indexes the chunks `ids` that are stored, as stored, and drops the others; `announce`: tells the
   * listeners of those new to the index.
   */
  private async indexAsStored(ids: number[], announce: boolean): Promise<void> {
    for (let i = 0; i < ids.length; i += LOAD_PAGE) {
      const page = ids.slice(i, i + LOAD_PAGE);
      const chunks = await this.options.store.getMemoryChunks(page);
      const found = new Set(chunks.map((c) => c.id));
      // Chunks new to this node's index are new memory to whoever listens (thread bridges), as
      // when this node stores one itself; chunks it held already only moved or changed.
      // (An index that cannot tell which rows it holds announces none.)
      const held = announce ? this.options.index.heads?.(chunks.map((c) => c.id)) : undefined;
      if (chunks.length) {
        const vectors = await this.indexChunks(chunks);
        chunks.forEach((c, j) => {
          if (held && held[j] === undefined) for (const listen of this.indexListeners) listen(c, vectors[j]);
        });
      }
      await this.options.index.remove(page.filter((id) => !found.has(id)));
    }
  }

  /**
   * Remembers `messages` (one thread's, oldest first) as windows of their own, apart from the
   * thread's live window: a thread operation rebuilding a thread's memory from its messages, or an
   * import. The event loop gets a turn every TURN_MS (a split's 5,000 messages were windowed in one go).
   */
  async rememberMessages(messages: Message[]): Promise<void> {
    const windows = new MessageWindows({ ...this.options.windows, onWindow: (chunk) => this.enqueue(chunk) });
    const turns = new Turns();
    for (const m of messages) {
      if (turns.due()) await turns.next();
      if (m.author.kind === 'user' && m.text.trim()) windows.add(m);
    }
    windows.close();
  }

  /**
   * A thread was deleted or merged into another, here or on another node: a deleted one's open
   * window goes unkept (its messages are gone), and either's last line is no context any more.
   */
  threadGone(threadId: string, how: 'deleted' | 'merged'): void {
    if (how === 'deleted') this.windows.discard(threadId);
    else this.windows.forgetContext(threadId);
  }

  /**
   * Messages moved to other threads (a split), here or on another node: those still in an open
   * window go on in a window of the thread they are in now; what is stored already moved with them.
   */
  messagesMoved(moves: readonly { ids: readonly string[]; threadId: string }[]): void {
    for (const { ids, threadId } of moves) this.windows.move(new Set(ids), threadId);
    // Closed windows waiting to be filed hold them too: filed (or reopened by realign) under the
    // thread they left, they would cite there what is said elsewhere now (followMoves).
    const to = new Map<string, string>();
    for (const { ids, threadId } of moves) for (const id of ids) to.set(id, threadId);
    for (const chunk of this.queuedLive) this.moveWindowMessages(chunk, to);
  }

  /** Rewrites the thread of each of a queued live window's messages that `to` names another for. */
  private moveWindowMessages(chunk: NewMemoryChunk, to: ReadonlyMap<string, string>): void {
    const messages = this.windowMessages.get(chunk);
    if (!messages?.some((m) => to.has(m.id))) return;
    this.windowMessages.set(
      chunk,
      messages.map((m) => {
        const threadId = to.get(m.id);
        return threadId === undefined || threadId === m.threadId ? m : { ...m, threadId };
      }),
    );
  }

  /** Forgets a deleted thread: its open window and its vectors (the store deleted its rows). */
  async forgetThread(threadId: string, memoryIds: number[]): Promise<void> {
    this.recount();
    this.touch(memoryIds);
    this.windows.discard(threadId);
    await this.options.index.remove(memoryIds);
    this.changed(memoryIds);
  }

  /** Stores what is open and queued, then stops taking more. */
  async close(): Promise<void> {
    this.windows.close();
    this.embedFailures.close();
    this.closed = true;
    await this.idle();
  }

  /** Queues a live window (NewMemoryChunk.live) made of `messages`. */
  private enqueueLive(chunk: NewMemoryChunk, messages: readonly Message[]): void {
    this.windowMessages.set(chunk, messages);
    this.queuedLive.add(chunk);
    this.enqueue(chunk);
  }

  /**
   * A live window some of whose messages a split moved to other threads after it closed
   * (messagesMoved): queued again as one window per thread, of its messages there, so that none is
   * filed, nor reopened by realign, under the thread it left. Only the part that still starts the
   * window keeps its context line (said just before it, in its thread). Returns whether it was.
   */
  private followMoves(closed: NewMemoryChunk): boolean {
    const messages = this.windowMessages.get(closed);
    if (!messages || messages.every((m) => m.threadId === closed.threadId)) return false;
    const parts = new Map<string, Message[]>();
    for (const m of messages) {
      const part = parts.get(m.threadId);
      if (part) part.push(m);
      else parts.set(m.threadId, [m]);
    }
    for (const [threadId, part] of parts) {
      const context = threadId === closed.threadId && part[0] === messages[0] ? contextLineOf(closed) : undefined;
      const chunk: NewMemoryChunk = { ...windowChunk(threadId, part, context), live: true };
      // The part left in the thread is the thread's last closed window if the whole one was.
      if (threadId === closed.threadId && this.lastClosed.get(threadId) === closed) this.lastClosed.set(threadId, chunk);
      this.enqueueLive(chunk, part);
    }
    return true;
  }

  /**
   * A live window the store refused because a split moved some of its messages after followMoves
   * looked (while it was embedded, or on another node, whose notice comes later or never): its
   * messages are put where the store says they are, and followMoves queues a window per thread.
   */
  private followStore(closed: NewMemoryChunk, moved: readonly { id: string; threadId: string }[]): void {
    if (!this.windowMessages.has(closed)) {
      this.log.warn({ threadId: closed.threadId, kind: closed.kind }, 'memory chunk not stored: splits kept moving its messages while it was filed');
      return;
    }
    this.moveWindowMessages(closed, new Map(moved.map((m) => [m.id, m.threadId])));
    if (!this.followMoves(closed))
      this.log.warn({ threadId: closed.threadId }, 'memory window not stored: the store puts its messages in no other thread than its own');
  }

  /** Queues `messages` (one thread's, oldest first, said after `context`) as a live window of their own. */
  private enqueueWindow(threadId: string, messages: readonly Message[], context: string | undefined): void {
    this.enqueueLive({ ...windowChunk(threadId, messages, context), live: true }, messages);
  }

  /**
   * A live window some of whose messages another node filed first (`claimed`), in a window cut
   * elsewhere: that node joined the room later or earlier, or heard a message later. The messages
   * it filed are left to it. Those before the last it filed, which it never heard, are filed as
   * windows of their own, one per run between those it filed. Those after it go back in front of
   * this node's open window, which is cut again from there: where that node's open window starts,
   * so the next windows of the two are the same, and each is filed once, by whichever closes it
   * first. When another window of the thread closed after this one (it waits to be filed), they
   * are a window of their own instead.
   */
  private realign(closed: NewMemoryChunk, claimed: ReadonlySet<string>): void {
    // A split moved some of them while it was being filed: each thread's part is filed (and, if
    // refused, realigned) on its own.
    if (this.followMoves(closed)) return;
    const messages = this.windowMessages.get(closed);
    if (!messages) return;
    let last = messages.length - 1;
    while (last >= 0 && !claimed.has(messages[last].id)) last--;
    if (last < 0) return;
    // Each run of them between filed ones is a window of its own: one window would join them across
    // a message it does not hold.
    let from = 0;
    for (let i = 0; i <= last; i++) {
      if (!claimed.has(messages[i].id)) continue;
      const unheard = messages.slice(from, i);
      const context = from > 0 ? chatLine(messages[from - 1]) : contextLineOf(closed);
      if (unheard.length) this.enqueueWindow(closed.threadId, unheard, context);
      from = i + 1;
    }
    const rest = messages.slice(last + 1);
    if (!rest.length) return;
    const before = messages[last];
    // A window of the thread closed since holds the messages after these: the open window, which
    // comes after that one, would join them across it, so they are a window of their own.
    if (this.closed || this.lastClosed.get(closed.threadId) !== closed) this.enqueueWindow(closed.threadId, rest, chatLine(before));
    else this.windows.reopen(closed.threadId, rest, { line: chatLine(before), ts: Date.parse(before.ts), roomId: before.roomId });
  }

  /**
   * Queues a chunk to be stored. Each waits for an idle moment of the event loop of its own: the
   * window closes inside the broadcast of its last message, whose frames leave at the end of that
   * turn (src/routes/rooms-ws-connection.ts), and embedding and storing a chunk before then would
   * delay them; while messages queue up, a chunk stored between them would make every one after it
   * wait longer. Every chunk goes to the runner as it closes (the runner stores them one at a time,
   * in order), so the runner sees how many wait.
   */
  private enqueue(chunk: NewMemoryChunk): void {
    const counted = !chunk.privileged;
    if (counted) this.queuedPublic.set(chunk.threadId, (this.queuedPublic.get(chunk.threadId) ?? 0) + 1);
    if (chunk.kind === 'exchange' && chunk.owner) this.queuedExchanges.add(chunk);
    const stored = this.background
      .run(() => this.remember(chunk))
      .then(() => this.options.onStored?.(chunk))
      .catch((err: unknown) => this.log.warn({ threadId: chunk.threadId, err: (err as Error)?.message }, 'memory chunk not stored'))
      .finally(() => {
        this.queuedExchanges.delete(chunk);
        this.queuedLive.delete(chunk);
        if (this.lastClosed.get(chunk.threadId) === chunk) this.lastClosed.delete(chunk.threadId);
        if (!counted) return;
        const left = (this.queuedPublic.get(chunk.threadId) ?? 1) - 1;
        if (left > 0) this.queuedPublic.set(chunk.threadId, left);
        else this.queuedPublic.delete(chunk.threadId);
      });
    this.tail = Promise.all([this.tail, stored]).then(() => {});
  }

  private async remember(closed: NewMemoryChunk): Promise<void> {
    const store = this.options.store;
    if (this.followMoves(closed)) return;
    // A window open (or a chunk queued) when its thread was merged goes where its messages went.
    const thread = await survivorOf(store, closed.threadId);
    const asked = thread?.id === closed.threadId ? thread : await store.getThread(closed.threadId);
    if (!thread || !asked) return;
    // A window held back (a stalled node, a queue stuck behind an embedder) past what claims cover
    // would file again what another node filed: the stored windows say what it did.
    if (closed.live && Date.parse(closed.firstTs) < this.now() - CLAIMS_TRUSTED_MS) {
      const filed = await this.filedAlready(thread.id, closed.messageIds);
      if (filed.size) return this.realign(closed, filed);
    }
    const given = thread.id === closed.threadId ? closed : { ...closed, threadId: thread.id };
    // An exchange is its asker's alone if the thread it was asked in is privileged, wherever it is
    // filed: a merge moves the chunks it finds as they are, and this one is filed as one of them.
    const chunk = asked.privileged && given.kind === 'exchange' && given.owner ? { ...given, privileged: true } : given;
    // Its asker forgot their private memory after it was queued (forgetPrivate).
    const forgotten = () => chunk.privileged && this.forgotten.has(closed);
    if (forgotten()) return;
    const now = new Date(this.now()).toISOString();
    let vector: Float32Array | undefined;
    try {
      [vector] = await this.embed([chunk]);
      this.embedFailures.succeeded();
    } catch (err) {
      // Kept all the same: the next start's load embeds it again.
      this.options.onEmbedFailure?.();
      this.embedFailures.failed((err as Error)?.message, { threadId: chunk.threadId }, 'memory chunk not embedded; it is indexed at the next start');
    }
    // Before the write commits: a thread operation may move or delete the chunk from then on.
    const watch = this.watchIndex();
    try {
      await this.fileAndIndex(closed, chunk, now, vector, forgotten, watch);
    } finally {
      watch.release();
    }
  }

  /** remember's write of `chunk` (from the window or exchange `closed`) and its indexing. */
  private async fileAndIndex(
    closed: NewMemoryChunk,
    chunk: NewMemoryChunk,
    now: string,
    vector: Float32Array | undefined,
    forgotten: () => boolean,
    watch: IndexWatch,
  ): Promise<void> {
    const { store } = this.options;
    let stored: MemoryChunk | null;
    try {
      // The embedding may take a model server seconds: the store files the chunk, in the write's own
      // transaction, where a message for its thread would go now. A thread merged meanwhile sends it
      // to the survivor (`stored.threadId`), with the messages it holds; a thread deleted meanwhile
      // or archived without a merge takes nothing, as it takes no message: the chunk would be one
      // nobody can read or delete, or one nobody searches. Its messages are stored already.
      stored = await this.fileWithQuestion(chunk, now, vector, forgotten);
    } catch (err) {
      // Its asker forgot their private asks in the room after asking it, here or on another node.
      if (err instanceof errors.ERR_THREAD_NOT_FOUND || err instanceof ForgottenExchange) return;
      if (err instanceof ClaimedMessages) return this.realign(closed, new Set(err.claimed));
      if (err instanceof MovedMessages) return this.followStore(closed, err.moved);
      if (err instanceof errors.ERR_THREAD_ARCHIVED) {
        this.log.info({ threadId: closed.threadId, reason: (err as Error).message }, 'memory chunk dropped: its thread takes no memory');
        return;
      }
      throw err;
    }
    if (!stored) return;
    // Forgotten while it was being written: forgetPrivate's read of the store may have missed it.
    if (forgotten()) {
      this.forgottenRows.set(closed, stored.id);
      await store.applyThreadChange({ at: now, expect: [], deleteMemory: [stored.id] });
      await this.purge();
      return;
    }
    if (vector) {
      const indexed = await this.indexFiled(stored, vector, watch);
      if (indexed) for (const listen of this.indexListeners) listen(indexed, vector);
    }
    this.changed([stored.id]);
    await this.pruneAfterAdding(stored.threadId);
  }

  /**
   * Indexes a chunk remember just filed (settle). Returns the chunk when it is still where it was
   * filed; null when it moved or went (whatever moved it told the listeners, or has the bridges
   * count again).
   */
  private async indexFiled(stored: MemoryChunk, vector: Float32Array, watch: IndexWatch): Promise<MemoryChunk | null> {
    await this.options.index.upsert([{ rowId: stored.id, vector, meta: metaOf(stored) }]);
    if (!(await this.settle([stored.id], watch))) return stored;
    const [now] = await this.options.store.getMemoryChunks([stored.id]);
    return now && scopeOf(now) === scopeOf(stored) ? now : null;
  }

  /**
   * After new rows `ids` were indexed as written: a reindex, applyStored, forget or retention of
   * some of them since `watch` began (before their write committed) may have moved or deleted them
   * after the write, and reached the index first, and the upsert just made put them back as written
   * (in the old thread's scope, or in the index after their deletion). Those are read again and indexed as
   * the store holds them, until a read was followed by no change touching them before its write.
   * There is no cap: a read that another change followed may be older than that change's own, which
   * landed first, and stopping after it left the index holding a chunk where the store no longer
   * does. The reads stop when the changes do: a read here touches no watch, so only a change that
   * committed meanwhile (reindex, applyStored, forget, retention) brings another round, one read of
   * the rows it touched. Rows, not threads: those calls learn a chunk's thread from the store, after
   * the move. Returns whether it read any again.
   */
  private async settle(ids: number[], watch: IndexWatch, index = (again: number[]) => this.indexAsStored(again, false)): Promise<boolean> {
    let read = false;
    for (let again = watch.touchedOf(ids); again.length; again = watch.touchedOf(ids)) {
      await index(again);
      read = true;
    }
    return read;
  }

  /**
   * Which of `messageIds` a window stored in the thread holds: read a page at a time, without
   * vectors. Only for a window older than the claims cover (CLAIMS_TRUSTED_MS), which is rare: a
   * thread's whole memory is read.
   */
  private async filedAlready(threadId: string, messageIds: readonly string[]): Promise<Set<string>> {
    const wanted = new Set(messageIds);
    const found = new Set<string>();
    for (let after = 0; ;) {
      const page = await this.options.store.scanThreadMemory(threadId, after, LOAD_PAGE, false);
      if (!page.length) return found;
      after = page[page.length - 1].id;
      for (const c of page) if (c.kind === 'window') for (const id of c.messageIds) if (wanted.has(id)) found.add(id);
    }
  }

  /** Keeps the thread within its cap and, once a RETENTION_SWEEP_MS, forgets what expired. */
  private async pruneAfterAdding(threadId: string): Promise<void> {
    const left = (this.headroom.get(threadId) ?? 0) - 1;
    const full = !this.headroom.has(threadId) || left < 0;
    if (!full) this.headroom.set(threadId, left);
    if (!full && this.now() < this.nextRetentionSweep) return;
    await this.prune(full ? threadId : null);
    if (full) this.headroom.set(threadId, this.maxChunksPerThread - (await this.options.store.countMemoryChunks(threadId)));
  }

  /**
   * fileOrRefresh; an exchange whose question a split moved to another thread since it was asked
   * (MovedMessages names it) goes there whole, as a split sends the exchanges it finds stored. A
   * split moving it again meanwhile sends it on, FILING_ROUNDS times at most.
   */
  private async fileWithQuestion(chunk: NewMemoryChunk, now: string, vector: Float32Array | undefined, forgotten: () => boolean): Promise<MemoryChunk | null> {
    for (let round = 1; ; round++) {
      try {
        return await this.fileOrRefresh(chunk, now, vector, forgotten);
      } catch (err) {
        if (!(err instanceof MovedMessages) || chunk.kind !== 'exchange' || !err.moved.length || round >= FILING_ROUNDS) throw err;
        chunk = { ...chunk, threadId: err.moved[0].threadId };
      }
    }
  }

  /**
   * Stores `chunk` where the store files it, unless a chunk it files it beside repeats it: the same
   * words in the same scope (one indexed lookup, so a thread of any size costs the same) and a
   * near-identical vector; that one is refreshed instead and null returned (null too when the
   * chunk was forgotten meanwhile). The words are looked up in the write's own transaction
   * (Store.fileMemoryChunk), where the thread is resolved: looked up before, a merge committing
   * in between could bring the survivor's repeat in, or send the chunk to a survivor holding one.
   * The vectors are compared here (an old chunk's may have to be embedded again), and the write
   * tried again when they are far, or when the repeat went before it was refreshed.
   */
  private async fileOrRefresh(chunk: NewMemoryChunk, now: string, vector: Float32Array | undefined, forgotten: () => boolean): Promise<MemoryChunk | null> {
    const { store } = this.options;
    // Without a vector nothing is a repeat: the vectors decide.
    if (!vector) return store.addMemoryChunk(chunk, now);
    const embedded = { vector, model: this.vectorModel };
    const notRepeats: number[] = [];
    for (let round = 0; round < FILING_ROUNDS; round++) {
      const filed = await store.fileMemoryChunk(chunk, now, embedded, notRepeats);
      if ('stored' in filed) return filed.stored;
      if (forgotten()) return null;
      const [theirs] = await this.vectorsOf([filed.repeat]);
      if (cosine(vector, theirs) < DUPLICATE_COSINE) notRepeats.push(filed.repeat.id);
      else if (await store.touchMemoryChunk(filed.repeat.id, now)) return null;
    }
    // Each round met a change committed since the one before: the chunk is kept all the same, a
    // copy at worst (as a merge of two threads holding the same passage leaves), never a loss.
    return store.addMemoryChunk(chunk, now, embedded);
  }

  private async prune(threadId: string | null): Promise<void> {
    this.nextRetentionSweep = this.now() + RETENTION_SWEEP_MS;
    await this.options.store.pruneMemoryClaims(new Date(this.now() - CLAIM_KEEP_MS).toISOString());
    const olderThan = new Date(this.now() - this.retentionMs).toISOString();
    for (;;) {
      const removed = await this.options.store.pruneMemory(threadId, this.maxChunksPerThread, olderThan, DELETE_SLICE);
      this.touch(removed);
      if (removed.length) await this.options.index.remove(removed);
      this.changed(removed);
      if (removed.length < DELETE_SLICE) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private changed(ids: number[]): void {
    if (ids.length) this.options.onChanged?.(ids);
  }

  /** Memory changed other than by a stored chunk (a thread operation, another node): count again. */
  private recount(): void {
    this.headroom.clear();
  }

  /** Indexes `chunks`; returns their vectors, in order. */
  private async indexChunks(chunks: StoredMemoryChunk[]): Promise<Float32Array[]> {
    const vectors = await this.vectorsOf(chunks);
    await this.options.index.upsert(chunks.map((c, i) => ({ rowId: c.id, vector: vectors[i], meta: metaOf(c) })));
    return vectors;
  }

  /**
   * Public chunks are embedded as documents (what they are searched as), private exchanges as
   * queries; neither through the embedding cache (the constructor).
   */
  private async embed(chunks: NewMemoryChunk[]): Promise<Float32Array[]> {
    const out: Float32Array[] = new Array(chunks.length);
    for (const privileged of [false, true]) {
      const at = chunks.flatMap((c, i) => (c.privileged === privileged ? [i] : []));
      if (!at.length) continue;
      const vectors = await this.options.embedder.embed(
        at.map((i) => chunks[i].text),
        undefined,
        privileged ? 'query' : 'document',
      );
      at.forEach((i, j) => (out[i] = vectors[j]));
    }
    return out;
  }
}

/**
 * A window's context line: its first line when that is the line said just before the window
 * (windows.ts), whose message the window before holds; undefined when it has none.
 */
export function contextLineOf(chunk: Pick<MemoryChunk, 'kind' | 'text' | 'messageIds'>): string | undefined {
  if (chunk.kind !== 'window') return undefined;
  const lines = chunk.text.split('\n');
  return lines.length > chunk.messageIds.length ? lines[0] : undefined;
}

/**
 * Memory candidates (best first) with the window that holds a line's message right behind a
 * window ranked ahead of it whose best line was that same line as its context: both match the
 * line alike, but only the holder cites the message, so an answer drawn from that line cites
 * where it was said (the carrier keeps its place: what follows its context line may be the answer).
 */
export function ownersFollowContext<T extends { id: number; line?: string }>(ranked: T[], contextLine: (id: number) => string | undefined): T[] {
  const out: T[] = [];
  const placed = new Set<T>();
  for (const hit of ranked) {
    if (placed.has(hit)) continue;
    out.push(hit);
    placed.add(hit);
    if (!hit.line || contextLine(hit.id) !== hit.line) continue;
    const owner = ranked.find((o) => !placed.has(o) && o.line === hit.line && contextLine(o.id) !== hit.line);
    if (owner) {
      out.push(owner);
      placed.add(owner);
    }
  }
  return out;
}

/**
 * The words of a question worth matching against lines: without stopwords ("what", "did", "the"
 * match every line and only blur the ranking); the question itself when nothing else is left.
 */
export function lineQuery(question: string): string {
  const kept = words(question).filter((w) => !STOPWORDS.has(w));
  return kept.length ? kept.join(' ') : question;
}
