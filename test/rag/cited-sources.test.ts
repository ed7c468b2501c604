// Which sources an answer lists: the ones its text cites.
import { describe, expect, it } from 'vitest';
import { citedNumbers, citedSources } from '../../src/rag/cited-sources.js';

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
});
