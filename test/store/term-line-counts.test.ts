import { describe, expect, it } from 'vitest';
import { COMMON_TERM_LINES } from '../../src/store/memory-lines.js';
import { TermLineCounts } from '../../src/store/term-line-counts.js';

/** A store's line counts by term, counted as SqliteStore counts them (up to COMMON_TERM_LINES + 1), and how often. */
function lines(initial: Record<string, number>) {
  const on = new Map(Object.entries(initial));
  const counted: string[] = [];
  return {
    on,
    counted,
    count: (term: string) => {
      counted.push(term);
      return Math.min(on.get(term) ?? 0, COMMON_TERM_LINES + 1);
    },
  };
}

describe('term line counts', () => {
  it('counts a term once while the lines written since cannot make it common, then again', () => {
    const memo = new TermLineCounts();
    const db = lines({ pier: COMMON_TERM_LINES - 3, ferry: 10 });
    expect(memo.rare(['pier', 'ferry'], db.count, 1)).toEqual(['pier', 'ferry']);
    expect(memo.rare(['pier', 'ferry'], db.count, 1)).toEqual(['pier', 'ferry']);
    expect(db.counted).toEqual(['pier', 'ferry']);
    // Three lines with `pier` written: it may be on COMMON_TERM_LINES lines now, still rare.
    db.on.set('pier', COMMON_TERM_LINES);
    memo.linesWritten(3);
    expect(memo.rare(['pier'], db.count, 1)).toEqual(['pier']);
    expect(db.counted).toEqual(['pier', 'ferry']);
    // One more line: it could have crossed, so it is counted, and it has.
    db.on.set('pier', COMMON_TERM_LINES + 1);
    memo.linesWritten(1);
    expect(memo.rare(['pier', 'ferry'], db.count, 1)).toEqual(['ferry']);
    expect(db.counted).toEqual(['pier', 'ferry', 'pier']);
  });

  it('tells the lines a term was on when last counted, as an estimate of a search size', () => {
    const memo = new TermLineCounts();
    const db = lines({ pier: 40, price: COMMON_TERM_LINES + 500 });
    expect(memo.linesWhenCounted('pier')).toBeUndefined();
    memo.rare(['pier', 'price'], db.count, 1);
    expect(memo.linesWhenCounted('pier')).toBe(40);
    expect(memo.linesWhenCounted('price')).toBe(COMMON_TERM_LINES + 1);
    // Lines written since leave the count as it was until it is counted again.
    db.on.set('pier', 45);
    memo.linesWritten(5);
    memo.rare(['pier'], db.count, 1);
    expect(memo.linesWhenCounted('pier')).toBe(40);
    // Another connection's write: counted again at the next search.
    memo.rare(['pier'], db.count, 2);
    expect(memo.linesWhenCounted('pier')).toBe(45);
  });

  it('keeps a common term common until a line is deleted, and drops every count when another connection wrote', () => {
    const memo = new TermLineCounts();
    const db = lines({ price: COMMON_TERM_LINES + 500, vote: 3 });
    expect(memo.rare(['price', 'vote'], db.count, 7)).toEqual(['vote']);
    memo.linesWritten(1_000);
    expect(memo.rare(['price'], db.count, 7)).toEqual([]);
    expect(db.counted).toEqual(['price', 'vote']);
    db.on.set('price', COMMON_TERM_LINES);
    memo.linesDeleted(500);
    expect(memo.rare(['price'], db.count, 7)).toEqual(['price']);
    // Another process wrote (data_version moved): `vote` is counted again although nothing here wrote.
    db.on.set('vote', COMMON_TERM_LINES + 1);
    expect(memo.rare(['vote'], db.count, 8)).toEqual([]);
    expect(db.counted).toEqual(['price', 'vote', 'price', 'vote']);
  });

  it('decides as counting every time would, over a long run of writes and deletes', () => {
    const memo = new TermLineCounts();
    const terms = ['a', 'b', 'c', 'd'];
    const db = lines({ a: COMMON_TERM_LINES - 50, b: COMMON_TERM_LINES + 20, c: 0, d: COMMON_TERM_LINES });
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let step = 0; step < 2_000; step++) {
      const term = terms[Math.floor(random() * terms.length)];
      const n = 1 + Math.floor(random() * 8);
      if (random() < 0.6) {
        db.on.set(term, (db.on.get(term) ?? 0) + n);
        memo.linesWritten(n);
      } else {
        db.on.set(term, Math.max(0, (db.on.get(term) ?? 0) - n));
        memo.linesDeleted(n);
      }
      const expected = terms.filter((t) => (db.on.get(t) ?? 0) <= COMMON_TERM_LINES);
      expect(memo.rare(terms, db.count, 1)).toEqual(expected);
    }
    // And it did not count every time.
    expect(db.counted.length).toBeLessThan(2_000 * terms.length);
  });
});
