/** A video's chapters as its description lists them, and the built-in model's answers from them. */
import { describe, expect, it } from 'vitest';
import { chapterAsked, chapterLines, parseChapters } from '../../src/ai/video-chapters.js';
import { answerFromChapters } from '../../src/ai/local/chapters-answer.js';

const ORBIT = [
  'A fast, plain-language summary of the phase 3 ORBIT-3 trial.',
  '',
  '0:00 The headline number',
  '1:30 Who was in the trial',
  '3:10 Side effects',
  '5:00 Why weekly matters',
  "6:40 What we still don't know",
].join('\n');

describe('parseChapters', () => {
  it('reads a chapter a line, a time inside a title kept in it', () => {
    expect(parseChapters(ORBIT).map((c) => [c.start, c.title])).toEqual([
      [0, 'The headline number'],
      [90, 'Who was in the trial'],
      [190, 'Side effects'],
      [300, 'Why weekly matters'],
      [400, "What we still don't know"],
    ]);
    const meridian = 'Chapters\n00:00 Saturday: the letter\n05:20 Sunday: the low at 03:00 UTC\n1:02:05 Custody vs. credit';
    expect(parseChapters(meridian).map((c) => [c.start, c.title])).toEqual([
      [0, 'Saturday: the letter'],
      [320, 'Sunday: the low at 03:00 UTC'],
      [3725, 'Custody vs. credit'],
    ]);
  });

  it('reads chapters in a run on one line, each title ending at the next time', () => {
    const review = 'We tear it down. Chapters 00:00 Unboxing and first boot 03:20 Display, keyboard and trackpad 07:45 Benchmarks';
    expect(parseChapters(review).map((c) => `${c.stamp} ${c.title}`)).toEqual([
      '00:00 Unboxing and first boot',
      '03:20 Display, keyboard and trackpad',
      '07:45 Benchmarks',
    ]);
    expect(chapterLines(parseChapters(review))).toBe('00:00 Unboxing and first boot\n03:20 Display, keyboard and trackpad\n07:45 Benchmarks');
    // Cut to whole lines: a passage never ends in half a title.
    expect(chapterLines(parseChapters(review), 70)).toBe('00:00 Unboxing and first boot\n03:20 Display, keyboard and trackpad');
  });

  it('finds none in times that are no list starting at 0:00 and going forward', () => {
    expect(parseChapters('The outage began at 09:41 CET on 6 March and was fully resolved at 15:53, a total of 6 hours.')).toEqual([]);
    expect(parseChapters('0:00 Only one chapter')).toEqual([]);
    expect(parseChapters('We compile a kernel (14:20), run Corebench 7 and test AV1 streaming (5h 05m).')).toEqual([]);
    // Hostile text is read in time linear in its length (a 20,000-character run of times).
    expect(parseChapters('0:00 1:00 '.repeat(2000))).toEqual([]);
  });
});

describe('chapterAsked', () => {
  it.each([
    ['What are the chapters?', { kind: 'list' }],
    ['can you list the timestamps', { kind: 'list' }],
    ['Show me the chapters', { kind: 'list' }],
    ['What happens at 12 minutes?', { kind: 'at', seconds: 720 }],
    ['what is discussed at 3:10?', { kind: 'at', seconds: 190 }],
    ['What is he talking about around 5 minutes 30 seconds in?', { kind: 'at', seconds: 330 }],
    ['When does it talk about side effects?', { kind: 'when', about: 'side effects' }],
    ['At what point do they discuss the price?', { kind: 'when', about: 'the price' }],
    ['How long is the video?', { kind: 'length' }],
    // A book's chapter, a time that is no place in the video, a length of something else.
    ['What is chapter nine about?', null],
    ['How long did the plasma last?', null],
  ] as const)('"%s" asks %j', (question, asked) => {
    expect(chapterAsked(question)).toEqual(asked);
  });
});

describe('answerFromChapters', () => {
  it('lists the chapters, finds the one a time falls in and the one a subject comes in', () => {
    expect(answerFromChapters('What are the chapters?', ORBIT, 1)).toBe(
      "The video's chapters: 0:00 The headline number; 1:30 Who was in the trial; 3:10 Side effects; 5:00 Why weekly matters; 6:40 What we still don't know. [1]",
    );
    expect(answerFromChapters('What is discussed at 3:00?', ORBIT, 2)).toBe('At 3:00 the video is in its chapter “Who was in the trial” (1:30–3:10). [2]');
    expect(answerFromChapters('What happens at 12 minutes?', ORBIT, 1)).toBe("At 12:00 the video is in its chapter “What we still don't know” (6:40 on). [1]");
    expect(answerFromChapters('When does it talk about side effects?', ORBIT, 1)).toBe('The chapter “Side effects” starts at 3:10. [1]');
    // No chapter names it: the text is read for it instead.
    expect(answerFromChapters('When does it talk about the price?', ORBIT, 1)).toBeNull();
  });

  it('says what the page does not give, and escapes a title’s markup', () => {
    expect(answerFromChapters('How long is the video?', ORBIT, 1)).toBe(
      "This video's page does not give its length; its last chapter, “What we still don't know”, starts at 6:40. [1]",
    );
    expect(answerFromChapters('How long is the video?', 'No chapters here.', 1)).toBe("This video's page does not give its length.");
    expect(answerFromChapters('What happens at 2:00?', 'No chapters here.', 1)).toBe(
      "This video's description lists no chapters, so I cannot tell what comes at 2:00.",
    );
    expect(answerFromChapters('What are the chapters?', '0:00 Intro\n1:00 [click](http://x.example) *now*', 1)).toBe(
      "The video's chapters: 0:00 Intro; 1:00 \\[click\\](http://x.example) \\*now\\*. [1]",
    );
    expect(answerFromChapters('Who is the guest?', ORBIT, 1)).toBeNull();
  });
});
