/**
 * What the page remembers of each room it has shown: the messages (MessageLog), whether the room
 * has welcomed this page yet, and which thread is open. Kept per room id while the page lives, so
 * switching topics and back keeps each topic's conversation; copied to sessionStorage only as an
 * offline fallback. The member's private questions and answers are copied apart
 * (private-asks.ts): the server never has them, so that copy is their only record.
 */
import { MessageLog, type LogEntry } from './message-log.js';
import { readPrivate, tabStorage, writePrivate } from './private-asks.js';
import { parseUntrustedJson } from './untrusted-json.js';

export interface RoomMemory {
  log: MessageLog;
  /** True once this page has had a `welcome` for the room: later joins ask only for what was missed. */
  joined: boolean;
  /** The room's main thread (from `welcome`), '' until known. */
  mainThreadId: string;
  /** The thread the member has open, '' for the main thread. */
  threadId: string;
  /**
   * The lowest seq from which the log holds every message of every thread (the welcome's
   * history); 0 until a welcome. Below it, each thread is paged back on its own.
   */
  windowFloor: number;
  /** Per thread: no messages of it exist below this seq other than those held (its history was paged to the start). */
  noneBelow: Map<string, number>;
  /** Threads of which at least one page was fetched. */
  paged: Set<string>;
}

const memories = new Map<string, RoomMemory>();
/** The private entries last written per room: unchanged ones are not serialised again on every save. */
const privateWritten = new WeakMap<RoomMemory, readonly LogEntry[]>();

function cacheKey(roomId: string): string {
  return `salon.room.${roomId}`;
}

interface Cached {
  mainThreadId?: unknown;
  threadId?: unknown;
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');

/** The room's memory, restored from sessionStorage the first time this page asks. */
export function memoryOf(roomId: string): RoomMemory {
  let memory = memories.get(roomId);
  if (!memory) {
    let cached: unknown = null;
    try {
      cached = parseUntrustedJson(sessionStorage.getItem(cacheKey(roomId)) ?? 'null');
    } catch {
      cached = null;
    }
    const threads = (cached ?? {}) as Cached;
    const log = MessageLog.restore(cached);
    log.restorePrivate(readPrivate(tabStorage(), roomId));
    memory = {
      log,
      joined: false,
      mainThreadId: text(threads.mainThreadId),
      threadId: text(threads.threadId),
      windowFloor: 0,
      noneBelow: new Map(),
      paged: new Set(),
    };
    memories.set(roomId, memory);
    privateWritten.set(memory, log.privateEntries());
  }
  return memory;
}

/**
 * Copies the room's private entries to sessionStorage when they changed. Called at once after
 * every change, not later with the rest: they are rare, and a reload straight after an answer
 * must find it.
 */
export function savePrivate(roomId: string, memory: RoomMemory): void {
  const privately = memory.log.privateEntries();
  const before = privateWritten.get(memory);
  if (before && before.length === privately.length && privately.every((e, i) => e === before[i])) return;
  writePrivate(tabStorage(), roomId, privately);
  privateWritten.set(memory, privately);
}

/**
 * What the room's copy (saveMemory) would hold, as a value that changes whenever that does: the
 * log's version and the main and open threads. Presence, typing and an answer still being written
 * are not in the copy, and leave it as it was.
 */
export function copyMark(memory: RoomMemory): string {
  return `${memory.log.version}\n${memory.mainThreadId}\n${memory.threadId}`;
}

/** Copies the room's messages and open thread to sessionStorage, and its private entries when they changed. */
export function saveMemory(roomId: string, memory: RoomMemory): void {
  savePrivate(roomId, memory);
  try {
    const copy = { ...memory.log.snapshot(), mainThreadId: memory.mainThreadId, threadId: memory.threadId };
    sessionStorage.setItem(cacheKey(roomId), JSON.stringify(copy));
  } catch {
    // Storage full or disabled: the copy is only a convenience.
  }
}
