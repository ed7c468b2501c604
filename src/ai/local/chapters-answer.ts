/**
 * The built-in model's answers to questions about a video's chapters (ai/video-chapters.ts), read
 * from the chapter lines of the room's video in the prompt: which they are, which one a time falls
 * in, when a subject comes, and what the page says of the video's length (no video page gives it
 * in its text; its last chapter's start is as near as the page comes).
 */
import { chapterAsked, parseChapters, type Chapter } from '../video-chapters.js';
import { contentTerms } from './extractive-text.js';
import { literal } from './item-details-answer.js';

/**
 * The answer to `question` from the chapters in `text` (the room's video's source, cited `[n]`);
 * null when the question asks nothing of them, or asks when a subject comes and no chapter's
 * title names it (the other answers look in the text then).
 */
export function answerFromChapters(question: string, text: string, n: number): string | null {
  const asked = chapterAsked(question);
  if (!asked) return null;
  const chapters = parseChapters(text);
  const cite = ` [${n}]`;
  const none = "This video's description lists no chapters";
  switch (asked.kind) {
    case 'list':
      if (!chapters.length) return `${none}.`;
      return `The video's chapters: ${chapters.map((c) => `${c.stamp} ${literal(c.title)}`).join('; ')}.${cite}`;
    case 'at': {
      const at = clock(asked.seconds);
      if (!chapters.length) return `${none}, so I cannot tell what comes at ${at}.`;
      const i = chapters.findLastIndex((c) => c.start <= asked.seconds);
      const next = chapters[i + 1];
      return `At ${at} the video is in its chapter “${literal(chapters[i].title)}” (${chapters[i].stamp}${next ? `–${next.stamp}` : ' on'}).${cite}`;
    }
    case 'when': {
      const chapter = chapterAbout(chapters, asked.about);
      return chapter ? `The chapter “${literal(chapter.title)}” starts at ${chapter.stamp}.${cite}` : null;
    }
    case 'length': {
      const last = chapters.at(-1);
      return last
        ? `This video's page does not give its length; its last chapter, “${literal(last.title)}”, starts at ${last.stamp}.${cite}`
        : "This video's page does not give its length.";
    }
  }
}

/** The chapter whose title shares most of `about`'s words (the first of a tie), or undefined when none shares one. */
function chapterAbout(chapters: readonly Chapter[], about: string): Chapter | undefined {
  const wanted = new Set(contentTerms(about));
  let best: Chapter | undefined;
  let most = 0;
  for (const c of chapters) {
    const shared = new Set(contentTerms(c.title).filter((t) => wanted.has(t))).size;
    if (shared > most) [best, most] = [c, shared];
  }
  return best;
}

/** `m:ss`, or `h:mm:ss` from an hour. */
function clock(seconds: number): string {
  const s = String(seconds % 60).padStart(2, '0');
  const m = Math.floor(seconds / 60) % 60;
  const h = Math.floor(seconds / 3600);
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
