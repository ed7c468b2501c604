/**
 * A video's chapters, as its description lists them (`0:00 The headline number`, `3:10 Side
 * effects`, one a line or in a run), and the questions a video's room asks of them: "what are the
 * chapters?", "what happens at 12 minutes?", "when does it get to the side effects?", "how long is
 * the video?". The pipeline keeps such a question to the room's video with its chapter lines as
 * the passage (buildContext's `chapters`), and the built-in model answers it from them
 * (ai/local/chapters-answer.ts); a remote model reads the same lines.
 */

import { plainShortQuestion } from './item-questions.js';

/** A chapter: where it starts (seconds), its time as written, and its title. */
export interface Chapter {
  start: number;
  stamp: string;
  title: string;
}

const STAMP = String.raw`(?:\d{1,2}:)?\d{1,2}:\d{2}`;
/**
 * A time, then the chapter's title up to the next time or the line's end. The title is bounded
 * (a chapter's title is short) and read lazily: each step tries the lookahead once.
 */
const CHAPTER = new RegExp(String.raw`(?:^|[\s(\[])(${STAMP})[)\]]?[ \t]*[-–—:|]?[ \t]+([^\n]{1,120}?)(?=[ \t]+[(\[]?${STAMP}[)\]]?[ \t]|[ \t]*(?:\n|$))`, 'g');
/** A line that starts with a time: a chapter whose title is the rest of the line. */
const CHAPTER_LINE = new RegExp(String.raw`^[ \t]*[(\[]?(${STAMP})[)\]]?[ \t]*[-–—:|]?[ \t]+([^\n]{1,120})$`, 'gm');
/** Fewest chapters a list holds: one time is a time, not a list. */
const CHAPTERS_MIN = 2;
/** The text read for chapters, at most: a description is a few thousand characters. */
const CHAPTERS_TEXT_MAX = 20_000;

/** Seconds from `h:mm:ss` or `m:ss`. */
function secondsOf(stamp: string): number {
  return stamp.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

/**
 * The chapters `text` lists: a run of at least two times, the first at 0:00 and each later than
 * the one before, as video sites require of a description's chapters (so a news story's `at 09:41
 * CET … resolved at 15:53` is none). Empty when it lists none.
 */
export function parseChapters(text: string): Chapter[] {
  const read = text.slice(0, CHAPTERS_TEXT_MAX);
  // A chapter a line first: its title runs to the line's end, a time in it (`Sunday: the low at
  // 03:00 UTC`) and all; then chapters in a run on one line, each title ending at the next time.
  const byLine = chaptersIn([...read.matchAll(CHAPTER_LINE)]);
  return byLine.length ? byLine : chaptersIn([...read.matchAll(CHAPTER)]);
}

/** The longest run of chapters among `matches` (time, title) that starts at 0:00 and goes forward; empty when shorter than CHAPTERS_MIN. */
function chaptersIn(matches: RegExpMatchArray[]): Chapter[] {
  const found: Chapter[] = [];
  for (const m of matches) {
    const title = m[2].trim();
    if (title) found.push({ start: secondsOf(m[1]), stamp: m[1], title });
  }
  let best: Chapter[] = [];
  for (let i = 0; i < found.length; i++) {
    if (found[i].start !== 0) continue;
    let end = i + 1;
    while (end < found.length && found[end].start > found[end - 1].start) end++;
    if (end - i > best.length) best = found.slice(i, end);
  }
  return best.length >= CHAPTERS_MIN ? best : [];
}

/** The chapters as lines (`3:10 Side effects`), the whole lines that fit in `maxChars`: the passage the prompt shows of them. */
export function chapterLines(chapters: readonly Chapter[], maxChars = Infinity): string {
  const lines: string[] = [];
  let chars = 0;
  for (const c of chapters) {
    const line = `${c.stamp} ${c.title}`;
    chars += line.length + (lines.length ? 1 : 0);
    if (chars > maxChars) break;
    lines.push(line);
  }
  return lines.join('\n');
}

/** What a question asks of a video's chapters. */
export type ChapterAsk = { kind: 'list' } | { kind: 'at'; seconds: number } | { kind: 'when'; about: string } | { kind: 'length' };

const LIST =
  /\b(?:what|which|list|show|give)\b.{0,40}\b(?:chapters|timestamps|sections|segments)\b|\b(?:table of contents|the outline)\b|^what (?:does|do) (?:it|the video|this video|they) cover$|^what(?:'s| is) covered(?: in (?:it|the video|this video))?$/;
const AT_TIME = new RegExp(
  String.raw`\b(?:at|around|near|after|by)\s+(?:the\s+)?(?:(${STAMP})|(\d{1,3})\s*(?:minutes?|mins?|m)(?:\s*(?:and\s*)?(\d{1,2})\s*(?:seconds?|secs?|s))?(?:\s+in)?|minute\s+(\d{1,3}))\b`,
);
const WHAT_AT = /^(?:what|which|who)\b/;
const WHEN_ABOUT =
  /^(?:when|where|at what (?:time|point|minute)|how far in)\b.{0,30}?\b(?:talk(?:s|ed)?|speak(?:s)?|discuss(?:es|ed)?|cover(?:s|ed)?|get(?:s)? to|come(?:s)? to|mention(?:s|ed)?|explain(?:s|ed)?|show(?:s|ed)?|go(?:es)? (?:into|over)|start(?:s)? (?:talking|on)|deal(?:s)? with)\s+(?:about\s+|on\s+)?(.{2,80})$/;
const LENGTH =
  /^(?:how long is (?:the|this) video|how long is it|what(?:'s| is) (?:the|its) (?:video's )?(?:length|duration|runtime|running time)(?: of (?:the|this) video)?|how many minutes (?:is|long is) (?:it|the video|this video))$/;

/** What `question` asks of the room's video's chapters, or null when it asks none of these. */
export function chapterAsked(question: string): ChapterAsk | null {
  const q = plainShortQuestion(question);
  if (q === null) return null;
  if (LENGTH.test(q)) return { kind: 'length' };
  if (LIST.test(q)) return { kind: 'list' };
  const at = AT_TIME.exec(q);
  if (at && WHAT_AT.test(q)) {
    const seconds = at[1] !== undefined ? secondsOf(at[1]) : Number(at[2] ?? at[4]) * 60 + Number(at[3] ?? 0);
    return { kind: 'at', seconds };
  }
  const when = WHEN_ABOUT.exec(q);
  return when ? { kind: 'when', about: when[1] } : null;
}
