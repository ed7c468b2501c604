/** Which memory hits an answer uses: relevance below the cosine threshold, and the message budget. */
import { describe, expect, it } from 'vitest';
import type { MemoryHit } from '../../src/memory/types.js';
import { PAST_MESSAGES_MAX, choosePast } from '../../src/rag/past-conversation.js';

let nextId = 1;
function hit(score: number, line: string | undefined, messages = 8): MemoryHit {
  const id = nextId++;
  return {
    score,
    ...(line !== undefined && { line }),
    chunk: {
      id,
      threadId: 'thr_1',
      roomId: 'news_1',
      kind: 'window',
      text: line ?? 'Ann (2 Nov 2026, 10:00): something else entirely',
      messageIds: Array.from({ length: messages }, (_, i) => `m${id}_${i}`),
      authors: ['Ann'],
      firstTs: '2026-11-02T10:00:00.000Z',
      lastTs: '2026-11-02T10:07:00.000Z',
      privileged: false,
      owner: null,
      createdAt: '2026-11-02T10:08:00.000Z',
      updatedAt: '2026-11-02T10:08:00.000Z',
    },
  };
}

describe('choosePast', () => {
  const question = 'What is the general sentiment about the upcoming grand opening?';
  const threshold = 0.18;

  it('keeps a hit under the threshold whose matched line shares two of the question’s terms, not one', () => {
    const two = hit(0.17, 'Bo (2 Nov 2026, 10:03): Can’t wait for tomorrow’s grand opening!');
    const one = hit(0.17, 'Bo (2 Nov 2026, 10:04): The opening hours changed again.');
    const none = hit(0.17, undefined);
    expect(choosePast(question, [two, one, none], new Set(), threshold, false)).toEqual([two]);
  });

  it('keeps hits over the threshold, and any hit when the question is about the discussion itself', () => {
    const strong = hit(0.3, undefined);
    const weak = hit(0.05, undefined);
    expect(choosePast(question, [strong, weak], new Set(), threshold, false)).toEqual([strong]);
    expect(choosePast('Can you summarise what we discussed?', [strong, weak], new Set(), threshold, true)).toEqual([strong, weak]);
  });

  it('counts the recent chat’s messages against the budget and skips what it shows already', () => {
    const recent = new Set(Array.from({ length: 12 }, (_, i) => `r${i}`));
    const hits = Array.from({ length: 8 }, () => hit(0.4, undefined));
    const chosen = choosePast(question, hits, recent, threshold, false);
    expect(chosen).toHaveLength(Math.floor((PAST_MESSAGES_MAX - 12) / 8));
    const shown = hit(0.5, undefined, 2);
    shown.chunk.messageIds = ['r1', 'r2'];
    expect(choosePast(question, [shown], recent, threshold, false)).toEqual([]);
  });
});
