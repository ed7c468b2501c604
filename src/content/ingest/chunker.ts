/**
 * Splits an item into the chunks that get embedded and searched (pure; no I/O).
 *
 * - One `title` chunk: the title, a blank line, the description (cut to `size`).
 * - `body` chunks: overlapping windows over the body. A window ends at the last paragraph break,
 *   else sentence end, else space in its second half, and only cuts inside a word when a single
 *   word is longer than the window. The next window starts about `overlap` characters earlier, at
 *   a sentence start when one is in reach, else at a word start. Items without a body (videos)
 *   window over the description instead when it did not fit in the title chunk.
 * - `comment` chunks: one comment per chunk (windowed the same way when long), carrying
 *   `commentBy`, never mixed with article text.
 *
 * Chunk text is the source text only; the title is not repeated in body or comment chunks,
 * because every chunk row names its item and results are grouped back to items (docs/architecture.md).
 */
import { readableBody } from '../sources/posts.js';
import type { Comment, ContentItem, NewChunk } from '../types.js';
import { safeCut } from '../text.js';
import { wholeNumber } from '../../options.js';

export interface ChunkOptions {
  /** Longest chunk, in characters (CHUNK_SIZE). */
  size: number;
  /** Characters neighbouring windows share (CHUNK_OVERLAP); smaller than size. */
  overlap: number;
}

/** A window must reach at least this share of `size` before a boundary may end it. */
const MIN_FILL = 0.5;
const PARAGRAPH_BREAK = /\n[ \t]*\n/g;
// Latin sentence ends need whitespace after them ("3.5" is not one); CJK full stops do not.
const SENTENCE_END = /[.!?…]["'”’)\]]*(?=\s|$)|[。！？]["'”’)\]」』]*/g;
// A sentence end and the whitespace after it; what follows the match starts a sentence.
const SENTENCE_START = /[.!?…]["'”’)\]]*\s+(?=\S)|[。！？]["'”’)\]」』]*\s*(?=\S)/g;

/** Checks chunk options, failing with the name of the bad option. */
export function validateChunkOptions(options: ChunkOptions): void {
  wholeNumber('chunker', 'size', options.size, 1);
  wholeNumber('chunker', 'overlap', options.overlap, 0, options.size - 1);
}

/**
 * Position of the last match of `re` in text[from, to], measured at the match's start
 * (`at: 'start'`) or just past it (`at: 'end'`); -1 if none. Scans only that range (plus one
 * character of look-ahead), so a long text without boundaries costs O(size) per window.
 */
function lastMatchIn(text: string, re: RegExp, from: number, to: number, at: 'start' | 'end'): number {
  const slice = text.slice(from, Math.min(text.length, to + 1));
  let best = -1;
  re.lastIndex = 0;
  for (let m = re.exec(slice); m; m = re.exec(slice)) {
    const pos = from + (at === 'start' ? m.index : m.index + m[0].length);
    if (pos >= from && pos <= to) best = pos;
    if (m[0].length === 0) re.lastIndex++;
  }
  return best;
}

/** Start of the last whitespace run that begins in (from, to]; -1 if none. */
function lastSpaceIn(text: string, from: number, to: number): number {
  for (let i = Math.min(to, text.length - 1); i > from; i--) if (/\s/.test(text[i])) return i;
  return -1;
}

/** Where the window starting at `start` should end. */
function windowEnd(text: string, start: number, size: number): number {
  const max = start + size;
  if (max >= text.length) return text.length;
  const min = start + Math.max(1, Math.floor(size * MIN_FILL));
  const para = lastMatchIn(text, PARAGRAPH_BREAK, min, max, 'start');
  if (para > 0) return para;
  const sentence = lastMatchIn(text, SENTENCE_END, min, max, 'end');
  if (sentence > 0) return sentence;
  const space = lastSpaceIn(text, start, max);
  if (space > start) return space;
  const cut = safeCut(text, max);
  return cut > start ? cut : max;
}

/** Where the window after one ending at `end` should start, at most `overlap` characters back. */
function nextStart(text: string, start: number, end: number, overlap: number): number {
  let from = Math.max(start + 1, end - overlap);
  if (overlap > 0 && from < end) {
    const slice = text.slice(from - 1, end);
    SENTENCE_START.lastIndex = 0;
    const m = SENTENCE_START.exec(slice);
    if (m) return from - 1 + m.index + m[0].length;
    for (let i = from; i < end; i++) if (/\s/.test(text[i - 1]) && !/\s/.test(text[i])) return i;
    from = safeCut(text, from);
    if (from > start && from < end) return from;
  }
  let i = end;
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

/** Overlapping windows over `text`, each at most `size` characters, trimmed, none empty. */
export function windows(text: string, options: ChunkOptions): string[] {
  validateChunkOptions(options);
  const out: string[] = [];
  let start = 0;
  while (start < text.length && /\s/.test(text[start])) start++;
  while (start < text.length) {
    const end = windowEnd(text, start, options.size);
    const piece = text.slice(start, end).trim();
    if (piece) out.push(piece);
    if (end >= text.length) break;
    start = nextStart(text, start, end, options.overlap);
  }
  return out;
}

function commentChunks(comments: Comment[], options: ChunkOptions): { text: string; by: string }[] {
  return comments.flatMap((c) => windows(c.text, options).map((text) => ({ text, by: c.by })));
}

/** The chunks of an item, numbered from 0: title, body windows, then comments. */
export function chunkItem(
  item: Pick<ContentItem, 'title' | 'description' | 'body' | 'comments'> & { kind?: ContentItem['kind'] },
  options: ChunkOptions,
): NewChunk[] {
  validateChunkOptions(options);
  const chunks: NewChunk[] = [];
  const head = [item.title.trim(), item.description.trim()].filter(Boolean).join('\n\n');
  const headWindows = windows(head, { size: options.size, overlap: 0 });
  if (headWindows.length) chunks.push({ ord: 0, part: 'title', text: headWindows[0] });
  const descriptionCut = headWindows.length > 1;
  // A post's markdown is indexed as its text.
  const bodyText = item.body.trim() ? readableBody({ kind: item.kind ?? '', body: item.body }) : descriptionCut ? item.description : '';
  for (const text of windows(bodyText, options)) chunks.push({ ord: chunks.length, part: 'body', text });
  for (const c of commentChunks(item.comments, options)) chunks.push({ ord: chunks.length, part: 'comment', text: c.text, commentBy: c.by });
  return chunks;
}
