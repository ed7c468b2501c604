/**
 * The time a question names ("camping in June", "on October 13, 2023", "in 2022"), for the memory
 * search: a chunk said within it is more likely what the question is about. Chunks carry the times
 * of their first and last message; their text shows months abbreviated (`27 Jun 2023`), which a
 * question's words do not match.
 */

/** The months' English names, lower case, January first. */
export const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH = MONTHS.join('|');
/** `October 13, 2023`, `July 2023`, `June`: a month, then maybe a day, then maybe a year. */
const MONTH_FIRST = new RegExp(`\\b(${MONTH})\\b(?:\\s+(\\d{1,2})(?:st|nd|rd|th)?(?!\\d))?(?:,?\\s+(\\d{4})\\b)?`, 'gi');
/** `13 October 2023`, `1 February, 2023`. */
const DAY_FIRST = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(${MONTH})\\b(?:,?\\s+(\\d{4})\\b)?`, 'gi');
const YEAR = /\b(?:in|of|during|since)\s+((?:19|20)\d\d)\b/gi;

/** A period a question names: a year, a month (of any year when none is named) or a day. */
export interface NamedPeriod {
  year?: number;
  /** 0–11. */
  month?: number;
  day?: number;
}

/**
 * The periods `question` names. "May" and "March" count only capitalised and not first (as in
 * "camping in May"), so "may I…" and "march on" name no month.
 */
export function namedPeriods(question: string): NamedPeriod[] {
  const found: NamedPeriod[] = [];
  const taken: [number, number][] = [];
  const month = (name: string, at: number) => {
    const lower = name.toLowerCase();
    if ((lower === 'may' || lower === 'march') && (at === 0 || !/^[A-Z]/.test(name))) return -1;
    return MONTHS.indexOf(lower);
  };
  for (const m of question.matchAll(DAY_FIRST)) {
    const i = month(m[2], m.index + m[0].indexOf(m[2]));
    if (i < 0) continue;
    found.push({ month: i, day: Number(m[1]), ...(m[3] ? { year: Number(m[3]) } : {}) });
    taken.push([m.index, m.index + m[0].length]);
  }
  for (const m of question.matchAll(MONTH_FIRST)) {
    if (taken.some(([from, to]) => m.index >= from && m.index < to)) continue;
    const i = month(m[1], m.index);
    if (i < 0) continue;
    const day = m[2] ? Number(m[2]) : undefined;
    found.push({ month: i, ...(day && day <= 31 ? { day } : {}), ...(m[3] ? { year: Number(m[3]) } : {}) });
    taken.push([m.index, m.index + m[0].length]);
  }
  for (const m of question.matchAll(YEAR)) if (!taken.some(([from, to]) => m.index + m[0].length > from && m.index < to)) found.push({ year: Number(m[1]) });
  return found;
}

/** Whether a chunk said from `firstTs` to `lastTs` (ISO-8601, read in UTC as chat stamps are) falls within one of `periods`. */
export function saidWithin(periods: NamedPeriod[], firstTs: string, lastTs: string): boolean {
  const ends = [new Date(firstTs), new Date(lastTs)].filter((d) => !Number.isNaN(d.getTime()));
  return periods.some((p) =>
    ends.some(
      (d) =>
        (p.year === undefined || d.getUTCFullYear() === p.year) &&
        (p.month === undefined || d.getUTCMonth() === p.month) &&
        (p.day === undefined || d.getUTCDate() === p.day),
    ),
  );
}
