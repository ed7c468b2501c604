/**
 * Stage 2, rerank: with more than five candidates the ChatModel picks the 3–5 most relevant from
 * their snippets alone. Whatever it answers is sanitised; on failure, timeout or an unusable answer
 * the first five (stage-1 order) are kept.
 */
import { RERANK_MAX, RERANK_MIN } from '../ai/rerank-parse.js';
import type { ChatModel } from '../ai/types.js';
import type { Candidate } from './types.js';
import type { Logger } from '../logger.js';

export { RERANK_MAX, RERANK_MIN };
export const DEFAULT_RERANK_TIMEOUT_MS = 15_000;

export type RerankMethod = 'skipped' | 'model' | 'fallback';

export interface RerankOptions {
  roomId: string;
  log: Logger;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Keeps the valid, distinct, in-range indices in the model's order, at most RERANK_MAX; tops up
 * from stage-1 order to RERANK_MIN. Empty when the model gave nothing usable.
 */
export function sanitizeSelection(indices: unknown, count: number): number[] {
  if (!Array.isArray(indices)) return [];
  const picked: number[] = [];
  for (const i of indices) {
    if (Number.isInteger(i) && i >= 0 && i < count && !picked.includes(i)) picked.push(i);
    if (picked.length === RERANK_MAX) break;
  }
  if (picked.length === 0) return [];
  for (let i = 0; picked.length < Math.min(RERANK_MIN, count); i++) if (!picked.includes(i)) picked.push(i);
  return picked;
}

/** Stage 2. Never throws for a model failure; an abort of `signal` does propagate. */
export async function rerankCandidates(
  chat: ChatModel,
  question: string,
  candidates: Candidate[],
  options: RerankOptions,
): Promise<{ selected: Candidate[]; method: RerankMethod }> {
  let method: RerankMethod = 'skipped';
  let order = candidates.map((_, i) => i);
  if (candidates.length > RERANK_MAX) {
    const picked = await askModel(chat, question, candidates, options);
    method = picked.length ? 'model' : 'fallback';
    order = picked.length ? picked : order.slice(0, RERANK_MAX);
  }
  const selected = order.map((i) => candidates[i]);
  options.log.debug({ roomId: options.roomId, selected: selected.length, method }, `Selected ${selected.length} documents after reranking`);
  return { selected, method };
}

/**
 * The selection with the room's own item first (when stage 1 found it): a question asked in an
 * item's room is about that item before anything else, and a reranker that weighs snippets alone
 * drops it for another item whose snippet shares a word with the question (asked about a triage
 * pilot in its room, "what did the pilot change?" was answered from an outage report's "the
 * company listed three changes"). The selection keeps its size; its last is left out for the item.
 * An empty selection (the documents were judged irrelevant) stays empty.
 */
export function roomItemFirst(selected: Candidate[], candidates: Candidate[], roomId: string): Candidate[] {
  const own = candidates.find((c) => c.key === roomId);
  if (!own || !selected.length || selected[0] === own) return selected;
  const others = selected.filter((c) => c !== own);
  return [own, ...others.slice(0, selected.length - 1)];
}

async function askModel(chat: ChatModel, question: string, candidates: Candidate[], options: RerankOptions): Promise<number[]> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_RERANK_TIMEOUT_MS;
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const result = await Promise.race([
      chat.rerank(
        question,
        candidates.map((c) => c.snippet),
        controller.signal,
      ),
      timeout,
    ]);
    if (result === 'timeout') {
      controller.abort(new Error('rerank timed out'));
      options.log.warn({ roomId: options.roomId, timeoutMs }, 'rerank timed out; keeping the first five');
      return [];
    }
    const picked = sanitizeSelection(result, candidates.length);
    if (!picked.length) options.log.warn({ roomId: options.roomId }, 'rerank gave no usable indices; keeping the first five');
    return picked;
  } catch (err) {
    if (options.signal?.aborted) throw err;
    options.log.warn({ roomId: options.roomId, err: (err as Error).message }, 'rerank failed; keeping the first five');
    return [];
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}
