/**
 * Overlong grapheme clusters: a character followed by thousands of marks, skin-tone modifiers,
 * joiners or conjoining jamo is one cluster, and a browser lays a cluster out in time that grows
 * with the square of its length (2,000 skin-tone modifiers held a member's tab ~2 s; a page of
 * twenty such messages ~40 s). No writing system needs more than a handful per character, so the
 * server refuses text with a run longer than MAX_CLUSTER_EXTENDERS, and the client cuts such runs
 * in whatever it renders (stored history, fetched pages).
 *
 * The check is a regular expression over the extending code points rather than Intl.Segmenter,
 * which took ~220 µs for a 150-character message on the chat's hot path and 14 ms for 4,000.
 */

/** Extending code points one character may carry (the longest emoji tag sequences use 13). */
export const MAX_CLUSTER_EXTENDERS = 16;

/**
 * One extending step: a combining mark, an emoji modifier, a variation selector, a tag character,
 * a conjoining Hangul jamo, or a zero-width joiner with the pictograph it joins.
 */
const EXTENDER = String.raw`(?:[\p{M}\p{Emoji_Modifier}\uFE00-\uFE0F\u{E0020}-\u{E007F}\u{E0100}-\u{E01EF}\u1100-\u11FF\uA960-\uA97F\uD7B0-\uD7FF]|\u200D\p{Extended_Pictographic}?)`;
const OVERLONG = new RegExp(`${EXTENDER}{${MAX_CLUSTER_EXTENDERS + 1},}`, 'u');
const OVERLONG_ALL = new RegExp(OVERLONG.source, 'gu');
const ONE_EXTENDER = new RegExp(EXTENDER, 'gu');

/** Why text with an overlong cluster is refused, for error messages. */
export const OVERLONG_CLUSTER = `a character carries more than ${MAX_CLUSTER_EXTENDERS} combining marks, modifiers or joiners`;

/** True when `text` holds a run of more than MAX_CLUSTER_EXTENDERS extending steps. */
export function hasOverlongCluster(text: string): boolean {
  return OVERLONG.test(text);
}

/** `text` with every run of extending steps cut to its first MAX_CLUSTER_EXTENDERS. */
export function clampClusters(text: string): string {
  if (!OVERLONG.test(text)) return text;
  return text.replace(OVERLONG_ALL, (run) => run.match(ONE_EXTENDER)!.slice(0, MAX_CLUSTER_EXTENDERS).join(''));
}
