/**
 * Small doubles for the RAG tests: a brute-force SearchService over the store's chunks, a RoomOutlet
 * that records frames, and a ChatModel whose rerank/stream/summarize a test scripts.
 */
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import type { ChatMessage, ChatModel, Embedder } from '../../src/ai/types.js';
import type { ServerMessage } from '../../src/protocol/messages.js';
import type { AnswerTag, RoomOutlet } from '../../src/rooms/types.js';
import { refOf } from '../../src/search/chunk-refs.js';
import type { ChunkHit, ChunkRef, ChunkSearchOptions, ItemHit, SearchService } from '../../src/search/types.js';
import type { Store } from '../../src/store/types.js';
import type { ChunkRow } from '../../src/content/types.js';

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Exact cosine search over every stored chunk (vectors cached by row id). */
export class MemorySearch implements SearchService {
  private readonly vectors = new Map<number, Float32Array>();
  queries: string[] = [];
  constructor(
    private readonly store: Store,
    private readonly embedder: Embedder,
  ) {}

  async searchChunks(query: string, options: ChunkSearchOptions): Promise<ChunkHit[]> {
    this.queries.push(query);
    const chunks = await this.store.scanChunks(0, 1_000_000);
    const missing = chunks.filter((c) => !this.vectors.has(c.rowId));
    if (missing.length) {
      const vs = await this.embedder.embed(missing.map((c) => c.text));
      missing.forEach((c, i) => this.vectors.set(c.rowId, vs[i]));
    }
    const [q] = await this.embedder.embed([query]);
    const threshold = options.useThreshold === false ? -Infinity : this.embedder.similarityThreshold;
    return chunks
      .filter((c) => !options.filter?.sourceType || c.sourceType === options.filter.sourceType)
      .map((chunk) => ({ chunk, score: dot(q, this.vectors.get(chunk.rowId)!) }))
      .filter((h) => h.score >= threshold)
      .sort((a, b) => b.score - a.score)
      .slice(0, options.k);
  }

  async searchChunksMany(queries: string[], options: ChunkSearchOptions): Promise<ChunkHit[][]> {
    return Promise.all(queries.map((q) => this.searchChunks(q, options)));
  }

  async searchChunkRefsMany(queries: string[], options: ChunkSearchOptions): Promise<ChunkRef[][]> {
    return (await this.searchChunksMany(queries, options)).map((hits) => hits.map(refOf));
  }

  async searchItems(): Promise<ItemHit[]> {
    return [];
  }
}

/** A SearchService returning fixed hits (and counting calls). */
export class FixedSearch implements SearchService {
  calls: string[] = [];
  constructor(private readonly hits: (query: string) => ChunkHit[]) {}
  async searchChunks(query: string, options: ChunkSearchOptions): Promise<ChunkHit[]> {
    this.calls.push(query);
    return this.hits(query).slice(0, options.k);
  }
  async searchChunksMany(queries: string[], options: ChunkSearchOptions): Promise<ChunkHit[][]> {
    return Promise.all(queries.map((q) => this.searchChunks(q, options)));
  }

  async searchChunkRefsMany(queries: string[], options: ChunkSearchOptions): Promise<ChunkRef[][]> {
    return (await this.searchChunksMany(queries, options)).map((hits) => hits.map(refOf));
  }
  async searchItems(): Promise<ItemHit[]> {
    return [];
  }
}

export interface SentFrame {
  roomId: string;
  /** The user a frame was sent to alone; undefined for a broadcast. */
  to?: string;
  frame: ServerMessage;
  /** The answer a broadcast frame was told to be part of. */
  tag?: AnswerTag;
  at: number;
}

/** Records every frame the assistant sends. */
export class RecordingOutlet implements RoomOutlet {
  frames: SentFrame[] = [];
  broadcast(roomId: string, frame: ServerMessage, tag?: AnswerTag): void {
    this.frames.push({ roomId, frame, ...(tag ? { tag } : {}), at: performance.now() });
  }
  sendToUser(roomId: string, userId: string, frame: ServerMessage): void {
    this.frames.push({ roomId, to: userId, frame, at: performance.now() });
  }
  ofType<T extends ServerMessage['type']>(type: T): Extract<ServerMessage, { type: T }>[] {
    return this.frames.filter((f) => f.frame.type === type).map((f) => f.frame as Extract<ServerMessage, { type: T }>);
  }
}

export interface ScriptedChatOptions {
  rerank?: (query: string, snippets: string[], signal?: AbortSignal) => Promise<number[]>;
  /** Pieces to stream (or a function making them from the messages); a thrown error fails the stream. */
  pieces?: string[] | ((messages: ChatMessage[]) => string[]);
  pieceDelayMs?: number;
  /** Fails the stream after this many pieces. */
  failAfter?: number;
  summarize?: (text: string, query?: string) => Promise<string>;
}

/** A ChatModel a test scripts; it records what it was asked. */
export class ScriptedChat implements ChatModel {
  readonly model = 'scripted';
  streamed: ChatMessage[][] = [];
  reranked: string[][] = [];
  summarized: string[] = [];
  constructor(public options: ScriptedChatOptions = {}) {}

  async rerank(query: string, snippets: string[], signal?: AbortSignal): Promise<number[]> {
    this.reranked.push(snippets);
    if (this.options.rerank) return this.options.rerank(query, snippets, signal);
    return snippets.map((_, i) => i).slice(0, 5);
  }

  async summarize(text: string, query?: string): Promise<string> {
    this.summarized.push(text);
    return this.options.summarize ? this.options.summarize(text, query) : `Summary of ${text.split('\n').length} lines.`;
  }

  async *stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
    this.streamed.push(messages);
    const p = this.options.pieces;
    const pieces = typeof p === 'function' ? p(messages) : (p ?? ['An ', 'answer ', '[1].']);
    let i = 0;
    for (const piece of pieces) {
      if (this.options.failAfter !== undefined && i >= this.options.failAfter) throw new Error('model exploded');
      if (this.options.pieceDelayMs) await new Promise((r) => setTimeout(r, this.options.pieceDelayMs));
      signal?.throwIfAborted();
      yield piece;
      i++;
    }
    if (this.options.failAfter !== undefined && i >= this.options.failAfter) throw new Error('model exploded');
  }
}

/**
 * The built-in model, whose answers wait to be written until `release` is called: `writing`
 * settles when the first answer starts streaming (its search and rerank are done).
 */
export function heldLocalChat(): { chat: LocalChatModel; writing: Promise<void>; release: () => void } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const writing = new Promise<void>((resolve) => (started = resolve));
  class HeldChat extends LocalChatModel {
    override async *stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string> {
      started();
      await held;
      yield* super.stream(messages, signal);
    }
  }
  return { chat: new HeldChat(new LocalEmbedder()), writing, release };
}

/** A body (or comment) chunk of a news item from HN, row `rowId`, titled by its item's id. */
export function chunkRow(rowId: number, itemId: string, text: string, part: ChunkRow['part'] = 'body', commentBy: string | null = null): ChunkRow {
  return {
    rowId,
    itemId,
    itemKind: 'news',
    itemTitle: itemId,
    itemUrl: null,
    itemPublishedAt: null,
    itemSource: 'hn',
    category: 'Tech',
    sourceType: 'document',
    textHash: String(rowId),
    ord: rowId,
    part,
    text,
    commentBy,
  };
}
