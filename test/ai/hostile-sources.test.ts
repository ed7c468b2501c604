/** The built-in model reads fetched sources in time linear in their length, whatever their punctuation. */
import { describe, expect, it } from 'vitest';
import { scoreSentences } from '../../src/ai/local/extractive-answer.js';

/** Marks enough that a scan quadratic in them holds the event loop for a minute, not milliseconds. */
const COMMAS = ','.repeat(128_000);

describe('a source sentence with a long run of commas inside a number', () => {
  it('is scored for a count question, asked of the present or the future', () => {
    const sources = [{ n: 1, label: 'Clinic news', content: `The clinic confirmed cases 1${COMMAS}2 this week. The clinic confirmed 140 cases.` }];
    for (const question of ['How many cases did the clinic confirm?', 'How many cases will the clinic confirm?']) {
      const scored = scoreSentences(sources, question);
      expect(scored.map((s) => s.text)).toContain('The clinic confirmed 140 cases.');
    }
  });
});
