/**
 * Which of a thread's entries the message list renders: a window kept by the keys of its first and
 * last entries, so messages arriving or pages coming in do not move what the reader sees.
 */
import type { LogEntry } from './message-log.js';

/** A window's place in the entries: `from` its first index, `to` one past its last. */
export interface WindowRange {
  from: number;
  to: number;
}

/**
 * Where the window from `startKey` to `endKey` lies in `entries`. No start (the reader is at the
 * bottom), or a start no longer held (trimmed, discarded): the newest `size`. No end: up to the
 * newest. An end no longer held (moved to another thread, discarded): `size` entries from the
 * start, never everything after it.
 */
export function windowRange(entries: readonly LogEntry[], startKey: string, endKey: string, size: number): WindowRange {
  let from = startKey ? entries.findIndex((e) => e.key === startKey) : -1;
  if (from < 0) from = Math.max(0, entries.length - size);
  if (!endKey) return { from, to: entries.length };
  const last = entries.findIndex((e) => e.key === endKey);
  return { from, to: last >= from ? last + 1 : Math.min(entries.length, from + size) };
}
