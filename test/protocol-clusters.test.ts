/** Overlong grapheme clusters (src/protocol/clusters.ts): found, and cut where text is rendered or fetched. */
import { describe, expect, it } from 'vitest';
import { MAX_CLUSTER_EXTENDERS, clampClusters, hasOverlongCluster } from '../src/protocol/clusters.js';
import { cleanText } from '../src/content/text.js';

describe('overlong grapheme clusters', () => {
  it('are runs of more extending code points than one character needs', () => {
    expect(hasOverlongCluster(`a${'\u0301'.repeat(MAX_CLUSTER_EXTENDERS)}`)).toBe(false);
    expect(hasOverlongCluster(`a${'\u0301'.repeat(MAX_CLUSTER_EXTENDERS + 1)}`)).toBe(true);
    expect(hasOverlongCluster('\u{1F3FB}'.repeat(MAX_CLUSTER_EXTENDERS + 1))).toBe(true);
    expect(hasOverlongCluster(`\u{1F469}${'\u200D\u{1F469}'.repeat(MAX_CLUSTER_EXTENDERS + 1)}`)).toBe(true);
    // The longest real sequences: a family, a subdivision flag, stacked Vietnamese marks.
    expect(
      hasOverlongCluster('\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466} \u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F} Nguy\u1EC5n'),
    ).toBe(false);
    expect(hasOverlongCluster('word '.repeat(800))).toBe(false);
  });

  it('count every kind of extender of the Unicode cluster rules, in one run', () => {
    const over = MAX_CLUSTER_EXTENDERS + 1;
    // Each is one grapheme cluster of `over` + 1 code points: a SpacingMark letter, halfwidth voicing
    // marks, Prepend signs before their base, and marks chained through zero-width non-joiners.
    for (const text of [`\u0E01${'\u0E33'.repeat(over)}`, `\uFF76${'\uFF9E'.repeat(over)}`, `${'\u0600'.repeat(over)}1`, `a${'\u0301\u200C'.repeat(over)}`]) {
      expect([...new Intl.Segmenter().segment(text)]).toHaveLength(1);
      expect(hasOverlongCluster(text), JSON.stringify(text)).toBe(true);
      expect(hasOverlongCluster(clampClusters(text))).toBe(false);
    }
    expect(hasOverlongCluster(`a${'\u0301'.repeat(MAX_CLUSTER_EXTENDERS - 1)}\u200C${'\u0301'.repeat(MAX_CLUSTER_EXTENDERS - 1)}`)).toBe(true);
    // Real text in those scripts stays well inside the limit.
    for (const text of [
      '\u0E19\u0E49\u0E33\u0E43\u0E08',
      '\uFF76\uFF9E\uFF77\uFF9E',
      '\u0600\u0661\u0662\u0663',
      '\uD55C\uAD6D\uC5B4 \u1100\u1161\u11A8',
      '\u0915\u094D\u0937\u0924\u094D\u0930\u093F\u092F',
      'ZW\u200CNJ',
    ]) {
      expect(hasOverlongCluster(text), JSON.stringify(text)).toBe(false);
    }
  });

  it('are cut to their first extending code points, the rest of the text kept', () => {
    expect(clampClusters(`x a${'\u0301'.repeat(4000)} y`)).toBe(`x a${'\u0301'.repeat(MAX_CLUSTER_EXTENDERS)} y`);
    expect(clampClusters('\u{1F3FB}'.repeat(2000))).toBe('\u{1F3FB}'.repeat(MAX_CLUSTER_EXTENDERS));
    const plain = 'Hello, \u{1F44D}\u{1F3FD} caf\u00E9';
    expect(clampClusters(plain)).toBe(plain);
  });

  it('are cut in fetched text as it is cleaned', () => {
    expect(cleanText(`Title a${'\u0301'.repeat(500)}\r\nbody`)).toBe(`Title a${'\u0301'.repeat(MAX_CLUSTER_EXTENDERS)}\nbody`);
  });
});
