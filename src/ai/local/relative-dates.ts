/**
 * The dates a message's relative times meant. "I went to the support group yesterday", read months
 * later, does not say when: quoted in an answer, "yesterday" is followed by the day it meant,
 * counted from when the message was said ("yesterday (7 May 2023)"). Only what a time stamp fixes
 * is named: a day for "yesterday" or "last Saturday", the week for "last week", the month or the
 * year for theirs; "recently" or "on Saturday" (which one?) are left as they are.
 */
import { MONTHS } from '../../memory/named-dates.js';

const DAY_MS = 86_400_000;
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
/** The weekdays' short names' first three letters, Sunday first as WEEKDAYS. */
const SHORT_WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const COUNTS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  'a couple of': 2,
  'a couple': 2,
};
const COUNT = `(\\d{1,2}|${Object.keys(COUNTS)
  .sort((a, b) => b.length - a.length)
  .join('|')})`;

/** `7 May 2023`: the day of `at` (UTC, as the time stamps it is read from). */
export function spelledDay(at: Date): string {
  return `${at.getUTCDate()} ${monthName(at.getUTCMonth())} ${at.getUTCFullYear()}`;
}

function monthName(month: number): string {
  return MONTHS[month][0].toUpperCase() + MONTHS[month].slice(1);
}

/** `May 2023`: the month `months` away from `at`'s. */
function monthAway(at: Date, months: number): string {
  const m = at.getUTCFullYear() * 12 + at.getUTCMonth() + months;
  return `${monthName(((m % 12) + 12) % 12)} ${Math.floor(m / 12)}`;
}

const daysAway = (at: Date, days: number) => new Date(at.getTime() + days * DAY_MS);

/** The last `weekday` (0 Sunday) strictly before `at`'s day. */
function weekdayBefore(at: Date, weekday: number): Date {
  const back = (at.getUTCDay() - weekday + 7) % 7 || 7;
  return daysAway(at, -back);
}

interface RelativeTime {
  pattern: RegExp;
  /** What the match meant, said at `at`; null when it fixes nothing. */
  meant(m: RegExpExecArray, at: Date): string | null;
}

/** Longest first: "the day before yesterday" before "yesterday", "last week" before "week". */
const RELATIVE_TIMES: RelativeTime[] = [
  { pattern: /\bthe day before yesterday\b/iy, meant: (_, at) => spelledDay(daysAway(at, -2)) },
  { pattern: /\bthe day after tomorrow\b/iy, meant: (_, at) => spelledDay(daysAway(at, 2)) },
  { pattern: /\b(?:yesterday|last night)\b/iy, meant: (_, at) => spelledDay(daysAway(at, -1)) },
  { pattern: /\b(?:today|tonight|this (?:morning|afternoon|evening))\b/iy, meant: (_, at) => spelledDay(at) },
  { pattern: /\btomorrow\b/iy, meant: (_, at) => spelledDay(daysAway(at, 1)) },
  {
    pattern: new RegExp(`\\b(?:last|this past) (${WEEKDAYS.join('|')})\\b`, 'iy'),
    meant: (m, at) => {
      const day = weekdayBefore(at, WEEKDAYS.indexOf(m[1].toLowerCase()));
      return `${WEEKDAYS[day.getUTCDay()][0].toUpperCase()}${WEEKDAYS[day.getUTCDay()].slice(1)} ${spelledDay(day)}`;
    },
  },
  // `Last Fri`, `last Tues`: a day's short name, capitalised as a name is (`I last sat down` is no Saturday).
  {
    pattern: /\b(?:[Ll]ast|[Tt]his past) (Sun|Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat)\b/y,
    meant: (m, at) => {
      const day = weekdayBefore(
        at,
        SHORT_WEEKDAYS.findIndex((d) => m[1].startsWith(d)),
      );
      return `${WEEKDAYS[day.getUTCDay()][0].toUpperCase()}${WEEKDAYS[day.getUTCDay()].slice(1)} ${spelledDay(day)}`;
    },
  },
  {
    pattern: /\b(last|this past|next|this) (week|weekend)\b/iy,
    meant: (m, at) => {
      const when = m[1].toLowerCase();
      return `the ${m[2].toLowerCase()} ${when === 'next' ? 'after' : when === 'this' ? 'of' : 'before'} ${spelledDay(at)}`;
    },
  },
  { pattern: /\b(last|next|this) month\b/iy, meant: (m, at) => monthAway(at, { last: -1, next: 1, this: 0 }[m[1].toLowerCase()]!) },
  { pattern: /\b(last|next|this) year\b/iy, meant: (m, at) => String(at.getUTCFullYear() + { last: -1, next: 1, this: 0 }[m[1].toLowerCase()]!) },
  {
    pattern: new RegExp(`\\b${COUNT} (day|week|weekend|month|year)s? ago\\b`, 'iy'),
    meant: (m, at) => {
      const n = COUNTS[m[1].toLowerCase()] ?? Number(m[1]);
      const unit = m[2].toLowerCase();
      if (unit === 'day') return spelledDay(daysAway(at, -n));
      if (unit === 'month') return monthAway(at, -n);
      if (unit === 'year') return String(at.getUTCFullYear() - n);
      return `the ${unit} of ${spelledDay(daysAway(at, -7 * n))}`;
    },
  },
];

/** Where a relative time may begin: a word one of the patterns starts with. */
const START = new RegExp(`\\b(?:the|yesterday|last|today|tonight|this|tomorrow|next|${COUNT})\\b`, 'gi');

/**
 * `text`, said at `at`, with each relative time followed by the date it meant in brackets. A time
 * already followed by a bracket (an answer quoting an answer) is left as it is.
 */
export function withDatesMeant(text: string, at: Date): string {
  if (Number.isNaN(at.getTime())) return text;
  let out = '';
  let from = 0;
  START.lastIndex = 0;
  for (let start = START.exec(text); start; start = START.exec(text)) {
    const found = matchAt(text, start.index, at);
    if (!found) continue;
    const end = start.index + found.length;
    START.lastIndex = end;
    if (/^\s*\(/.test(text.slice(end))) continue;
    out += `${text.slice(from, end)} (${found.meant})`;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}

function matchAt(text: string, index: number, at: Date): { length: number; meant: string } | null {
  for (const { pattern, meant } of RELATIVE_TIMES) {
    pattern.lastIndex = index;
    const m = pattern.exec(text);
    if (!m) continue;
    const said = meant(m, at);
    if (said) return { length: m[0].length, meant: said };
  }
  return null;
}

/** text.ts's CHAT_STAMP with its parts taken: `(8 May 2023, 14:09)`. */
const STAMP_PARTS = /\((\d{1,2}) ([A-Z][a-z]{2}) (\d{4}), (\d\d):(\d\d)\)/;

/** When a line of chat was said, from its time stamp (`Ann (8 May 2023, 14:09): …`, UTC); null without one. */
export function stampedAt(line: string): Date | null {
  const m = STAMP_PARTS.exec(line);
  if (!m) return null;
  const month = MONTHS.findIndex((name) => name.startsWith(m[2].toLowerCase()));
  if (month < 0) return null;
  const at = new Date(Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5])));
  return at.getUTCDate() === Number(m[1]) ? at : null;
}
