/**
 * Bringing a discussion in (an exported chat): messages with their authors' names and times are
 * checked all together, then stored in time order, all or none, then windowed for the
 * thread's memory as live messages are, apart from its live chat (windows close at the quiet spells
 * the times show). Used by `POST /api/v1/rooms/:id/import` and `salon import`.
 *
 * Importing the same messages into the same thread again stores nothing twice: each message's
 * clientId is made from the thread, its author, time and text (and its place among identical
 * ones), so the store finds it again as it finds a resent chat message. A thread merged into the
 * target since counts as the target: its messages went to the survivor under keys naming it (a merge
 * after the first import, or one committing while it was written), so they are looked for under
 * those keys too. Such a re-run still gives the memory what no chunk of the thread holds yet: the
 * rest of an import stopped while its memory was being built.
 */
import { createHash } from 'node:crypto';
import { errors } from '../errors.js';
import { OVERLONG_CLUSTER, hasOverlongCluster } from '../protocol/clusters.js';
import { cleanName, isReservedName, MAX_NAME_CHARS } from '../protocol/names.js';
import { requestedThread } from '../rooms/thread-target.js';
import { MAX_MERGE_HOPS } from '../store/thread-survivor.js';
import type { Message } from '../protocol/messages.js';
import type { SeqRun } from '../rooms/seq-window.js';
import type { NewMessage, Store, Thread, UnsettledSeqs } from '../store/types.js';
import type { MemoryService } from './memory-service.js';
import { IMPORT_CLIENT_PREFIX, IMPORTED_AUTHOR_PREFIX } from './imported.js';
import { wellFormed } from '../text.js';
import { Turns } from './threads/turns.js';

/** Messages one import may carry, at most. */
export const IMPORT_MAX_MESSAGES = 5_000;
/** The JSON of one import, at most: IMPORT_MAX_MESSAGES messages at the rooms' longest text, with room for JSON. */
export const IMPORT_MAX_BYTES = 32 * 1024 * 1024;

/** One message of an import, as given. */
export interface ImportedMessage {
  author: { name: string };
  text: string;
  /** ISO-8601. */
  ts: string;
}

export interface ImportResult {
  threadId: string;
  /** The stored messages' ids, in the order they were given (an earlier import's, for a message it stored). */
  messageIds: string[];
  /** How many of them this import stored; the others were stored by an earlier import of them. */
  stored: number;
}

/** The id every imported message of one name gets: stable, and never a live member's (those start with `u_`). */
export function importedAuthorId(name: string): string {
  return `${IMPORTED_AUTHOR_PREFIX}${createHash('sha256').update(name.toLowerCase()).digest('base64url').slice(0, 16)}`;
}

/**
 * The clientId of an imported message: the same for the same message imported into the same
 * thread again. `nth` tells apart identical messages of one import (the same author, time and text).
 */
function importClientId(threadId: string, message: ImportedMessage, nth: number): string {
  const hash = createHash('sha256');
  for (const part of [threadId, message.author.name.toLowerCase(), message.ts, message.text, String(nth)]) hash.update(`${part.length}:${part}`);
  return `${IMPORT_CLIENT_PREFIX}${hash.digest('base64url').slice(0, 32)}`;
}

/**
 * An ISO-8601 date, or date and time: `2024-05-08`, `2024-05-08T13:00:00.000Z`; a space may stand
 * for the `T`, seconds and their fraction may be left out, and so may the offset (`Z`, `+02:00`,
 * `+0200`, `+02`). Groups: year, month, day, the time without its offset, the offset.
 */
const ISO_TIME = /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/**
 * `ts` as the ISO time it names (`toISOString`), or null when it is not an ISO-8601 date or time.
 * `Date.parse` alone took any text it could read as a date (`"1"` was 2001, `"May 8"` a day of
 * 2001), rolled days past a month's end over (`2024-02-30` was 1 March) and read a time without an
 * offset in the machine's own time zone: the same file gave other times, and other messages (their
 * keys name the time) on a re-import, where the command ran in another zone than the server. Such a
 * time is UTC here, as a date alone always was.
 */
function importTime(ts: string): string | null {
  const m = ISO_TIME.exec(ts);
  if (!m) return null;
  const [, year, month, day, time, offset] = m;
  const [y, mo, d] = [Number(year), Number(month), Number(day)];
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (mo < 1 || mo > 12 || d < 1 || d > (mo === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31)) return null;
  let zone = offset === undefined ? 'Z' : offset.toUpperCase();
  if (zone !== 'Z') zone = zone.length === 3 ? `${zone}:00` : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const at = Date.parse(time === undefined ? `${year}-${month}-${day}T00:00:00Z` : `${year}-${month}-${day}T${time}${zone}`);
  return Number.isNaN(at) ? null : new Date(at).toISOString();
}

/**
 * Checks every message (a name as the rooms allow, text of 1–`maxTextChars` characters, a valid
 * time) before anything is written; throws ERR_BAD_REQUEST naming the first bad message.
 */
export function checkImport(messages: unknown, maxTextChars: number): ImportedMessage[] {
  return importedList(messages).map((raw, i) => checkMessage(raw, i, maxTextChars));
}

/**
 * checkImport with a turn of the event loop every TURN_MS: 5,000 messages of 4,000 characters
 * take ~50 ms to check, what a server importing them must not hold its rooms for.
 */
export async function checkImportInTurns(messages: unknown, maxTextChars: number): Promise<ImportedMessage[]> {
  const list = importedList(messages);
  const turns = new Turns();
  const checked: ImportedMessage[] = [];
  for (const raw of list) {
    if (turns.due()) await turns.next();
    checked.push(checkMessage(raw, checked.length, maxTextChars));
  }
  return checked;
}

/** `messages` as the list of an import, of 1 to IMPORT_MAX_MESSAGES; throws ERR_BAD_REQUEST otherwise. */
function importedList(messages: unknown): unknown[] {
  if (!Array.isArray(messages) || messages.length === 0) throw new errors.ERR_BAD_REQUEST('messages must be a non-empty array');
  if (messages.length > IMPORT_MAX_MESSAGES) throw new errors.ERR_BAD_REQUEST(`at most ${IMPORT_MAX_MESSAGES} messages per import, got ${messages.length}`);
  return messages;
}

/** Message `i` of an import, checked (checkImport). */
function checkMessage(raw: unknown, i: number, maxTextChars: number): ImportedMessage {
  const m = raw as Partial<ImportedMessage> | null;
  const bad = (why: string) => new errors.ERR_BAD_REQUEST(`messages[${i}]: ${why}`);
  if (!m || typeof m !== 'object' || Array.isArray(m)) throw bad('expected an object {author: {name}, text, ts}');
  const name = cleanName(m.author?.name);
  if (name === null) throw bad(`author.name must be 1–${MAX_NAME_CHARS} visible characters`);
  if (isReservedName(name)) throw bad(`author.name "${name}" is reserved`);
  if (typeof m.text !== 'string' || !m.text.trim()) throw bad('text must be a non-empty string');
  if (m.text.length > maxTextChars) throw bad(`text is longer than ${maxTextChars} characters`);
  if (hasOverlongCluster(m.text)) throw bad(`text: ${OVERLONG_CLUSTER}`);
  const ts = typeof m.ts === 'string' ? importTime(m.ts) : null;
  if (ts === null) throw bad('ts must be an ISO-8601 time');
  // Times are ordered as text, here and in the store: `+010000-…` and `-000001-…` would sort wrong.
  if (!/^\d{4}-/.test(ts)) throw bad('ts must be in the years 0000–9999');
  return { author: { name }, text: wellFormed(m.text), ts };
}

/**
 * The thread an import of `roomId` goes to: the room's main thread, or `threadId`, where a merged
 * thread stands for the thread it was merged into, as for live messages (messages imported into a
 * merged thread stayed in it, archived, while their memory went to the survivor). Refused as the
 * store refuses a message: ERR_THREAD_NOT_FOUND for no such thread, ERR_THREAD_ARCHIVED for one
 * leading to no active thread; ERR_BAD_REQUEST for another room's.
 */
export async function importTarget(store: Store, roomId: string, threadId?: string): Promise<Thread> {
  if (threadId === undefined) return store.ensureMainThread(roomId);
  return requestedThread(store, roomId, threadId);
}

/**
 * Stores checked messages in `threadId` of `roomId`, in time order (ties keep the given order),
 * all or nothing, then hands the thread's memory those it does not hold yet. Nothing publishes an
 * imported message, and no reader sees any before the store holds all of them: `readable` is told
 * then, with the seq they all follow, for the rooms to deliver them (RoomHub.storedUnpublished).
 */
export async function importMessages(
  store: Store,
  memory: MemoryService,
  roomId: string,
  threadId: string,
  messages: ImportedMessage[],
  readable?: (afterSeq: number, runs: SeqRun[]) => void,
): Promise<ImportResult> {
  // toISOString's times, all of one length in the years 0000–9999 (checkImport): their text sorts
  // as their times do, without localeCompare's collation.
  const order = messages.map((_, i) => i).sort((a, b) => (messages[a].ts < messages[b].ts ? -1 : messages[a].ts > messages[b].ts ? 1 : a - b));
  const seen = new Map<string, number>();
  const heard: Heard[] = order.map((i) => {
    const m = messages[i];
    const same = `${m.author.name.toLowerCase()}\n${m.ts}\n${m.text}`;
    const nth = seen.get(same) ?? 0;
    seen.set(same, nth + 1);
    return { message: m, nth };
  });
  const turns = new Turns();
  const clientIds = await importKeys(store, roomId, threadId, heard, turns);
  const rows: NewMessage[] = heard.map(({ message: m }, k) => ({
    roomId,
    threadId,
    author: { id: importedAuthorId(m.author.name), name: m.author.name, kind: 'user' },
    text: m.text,
    ts: m.ts,
    clientId: clientIds[k],
  }));
  // Ranges an import that failed or stopped left unread: one holding a message found stored is
  // readable once this run ends (store.appendMessages), all of it, never before.
  const unsettled = readable ? await store.unsettledSeqs(roomId) : [];
  const appended = await store.appendMessages(rows);
  // Those found stored count too: an import stopped before settled them unread (store.appendMessages).
  readable?.(appended.reduce((low, a) => Math.min(low, a.message.seq), Number.MAX_SAFE_INTEGER) - 1, madeReadable(appended, unsettled));
  // The thread the store filed them in: a merge committed since the caller looked `threadId` up
  // sends them on to its survivor, and their memory goes with them. The store may write them in
  // slices (SQLite), and a merge between two moves the ones before it too: the last one's thread
  // is where all are.
  const filed = appended.findLast((a) => !a.duplicate)?.message.threadId ?? appended[0]?.message.threadId ?? threadId;
  const ids: string[] = new Array(messages.length);
  order.forEach((given, k) => (ids[given] = appended[k].message.id));
  const stored = appended.filter((a) => !a.duplicate).length;
  const held = stored < appended.length ? await rememberedMessageIds(store, filed) : new Set<string>();
  const unremembered = appended.filter((a) => !a.duplicate || !held.has(a.message.id)).map((a) => a.message);
  // Windowed apart from the thread's live window, so windows never mix the two nor lead the history
  // with the live chat's last line (said after it), and with turns of the event loop (5,000
  // messages fed as live ones held it for ~0.1–0.4 s).
  await memory.rememberMessages(unremembered);
  return { threadId: filed, messageIds: ids, stored };
}

/**
 * The seqs an import made readable, never readable before: its new messages' (one batch's, a block
 * no other message took a seq in: store/sqlite-unsettled.ts), and each range an earlier run of it
 * left unread that holds a message it found stored. A room delivers them however far below its
 * window of delivered seqs they lie (NodeSync.storedUnpublished): the first run's messages came
 * thousands of live messages before the re-run that made them readable.
 */
function madeReadable(appended: { message: Message; duplicate: boolean }[], unsettled: readonly UnsettledSeqs[]): SeqRun[] {
  const runs: SeqRun[] = [];
  let [low, high] = [Infinity, 0];
  const found: number[] = [];
  for (const { message, duplicate } of appended) {
    if (duplicate) found.push(message.seq);
    else [low, high] = [Math.min(low, message.seq), Math.max(high, message.seq)];
  }
  for (const range of unsettled) if (found.some((seq) => range.fromSeq <= seq && seq <= range.toSeq)) runs.push([range.fromSeq, range.toSeq]);
  if (high) runs.push([low, high]);
  return runs;
}

/** An imported message, with its place among identical messages of its import (importClientId's `nth`). */
interface Heard {
  message: ImportedMessage;
  nth: number;
}

/**
 * The clientIds of an import into `threadId`, in the order of `heard`: each naming `threadId`, but
 * for a message the room holds under the key naming a thread merged into it, which keeps that key so
 * the store finds the message again. Every key still names one thread: imports of the same messages
 * into two active threads stay apart.
 */
async function importKeys(store: Store, roomId: string, threadId: string, heard: Heard[], turns: Turns): Promise<string[]> {
  const keys: string[] = [];
  // Each key hashes its message's text: 20 MB of it for a large import, a turn every TURN_MS.
  for (const h of heard) {
    if (turns.due()) await turns.next();
    keys.push(importClientId(threadId, h.message, h.nth));
  }
  const absorbed = await absorbedBy(store, roomId, threadId);
  if (!absorbed.length) return keys;
  let missing = heard.map((_, k) => k);
  // Its own thread's key first: a message stored under it (the same import run before) keeps it.
  for (const named of [threadId, ...absorbed]) {
    if (!missing.length) break;
    const tried: { authorId: string; clientId: string }[] = [];
    for (const k of missing) {
      if (turns.due()) await turns.next();
      tried.push({ authorId: importedAuthorId(heard[k].message.author.name), clientId: importClientId(named, heard[k].message, heard[k].nth) });
    }
    const stored = await store.storedClientIds(roomId, tried);
    missing.forEach((k, j) => stored[j] && (keys[k] = tried[j].clientId));
    missing = missing.filter((_, j) => !stored[j]);
  }
  return keys;
}

/** The room's threads merged into `threadId`, through merges of merges (as far as MAX_MERGE_HOPS), nearest first. */
async function absorbedBy(store: Store, roomId: string, threadId: string): Promise<string[]> {
  const into = new Map<string, string[]>();
  // Pushed, not copied per thread: a room's split children stay in its listing once merged away,
  // thousands of them into one thread, and a copy for each held the event loop for seconds.
  for (const t of await store.listThreads(roomId)) {
    if (!t.mergedInto) continue;
    const ids = into.get(t.mergedInto);
    if (ids) ids.push(t.id);
    else into.set(t.mergedInto, [t.id]);
  }
  const found: string[] = [];
  for (let level = [threadId], hops = 0; level.length && hops < MAX_MERGE_HOPS; hops++) {
    level = level.flatMap((id) => into.get(id) ?? []);
    found.push(...level);
  }
  return found;
}

/** Memory chunks read a page at a time when looking for the messages a thread's memory holds. */
const MEMORY_PAGE = 500;

/**
 * The ids of the messages some memory chunk of the thread holds. A message that an earlier import
 * stored but that no chunk holds was left when that import stopped before its memory was built (a
 * message whose chunk was pruned since is remembered again, as a first import of it would be).
 */
async function rememberedMessageIds(store: Store, threadId: string): Promise<Set<string>> {
  const held = new Set<string>();
  for (let after = 0; ;) {
    const page = await store.scanThreadMemory(threadId, after, MEMORY_PAGE, false);
    for (const chunk of page) for (const id of chunk.messageIds) held.add(id);
    if (page.length < MEMORY_PAGE) return held;
    after = page[page.length - 1].id;
  }
}
