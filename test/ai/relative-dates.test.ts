import { describe, expect, it } from 'vitest';
import { stampedAt, withDatesMeant } from '../../src/ai/local/relative-dates.js';
import { chatStamp } from '../../src/text.js';

// Monday 8 May 2023, 14:09 UTC.
const said = new Date('2023-05-08T14:09:00Z');

describe('withDatesMeant', () => {
  it('names the day a "yesterday", "today" or "tomorrow" meant, counted from when it was said', () => {
    expect(withDatesMeant('I went to a LGBTQ support group yesterday and it was so powerful.', said)).toBe(
      'I went to a LGBTQ support group yesterday (7 May 2023) and it was so powerful.',
    );
    expect(withDatesMeant('Today was long; tomorrow is the race, and the day before yesterday I rested.', said)).toBe(
      'Today (8 May 2023) was long; tomorrow (9 May 2023) is the race, and the day before yesterday (6 May 2023) I rested.',
    );
    expect(withDatesMeant('Last night we talked.', new Date('2024-03-01T08:00:00Z'))).toBe('Last night (29 February 2024) we talked.');
  });

  it('names the last weekday before the day it was said, never that day itself', () => {
    expect(withDatesMeant('I ran a charity race last Saturday.', said)).toBe('I ran a charity race last Saturday (Saturday 6 May 2023).');
    expect(withDatesMeant('We met this past Monday.', said)).toBe('We met this past Monday (Monday 1 May 2023).');
  });

  it('names the weekday a short name means, capitalised as a name is', () => {
    expect(withDatesMeant('Last Fri I took my kids to a pottery workshop.', said)).toBe('Last Fri (Friday 5 May 2023) I took my kids to a pottery workshop.');
    expect(withDatesMeant('I joined a new group last Tues.', said)).toBe('I joined a new group last Tues (Tuesday 2 May 2023).');
    expect(withDatesMeant('I last sat down with him in May.', said)).toBe('I last sat down with him in May.');
  });

  it('names the week, month or year a "last", "this" or "next" meant', () => {
    expect(withDatesMeant('I wanted to tell you about my school event last week.', said)).toBe(
      'I wanted to tell you about my school event last week (the week before 8 May 2023).',
    );
    expect(withDatesMeant('We are going camping next month, and I painted it last year.', said)).toBe(
      'We are going camping next month (June 2023), and I painted it last year (2022).',
    );
    expect(withDatesMeant('A conference this month; a trip next year.', new Date('2023-12-20T10:00:00Z'))).toBe(
      'A conference this month (December 2023); a trip next year (2024).',
    );
    expect(withDatesMeant('Last month was hard.', new Date('2023-01-15T10:00:00Z'))).toBe('Last month (December 2022) was hard.');
  });

  it('counts back "ten years ago", "two weekends ago" and "3 days ago"', () => {
    expect(withDatesMeant('A friend made it for my 18th birthday ten years ago.', said)).toBe('A friend made it for my 18th birthday ten years ago (2013).');
    expect(withDatesMeant('We went camping two weekends ago, and 3 days ago I swam.', said)).toBe(
      'We went camping two weekends ago (the weekend of 24 April 2023), and 3 days ago (5 May 2023) I swam.',
    );
    expect(withDatesMeant('a couple of months ago', said)).toBe('a couple of months ago (March 2023)');
  });

  it('leaves alone what fixes no date, a time already dated, and text said at no known time', () => {
    for (const text of ['Recently I went to the lake.', 'On Saturday we ran.', 'This is the best week ever.', 'The last straw.'])
      expect(withDatesMeant(text, said)).toBe(text);
    expect(withDatesMeant('yesterday (7 May 2023) I went', said)).toBe('yesterday (7 May 2023) I went');
    expect(withDatesMeant('I went yesterday.', new Date(Number.NaN))).toBe('I went yesterday.');
  });

  it('reads a long text in one pass (a text of nothing but start words)', () => {
    const text = 'the this a an '.repeat(50_000);
    expect(withDatesMeant(text, said)).toBe(text);
  });

  it('reads when a line of chat was said from its time stamp, as chat lines write it', () => {
    for (const iso of ['2023-05-08T14:09:00.000Z', '2024-02-29T23:59:00.000Z', '2026-12-04T00:00:00.000Z'])
      expect(stampedAt(`Ann (${chatStamp(iso)}): I went yesterday.`)?.toISOString()).toBe(iso);
    expect(stampedAt('Ann: no stamp')).toBeNull();
    expect(stampedAt('Ann (31 Feb 2023, 10:00): no such day')).toBeNull();
  });
});
