/**
 * The three-stage pipeline (docs/architecture.md) up to the prompt: broad search → rerank → full
 * context, beside the thread's recent chat. Before any model call it decides whether anything it
 * found is relevant enough; when nothing is, the answer abstains. The assistant streams the
 * model's answer to the prompt this returns.
 */
import { asksWhoIsQuoted, detailAsked, withoutItemNamed, withoutMakerStance } from '../ai/item-questions.js';
import { courtesyOf, courtesyReply } from '../ai/courtesy.js';
import { newNonce } from '../ai/grounded-prompt.js';
import type { ChatMessage, ChatModel } from '../ai/types.js';
import type { AssistantStage, Source } from '../protocol/messages.js';
import type { SearchService } from '../search/types.js';
import type { Store } from '../store/types.js';
import { broadSearch, heldTogether, itemCommentCandidates, termsNeeded } from './candidates.js';
import { buildContext } from './context.js';
import { chapterAsked } from '../ai/video-chapters.js';
import { buildPrompt, PROMPT_MAX_CHARS, TOPIC_MAX_CHARS } from './prompt.js';
import { DEFAULT_RERANK_TIMEOUT_MS, RERANK_MAX, rerankCandidates, roomItemFirst, type RerankMethod } from './rerank.js';
import { conversationSource, recentChat, type ChatWindow } from './recent-chat.js';
import { aboutTheRoom, asksAboutComments, asksAboutDiscussion, chatAnswers, leansBack, namesIn, questionFocus, withAntecedent } from '../ai/questions.js';
import type { MemorySearch } from '../memory/types.js';
import { choosePast, pastSources, PAST_CHUNKS } from './past-conversation.js';
import { type Candidate, type RoomView } from './types.js';
import { silentLogger, type Logger } from '../logger.js';
import { required, positiveNumber, numberWithin } from '../options.js';
import { safeCut } from '../content/text.js';

export interface PipelineOptions {
  store: Store;
  search: SearchService;
  chat: ChatModel;
  log?: Logger;
  /** Longest wait for the reranker before keeping the first five. */
  rerankTimeoutMs?: number;
  /** Whole-prompt budget in characters (PROMPT_TOKEN_BUDGET × 4). */
  promptMaxChars?: number;
  /** The thread's conversation memory, searched beside the documents. */
  memory?: MemorySearch;
  /**
   * Cosine under which indexed content does not cover a question: the embedder's
   * relevanceThreshold. With nothing above it and no recent chat that answers, the ask abstains.
   * Omitted: never abstain for lack of documents.
   */
  relevanceThreshold?: number;
}

/** The thread an ask belongs to, and the seq of the question's own message (the recent chat ends before it). */
export interface ThreadView {
  id: string;
  beforeSeq?: number;
  /** Who asks: decides which memory they may see (none without it). */
  asker?: { userId: string; private: boolean };
}

/** Timings (ms) and counts of each stage, returned with the answer. */
export interface PipelineStages {
  /** `serviceMs`: the search service call (embedding included); the rest of `ms` builds the candidates. */
  /** `best`: the question-alone search's best score, which decides relevance (abstention). */
  search: { ms: number; serviceMs: number; hits: number[]; candidates: number; best: number };
  rerank: { ms: number; method: RerankMethod; selected: number };
  /** `memoryHits`: what the memory search returned; `pastSources`: how many of them the prompt kept. */
  context: {
    ms: number;
    sources: number;
    roomContextChars: number;
    recentMessages: number;
    memoryHits: number;
    pastSources: number;
    promptChars: number;
    promptTokens: number;
  };
}

export interface PreparedAnswer {
  /** True when no source was relevant enough: `messages` is empty and the answer says so without a model call. */
  abstained: boolean;
  /** The answer itself, when the question asks nothing of the sources (thanks, a greeting: courtesy.ts): no model call, no sources. */
  reply?: string;
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

  async prepare(room: RoomView, question: string, hooks: PrepareHooks = {}, thread?: ThreadView): Promise<PreparedAnswer> {
    const { signal } = hooks;
    const courtesy = courtesyOf(question.trim());
    if (courtesy) return courteous(courtesyReply(courtesy, room.details?.kind));
    hooks.onStage?.('searching');
    let t = performance.now();
    const memory = this.options.memory;
    const asker = thread?.asker;
    let questionVector!: (vector: Float32Array | null) => void;
    const vector = new Promise<Float32Array | null>((resolve) => (questionVector = resolve));
    // What the question asks, without a sentence in front that asks nothing; the prompt keeps the
    // asker's words. A follow-up that leans on the exchange before it ("what did she say?", "and
    // why?") is searched with the names of that exchange, so its recent chat is read first; any
    // other question's is read beside the searches.
    const focused = questionFocus(question);
    // "What does the article say about the keyboard?" in an item's room asks the item about the
    // keyboard: "article" names which source, so it is neither searched for nor weighed.
    // "What does the author think about crunch?" asks it of the item too: "what does it say about crunch?".
    const stance = room.details ? withoutMakerStance(focused) : null;
    const itemNamed = room.details ? (withoutItemNamed(stance ?? focused, room.details.kind) ?? stance) : null;
    const asked = itemNamed ?? focused;
    const earlyChat = thread && leansBack(asked) ? await recentChat(this.options.store, thread.id, thread.beforeSeq) : undefined;
    const searched = earlyChat ? withAntecedent(asked, earlyChat.lines, room.title) : asked;
    const [found, chat, remembered] = await Promise.all([
      broadSearch({ search: this.options.search, store: this.options.store, log: this.log }, room, searched, undefined, questionVector, signal).finally(() =>
        questionVector(null),
      ),
      earlyChat !== undefined ? earlyChat : thread ? recentChat(this.options.store, thread.id, thread.beforeSeq) : null,
      memory && thread && asker
        ? memory.search(searched, { threadId: thread.id, userId: asker.userId, private: asker.private }, PAST_CHUNKS * 2, signal, vector)
        : [],
    ]);
    // Asked what the comments say in an item's room, its commenters are the sources (their words
    // rarely share the question's, so search may find none of them), never another item's.
    const aboutComments = room.category === undefined && asksAboutComments(focused);
    // "Who wrote this?": asked of the room's item, answered from its details (RoomView.details).
    const ofItsDetails = room.details !== undefined && detailAsked(focused) !== null;
    // "Who is quoted?": the item's sentences giving someone words (buildContext's `quotes`).
    const quotesAsked = room.details !== undefined && asksWhoIsQuoted(focused);
    // "What happens at 3:00?": the video's chapter lines (buildContext's `chapters`).
    const chaptersAsked = room.details?.kind === 'video' && chapterAsked(focused) !== null;
    const candidates =
      room.category !== undefined
        ? inCategory(found.candidates, room.category, searched)
        : aboutComments
          ? found.candidates.filter((c) => c.kind !== 'comment' || c.itemId === room.id)
          : ofItsDetails || quotesAsked || chaptersAsked || itemNamed !== null || pointsAtTheItem(asked, searched)
            ? ofTheItem(found.candidates, room.id)
            : found.candidates;
    const best = Number.isFinite(found.questionBest) ? Math.round(found.questionBest * 1000) / 1000 : 0;
    const search = { ms: since(t), serviceMs: round(found.serviceMs), hits: found.counts, candidates: candidates.length, best };
    signal?.throwIfAborted();

    const threshold = this.options.relevanceThreshold ?? -Infinity;
    const searchedComments = aboutComments ? candidates.filter((c) => c.itemId === room.id && c.kind === 'comment').slice(0, RERANK_MAX) : [];
    const comments = aboutComments
      ? [
          ...searchedComments,
          ...(await itemCommentCandidates(
            this.options.store,
            room.id,
            searched,
            new Set(searchedComments.map((c) => c.key)),
            RERANK_MAX - searchedComments.length,
          )),
        ]
      : [];
    const documentsRelevant =
      candidates.length > 0 &&
      (found.questionBest >= threshold ||
        aboutTheRoom(asked) ||
        ofItsDetails ||
        comments.length > 0 ||
        quotesAsked ||
        chaptersAsked ||
        stance !== null ||
        (await heldTogether(this.options.store, candidates, searched, room.category === undefined ? room.id : undefined)));
    const chatRelevant = chat !== null && chatAnswers(asked, chat.lines);
    const recentIds = new Set(chat?.messages.map((m) => m.id) ?? []);
    const past = choosePast(searched, remembered, recentIds, threshold, asksAboutDiscussion(focused));
    if (!documentsRelevant && !chatRelevant && !past.length) {
      this.log.info({ roomId: room.id, best: round(found.questionBest), threshold }, 'nothing relevant enough: abstaining');
      const none = { ms: 0, method: 'skipped' as RerankMethod, selected: 0 };
      const context = {
        ms: 0,
        sources: 0,
        roomContextChars: 0,
        recentMessages: 0,
        memoryHits: remembered.length,
        pastSources: 0,
        promptChars: 0,
        promptTokens: 0,
      };
      return { abstained: true, messages: [], sources: [], candidates, selected: [], stages: { search, rerank: none, context } };
    }

    hooks.onStage?.('reranking');
    t = performance.now();
    // Asked who the item quotes, or of a video's chapters, the item is the one source: no snippet holds the answer's words.
    const itemPassage = quotesAsked ? 'quotes' : chaptersAsked ? 'chapters' : undefined;
    const itemAlone = itemPassage ? candidates.filter((c) => c.itemId === room.id && c.kind !== 'comment').slice(0, 1) : [];
    const chosen = comments.length ? comments : itemAlone;
    const ranked = chosen.length
      ? { method: 'skipped' as RerankMethod, selected: chosen }
      : documentsRelevant
        ? await rerankCandidates(this.options.chat, searched, candidates, {
            roomId: room.id,
            log: this.log,
            timeoutMs: this.rerankTimeoutMs,
            signal,
          })
        : { method: 'skipped' as RerankMethod, selected: [] };
    const rerank = { ms: since(t), method: ranked.method, selected: ranked.selected.length };
    signal?.throwIfAborted();

    t = performance.now();
    const selected = chosen.length ? chosen : roomItemFirst(ranked.selected, candidates, room.id);
    const built = await buildContext(this.options.store, selected, searched, { roomItemId: room.id, ...(itemAlone.length ? { itemPassage } : {}) });
    // Cut between characters: a cut emoji's first half reached the prompt as U+FFFD.
    const topic = room.context.slice(0, safeCut(room.context, TOPIC_MAX_CHARS));
    this.log.debug({ roomId: room.id, roomContextChars: topic.length }, `Room context - Title: ${room.title}, Summary length: ${topic.length}`);
    const recalled = await pastSources(this.options.chat, searched, past, built.grounded.length + 1, signal);
    const grounded = [...built.grounded, ...recalled.grounded];
    const listed = [...built.sources, ...recalled.sources];
    if (chat) {
      const n = grounded.length + 1;
      grounded.push({ n, label: chat.source.title, content: chat.lines.join('\n'), section: 'recent' });
      listed.push({ n, ...chat.source });
    }
    const prompt = buildPrompt({ topic, ...(room.details ? { item: room.details } : {}), sources: grounded, question }, newNonce(), this.promptMaxChars);
    const sources = keptSources(
      listed,
      prompt.sources.map((s) => s.n),
      chat,
      prompt.recentLinesDropped,
    );
    const recentMessages = chat ? chat.messages.length - prompt.recentLinesDropped : 0;
    const context = {
      ms: since(t),
      sources: sources.length,
      roomContextChars: topic.length,
      recentMessages,
      memoryHits: remembered.length,
      pastSources: prompt.sources.filter((s) => s.section === 'memory').length,
      promptChars: prompt.chars,
      promptTokens: prompt.tokens,
    };
    if (!prompt.sources.length) {
      // Nothing found had text to show (an item with only a title, items deleted meanwhile): a
      // model asked with no sources answers from its own memory, so the ask abstains instead.
      this.log.info({ roomId: room.id, selected: selected.length }, 'no source has text for the prompt: abstaining');
      return { abstained: true, messages: [], sources: [], candidates, selected, stages: { search, rerank, context } };
    }
    return {
      abstained: false,
      messages: prompt.messages,
      sources,
      candidates,
      selected,
      stages: { search, rerank, context },
    };
  }
}

/** The prepared answer to a courtesy: `reply`, with nothing searched. */
function courteous(reply: string): PreparedAnswer {
  const context = { ms: 0, sources: 0, roomContextChars: 0, recentMessages: 0, memoryHits: 0, pastSources: 0, promptChars: 0, promptTokens: 0 };
  return {
    abstained: false,
    reply,
    messages: [],
    sources: [],
    candidates: [],
    selected: [],
    stages: {
      search: { ms: 0, serviceMs: 0, hits: [], candidates: 0, best: 0 },
      rerank: { ms: 0, method: 'skipped', selected: 0 },
      context,
    },
  };
}

/**
 * Whether a question asked in an item's room points at the item: it says "it" or "they", or too
 * little to stand alone ("what's the catch?", "should I buy one?"), names no one, and the chat
 * before it lent it no names (`searched` is the question as asked). "How long did it last?" in
 * the cloud outage's room was answered with the right-to-repair law's "at least eight years after
 * the last unit", another item's sentence holding its one word; "should I buy one?" in the RISC-V
 * laptop's with the container ships' fuel deal (`to buy 400,000 tonnes a year`).
 */
function pointsAtTheItem(asked: string, searched: string): boolean {
  return searched === asked && leansBack(asked) && !namesIn(asked).length;
}

/** The room's item's candidates, or all of them when search found none of the item's. */
function ofTheItem(candidates: Candidate[], itemId: string): Candidate[] {
  const own = candidates.filter((c) => c.itemId === itemId);
  return own.length ? own : candidates;
}

/**
 * The candidates of a topic room's category, when stage 1 found any: a topic room's questions are
 * about its category ("what is this room about?" in the Tech room was answered from a triage
 * pilot's nurses), but its title says little to the searches. Not when only another category's
 * items hold most of the question's words in one sentence (`held`, termsNeeded) and none of the
 * category's does: a story runs across categories, and "why did Veldra delay the gigafactory?" in
 * the Tech room was answered from the Tech article's funding round, which names the factory, while
 * the Business article on the delay gave the reason.
 */
function inCategory(candidates: Candidate[], category: string, question: string): Candidate[] {
  const kept = candidates.filter((c) => c.chunk.category === category);
  if (!kept.length) return candidates;
  const needed = termsNeeded(question);
  const about = (c: Candidate) => (c.held ?? 0) >= needed;
  return kept.some(about) || !candidates.some(about) ? kept : candidates;
}

/** The listed sources the prompt kept; a recent chat that lost its oldest lines lists only the messages left. */
function keptSources(listed: Source[], kept: number[], chat: ChatWindow | null, recentLinesDropped: number): Source[] {
  const keep = new Set(kept);
  return listed
    .filter((s) => keep.has(s.n))
    .map((s) => {
      if (!chat || s.sourceType !== 'conversation' || s.id !== chat.source.id || !recentLinesDropped) return s;
      const messages = chat.messages.slice(recentLinesDropped);
      return { ...conversationSource(chat.source.id, messages, s.snippet), n: s.n };
    });
}

/** Milliseconds since `t`, to 0.01 ms. */
export function since(t: number): number {
  return round(performance.now() - t);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
