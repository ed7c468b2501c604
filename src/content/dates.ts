/**
 * An item's dates as stored: ISO 8601 in UTC with a four-digit year. Date.parse takes years of six
 * digits ("-271821-04-20" in a feed), whose ISO strings carry a sign and sort among the others by
 * their first character, not their date, and the stores order items by these strings.
 */
const EARLIEST_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** `ms` (since the epoch) as an ISO 8601 string; null when it is not finite or outside the years 0000–9999. */
export function isoFromMs(ms: number): string | null {
  return Number.isFinite(ms) && ms >= EARLIEST_MS && ms <= LATEST_MS ? new Date(ms).toISOString() : null;
}

/** A date string as an ISO 8601 string (isoFromMs); null when it is not a date. */
export function isoDateOf(raw: string): string | null {
  return isoFromMs(Date.parse(raw));
}

/**
 * How far ahead of the moment it is read a date from the web (a feed entry's, a page's, an API's)
 * may lie: a day, for time zones written wrong and clocks a little fast. Items are listed newest
 * first by their date, so an entry dated years ahead (a typo, or a feed that wants to stay on
 * top) sat above everything stored after it, for years.
 */
export const MAX_DATE_AHEAD_MS = 86_400_000;

/** A date from the web as isoDateOf reads it; null when it is none, or lies more than MAX_DATE_AHEAD_MS after `nowMs`. */
export function fetchedDateOf(raw: string | null | undefined, nowMs = Date.now()): string | null {
  const iso = raw ? isoDateOf(raw) : null;
  return iso !== null && Date.parse(iso) - nowMs <= MAX_DATE_AHEAD_MS ? iso : null;
}
