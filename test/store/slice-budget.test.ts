import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SliceBudget } from '../../src/store/slice-budget.js';

describe('SliceBudget', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Runs one slice of `unitMs` units while more() allows, then a commit of `commitMs`; returns the units done. */
  function slice(budget: SliceBudget, unitMs: number, commitMs: number): number {
    let units = 0;
    budget.timed(() => {
      do {
        vi.advanceTimersByTime(unitMs);
        units++;
      } while (units < 100 && budget.more(units));
    })(undefined);
    vi.advanceTimersByTime(commitMs);
    budget.committed(units);
    return units;
  }

  it('counts the commit a slice builds up against its budget, once it has seen one', () => {
    const budget = new SliceBudget(15);
    // Before any commit, the commit is taken to cost as much as the statements: stops at half.
    expect(slice(budget, 1, 10)).toBe(8);
    // 10 ms of commit for 8 units: 2.25 ms a unit in all, so after 6 units (13.5 ms) a 7th runs, after 7 none.
    expect(slice(budget, 1, 7.5)).toBe(7);
  });

  it('stops a slice sooner when commits grow dearer, and follows them back down', () => {
    const budget = new SliceBudget(15);
    expect(slice(budget, 1, 8)).toBe(8); // learns 1 ms of commit a unit
    expect(slice(budget, 1, 28)).toBe(8); // the same estimate, so as long; then a dear commit
    const afterDear = slice(budget, 1, 0);
    expect(afterDear).toBeLessThan(8);
    expect(slice(budget, 1, 0)).toBeGreaterThan(afterDear);
  });

  it("always runs a slice's first unit, however slow", () => {
    const budget = new SliceBudget(15);
    expect(slice(budget, 40, 0)).toBe(1);
  });
});
