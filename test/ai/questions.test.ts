/** What a question asks, read in time linear in its length whatever its spacing. */
import { describe, expect, it } from 'vitest';
import { asksForOverview, repeatsQuestion } from '../../src/ai/questions.js';

/** Spaces enough that a scan quadratic in them holds the event loop for minutes, not milliseconds. */
const RUN = ' '.repeat(128_000);

describe('question cues on long runs of spaces', () => {
  it('tells a repeated question in a sentence with a long run of spaces after its question mark', () => {
    expect(repeatsQuestion(`Is the ferry late?${RUN}x`, 'is the ferry late')).toBe(false);
    expect(repeatsQuestion(`Is the ferry late?${RUN}`, 'is the ferry late')).toBe(true);
    expect(repeatsQuestion('Is the ferry late? [2] ', 'is the ferry late')).toBe(true);
    expect(repeatsQuestion('Is the ferry late? (12)', 'is the ferry late')).toBe(true);
    expect(repeatsQuestion('Is the ferry late? It is.', 'is the ferry late')).toBe(false);
  });

  it('tells an overview question with a long run of spaces after its last word', () => {
    expect(asksForOverview(`What is the harbour plan about${RUN}x`)).toBe(false);
    expect(asksForOverview(`What is the harbour plan about${RUN}?${RUN}`)).toBe(true);
    expect(asksForOverview('What was the harbour plan about ?')).toBe(true);
  });
});
