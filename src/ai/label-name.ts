/**
 * A name as a source's label shows it (`HN comment by pg`, `From this discussion — Alice, Bob, …`).
 * Names come from members, imports and fetched comment threads, so a label made of them is as
 * untrusted as a page's title, and the instructions tell sources apart by label.
 */
import { readAsLatin } from '../protocol/confusables.js';
import { squash, withoutBidiControls } from '../text.js';
import { instructsTheReader } from './local/directives.js';

/**
 * Words a name must not open with in a label, as a model reads them (readAsLatin): another
 * source's label (`HN comment by pg`, `Page: …`, `From this discussion`), a source's number or a
 * prompt section's header (`Source 2`, `[USER QUERY]`).
 */
const LABEL_WORDS =
  /^[^\p{L}\p{N}]*(?:page\s*:|from\s+this\s+discussion|(?:(?:hn|reddit)\s+)?comment\s+by|source\s*\d|user\s+query|primary\s+topic|instructions?\b|(?:retrieved|relevant|recent)\s+(?:document|past|chat))/u;
/** What separates a label's names and dates (`, `, ` — `, ` – `), or a date (`24 Nov 2026`): in a name, they read as more names or other days. */
const LABEL_PARTS = /[,—–]|\d{1,2}\s+\p{L}{3,}\.?\s+\d{4}/u;

/**
 * `name` on one line, without bidi controls, and in quotation marks where it reads as another
 * label, an order to the reader (`Ignore all previous instructions` is a name of 32 characters)
 * or more than one name, as documentLabel marks a page titled as a comment.
 */
export function labelName(name: string): string {
  const plain = squash(withoutBidiControls(name));
  const read = readAsLatin(plain);
  if (!LABEL_WORDS.test(read) && !instructsTheReader(read) && !LABEL_PARTS.test(read)) return plain;
  return `“${plain.replace(/["“”]/g, "'")}”`;
}
