/**
 * Conversation memory (docs/architecture.md): what a thread remembers of its past, as chunks the
 * assistant searches beside the documents. An `exchange` is one question and its answer; a
 * `window` is a run of people's consecutive messages.
 */

export type MemoryChunkKind = 'exchange' | 'window';

/** A memory chunk as it is stored, before it has an id. */
export interface NewMemoryChunk {
  threadId: string;
  roomId: string;
  kind: MemoryChunkKind;
  /**
   * What is embedded and shown: `Q: … A: …`, or one `Name (date, time): text` line per message (a
   * window's first line may be the line said just before it, as its context: src/memory/windows.ts).
   */
  text: string;
  /** The messages it was made of, oldest first (empty for a private exchange, which is never stored as messages). */
  messageIds: string[];
  /** Who spoke, in order of first appearance. */
  authors: string[];
  /** Time of its first and last message (ISO-8601). */
  firstTs: string;
  lastTs: string;
  /** A private ask's exchange: searched only for its owner's private asks. */
  privileged: boolean;
  /** The asker who owns a privileged chunk; null otherwise. */
  owner: string | null;
  /**
   * In a fused thread's memory: `fused` (two near-identical chunks of the sources made one) or
   * `kept` (a chunk of the second source with no counterpart); absent elsewhere.
   */
  fusion?: 'fused' | 'kept';
  /** Where a fused thread's chunk came from: the source chunks and their threads. */
  lineage?: MemoryLineage;
  /**
   * An exchange: its asker's forget mark in the room as it was asked (Store.privateForgetMark);
   * null when it could not be read. The store refuses the exchange if it is filed privileged (a
   * private ask's, or one asked in a privileged thread) and the mark has moved on (or is null), so
   * a `/forget private` on any node covers it wherever it is still being answered or queued; a
   * public one is stored whatever its mark. The row of one the store checked keeps it, so a forget
   * that moved the mark to it leaves the exchange alone (Store.scanPrivateMemory); it is not read
   * back.
   */
  forgetMark?: number | null;
  /**
   * A window of the live chat (MessageWindows as messages are delivered): every node in the room
   * windows the messages it hears, so the store files it only if none of its messages is in a live
   * window filed already, claiming them as it files it (ClaimedMessages); absent elsewhere.
   */
  live?: true;
}

export interface MemoryLineage {
  chunkIds: number[];
  threadIds: string[];
  /**
   * The rooms of the source chunks: `/forget private` in one of them finds its asker's copies after
   * the source thread is gone (absent from lineages made before it was recorded).
   */
  roomIds?: string[];
}

export interface MemoryChunk extends NewMemoryChunk {
  /** Row id, also its label in the memory's vector index. */
  id: number;
  createdAt: string;
  /** Last stored or refreshed (a repeat of it came in): retention drops the oldest first. */
  updatedAt: string;
}

/** Who is asking, which decides what memory they may see. */
export interface MemoryAsker {
  threadId: string;
  /** The asker's user id. */
  userId: string;
  /** A private ask may see the asker's own privileged chunks; a public one sees none. */
  private: boolean;
}

/** A memory chunk found for a question. */
export interface MemoryHit {
  chunk: MemoryChunk;
  /** Cosine similarity of the whole chunk to the question (0 when only its words matched). */
  score: number;
  /** Its line that matched the question's words best, when one did. */
  line?: string;
}

/** What the assistant's pipeline needs of conversation memory. */
export interface MemorySearch {
  /**
   * The `k` chunks of the asker's thread that match `question` best (by meaning, and by the words
   * of their best line), best first; none when the thread's memory is switched off. Privileged chunks of other askers, and of anyone for a
   * public ask, never take part (filtered inside the search, not after it).
   */
  search(question: string, asker: MemoryAsker, k: number, signal?: AbortSignal, questionVector?: Promise<Float32Array | null>): Promise<MemoryHit[]>;
}
