/**
 * Bringing a discussion in (an exported chat): messages with their authors' names and times are
 * checked all together, then stored in one transaction in time order, then fed to the thread's
 * memory like live messages (windows close at the quiet spells the times show). Used by
 * `POST /api/v1/rooms/:id/import` and `salon import`.
 */
import { createHash } from 'node:crypto';
import { errors } from '../errors.js';
import { OVERLONG_CLUSTER, hasOverlongCluster } from '../protocol/clusters.js';
import { cleanName, isReservedName, MAX_NAME_CHARS } from '../protocol/names.js';
import { activeThreadFor } from '../rooms/thread-target.js';
import type { NewMessage, Store, Thread } from '../store/types.js';
import type { MemoryService } from './memory-service.js';
import { wellFormed } from '../text.js';

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
  /** The stored messages' ids, in the order they were given. */
  messageIds: string[];
}

/** The id every imported message of one name gets: stable, and never a live member's (those start with `u_`). */
export function importedAuthorId(name: string): string {
  return `imp_${createHash('sha256').update(name.toLowerCase()).digest('base64url').slice(0, 16)}`;
}

/**
 * Checks every message (a name as the rooms allow, text of 1–`maxTextChars` characters, a valid
 * time) before anything is written; throws ERR_BAD_REQUEST naming the first bad message.
 */
export function checkImport(messages: unknown, maxTextChars: number): ImportedMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) throw new errors.ERR_BAD_REQUEST('messages must be a non-empty array');
  if (messages.length > IMPORT_MAX_MESSAGES) throw new errors.ERR_BAD_REQUEST(`at most ${IMPORT_MAX_MESSAGES} messages per import, got ${messages.length}`);
  return messages.map((raw, i) => {
    const m = raw as Partial<ImportedMessage> | null;
    const bad = (why: string) => new errors.ERR_BAD_REQUEST(`messages[${i}]: ${why}`);
    if (!m || typeof m !== 'object' || Array.isArray(m)) throw bad('expected an object {author: {name}, text, ts}');
    const name = cleanName(m.author?.name);
    if (name === null) throw bad(`author.name must be 1–${MAX_NAME_CHARS} visible characters`);
    if (isReservedName(name)) throw bad(`author.name "${name}" is reserved`);
    if (typeof m.text !== 'string' || !m.text.trim()) throw bad('text must be a non-empty string');
    if (m.text.length > maxTextChars) throw bad(`text is longer than ${maxTextChars} characters`);
    if (hasOverlongCluster(m.text)) throw bad(`text: ${OVERLONG_CLUSTER}`);
    if (typeof m.ts !== 'string' || Number.isNaN(Date.parse(m.ts))) throw bad('ts must be an ISO-8601 time');
    return { author: { name }, text: wellFormed(m.text), ts: new Date(m.ts).toISOString() };
  });
}

/**
 * The thread an import of `roomId` goes to: the room's main thread, or `threadId`, where a merged
 * thread stands for the thread it was merged into, as for live messages. Messages imported into a
 * merged thread stayed in it, archived, while their memory went to the survivor. ERR_THREAD_NOT_FOUND
 * for no such thread; ERR_BAD_REQUEST for another room's, or one archived otherwise.
 */
export async function importTarget(store: Store, roomId: string, threadId?: string): Promise<Thread> {
  if (threadId === undefined) return store.ensureMainThread(roomId);
  const given = await store.getThread(threadId);
  if (!given) throw new errors.ERR_THREAD_NOT_FOUND(threadId);
  if (given.roomId !== roomId) throw new errors.ERR_BAD_REQUEST(`threadId ${threadId} is not a thread of room ${roomId}`);
  const target = await activeThreadFor(store, roomId, threadId);
  if (!target) throw new errors.ERR_BAD_REQUEST(`thread ${threadId} is archived; import into an active thread`);
  return target;
}

/**
 * Stores checked messages in `threadId` of `roomId`, in time order (ties keep the given order),
 * all or nothing, then hands them to the thread's memory.
 */
export async function importMessages(
  store: Store,
  memory: MemoryService,
  roomId: string,
  threadId: string,
  messages: ImportedMessage[],
): Promise<ImportResult> {
  const order = messages.map((_, i) => i).sort((a, b) => messages[a].ts.localeCompare(messages[b].ts) || a - b);
  const rows: NewMessage[] = order.map((i) => ({
    roomId,
    threadId,
    author: { id: importedAuthorId(messages[i].author.name), name: messages[i].author.name, kind: 'user' },
    text: messages[i].text,
    ts: messages[i].ts,
  }));
  const stored = await store.appendMessages(rows);
  const ids: string[] = new Array(messages.length);
  order.forEach((given, k) => (ids[given] = stored[k].id));
  // Live chat of the thread is closed into its own window first, so windows never mix the two.
  memory.flush(threadId);
  for (const m of stored) memory.onMessage(m);
  memory.flush(threadId);
  return { threadId, messageIds: ids };
}
