/**
 * Regression: cuts by UTF-16 index split a surrogate pair and left half an emoji in what the model
 * and the room read: a long passage region with no space or newline to cut at, and an item's digest
 * line cut at the head it reads.
 */
import { describe, expect, it } from 'vitest';
import { passageRegion } from '../../src/rag/passage.js';
import { itemLine } from '../../src/rag/topic-digest.js';

const EMOJI = '😀';
/** A lone surrogate: half a character. */
const HALF = /\p{Cs}/u;

describe('cuts that can fall inside a character', () => {
  it('a passage region of text with no space or newline ends on a whole character', () => {
    // The pairs start at odd indexes: the region's end (60,000) falls between a pair's halves.
    const text = `a${EMOJI.repeat(40_000)}`;
    const region = passageRegion(text, undefined);
    expect(HALF.test(region)).toBe(false);
    expect(text.startsWith(region)).toBe(true);
    expect(region.length).toBeGreaterThan(59_990);
  });

  it('a passage region of text with no space or newline starts on a whole character', () => {
    // Centred on the hint, the region's start (10,004) falls between a pair's halves.
    const text = `a${EMOJI.repeat(20_000)}MARKS${EMOJI.repeat(40_000)}`;
    const region = passageRegion(text, 'MARKS');
    expect(HALF.test(region)).toBe(false);
    expect(region).toContain('MARKS');
  });

  it('an item’s digest line ends on a whole character where its head is cut', () => {
    // The first sentence is the title (skipped); the next is cut at the 2,000th unit, inside the emoji.
    const title = `${'a'.repeat(1993)}.`;
    const line = itemLine({ title, description: `${title} Tail${EMOJI} and more.`, body: '' });
    expect(line).toBe('Tail');
  });

  it('an item’s digest line from its body ends on a whole character where the body is cut', () => {
    const title = `${'a'.repeat(1993)}.`;
    const line = itemLine({ title, description: '', body: `${title} Tail${EMOJI} and more.` });
    expect(HALF.test(line)).toBe(false);
  });
});
