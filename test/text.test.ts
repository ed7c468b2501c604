/** Text helpers every part uses (src/text.ts). */
import { describe, expect, it } from 'vitest';
import { clip, foldAsciiCase, wellFormed } from '../src/text.js';

describe('clip', () => {
  it('cuts on a character, never between the halves of a surrogate pair', () => {
    const title = `${'a'.repeat(118)}😀 + Tomato garden`;
    const clipped = clip(title, 120);
    expect(clipped).toBe(`${'a'.repeat(118)}…`);
    expect(wellFormed(clipped)).toBe(clipped);
    // A pair that fits whole is kept.
    expect(clip(`${'a'.repeat(117)}😀 + more`, 120)).toBe(`${'a'.repeat(117)}😀…`);
  });

  it('leaves short text alone and prefers a near word boundary', () => {
    expect(clip('short', 10)).toBe('short');
    expect(clip('one two three four', 16)).toBe('one two three…');
  });
});

describe('foldAsciiCase', () => {
  it('lowers ASCII capitals only, as SQLite’s NOCASE does', () => {
    expect(foldAsciiCase('Tech NEWS')).toBe('tech news');
    expect(foldAsciiCase('ÉCONOMIE')).toBe('Économie');
    expect(foldAsciiCase('İSTANBUL')).toBe('İstanbul');
  });
});
