/**
 * The three-stage pipeline (docs/architecture.md) up to the prompt: broad search → rerank → full
 * context. The assistant streams the model's answer to the prompt this returns.
 */
import { newNonce } from '../ai/grounded-prompt.js';
import type { ChatMessage, ChatModel } from '../ai/types.js';
import type { AssistantStage, Source } from '../protocol/messages.js';
import type { SearchService } from '../search/types.js';
import type { Store } from '../store/types.js';
import { broadSearch } from './candidates.js';
import { buildContext } from './context.js';
import { buildPrompt, PROMPT_MAX_CHARS, TOPIC_MAX_CHARS } from './prompt.js';
import { DEFAULT_RERANK_TIMEOUT_MS, rerankCandidates, type RerankMethod } from './rerank.js';
import { type Candidate, type RoomView } from './types.js';
import { silentLogger, type Logger } from '../logger.js';
import { required, positiveNumber, numberWithin } from '../options.js';

export interface PipelineOptions {
  store: Store;
  search: SearchService;
  chat: ChatModel;
  log?: Logger;
  /** Longest wait for the reranker before keeping the first five. */
  rerankTimeoutMs?: number;
  /** Whole-prompt budget in characters. */
  promptMaxChars?: number;
}

/** Timings (ms) and counts of each stage, returned with the answer. */
export interface PipelineStages {
  /** `serviceMs`: the search service call (embedding included); the rest of `ms` builds the candidates. */
  search: { ms: number; serviceMs: number; hits: number[]; candidates: number };
  rerank: { ms: number; method: RerankMethod; selected: number };
  context: { ms: number; sources: number; roomContextChars: number; promptChars: number; promptTokens: number };
}

export interface PreparedAnswer {
  messages: ChatMessage[];
  sources: Source[];
  /** Stage-1 candidates, best first (for evaluation and troubleshooting). */
  candidates: Candidate[];
  selected: Candidate[];
  stages: PipelineStages;
}

export interface PrepareHooks {
  onStage?(stage: AssistantStage): void;
  signal?: AbortSignal;
}

/** Runs stages 1–3 for one question in one room. */
export class RagPipeline {
  private readonly log: Logger;
  private readonly rerankTimeoutMs: number;
  private readonly promptMaxChars: number;

  constructor(private readonly options: PipelineOptions) {
    for (const name of ['store', 'search', 'chat'] as const) required('RagPipeline', name, options[name]);
    this.rerankTimeoutMs = options.rerankTimeoutMs ?? DEFAULT_RERANK_TIMEOUT_MS;
    this.promptMaxChars = options.promptMaxChars ?? PROMPT_MAX_CHARS;
    positiveNumber('RagPipeline', 'rerankTimeoutMs', this.rerankTimeoutMs);
    numberWithin('RagPipeline', 'promptMaxChars', this.promptMaxChars, 2000);
    this.log = options.log ?? silentLogger;
  }

  async prepare(room: RoomView, question: string, hooks: PrepareHooks = {}): Promise<PreparedAnswer> {
    const { signal } = hooks;
    hooks.onStage?.('searching');
    let t = performance.now();
    const found = await broadSearch({ search: this.options.search, store: this.options.store, log: this.log }, room, question);
    const search = { ms: since(t), serviceMs: round(found.serviceMs), hits: found.counts, candidates: found.candidates.length };
    signal?.throwIfAborted();

    hooks.onStage?.('reranking');
    t = performance.now();
    const ranked = await rerankCandidates(this.options.chat, question, found.candidates, {
      roomId: room.id,
      log: this.log,
      timeoutMs: this.rerankTimeoutMs,
      signal,
    });
    const rerank = { ms: since(t), method: ranked.method, selected: ranked.selected.length };
    signal?.throwIfAborted();

    t = performance.now();
    const built = await buildContext(this.options.store, ranked.selected, question);
    const topic = room.context.slice(0, TOPIC_MAX_CHARS);
    this.log.info({ roomId: room.id, roomContextChars: topic.length }, `room context ${topic.length} chars`);
    const prompt = buildPrompt({ topic, sources: built.grounded, question }, newNonce(), this.promptMaxChars);
    const kept = new Set(prompt.sources.map((s) => s.n));
    const sources = built.sources.filter((s) => kept.has(s.n));
    const context = { ms: since(t), sources: sources.length, roomContextChars: topic.length, promptChars: prompt.chars, promptTokens: prompt.tokens };
    return { messages: prompt.messages, sources, candidates: found.candidates, selected: ranked.selected, stages: { search, rerank, context } };
  }
}

/** Milliseconds since `t`, to 0.01 ms. */
export function since(t: number): number {
  return round(performance.now() - t);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
