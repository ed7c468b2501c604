/**
 * The member's private questions to the assistant and their answers, kept in this tab's
 * sessionStorage (`salon.private.<roomId>`). The server never stores them (that is what private
 * means), so without this copy a reload would lose them; sessionStorage keeps them for the life of
 * the tab and no longer, and never shows them to another tab (a duplicated tab gets a copy, as
 * the browser copies sessionStorage).
 *
 * What is read back is treated as hostile: anything that is not exactly an entry this module
 * writes is dropped, field by field, so a corrupt or tampered copy costs at most the copy.
 */
import type { Author, Message, Source } from '../../../src/protocol/messages.js';
import type { LogEntry } from './message-log.js';
import { parseUntrustedJson } from './untrusted-json.js';

/** Most private entries (questions and answers) kept per room; the oldest go first. */
export const MAX_PRIVATE_ENTRIES = 300;
/** Most characters of JSON kept per room (sessionStorage holds a few MB per site, shared by every room). */
export const MAX_PRIVATE_CHARS = 400_000;
/** Longest text shown from the copy: the markdown renderer cuts every message there anyway. */
const MAX_TEXT_CHARS = 20_000;
/** Most sources read back per answer. */
const MAX_SOURCES = 50;
const VERSION = 1;

/** The part of Storage used here, so tests can pass a plain object. */
export type StorageLike = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** This tab's sessionStorage, or null where the browser refuses it (privacy settings, sandboxed frames). */
export function tabStorage(): StorageLike | null {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null;
  }
}

export function privateKey(roomId: string): string {
  return `salon.private.${roomId}`;
}

/** The newest entries that fit both caps, in the order given (the conversation's order). */
export function capPrivate(entries: readonly LogEntry[]): LogEntry[] {
  const kept: LogEntry[] = [];
  let chars = 0;
  for (let i = entries.length - 1; i >= 0 && kept.length < MAX_PRIVATE_ENTRIES; i--) {
    chars += JSON.stringify(entries[i]).length + 1;
    if (chars > MAX_PRIVATE_CHARS) break;
    kept.push(entries[i]);
  }
  return kept.reverse();
}

/** Writes the room's private entries (capped); an empty list removes the key. Storage full or refused: nothing is written. */
export function writePrivate(storage: StorageLike | null, roomId: string, entries: readonly LogEntry[]): void {
  if (!storage) return;
  try {
    const kept = capPrivate(entries);
    if (!kept.length) storage.removeItem(privateKey(roomId));
    else storage.setItem(privateKey(roomId), JSON.stringify({ v: VERSION, entries: kept }));
  } catch {
    // Quota or a disabled storage: the copy is lost, the page goes on.
  }
}

/** The room's private entries as written by writePrivate; whatever is malformed is left out. */
export function readPrivate(storage: StorageLike | null, roomId: string): LogEntry[] {
  let data: unknown;
  try {
    const raw = storage?.getItem(privateKey(roomId));
    if (typeof raw !== 'string' || raw.length > MAX_PRIVATE_CHARS * 2) return [];
    data = parseUntrustedJson(raw);
  } catch {
    return [];
  }
  if (!isObject(data) || data.v !== VERSION || !Array.isArray(data.entries)) return [];
  const seen = new Set<string>();
  const entries: LogEntry[] = [];
  for (const raw of data.entries.slice(-MAX_PRIVATE_ENTRIES)) {
    const entry = entryFrom(raw, roomId);
    if (!entry || seen.has(entry.key)) continue;
    seen.add(entry.key);
    entries.push(entry);
  }
  return markUnanswered(entries);
}

/**
 * Marks the questions no answer follows. An answer is not kept while it is written, and a reload
 * ends the private ask on the server, so a question asked just before a reload comes back alone.
 * Answers carry no link to their question: in each thread an answer goes to the newest question
 * before it still without one, so asking again after a reload leaves the first question marked.
 */
function markUnanswered(entries: LogEntry[]): LogEntry[] {
  const waiting = new Map<string, LogEntry[]>();
  // Written in the conversation's order; sorted again (stable: a question and its answer share an order) in case the copy was not.
  for (const entry of [...entries].sort((a, b) => (a.order ?? 0) - (b.order ?? 0))) {
    const stack = waiting.get(entry.message.threadId) ?? [];
    waiting.set(entry.message.threadId, stack);
    if (entry.message.author.kind === 'user') stack.push(entry);
    else stack.pop();
  }
  const unanswered = new Set([...waiting.values()].flat());
  return entries.map((e) => (unanswered.has(e) ? { ...e, unanswered: true } : e));
}

type Loose = Record<string, unknown>;

function isObject(v: unknown): v is Loose {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isText = (v: unknown, max = 1_000): v is string => typeof v === 'string' && v.length <= max;

/** Rebuilds one entry from its fields, or null: a question keyed `c:<clientId>`, or an answer keyed `m:private_…`. */
function entryFrom(raw: unknown, roomId: string): LogEntry | null {
  if (!isObject(raw) || !isText(raw.key) || typeof raw.order !== 'number' || !Number.isFinite(raw.order)) return null;
  const message = messageFrom(raw.message, roomId);
  if (!message) return null;
  const question = message.author.kind === 'user' && !message.id && !!message.clientId && raw.key === `c:${message.clientId}`;
  const answer = message.author.kind === 'assistant' && message.id.startsWith('private_') && raw.key === `m:${message.id}`;
  if (!question && !answer) return null;
  return { key: raw.key, message, state: 'sent', order: raw.order, private: true };
}

function messageFrom(raw: unknown, roomId: string): Message | null {
  if (!isObject(raw) || raw.roomId !== roomId || raw.seq !== 0) return null;
  const { id, threadId, text, ts, clientId, replyTo } = raw;
  if (!isText(id) || !isText(threadId) || !isText(text, MAX_PRIVATE_CHARS) || !isText(ts, 64)) return null;
  if ((clientId !== undefined && !isText(clientId)) || (replyTo !== undefined && !isText(replyTo))) return null;
  const author = authorFrom(raw.author);
  if (!author) return null;
  const sources = Array.isArray(raw.sources)
    ? raw.sources
        .slice(0, MAX_SOURCES)
        .map(sourceFrom)
        .filter((s): s is Source => !!s)
    : undefined;
  return {
    id,
    seq: 0,
    roomId,
    threadId,
    author,
    text: text.slice(0, MAX_TEXT_CHARS),
    ts,
    ...(clientId !== undefined ? { clientId } : {}),
    ...(replyTo !== undefined ? { replyTo } : {}),
    ...(sources ? { sources } : {}),
  };
}

function authorFrom(raw: unknown): Author | null {
  if (!isObject(raw) || !isText(raw.id) || !isText(raw.name)) return null;
  if (raw.kind !== 'user' && raw.kind !== 'assistant') return null;
  return { id: raw.id, name: raw.name, kind: raw.kind };
}

const SOURCE_KINDS = new Set(['news', 'post', 'video', 'comment', 'thread']);
const SOURCE_TYPES = new Set(['document', 'conversation']);

function sourceFrom(raw: unknown): Source | null {
  if (!isObject(raw)) return null;
  const { n, id, kind, title, url, sourceType, snippet, messageIds, authors, from, to } = raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || !isText(id) || !isText(title) || !isText(snippet, 4_000)) return null;
  if (!SOURCE_KINDS.has(kind as string) || !SOURCE_TYPES.has(sourceType as string) || (url !== null && !isText(url, 4_000))) return null;
  const texts = (v: unknown) => Array.isArray(v) && v.length <= 1_000 && v.every((x) => isText(x));
  return {
    n,
    id,
    kind: kind as Source['kind'],
    title,
    url: url as string | null,
    sourceType: sourceType as Source['sourceType'],
    snippet,
    ...(texts(messageIds) ? { messageIds: messageIds as string[] } : {}),
    ...(texts(authors) ? { authors: authors as string[] } : {}),
    ...(isText(from, 64) ? { from } : {}),
    ...(isText(to, 64) ? { to } : {}),
  };
}
