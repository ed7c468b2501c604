/** The words key of a memory chunk (src/memory/repeats.ts): what makes two chunks the same talk. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { repeatKey, wordsKey } from '../../src/memory/repeats.js';
import { CHAT_STAMP } from '../../src/text.js';

/** The key as first defined: every text's words found by the Unicode pattern. */
function reference(text: string): string {
  const words = (
    text
      .replace(new RegExp(CHAT_STAMP.source, 'g'), ' ')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).join(' ');
  return createHash('sha256').update(words).digest('base64url').slice(0, 22);
}

describe('wordsKey', () => {
  const texts = [
    '',
    '   ',
    'Ann (03 Jan 2026, 10:00): I think the battery test matters because of point 7 and 13',
    'ANN: the Battery-Test, matters!! 4,000 dollars; 3.5% _under_ score',
    'Zoë: café crème at 9 — naïve?',
    'Пётр: привет, мир 42',
    'İstanbul ǅemal ﬁne Straße',
    'tab\tand\nnew lines\r\nand emoji 🎉 end',
  ];

  it('keys ASCII and other text as the Unicode word pattern does', () => {
    for (const text of texts) expect(wordsKey(text), text).toBe(reference(text));
  });

  it('ignores spacing, case, punctuation and chat stamps, not words or their order', () => {
    expect(wordsKey('Ann (03 Jan 2026, 10:00): The  PRICE, rose.')).toBe(wordsKey('ann (04 Feb 2027, 11:30): the price rose'));
    expect(wordsKey('the price rose')).not.toBe(wordsKey('rose the price'));
    expect(wordsKey('café')).not.toBe(wordsKey('caf'));
  });
});

describe('repeatKey (the key a stored chunk is found by)', () => {
  it('is the words key, but none for a pair a thread fusion made one, whose marked text no window can repeat', () => {
    const window = '(1 Jan 2026, 10:00) Ann: the pier opens in May';
    expect(repeatKey({ text: window })).toBe(wordsKey(window));
    // Compaction makes near-duplicates one under the fuller text, a window's: still found as a repeat.
    expect(repeatKey({ text: window, fusion: 'fused' })).toBe(wordsKey(window));
    expect(repeatKey({ text: window, fusion: 'kept' })).toBe(wordsKey(window));
    expect(repeatKey({ text: `[A]: ${window}\n[B]: ${window}`, fusion: 'fused' })).toBe('');
    // No text has the empty key, so nothing finds those chunks.
    expect(wordsKey('')).not.toBe('');
  });
});
