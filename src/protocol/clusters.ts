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

/** Grapheme_Cluster_Break=Prepend (Unicode 15.1's GraphemeBreakProperty.txt), as class ranges. */
const PREPEND = String.raw`\u0600-\u0605\u06DD\u070F\u0890\u0891\u08E2\u0D4E\u{110BD}\u{110CD}\u{111C2}\u{111C3}\u{1193F}\u{11941}\u{11A3A}\u{11A84}-\u{11A89}\u{11D46}\u{11F02}`;

/** Extending code points one character may carry (the longest emoji tag sequences use 13). */
export const MAX_CLUSTER_EXTENDERS = 16;

/**
 * One extending step, after Unicode's grapheme cluster rules (UAX #29): what is Extend (marks,
 * Grapheme_Extend such as ZWNJ, the halfwidth voicing marks and tag characters, emoji modifiers),
 * SpacingMark (marks, and the two letters Thai SARA AM and Lao AM), Prepend (the few signs that join
 * the character after them), a conjoining Hangul jamo, or a zero-width joiner with the pictograph
 * it joins. Counting them all in one class matters: one uncounted kind between two runs of marks
 * would let them chain past the limit.
 */
const EXTENDER = String.raw`(?:[\p{M}\p{Grapheme_Extend}\p{Emoji_Modifier}\u0E33\u0EB3${PREPEND}\u1100-\u11FF\uA960-\uA97F\uD7B0-\uD7FF]|\u200D\p{Extended_Pictographic}?)`;
/**
 * A run of more than MAX_CLUSTER_EXTENDERS steps, found by its first MAX_CLUSTER_EXTENDERS + 1 (the
 * kept ones captured) and never read on to the run's end: an unbounded repeat of the step holds a
 * backtrack entry per step, and a page with megabytes of marks ran out of V8's backtrack stack
 * (RangeError: Maximum call stack size exceeded). The run's rest is walked one step at a time.
 */
const OVERLONG = new RegExp(`(${EXTENDER}{${MAX_CLUSTER_EXTENDERS}})${EXTENDER}`, 'u');
const OVERLONG_ALL = new RegExp(OVERLONG.source, 'gu');
const STEP_AT = new RegExp(EXTENDER, 'uy');

/** Why text with an overlong cluster is refused, for error messages. */
export const OVERLONG_CLUSTER = `a character carries more than ${MAX_CLUSTER_EXTENDERS} combining marks, modifiers or joiners`;

/** True when `text` holds a run of more than MAX_CLUSTER_EXTENDERS extending steps. */
export function hasOverlongCluster(text: string): boolean {
  return OVERLONG.test(text);
}

/** Where the run of extending steps going on at `at` ends. */
function runEnd(text: string, at: number): number {
  STEP_AT.lastIndex = at;
  while (STEP_AT.test(text)) at = STEP_AT.lastIndex;
  return at;
}

/** `text` with every run of extending steps cut to its first MAX_CLUSTER_EXTENDERS. */
export function clampClusters(text: string): string {
  if (!OVERLONG.test(text)) return text;
  const parts: string[] = [];
  let from = 0;
  OVERLONG_ALL.lastIndex = 0;
  for (let m = OVERLONG_ALL.exec(text); m; m = OVERLONG_ALL.exec(text)) {
    parts.push(text.slice(from, m.index + m[1].length));
    from = runEnd(text, m.index + m[0].length);
    OVERLONG_ALL.lastIndex = from;
  }
  parts.push(text.slice(from));
  return parts.join('');
}
