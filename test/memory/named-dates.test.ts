/** The times a question names, for the memory search (src/memory/named-dates.ts). */
import { describe, expect, it } from 'vitest';
import { namedPeriods, saidWithin } from '../../src/memory/named-dates.js';

describe('named dates', () => {
  it('reads months, days and years in either order, and no month from "may" or "march" as verbs', () => {
    expect(namedPeriods('When did Mel go camping in June?')).toEqual([{ month: 5 }]);
    expect(namedPeriods('What did they paint in July 2023?')).toEqual([{ month: 6, year: 2023 }]);
    expect(namedPeriods('What did she show on October 13, 2023?')).toEqual([{ month: 9, day: 13, year: 2023 }]);
    expect(namedPeriods('What did Gina find on 1 February, 2023?')).toEqual([{ month: 1, day: 1, year: 2023 }]);
    expect(namedPeriods('How often did we meet in 2022?')).toEqual([{ year: 2022 }]);
    expect(namedPeriods('What did we decide in May, and in june?')).toEqual([{ month: 4 }, { month: 5 }]);
    expect(namedPeriods('May I ask what we said?')).toEqual([]);
    expect(namedPeriods('Will they march on the town hall?')).toEqual([]);
    expect(namedPeriods('What did we say about the pier?')).toEqual([]);
  });

  it('tells whether a chunk was said within a period, by either end', () => {
    const june = namedPeriods('in June');
    expect(saidWithin(june, '2023-06-27T10:37:00Z', '2023-06-27T10:49:00Z')).toBe(true);
    expect(saidWithin(june, '2023-05-31T23:58:00Z', '2023-06-01T00:03:00Z')).toBe(true);
    expect(saidWithin(june, '2023-07-06T20:18:00Z', '2023-07-06T20:24:00Z')).toBe(false);
    expect(saidWithin(namedPeriods('on October 13, 2023'), '2023-10-13T10:30:00Z', '2023-10-13T10:40:00Z')).toBe(true);
    expect(saidWithin(namedPeriods('on October 13, 2022'), '2023-10-13T10:30:00Z', '2023-10-13T10:40:00Z')).toBe(false);
    expect(saidWithin([], '2023-10-13T10:30:00Z', '2023-10-13T10:40:00Z')).toBe(false);
  });
});
