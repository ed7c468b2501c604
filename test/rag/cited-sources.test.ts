// Which sources an answer lists: the ones its text cites.
import { describe, expect, it } from 'vitest';
import { citedNumbers, citedSources, withoutUngivenCitations } from '../../src/rag/cited-sources.js';

const sources = [1, 2, 3, 4, 5].map((n) => ({ n, title: `Source ${n}` }));

describe('citedSources', () => {
  it('keeps the sources an answer cites, in their own order, however the markers are written', () => {
    expect(citedSources('It opened in 1924 [3]. It closed [1].', sources).map((s) => s.n)).toEqual([1, 3]);
    expect(citedSources('Both agree [2, 5] and so does [4][2].', sources).map((s) => s.n)).toEqual([2, 4, 5]);
  });

  it('keeps every source when the answer marks none of them, or only numbers it was not given', () => {
    expect(citedSources('An answer without markers.', sources)).toEqual(sources);
    expect(citedSources('A stray [9] and a [year].', sources)).toEqual(sources);
  });

  it('reads only bracketed whole numbers as citations', () => {
    expect([...citedNumbers('[1] [ 2 ] [3a] [1234] [4,5] \\[6\\]')].sort()).toEqual([1, 4, 5]);
  });

  it('reads code’s indexes as code, as withoutUngivenCitations does: `list[1]` cites nothing', () => {
    expect([...citedNumbers('Take items[1] and grid[2][3], as the page says [4].')]).toEqual([4]);
    expect(citedSources('Use args[1] for the name [2].', sources).map((s) => s.n)).toEqual([2]);
  });
});

describe('withoutUngivenCitations', () => {
  const given = new Set([1, 2, 3]);

  it('drops the numbers of sources the answer was not given, and a marker left with none', () => {
    expect(withoutUngivenCitations('It opened in 1924 [7]. It closed [1][9].', given)).toBe('It opened in 1924. It closed [1].');
    expect(withoutUngivenCitations('Both agree [2, 7] and [8,9] too.', given)).toBe('Both agree [2] and too.');
  });

  it('leaves given citations, code and other brackets as they are', () => {
    const text = 'Fine [1] and [2, 3]; list[7], grid[1][7], f(x)[9], `a`[8] and [year] stay.';
    expect(withoutUngivenCitations(text, given)).toBe(text);
  });
});
