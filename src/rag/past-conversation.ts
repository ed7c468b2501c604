/**
 * The prompt's RELEVANT PAST CONVERSATION: which memory hits of the thread an answer uses, and how
 * they are shown and cited. Hits already inside the recent chat add nothing and are dropped; the
 * rest must be relevant enough (unless the question is about the discussion itself), at most
 * PAST_CHUNKS of them and PAST_MESSAGES_MAX messages in all (the recent chat's included); long ones
 * are summarised against the question. In the prompt they read oldest first, like the conversation they come from.
 */
import type { GroundedSource } from '../ai/grounded-prompt.js';
import type { ChatModel } from '../ai/types.js';
import type { MemoryHit } from '../memory/types.js';
import type { Source } from '../protocol/messages.js';
import { clip, withoutBidiControls } from '../text.js';
import { chatAnswers, sharedTerms } from '../ai/questions.js';
import { conversationLabel } from './recent-chat.js';

/** Memory chunks in one answer, at most. */
export const PAST_CHUNKS = 8;
/** Messages cited by one answer's conversation sources (past conversation and recent chat together), at most. */
export const PAST_MESSAGES_MAX = 60;
/** A chunk longer than this is summarised against the question before it enters the prompt. */
export const PAST_SUMMARY_CHARS = 900;
const SNIPPET_CHARS = 150;
/**
 * Content terms a hit's matched line must share with the question to count as relevant below the
 * cosine threshold: two words in one line ("the upcoming grand opening" / "tomorrow's grand
 * opening") are specific where one is not, even when a long question has more.
 */
export const SHARED_TERMS_MIN = 2;

/**
 * The hits an answer uses, in the order found (best first). A hit is relevant when its cosine
 * reaches `threshold` or its best line answers the question the way a chat line would
 * (chatAnswers: it names what the question names, or holds half its terms) or shares
 * SHARED_TERMS_MIN of its content terms. `recentIds`: messages
 * the recent chat shows already; `anyScore`: keep hits that are neither (the question is about
 * the discussion itself).
 */
export function choosePast(question: string, hits: MemoryHit[], recentIds: ReadonlySet<string>, threshold: number, anyScore: boolean): MemoryHit[] {
  const chosen: MemoryHit[] = [];
  // The recent chat's messages count against the same budget.
  let messages = recentIds.size;
  for (const hit of hits) {
    if (chosen.length >= PAST_CHUNKS) break;
    if (!anyScore && hit.score < threshold && !(hit.line && (chatAnswers(question, [hit.line]) || sharedTerms(question, hit.line) >= SHARED_TERMS_MIN)))
      continue;
    const ids = hit.chunk.messageIds;
    if (ids.length && ids.every((id) => recentIds.has(id))) continue;
    if (messages + ids.length > PAST_MESSAGES_MAX) continue;
    messages += ids.length;
    chosen.push(hit);
  }
  return chosen;
}

/**
 * The chosen hits as prompt sources (section `memory`, oldest first, numbered from `firstN`) and
 * as the answer's conversation sources with the same numbers, labelled by conversationLabel, which
 * quotes a speaker's name that could pose as another label or an order.
 */
export async function pastSources(
  chat: ChatModel,
  question: string,
  hits: MemoryHit[],
  firstN: number,
  signal?: AbortSignal,
): Promise<{ grounded: GroundedSource[]; sources: Source[] }> {
  const ordered = [...hits].sort((a, b) => a.chunk.lastTs.localeCompare(b.chunk.lastTs) || a.chunk.id - b.chunk.id);
  const contents = await Promise.all(ordered.map((h) => contentOf(chat, question, h.chunk.text, signal)));
  const grounded: GroundedSource[] = [];
  const sources: Source[] = [];
  ordered.forEach(({ chunk }, i) => {
    const n = firstN + i;
    const title = conversationLabel(chunk.authors, chunk.firstTs, chunk.lastTs);
    grounded.push({ n, label: title, content: contents[i], section: 'memory' });
    sources.push({
      n,
      id: chunk.threadId,
      kind: 'thread',
      title,
      url: null,
      sourceType: 'conversation',
      snippet: clip(withoutBidiControls(chunk.text).replace(/\s+/g, ' '), SNIPPET_CHARS),
      messageIds: chunk.messageIds,
      authors: chunk.authors,
      from: chunk.firstTs,
      to: chunk.lastTs,
    });
  });
  return { grounded, sources };
}

/** A chunk's text, or for a long one its summary against the question (the text itself when summarising fails). */
async function contentOf(chat: ChatModel, question: string, text: string, signal?: AbortSignal): Promise<string> {
  if (text.length <= PAST_SUMMARY_CHARS) return text;
  try {
    const summary = (await chat.summarize(text, question, signal)).trim();
    return summary || clip(text, PAST_SUMMARY_CHARS);
  } catch {
    return clip(text, PAST_SUMMARY_CHARS);
  }
}
