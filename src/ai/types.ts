/** The two AI seams. src/parts.ts picks an implementation from AI_PROVIDER. */

/** Turns texts into vectors. Vectors are L2-normalised so a dot product is the cosine. */
export interface Embedder {
  /** Model name; stored with vectors so a change of model is detected. */
  readonly model: string;
  readonly dimensions: number;
  /** Scores below this are treated as unrelated (0.3 suits nomic-embed-text). */
  readonly similarityThreshold: number;
  /**
   * A question whose best match in the index scores below this is not covered by it: the
   * assistant says so instead of answering (unless the discussion covers it). At least
   * similarityThreshold; tuned per embedder with `npm run eval:retrieval`.
   */
  readonly relevanceThreshold: number;
  /**
   * Vectors for `texts`. `purpose` says what they are: `document` for indexed content (which may be
   * cached), `query` (the default) for questions and searches, which are never kept.
   */
  embed(texts: string[], signal?: AbortSignal, purpose?: EmbedPurpose): Promise<Float32Array[]>;
  /** Readies an in-process embedder's code before the first real text (the server calls it once it is ready). */
  warmUp?(): Promise<void>;
}

/** What texts are embedded for. */
export type EmbedPurpose = 'document' | 'query';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Answers, reranks and summarises. Every answer streams. */
export interface ChatModel {
  readonly model: string;
  /** Streams the answer in small pieces. Aborting the signal ends the stream. */
  stream(messages: ChatMessage[], signal?: AbortSignal): AsyncIterable<string>;
  /**
   * Picks the snippets most relevant to `query`; returns their 0-based indices, best first
   * (3 to 5 of them when there are that many). Falls back to the first five on failure.
   */
  rerank(query: string, snippets: string[], signal?: AbortSignal): Promise<number[]>;
  /** A short summary of `text`, focused on `query` when given. */
  summarize(text: string, query?: string, signal?: AbortSignal): Promise<string>;
}

/** What `/readyz` and `salon doctor` report about a provider. */
export interface ProviderHealth {
  ok: boolean;
  provider: string;
  detail: string;
}
