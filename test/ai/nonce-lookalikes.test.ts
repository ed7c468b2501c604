import { describe, expect, it } from 'vitest';
import { withoutNonceLookalikes } from '../../src/ai/nonce-lookalikes.js';

const NONCE = '10ab3f0c9e1d2b7a';

describe('withoutNonceLookalikes', () => {
  it('leaves prose whose look-alike runs are shorter than the nonce as it is (the same string)', () => {
    const prose = 'The decade of coffee: a face, a bed, a cab. Code 1080 and 0xdeadbeef.';
    expect(withoutNonceLookalikes(prose, NONCE)).toBe(prose);
  });

  it('reads ASCII homoglyphs (l, I, |, o, O) and other case as the digits they pass for', () => {
    const spelled = 'lOAB3F0C9E|D2B7a';
    expect(withoutNonceLookalikes(`before ${spelled} after`, NONCE)).toBe(`before ${'x'.repeat(16)} after`);
  });

  it('reads a run across ASCII, fullwidth and Cyrillic digits with format characters between them', () => {
    const mixed = `1\u200b0аb３f\u00ad0c9e1d2b7а`;
    expect(withoutNonceLookalikes(`«${mixed}»`, NONCE)).toBe(`«${'x'.repeat(16)}»`);
  });

  it('keeps a long run that does not hold the nonce, and blanks one that holds it inside more digits', () => {
    const other = 'ab'.repeat(20);
    expect(withoutNonceLookalikes(other, NONCE)).toBe(other);
    expect(withoutNonceLookalikes(`x ffff${NONCE}0000 y`, NONCE)).toBe(`x ${'x'.repeat(16)} y`);
  });

  it('reads characters outside the BMP by code point (mathematical digits)', () => {
    const math = [...NONCE].map((d) => (/[0-9]/.test(d) ? String.fromCodePoint(0x1d7ce + Number(d)) : d)).join('');
    expect(withoutNonceLookalikes(`🙂${math}🙂`, NONCE)).toBe(`🙂${'x'.repeat(16)}🙂`);
  });
});
