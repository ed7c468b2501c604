/**
 * "Find in this room": which of the messages the page holds contain the words looked for, and
 * where in a message's shown text they are. The message list renders only a window of what it
 * holds, so the browser's find-in-page cannot see the rest; this looks through all of it.
 *
 * Text is compared folded: letters in lower case, accents dropped (é finds e), runs of white space
 * as one space, and the markdown emphasis marks `*`, `_` and backticks left out (on both sides),
 * so the raw text `**Port** Avelin` and the shown "Port Avelin" fold alike. A message's folded
 * text is kept per message object (messages are replaced, never changed), so typing or a new
 * message only scans strings already folded.
 */
import type { Message } from '../../../src/protocol/messages.js';
import type { LogEntry } from './message-log.js';

/** Pages of older history fetched at most per "Search earlier messages" (or "Next" past the oldest match). */
export const FIND_MAX_PAGES = 10;
/** Longest query looked for (a message is at most 4,000 characters). */
export const MAX_FIND_CHARS = 200;

/** Text as compared, with where each of its characters came from in the original. */
export interface Folded {
  text: string;
  /** `origin[i]`: the original index of folded character i; one more entry: the original length. Null when the two line up. */
  origin: number[] | null;
}

const DROPPED = new Set(['*', '_', '`']);
const SPACE = /\s/;
const MARKS = /\p{M}/gu;

/** The folded form of one code point (lower case, accents gone, dropped marks empty). */
function foldChar(ch: string): string {
  if (DROPPED.has(ch)) return '';
  if (ch.length === 1 && ch.charCodeAt(0) < 0x80) return ch.toLowerCase();
  return ch.normalize('NFD').replace(MARKS, '').toLowerCase();
}

/** Folds `text` for comparing (see the module's comment), keeping the way back to original offsets. */
export function fold(text: string): Folded {
  let out = '';
  const origin: number[] = [];
  let aligned = true;
  // Leading white space is dropped, a run of it inside is one space.
  let lastSpace = true;
  for (let i = 0; i < text.length;) {
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    const f: string = SPACE.test(ch) ? (lastSpace ? '' : ' ') : foldChar(ch);
    if (f) {
      out += f;
      lastSpace = f === ' ';
      for (let k = 0; k < f.length; k++) origin.push(i);
    }
    if (f.length !== ch.length) aligned = false;
    i += ch.length;
  }
  origin.push(text.length);
  return { text: out, origin: aligned ? null : origin };
}

/** The query as compared: folded, trimmed, cut to MAX_FIND_CHARS. '' finds nothing. */
export function foldQuery(query: string): string {
  return fold(query.slice(0, MAX_FIND_CHARS)).text.trim();
}

const foldedMessages = new WeakMap<Message, string>();

/** A message's folded text, folded once per message object. */
function foldedMessage(message: Message): string {
  let text = foldedMessages.get(message);
  if (text === undefined) {
    text = fold(message.text).text;
    foldedMessages.set(message, text);
  }
  return text;
}

/** The keys of the entries whose text contains `query`, newest first (the order "Next" walks back in). */
export function findMatches(entries: readonly LogEntry[], query: string): string[] {
  const wanted = foldQuery(query);
  if (!wanted) return [];
  const keys: string[] = [];
  for (let i = entries.length - 1; i >= 0; i--) if (foldedMessage(entries[i].message).includes(wanted)) keys.push(entries[i].key);
  return keys;
}

/** A place in a run of text pieces: the piece's index and the offset in it. */
export interface TextPoint {
  piece: number;
  offset: number;
}

/**
 * Where `query` occurs in the text the pieces make together (a message's text nodes as shown,
 * one after another): each occurrence's start and end, which may fall in different pieces.
 */
export function locate(pieces: readonly string[], query: string): Array<{ start: TextPoint; end: TextPoint }> {
  const wanted = foldQuery(query);
  if (!wanted) return [];
  const whole = pieces.join('');
  const folded = fold(whole);
  const starts: number[] = [];
  let at = 0;
  for (const piece of pieces) {
    starts.push(at);
    at += piece.length;
  }
  const pointAt = (index: number, isEnd: boolean): TextPoint => {
    // An end that falls on a boundary belongs to the piece before it.
    let piece = 0;
    while (piece + 1 < starts.length && (isEnd ? starts[piece + 1] < index : starts[piece + 1] <= index)) piece++;
    return { piece, offset: index - starts[piece] };
  };
  const original = (i: number) => (folded.origin ? folded.origin[i] : i);
  const found: Array<{ start: TextPoint; end: TextPoint }> = [];
  for (let i = folded.text.indexOf(wanted); i >= 0; i = folded.text.indexOf(wanted, i + wanted.length)) {
    const last = i + wanted.length - 1;
    // The end is just past the original code point the last folded character came from.
    const lastFrom = original(last);
    const end = lastFrom + String.fromCodePoint(whole.codePointAt(lastFrom)!).length;
    found.push({ start: pointAt(original(i), false), end: pointAt(end, true) });
  }
  return found;
}

/** Where the messages to look through come from: the open thread's held messages and its older pages. */
export interface FindSource {
  readonly messages: readonly LogEntry[];
  readonly hasOlder: boolean;
  /** The page holds as many messages as it may keep: older pages are no longer taken. */
  readonly full?: boolean;
  loadOlder(): Promise<void>;
  /** The thread whose messages these are (the navigator's open thread): a search ends when it changes. */
  readonly threadId?: string;
  /** How many times the server's history replaced the messages (a reset welcome): a search ends when it changes. */
  readonly resets?: number;
}

/** What a search of earlier pages did. */
export interface EarlierResult {
  /** A match older than those held before was found (and is now the current one). */
  found: boolean;
  /** How many more messages were looked through. */
  added: number;
  /**
   * The search ended early, its answer no longer wanted: the words changed, another search began,
   * it was cancelled, another thread was opened, or the server's history replaced the messages. It set
   * no match and says nothing of the current words.
   */
  superseded?: boolean;
}

/**
 * One find session over a thread's messages: the query, the matching keys (newest first) and the
 * current one, kept by key so new messages arriving do not move it.
 */
export class RoomFind {
  query = '';
  /** Keys of the matching entries, newest first. */
  matches: readonly string[] = [];
  /** The current match's key, '' when none is chosen. */
  currentKey = '';
  private entries: readonly LogEntry[] = [];
  /** Counts new words and searches of earlier pages: a search of earlier pages goes on only while it is the latest. */
  private generation = 0;

  /** The current match's place, 1 for the newest; 0 when none. */
  get position(): number {
    return this.currentKey ? this.matches.indexOf(this.currentKey) + 1 : 0;
  }

  /** Looks for `query` afresh: the newest match becomes the current one. */
  search(query: string, entries: readonly LogEntry[]): string {
    this.generation++;
    this.query = query;
    this.entries = entries;
    this.matches = findMatches(entries, query);
    this.currentKey = this.matches[0] ?? '';
    return this.currentKey;
  }

  /** Follows a change of the messages held; the current match stays the same message while it is still held and matching. */
  update(entries: readonly LogEntry[]): void {
    if (entries === this.entries) return;
    this.entries = entries;
    this.matches = findMatches(entries, this.query);
    if (this.currentKey && !this.matches.includes(this.currentKey)) this.currentKey = '';
  }

  /** Moves to the next older match (`1`) or newer (`-1`), wrapping around; returns its key ('' when there is none). */
  step(direction: 1 | -1): string {
    const n = this.matches.length;
    if (!n) return '';
    const at = this.matches.indexOf(this.currentKey);
    const next = at < 0 ? (direction === 1 ? 0 : n - 1) : (at + direction + n) % n;
    this.currentKey = this.matches[next];
    return this.currentKey;
  }

  /** The current match is the oldest held one. */
  get atOldest(): boolean {
    return !!this.currentKey && this.currentKey === this.matches.at(-1);
  }

  /** Ends a search of earlier pages under way (the find bar closed): it fetches no more pages and sets no match. */
  cancel(): void {
    this.generation++;
  }

  /**
   * Fetches older pages of `source` (at most `maxPages`) until one holds a match older than those
   * held; that match becomes the current one. It stops, setting nothing, once the words change,
   * another search of earlier pages begins, the source's thread changes or its history is replaced
   * (`superseded`): a page that comes in after the member moved on must not choose their match, and
   * after a reset welcome nothing held is "before" anything: every message would count as earlier.
   */
  async searchEarlier(source: FindSource, maxPages = FIND_MAX_PAGES): Promise<EarlierResult> {
    const generation = ++this.generation;
    const threadId = source.threadId;
    const resets = source.resets;
    // Older pages come in before these; messages arriving meanwhile come in after them and are not "earlier".
    const heldBefore = new Set(source.messages.map((e) => e.key));
    let added = 0;
    for (let page = 0; page < maxPages && source.hasOlder; page++) {
      await source.loadOlder();
      if (generation !== this.generation || source.threadId !== threadId || source.resets !== resets) return { found: false, added, superseded: true };
      this.update(source.messages);
      const olderCount = countBefore(source.messages, heldBefore);
      const older = new Set(source.messages.slice(0, olderCount).map((e) => e.key));
      // The newest of those just found: the one "Next" would reach going back.
      const match = this.matches.find((key) => older.has(key));
      if (match) {
        this.currentKey = match;
        return { found: true, added: olderCount };
      }
      // Nothing came (a failed fetch, or the log is full): asking again would not help.
      if (olderCount === added) break;
      added = olderCount;
    }
    return { found: false, added };
  }
}

/** How many of `entries` come before the oldest of them that was held before (all, when none was). */
function countBefore(entries: readonly LogEntry[], heldBefore: ReadonlySet<string>): number {
  const at = entries.findIndex((e) => heldBefore.has(e.key));
  return at < 0 ? entries.length : at;
}
