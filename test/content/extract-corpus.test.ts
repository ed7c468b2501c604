/**
 * Extraction quality on the 181 real pages of ../shared/corpora/extraction: token-level F1 of the
 * body against the benchmark's `articleBody`. `npm run eval:extraction` measured a mean of 0.977
 * (median 0.993); the floors sit about 0.02 below so a real regression fails, noise does not.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCorpus, scoreCorpus, tokenF1 } from '../../bench/extraction-score.js';
import { extractArticle } from '../../src/content/extract/index.js';
import { CORPORA } from '../helpers.js';

const MEAN_F1_FLOOR = 0.955;
const MEDIAN_F1_FLOOR = 0.97;

describe('extraction corpus', () => {
  it('scores token F1 the benchmark way', () => {
    expect(tokenF1('The cat sat.', 'the cat sat').f1).toBe(1);
    expect(tokenF1('', 'something').f1).toBe(0);
    const partial = tokenF1('a b c d', 'a b');
    expect(partial.precision).toBe(0.5);
    expect(partial.recall).toBe(1);
    expect(tokenF1('Ünïcode wörds, 2019', 'ünïcode WÖRDS 2019').f1).toBe(1);
  });

  it(`keeps mean token F1 >= ${MEAN_F1_FLOOR} over all pages`, { timeout: 240_000 }, () => {
    const pages = loadCorpus(join(CORPORA, 'extraction'));
    expect(pages.length).toBe(181);
    const score = scoreCorpus(pages, (html, url) => extractArticle(html, { url }).text);
    const worst = [...score.perPage].sort((a, b) => a.f1 - b.f1).slice(0, 5);
    console.log(
      `extraction corpus: mean F1 ${score.mean_f1}, median ${score.median_f1}, failures ${score.failures}; worst`,
      worst.map((p) => `${p.f1.toFixed(2)} ${p.url}`),
    );
    expect(score.failures).toBe(0);
    expect(score.mean_f1).toBeGreaterThanOrEqual(MEAN_F1_FLOOR);
    expect(score.median_f1).toBeGreaterThanOrEqual(MEDIAN_F1_FLOOR);
  });
});
