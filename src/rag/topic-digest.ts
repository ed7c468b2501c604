/**
 * A topic room's digest: a line and a link for each of its category's recent items, under a lead
 * the model may write. Pure functions; src/rag/topics.ts stores what they make.
 */
import { readableBody } from '../content/sources/posts.js';
import { itemPagePath, type ItemWithoutComments, type StoredItem } from '../protocol/content.js';
import type { DigestEntry } from '../protocol/messages.js';
import { clip, formatDay, squash } from '../text.js';
import { safeCut } from '../content/text.js';

/** Most items one digest lists (fewer when their lines fill the room context first). */
export const DIGEST_ITEMS = 10;
/** Longest line about an item. */
export const DIGEST_LINE_CHARS = 160;
const TITLE_CHARS = 140;
/**
 * Longest original's address a digest links to. A longer one is left out, not cut: cut with an
 * ellipsis it led to a wrong page of the same site; the item's page in Salon links to it whole.
 */
const URL_CHARS = 160;
/** Longest lead. */
export const LEAD_CHARS = 320;
/** A sentence shorter than this ("Dr.", "U.S.") is joined to the next. */
const MIN_SENTENCE_CHARS = 30;
/** What ends a sentence when a space (or the end) follows it, so `3.5` and `example.com` stay whole. */
const SENTENCE_END = new Set(['.', '!', '?', '…']);
/** Of a long description or body, only the start is looked at. */
const LOOK_CHARS = 2000;

/** The sentences of `text`, whitespace squashed; pieces shorter than `minChars` are joined to the next. */
export function sentences(text: string, minChars = MIN_SENTENCE_CHARS): string[] {
  const out: string[] = [];
  let pending = '';
  for (const piece of sentencePieces(squash(text))) {
    pending = pending ? `${pending} ${piece.trim()}` : piece.trim();
    if (pending.length >= minChars) {
      out.push(pending);
      pending = '';
    }
  }
  if (pending) out.push(pending);
  return out;
}

/**
 * The sentences of squashed `text`: from a non-space up to a run of end punctuation followed by a
 * space or the end, or to the end. A scan that steps over each run once: as a pattern
 * (`\S.*?(?:[.!?…]+(?=\s|$)|$)`) every position of a run of dots was tried against the rest of the
 * run, and 4,000 dots in a fetched description took 25 ms of the event loop, 16,000 430 ms.
 */
function sentencePieces(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  for (let i = 0; i < n;) {
    if (/\s/.test(text[i])) {
      i++;
      continue;
    }
    let end = n;
    for (let k = i + 1; k < n;) {
      if (!SENTENCE_END.has(text[k])) {
        k++;
        continue;
      }
      let run = k;
      while (run < n && SENTENCE_END.has(text[run])) run++;
      if (run === n || /\s/.test(text[run])) {
        end = run;
        break;
      }
      k = run;
    }
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

/** One line about an item: the first sentence of its description (or body) that is not its title. */
export function itemLine(item: Pick<StoredItem, 'title' | 'description' | 'body'> & { kind?: StoredItem['kind'] }): string {
  const title = squash(item.title).toLowerCase();
  // A post's body is markdown: its text, from a bounded head of it.
  const from = head(item.description.trim() ? item.description : readableBody({ kind: item.kind ?? '', body: head(item.body, 4 * LOOK_CHARS) }), LOOK_CHARS);
  const first = sentences(from).find((s) => !title.includes(s.toLowerCase().replace(/[.!?…]+$/, '')));
  return first ? clip(first, DIGEST_LINE_CHARS) : '';
}

/** The first `max` UTF-16 units of `text`, less a character they would split. */
function head(text: string, max: number): string {
  return text.slice(0, safeCut(text, max));
}

/** The digest entry of a stored item. */
export function digestEntry(item: ItemWithoutComments): DigestEntry {
  return {
    id: item.id,
    kind: item.kind,
    title: clip(squash(item.title), TITLE_CHARS),
    line: itemLine(item),
    url: item.url && /^https?:\/\//i.test(item.url) && item.url.length <= URL_CHARS ? item.url : null,
    publishedAt: item.publishedAt,
  };
}

/** An entry as a line of the room context: title, date, line, and the original (or the item's page in Salon). */
export function entryText(entry: DigestEntry): string {
  const date = entry.publishedAt ? ` (${formatDay(entry.publishedAt)})` : '';
  const line = entry.line ? `: ${entry.line}` : '';
  return `- ${entry.title}${date}${line} ${entry.url ?? itemPagePath(entry)}`;
}

/**
 * The summary text — the lead, then `Recent in <category>, newest first:` and a line per entry —
 * with as many entries (in order, at most DIGEST_ITEMS) as fit in `maxChars`; returns the text and
 * the entries it lists.
 */
export function digestText(category: string, entries: DigestEntry[], lead: string, maxChars: number): { text: string; listed: DigestEntry[] } {
  let text = `${lead ? `${clip(lead, LEAD_CHARS)}\n\n` : ''}Recent in ${category}, newest first:`;
  const listed: DigestEntry[] = [];
  for (const entry of entries.slice(0, DIGEST_ITEMS)) {
    const line = `\n${entryText(entry)}`;
    if (text.length + line.length > maxChars) break;
    text += line;
    listed.push(entry);
  }
  return { text: clip(text, maxChars), listed };
}

/**
 * The model's summary as a lead, or '' when it only repeats sentences of the item lines (an
 * extractive model's: the digest below already says them).
 */
export function leadFrom(summary: string, input: string): string {
  const text = squash(summary);
  if (!text) return '';
  const source = squash(input);
  return sentences(text, 0).every((s) => source.includes(s)) ? '' : text;
}
