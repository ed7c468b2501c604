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
