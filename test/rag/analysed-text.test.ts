// The per-text cache behind snippets and passage choice: sentences and their terms, computed once.
import { describe, expect, it } from 'vitest';
import { analyse, queryTermsOf } from '../../src/rag/analysed-text.js';

describe('analyse', () => {
  const text = 'The treaty was signed in Paris.   Delegates from  forty nations attended the signing. Rain fell all day.';

  it('splits the squashed text into sentences with their distinct terms', () => {
    const a = analyse(text);
    expect(a.flat).toBe(text.replace(/\s+/g, ' '));
    expect(a.sentences.map((s) => a.flat.slice(s.start, s.end))).toEqual(a.sentences.map((s) => s.text));
    expect(a.sentences).toHaveLength(3);
    for (const terms of a.terms) expect(new Set(terms).size).toBe(terms.length);
    expect(queryTermsOf(a, new Set(['treaty', 'paris', 'rain']))).toEqual([['treaty', 'paris'], [], ['rain']]);
  });

  it('answers a text seen before from its cache, and a changed text afresh', () => {
    expect(analyse(text)).toBe(analyse(text));
    const changed = analyse(`${text} Snow followed.`);
    expect(changed).not.toBe(analyse(text));
    expect(changed.sentences).toHaveLength(4);
  });
});
