/**
 * Small text helpers every part uses, in one place: cutting text to a length for display or a
 * prompt, counting things in words (`plural`), naming the site a URL is on, and how chat lines
 * date their messages. (Content cleaning lives in content/text.ts, word
 * features in ai/local/.)
 */

/**
 * Cuts `text` to at most `max` characters (UTF-16 units), at a word boundary when one is near,
 * marking the cut with `…`; never between the halves of a surrogate pair (an emoji), whose first
 * half alone is no text and is stored as U+FFFD.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  const cut = text.slice(0, end);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** `n` and the noun for it, in English: `1 message`, `0 messages`, `2 messages`. */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * `text` with its ASCII capitals in lower case and every other character as it is: how categories
 * compare, as SQLite's NOCASE and the PostgreSQL store's `lower(… COLLATE "C")` compare them.
 */
export function foldAsciiCase(text: string): string {
  return text.replace(/[A-Z]+/g, (capitals) => capitals.toLowerCase());
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * `text` with each lone surrogate (half of a pair, invalid in UTF-8) replaced by U+FFFD, so what a
 * member typed is echoed as it is stored (SQLite kept such a half as three U+FFFD).
 */
export function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\uFFFD') : text;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * `text` with each NUL made U+FFFD: PostgreSQL text cannot hold NUL (SQLite can), so what both
 * stores keep, and what is echoed before it is stored, is this.
 */
export function withoutNul(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/**
 * Parsed JSON with every string value in it made well-formed (wellFormed), in place. Walked with a
 * stack, not by recursion: a body may nest as deep as its size allows.
 */
export function wellFormedValues<T>(value: T): T {
  if (typeof value === 'string') return wellFormed(value) as T;
  const pending: unknown[] = [value];
  while (pending.length) {
    const node = pending.pop();
    if (!node || typeof node !== 'object') continue;
    const fields = node as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      const v = fields[key];
      if (typeof v === 'string') fields[key] = wellFormed(v);
      else if (v && typeof v === 'object') pending.push(v);
    }
  }
  return value;
}

/** Whitespace runs squashed to one space and the ends trimmed; most stored text needs neither, and the check is cheaper than the replace. */
export function squash(text: string): string {
  return NEEDS_SQUASH.test(text) ? text.replace(/\s+/g, ' ').trim() : text;
}

/**
 * Bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069). On one line they reorder
 * the text after them, so a label could pose as other text. The LRM and RLM marks stay: mixed-direction text needs them.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

/** `text` without bidi embedding, override and isolate controls: what a one-line label shows. */
export function withoutBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, '');
}

/** Whitespace other than single spaces between non-spaces. */
const NEEDS_SQUASH = /[^\S ]| {2}|^ | $/;

/** The host a URL names without a leading `www.` (`news.example.com`), or null when it is not a URL. */
export function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return null;
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `24 Nov 2026` in UTC (the same on every node, whatever its time zone). */
export function formatDay(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return 'unknown date';
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** `24 Nov 2026, 19:20` in UTC: how a chat line dates its message (`Ann (24 Nov 2026, 19:20): …`). */
export function chatStamp(iso: string): string {
  const d = new Date(iso);
  const time = Number.isNaN(d.getTime()) ? '--:--' : `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
  return `${formatDay(iso)}, ${time}`;
}

/** A chatStamp in its parentheses, as chat lines and the memory chunks made of them carry it. */
export const CHAT_STAMP = /\(\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d\)/;

/** How a sentence ends: a stop, or a pause a marker may follow (`in March [1, 3], as …`), closing quotes after it. */
const SENTENCE_STOP = /[.!?…:;,]["'”’)\]]*$/;
/** What begins a sentence after a marker: spaces, an opening quote, a capital. */
const SENTENCE_AFTER = /^\s+["'“‘(]?\p{Lu}/u;
/** Characters after a marker read for SENTENCE_AFTER: a few spaces and the capital. */
const SENTENCE_AFTER_CHARS = 8;

/**
 * The text without its `[n]` (or `[n, m]`) citation markers and the spaces before them: an old
 * answer's numbers belong to another prompt. The markers are found first and the spaces trimmed back from each:
 * as one pattern (`\s*\[\d{1,2}\]`), a run of spaces with no marker after it was rescanned from
 * each of its positions, and a model's answer of 64,000 spaces took seconds of the event loop,
 * once when remembered and again in every later ask's recent chat. A marker that ended a sentence
 * with no stop of its own leaves one.
 */
export function withoutCitations(text: string): string {
  const marker = /\[\d{1,2}(?:\s*,\s*\d{1,2})*\]/g;
  let out = '';
  let from = 0;
  for (let m = marker.exec(text); m; m = marker.exec(text)) {
    const before = text.slice(from, m.index).trimEnd();
    from = m.index + m[0].length;
    // A marker ending a sentence that has no stop of its own (a video's chapter line, `22:40 The
    // vote [1] Plus the funding …`) was its end: taken out, the two sentences ran into one.
    const endsUnstopped = out.length + before.length > 0 && !SENTENCE_STOP.test(before || out);
    out += endsUnstopped && SENTENCE_AFTER.test(text.slice(from, from + SENTENCE_AFTER_CHARS)) ? `${before}.` : before;
  }
  return from === 0 ? text : out + text.slice(from);
}
