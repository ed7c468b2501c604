/**
 * Whether a "when" question is answered: a sentence quoted for "when is the launch?" must say a
 * time of some kind, a date, a year, a day, an hour, a season, or one relative to now or to
 * another event (`next week`, `two years ago`, `after the war`). `The launch will feature a new
 * rocket.` holds the question's words and says no time: quoted, it claimed the sources tell when.
 */
import { answerType } from './extractive-answer.js';

/** A unit of time, singular or plural. */
const UNIT = String.raw`(?:second|minute|hour|day|night|week|weekend|fortnight|month|quarter|season|year|decade|century|centuries|millennium)s?`;
/** What counts or places a unit of time: `two years`, `next week`, `the same day`. */
const UNIT_BEFORE = String.raw`\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|several|many|next|last|this|that|each|every|same|following|previous|coming|past`;

/** Times in any case: dates, years, hours, days, seasons, and times relative to now or to another event. */
const TIME = new RegExp(
  [
    String.raw`\b(?:1\d{3}|20\d{2})\b`,
    String.raw`\b\d{1,4}\s*(?:AD|BC|BCE|CE)\b|\b(?:AD|A\.D\.)\s*\d{1,4}\b`,
    String.raw`\b(?:in|of|since|by|until|around|circa|c\.)\s+\d{3,4}\b`,
    String.raw`\b\d{1,2}(?:st|nd|rd|th)\b`,
    String.raw`\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b`,
    String.raw`\b\d{1,2}:\d{2}\b|\b\d{1,2}(?:[.:]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b(?:noon|midnight|o'clock|dawn|dusk)\b`,
    String.raw`\b\d{2,4}'?s\b|\b(?:twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties)\b`,
    String.raw`\b(?:century|centuries|millennium|decade|era|spring|summer|autumn|winter|morning|afternoon|evening|overnight|weekend)s?\b`,
    String.raw`\b(?:${UNIT_BEFORE})(?:[\s-]+\w+)?[\s-]+${UNIT}\b`,
    String.raw`\b(?:today|tonight|yesterday|tomorrow|ago|now|nowadays|currently|recently|lately|soon|later|earlier|formerly|previously|eventually|meanwhile|already|not yet|yet to|annually|daily|weekly|monthly|yearly)\b`,
    String.raw`\b(?:before|after|afterwards|during|until|till|since|prior to|upon|when|whenever|while|whilst|as soon as|throughout|by the time|at the (?:time|end|start|beginning|height|age|outbreak))\b`,
    String.raw`\bfollowing\s+(?:the|a|an|his|her|its|their)\b`,
  ].join('|'),
  'iu',
);
/**
 * Months, written with a capital (`march`, `mar` and `may` are verbs too): their names and
 * abbreviations (`Sept.`), May only beside a day or a year (mayBesideNumber) or after a word that
 * dates (`in May`), not the verb (`The launch May slip` opens a sentence).
 */
const MONTH =
  /\b(?:January|February|March|April|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b|\b(?:in|of|early|late|mid-?|since|until|by|last|next|this)\s+May\b/u;
/** The month's name where it may be one. */
const MAY = /\bMay\b/g;
const SPACE = /\s/;
const DIGIT = /\d/;

/**
 * The most text one regex reads at once. A time is said in a few words, so a long sentence is read
 * in windows that overlap by more than any time takes to say: one exec over megabytes ran out of
 * V8's backtrack stack in CI (RangeError: Maximum call stack size exceeded) under load, at random.
 */
const WINDOW = 4096;
const OVERLAP = 512;

/**
 * `text` with each run of whitespace made one space, so a window cuts no `9 … May` apart. Walked by
 * hand: `text.replace(/\s+/g, ' ')` over 4 MiB of spaces threw the same RangeError in CI (f8ce72e),
 * though one class repeated is meant to keep no backtrack entry per step.
 */
function squeezeSpaces(text: string): string {
  const parts: string[] = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    if (!SPACE.test(text[i])) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < text.length && SPACE.test(text[end])) end++;
    parts.push(text.slice(start, i), ' ');
    start = i = end;
  }
  parts.push(text.slice(start));
  return parts.join('');
}

/**
 * Whether `test` holds in some window of `text`. Windows are cut at spaces where there are any,
 * so no cut makes a word boundary that is not in the text.
 */
function inWindows(text: string, test: (window: string) => boolean): boolean {
  if (text.length <= WINDOW) return test(text);
  const squeezed = squeezeSpaces(text);
  let start = 0;
  while (start < squeezed.length) {
    let end = Math.min(squeezed.length, start + WINDOW);
    if (end < squeezed.length) {
      const space = squeezed.lastIndexOf(' ', end);
      if (space > start + OVERLAP) end = space;
    }
    if (test(squeezed.slice(start, end))) return true;
    if (end >= squeezed.length) break;
    const space = squeezed.indexOf(' ', end - OVERLAP);
    start = space >= 0 && space < end ? space + 1 : end - OVERLAP;
  }
  return false;
}

/**
 * Whether a `May` stands beside a number, spaces between: `9 May`, `May 2024`. Read by walking the
 * spaces, not by a look around: `(?<=\d\s+May)` over megabytes of spaces ran out of the regex
 * engine's backtrack stack (RangeError), and tried at every space it was quadratic. Each space is
 * walked at most twice, once from the May after it and once from the May before it.
 */
function mayBesideNumber(sentence: string): boolean {
  for (const m of sentence.matchAll(MAY)) {
    let before = m.index - 1;
    while (before >= 0 && SPACE.test(sentence[before])) before--;
    if (before < m.index - 1 && before >= 0 && DIGIT.test(sentence[before])) return true;
    let after = m.index + 3;
    while (after < sentence.length && SPACE.test(sentence[after])) after++;
    if (after > m.index + 3 && after < sentence.length && DIGIT.test(sentence[after])) return true;
  }
  return false;
}

/** Whether `sentence` says a time of any kind (see the module comment). */
export function tellsTime(sentence: string): boolean {
  return inWindows(sentence, (text) => TIME.test(text) || MONTH.test(text) || mayBesideNumber(text));
}

/**
 * A span of time: a unit counted (`2,100 hours`, `two and a half years`, `a few weeks`, `26-minute`)
 * or a plural unit after a word of lasting (`for decades`, `took years`). Not a time placed (`next
 * week`, `the winter scenes`), which tellsTime reads.
 */
const SPAN = new RegExp(
  [
    String.raw`\b(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|half|few|several|many)(?:[\s-]+\w+)?[\s-]+${UNIT}\b`,
    String.raw`\b(?:for|over|in|within|took|takes|take|lasted|lasts|spent)\s+(?:${UNIT})\b`,
  ].join('|'),
  'iu',
);

/**
 * Whether `sentence` says how long something took or lasts ("how long did the restoration take?"),
 * as a span or as the time it reached (EXTENT): a comment's `the archive is publishing a
 * restoration diary … in the winter scenes` holds the question's words and a season, no span.
 */
export function tellsSpan(sentence: string): boolean {
  return inWindows(sentence, (text) => SPAN.test(text) || (EXTENT.test(text) && tellsTime(text)));
}

/** A time a span reaches to or from: `until the second quarter of the 19th century`, `well into the nineteenth century`. */
const EXTENT = /\b(?:until|till|since|into|throughout|through)\b/i;

/** Another question word: "who led them when the Franks came?" asks who, though it holds `when`. */
const OTHER_ASKED = /\b(?:who|whom|whose|where|why|how)\b/i;

/**
 * Whether the question asks when ("when is the launch?", "what year did it open?", answerType's
 * `date`), and nothing else ("who was king when …?" asks who).
 */
export function asksWhen(question: string): boolean {
  return answerType(question) === 'date' && !OTHER_ASKED.test(question);
}

/** Whether the question asks how long something took or lasts (answerType's `duration`), not how long ago. */
export function asksSpan(question: string): boolean {
  return answerType(question) === 'duration' && !/\bhow long ago\b/i.test(question);
}
