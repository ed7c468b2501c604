/**
 * The passage choice slides its window over a long text once: a body of many short sentences, each
 * holding a word of the question, cost each window's sentences again for every sentence (the
 * window's strongest one looked for by spreading them), ~50 ms a source of an ask on the event loop.
 */
import { describe, expect, it } from 'vitest';
import { bestPassage } from '../../src/rag/passage.js';
import { countedIteration } from '../helpers.js';

/** `n` short sentences, each naming the lava flow, every 97th also the town it reached. */
function shortSentences(n: number): string {
  return Array.from({ length: n }, (_, i) => (i % 97 === 50 ? `Lava reached town ${i}.` : `Lava ${i}.`)).join(' ');
}

describe('bestPassage over many short sentences', () => {
  it('reads each sentence a bounded number of times, whatever the window holds, and still centres on the strongest', async () => {
    const question = 'Where did the lava reach the town?';
    const counts: number[] = [];
    for (const n of [3_000, 6_000]) {
      const text = shortSentences(n);
      const { result, elements } = await countedIteration(() => bestPassage(text, question));
      expect(result).toMatch(/Lava reached town \d+\./);
      expect(result.length).toBeLessThanOrEqual(1000);
      counts.push(elements);
    }
    // A few elements a sentence, twice as many for twice the sentences; each window's ~110
    // sentences spread again for every window had made it ~106 a sentence.
    expect(counts[1]).toBeLessThan(counts[0] * 2.5);
    expect(counts[1]).toBeLessThan(6_000 * 40);
  });
});
