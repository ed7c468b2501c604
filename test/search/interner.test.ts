import { describe, expect, it } from 'vitest';
import { Interner } from '../../src/search/interner.js';

describe('Interner', () => {
  it('gives one id per string, counts references and forgets a string with its last one', () => {
    const names = new Interner();
    const a = names.acquire('news_a');
    expect(names.acquire('news_a')).toBe(a);
    const b = names.acquire('news_b');
    expect(b).not.toBe(a);
    expect(names.valueOf(a)).toBe('news_a');
    names.release(a);
    expect(names.valueOf(a)).toBe('news_a');
    names.release(a);
    expect(names.valueOf(a)).toBeNull();
    expect(names.size).toBe(1);
    // A freed id is reused; releasing −1 changes nothing.
    expect(names.acquire('news_c')).toBe(a);
    names.release(-1);
    expect(names.size).toBe(2);
  });

  it('maps null to −1 without counting it', () => {
    const names = new Interner();
    expect(names.acquire(null)).toBe(-1);
    expect(names.acquire(undefined)).toBe(-1);
    expect(names.valueOf(-1)).toBeNull();
    expect(names.size).toBe(0);
  });
});
