import { describe, expect, it } from 'vitest';
import { recallFigures, SHORTFALL_MARGIN, topRows } from '../../bench/graph-recall.js';

describe("eval:graph's figures", () => {
  it('ranks rows by score, best first, ties by row number', () => {
    expect(topRows([0.1, 0.5, 0.3, 0.5], 3)).toEqual([1, 3, 2]);
    expect(topRows([0.2], 5)).toEqual([0]);
  });

  it('counts the exact top k held, the exact best first, and how far the first hit falls short of it', () => {
    const scores = [0.9, 0.8, 0.7, 0.6, 0.5];
    const score = (row: number) => scores[row];
    const figures = recallFigures([
      // The same answer.
      { exact: [0, 1], found: [0, 1], score },
      // The best missed: the first hit is 0.1 short, past the margin.
      { exact: [0, 1], found: [1, 2], score },
      // The best second: held, not first, and 0.1 short.
      { exact: [0, 1], found: [1, 0], score },
      // Nothing found: all of the best's score is short.
      { exact: [0, 1], found: [], score },
    ]);
    expect(figures.recall_at_k).toBeCloseTo(5 / 8);
    expect(figures.top1).toBeCloseTo(1 / 4);
    expect(figures.top1_shortfall_mean).toBeCloseTo((0 + 0.1 + 0.1 + 0.9) / 4);
    expect(figures.top1_shortfall_over_margin).toBeCloseTo(3 / 4);
  });

  it('takes a near tie within the margin as the same answer', () => {
    const scores = [0.5, 0.5 - SHORTFALL_MARGIN / 2];
    const figures = recallFigures([{ exact: [0, 1], found: [1, 0], score: (row) => scores[row] }]);
    expect(figures.top1).toBe(0);
    expect(figures.top1_shortfall_over_margin).toBe(0);
    expect(figures.recall_at_k).toBe(1);
  });
});
