import { describe, expect, it } from 'vitest';
import { centralSentences, summaryOf } from '../../src/ai/local/extractive-summary.js';

const chat = [
  'Caroline (8 May 2023, 14:02): Hey Mel! How are you doing these days?',
  'Melanie (8 May 2023, 14:05): Busy with the kids. The pottery class starts next week and I signed up yesterday. Painting keeps me sane.',
  'Caroline (8 May 2023, 14:07): I went to a support group yesterday [shares a photo: a circle of chairs]',
  'Melanie (8 May 2023, 14:09): Yeah, I painted that lake sunrise last year! Pottery and painting are my outlets.',
].join('\n');

describe('summaryOf', () => {
  it('keeps a chat as lines, each picked sentence under its own line’s speaker and time', () => {
    const summary = summaryOf(chat, { query: 'pottery class painting', maxSentences: 3 });
    const lines = summary.split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line).toMatch(/^(Caroline|Melanie) \(8 May 2023, 14:0\d\): /);
    // A sentence from the middle of Melanie's message is still hers, with the time she said it.
    expect(summary).toContain('Melanie (8 May 2023, 14:05): ');
    expect(summary).not.toMatch(/Caroline \([^)]*\): [^\n]*pottery class/);
    // Every picked sentence is one centralSentences picks.
    const central = centralSentences(chat, { query: 'pottery class painting', maxSentences: 3 });
    for (const s of central) expect(summary).toContain(s.replace(/^\w+ \([^)]*\): /, ''));
  });

  it('joins the sentences of any other text on one line, as before', () => {
    const text = 'The gym opens a new locker room on Monday. The pool stays closed. A new sauna opens in June. Members get a free towel.';
    expect(summaryOf(text, { maxSentences: 2 })).toBe(centralSentences(text, { maxSentences: 2 }).join(' '));
    expect(summaryOf(text, { maxSentences: 2 })).not.toContain('\n');
  });
});
