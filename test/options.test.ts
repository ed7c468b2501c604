/** The one option validator: each check names the owner and the option, with the right error type. */
import { describe, expect, it } from 'vitest';
import { numberWithin, positiveNumber, required, wholeNumber } from '../src/options.js';

describe('option checks', () => {
  it('return good values and name bad ones', () => {
    expect(wholeNumber('Pool', 'threads', 2, 1, 4)).toBe(2);
    expect(() => wholeNumber('Pool', 'threads', 5, 1, 4)).toThrow(new RangeError('Pool: options.threads must be a whole number from 1 to 4, got 5'));
    expect(() => wholeNumber('Pool', 'threads', 1.5, 1)).toThrow(/^Pool: options\.threads must be a whole number ≥ 1, got 1\.5$/);
    expect(positiveNumber('Job', 'budgetMs', 0.5)).toBe(0.5);
    expect(() => positiveNumber('Job', 'budgetMs', 0)).toThrow(RangeError);
    expect(() => positiveNumber('Job', 'budgetMs', Number.NaN)).toThrow(/options\.budgetMs/);
    expect(numberWithin('Chat', 'minCoverage', 1, 0, 1)).toBe(1);
    expect(() => numberWithin('Chat', 'minCoverage', 1.1, 0, 1)).toThrow(/from 0 to 1/);
    expect(required('Hub', 'store', 'x')).toBe('x');
    for (const missing of [undefined, null, '']) expect(() => required('Hub', 'store', missing)).toThrow(new TypeError('Hub: options.store is required'));
  });
});
