/** Small plain-text helpers shared by the content sources: cleaning, truncating, excerpts. */
import { clampClusters } from '../protocol/clusters.js';
import { wellFormed, withoutBidiControls } from '../text.js';

/** Characters of an item's description (an excerpt of its summary or body). */
export const DESCRIPTION_CHARS = 300;

// C0 controls except tab and newline, DEL, and C1 controls. \r is handled by newline folding.
const CONTROL_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

/** Removes control characters, folds CRLF/CR to LF, replaces lone surrogates and cuts overlong grapheme clusters (protocol/clusters.ts). */
export function cleanText(text: string): string {
  return clampClusters(wellFormed(text).replace(/\r\n?/g, '\n').replace(CONTROL_CHARS, ''));
}

/**
 * `text` without trailing spaces and tabs. A loop, not `/[ \t]+$/`: that regex restarts at every
 * space of a long run that does not end the string, which is quadratic in the run's length.
 */
export function trimSpacesEnd(text: string): string {
  let end = text.length;
  while (end > 0 && (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9)) end--;
  return end === text.length ? text : text.slice(0, end);
}

/**
 * One line: cleaned, bidi embedding, override and isolate controls dropped (on one line they
 * reorder the text after them, so a title could pose as other text, as names and thread titles,
 * which refuse them, protocol/names.ts, could), every run of whitespace (newlines included)
 * folded to one space, trimmed.
 */
export function oneLine(text: string): string {
  return withoutBidiControls(cleanText(text)).replace(/\s+/g, ' ').trim();
}

/** Whether index i falls between the two halves of a surrogate pair or before a combining mark. */
function splitsCharacter(text: string, i: number): boolean {
  if (i <= 0 || i >= text.length) return false;
  const code = text.charCodeAt(i);
  if (code >= 0xdc00 && code <= 0xdfff) return true;
  return /\p{M}/u.test(text[i]);
}

/** Moves a cut index back until it does not split a character (surrogate pair or combining mark). */
export function safeCut(text: string, i: number): number {
  let j = Math.min(i, text.length);
  while (j > 0 && splitsCharacter(text, j)) j--;
  return j;
}

/**
 * Shortens text to at most max characters, cutting at the last word break past half of max when
 * there is one, and marking the cut with an ellipsis.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return text.slice(0, safeCut(text, max));
  const limit = safeCut(text, max - 1);
  const space = text.lastIndexOf(' ', limit);
  const cut = space > max / 2 ? space : limit;
  return text.slice(0, cut).trimEnd() + '…';
}

/**
 * Characters of a text an excerpt reads, at most: it keeps a few hundred, and the item builders
 * run it on the event loop over whole bodies (2 million combining marks, a feed entry's content,
 * took 1.5 s to flatten). Only text that flattens to almost nothing reads differently.
 */
const EXCERPT_SOURCE_CHARS = 20_000;

/** The first sentences of text that fit in max characters (a word cut with an ellipsis if none fits). */
export function excerpt(text: string, max: number): string {
  const read = Math.max(EXCERPT_SOURCE_CHARS, 2 * max);
  const flat = oneLine(text.length > read ? text.slice(0, safeCut(text, read)) : text);
  if (flat.length <= max) return flat;
  const head = flat.slice(0, max + 1);
  const re = /[.!?…。！？]["'”’)\]]*\s/g;
  let end = -1;
  for (let m = re.exec(head); m; m = re.exec(head)) if (m.index + m[0].length - 1 <= max) end = m.index + m[0].length - 1;
  if (end > max / 3) return flat.slice(0, end).trim();
  return truncate(flat, max);
}
