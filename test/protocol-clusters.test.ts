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
