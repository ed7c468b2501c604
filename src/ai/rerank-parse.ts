/**
 * Reranking by prompt (DESIGN §5): a chat model is asked for the numbers of the most relevant
 * snippets, like `1,3,5`. Models answer in many shapes — `[1, 3]`, `1 and 3`, `Snippets 2, 4 and
 * 5`, a sentence, a numbered list — so the reply is parsed leniently and anything unusable falls
 * back to the first five.
 */

/** Most snippets a rerank keeps. */
export const RERANK_MAX = 5;
/** Fewest it returns when there are that many (ChatModel.rerank's contract). */
export const RERANK_MIN = 3;

/** The first `min(RERANK_MAX, count)` indices: what rerank returns when the model fails. */
export function rerankFallback(count: number): number[] {
  return Array.from({ length: Math.min(RERANK_MAX, count) }, (_, i) => i);
}

/** The system and user messages asking a model to pick snippets for `query`. */
export function rerankPrompt(query: string, snippets: string[]): { system: string; user: string } {
  const system =
    'You rank text snippets by how well they help answer a question. Reply with only the numbers of the ' +
    `${RERANK_MIN} to ${RERANK_MAX} most relevant snippets, best first, separated by commas, e.g. 3,1,4. No other text.`;
  const listed = snippets.map((s, i) => `Snippet ${i + 1}: ${s.replace(/\s+/g, ' ').trim()}`).join('\n');
  return { system, user: `Question: ${query.replace(/\s+/g, ' ').trim()}\n\n${listed}\n\nMost relevant snippet numbers:` };
}

/** Drops reasoning blocks and list enumerators (`1. Snippet 4` counts as 4, not 1 and 4). */
function cleanReply(reply: string): string {
  return reply
    .replace(/<think>[\s\S]*?<\/think>/gi, ' ')
    .split('\n')
    .map((line) => (/^\s*\d+[.)]\s+\D*\d/.test(line) ? line.replace(/^\s*\d+[.)]\s+/, '') : line))
    .join('\n');
}

/**
 * The 0-based snippet indices a model's reply names, best first: 1-based numbers in range, each
 * once, at most RERANK_MAX, padded in original order to RERANK_MIN when the reply named fewer.
 * Null when the reply names no usable number (the caller falls back).
 */
export function parseRerankReply(reply: string, count: number): number[] | null {
  const picked: number[] = [];
  for (const m of cleanReply(reply).matchAll(/(?<![\d.])\d{1,4}(?![\d.]\d)/g)) {
    const i = Number(m[0]) - 1;
    if (i < 0 || i >= count || picked.includes(i)) continue;
    picked.push(i);
    if (picked.length === RERANK_MAX) break;
  }
  if (picked.length === 0) return null;
  for (let i = 0; picked.length < Math.min(RERANK_MIN, count) && i < count; i++) if (!picked.includes(i)) picked.push(i);
  return picked;
}
