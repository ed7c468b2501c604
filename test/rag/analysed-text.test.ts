// The per-text cache behind snippets and passage choice: sentences and their terms, computed once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentTerms, splitSentences } from '../../src/ai/extractive-text.js';
import { analyse, analysedTextsCached, clearAnalysedTexts, queryTermsOf, sentenceTerms, squash, type AnalysedText } from '../../src/rag/analysed-text.js';
import { asciiSentenceTermIds, resetTermIds, termText } from '../../src/rag/term-ids.js';
import { CORPORA } from '../helpers.js';

/** What analyse must equal: the plain, slow way. */
function reference(text: string) {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentences = splitSentences(flat);
  return { flat, sentences, terms: sentences.map((s) => [...new Set(contentTerms(s.text))]) };
}

/** An analysis in the reference's shape. */
function plain(a: AnalysedText) {
  return { flat: a.flat, sentences: a.sentences, terms: a.sentences.map((_, i) => sentenceTerms(a, i)) };
}

const xquad = JSON.parse(readFileSync(join(CORPORA, 'qa/xquad-en.dev.json'), 'utf8')) as { data: { paragraphs: { context: string }[] }[] };
const passages = xquad.data.flatMap((a) => a.paragraphs.map((p) => p.context));

describe('analyse', () => {
  const text = 'The treaty was signed in Paris.   Delegates from  forty nations attended the signing. Rain fell all day.';

  it('splits the squashed text into sentences with their distinct terms', () => {
    const a = analyse(text);
    expect(a.flat).toBe(text.replace(/\s+/g, ' '));
    expect(a.sentences.map((s) => a.flat.slice(s.start, s.end))).toEqual(a.sentences.map((s) => s.text));
    expect(a.sentences).toHaveLength(3);
    for (const terms of plain(a).terms) expect(new Set(terms).size).toBe(terms.length);
    expect(queryTermsOf(a, new Set(['treaty', 'paris', 'rain']))).toEqual([['treaty', 'paris'], [], ['rain']]);
  });

  it('caches a text the second time it is analysed, and analyses a changed text afresh', () => {
    clearAnalysedTexts();
    const first = analyse(text);
    expect(analysedTextsCached()).toBe(0);
    const second = analyse(text);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
    expect(analysedTextsCached()).toBe(1);
    expect(analyse(text)).toBe(second);
    const changed = `${text} Snow followed.`;
    analyse(changed);
    expect(analyse(changed)).not.toBe(second);
    expect(analyse(changed).sentences).toHaveLength(4);
    expect(analyse(text)).toBe(second);
  });

  it('keeps short texts out of the cache', () => {
    clearAnalysedTexts();
    for (let i = 0; i < 3; i++) analyse('Too short to keep.');
    expect(analysedTextsCached()).toBe(0);
  });

  it('equals splitSentences + contentTerms per sentence on real passages, ASCII or not', () => {
    expect(passages.length).toBeGreaterThan(100);
    expect(passages.some((p) => /[^\x00-\x7f]/.test(p))).toBe(true);
    expect(passages.some((p) => !/[^\x00-\x7f]/.test(p))).toBe(true);
    for (const p of passages) expect(plain(analyse(p))).toEqual(reference(p));
  });

  it('equals the reference on awkward text: whitespace of every kind, stopwords only, digits, abbreviations', () => {
    const cases = [
      '',
      ' ',
      'a',
      '  Leading and trailing.  ',
      'Tabs\tand\nnew\r\nlines.\n\nA new paragraph! Really? Yes.',
      'Non\u00a0breaking\u2003spaces and\u200bzero width.',
      'The of and to in is was.',
      'Dr. Smith met Mr. J. R. R. Tolkien in the U.S. in 1937. He paid $3.50 for 2 books.',
      'Ünïcode wörds héré. “Quoted” sentences follow. Mixed ASCII after.',
      'running runs ran runner RUNNING Running',
      'x'.repeat(300),
      'Numbers one two three and first second third.',
    ];
    for (const c of cases) expect(plain(analyse(c))).toEqual(reference(c));
  });

  it('squashes only when there is something to squash, and returns the same text otherwise', () => {
    const clean = 'Nothing to squash here.';
    expect(squash(clean)).toBe(clean);
    expect(squash(' a  b\tc\n')).toBe('a b c');
    expect(squash('a\u00a0b')).toBe('a b');
  });
});

describe('asciiSentenceTermIds', () => {
  const ascii = squash(passages.filter((p) => !/[^\x00-\x7f]/.test(p)).join(' '));
  const sentences = splitSentences(ascii);
  const terms = (r: { ids: Int32Array; offsets: Int32Array }) => sentences.map((_, i) => [...r.ids.subarray(r.offsets[i], r.offsets[i + 1])].map(termText));

  it('gives the same terms after its tables are emptied, and with more distinct words than they hold', () => {
    const first = terms(asciiSentenceTermIds(ascii, sentences));
    expect(first).toEqual(sentences.map((s) => [...new Set(contentTerms(s.text))]));
    resetTermIds();
    expect(terms(asciiSentenceTermIds(ascii, sentences))).toEqual(first);

    // 300,000 distinct made-up words: more than the word table keeps, so it must stop growing, then start over.
    const many = Array.from({ length: 300_000 }, (_, i) => `w${i.toString(36)}q`).join(' ');
    const r = asciiSentenceTermIds(many, [{ text: many, start: 0, end: many.length }]);
    expect(r.ids).toHaveLength(300_000);
    expect(termText(r.ids[299_999])).toBe(contentTerms(`w${(299_999).toString(36)}q`)[0]);
    expect(terms(asciiSentenceTermIds(ascii, sentences))).toEqual(first);
  });

  it('makes a cached analysis stale when the ids are forgotten', () => {
    clearAnalysedTexts();
    const text = 'The lighthouse keeper counted ships every night. Storms never stopped him.';
    analyse(text);
    const cached = analyse(text);
    expect(analyse(text)).toBe(cached);
    resetTermIds();
    const fresh = analyse(text);
    expect(fresh).not.toBe(cached);
    expect(queryTermsOf(fresh, new Set(['storm', 'ship']))).toEqual([['ship'], ['storm']]);
  });
});
