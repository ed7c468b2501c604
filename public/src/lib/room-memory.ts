/**
 * What the page remembers of each room it has shown: the messages (MessageLog) and whether the
 * room has welcomed this page yet. Kept per room id while the page lives, so switching topics and
 * back keeps each topic's conversation; copied to sessionStorage only as an offline fallback.
 */
import { MessageLog } from './message-log.js';

export interface RoomMemory {
  log: MessageLog;
  /** True once this page has had a `welcome` for the room: later joins ask only for what was missed. */
  joined: boolean;
}

const memories = new Map<string, RoomMemory>();

function cacheKey(roomId: string): string {
  return `salon.room.${roomId}`;
}

/** The room's memory, restored from sessionStorage the first time this page asks. */
export function memoryOf(roomId: string): RoomMemory {
  let memory = memories.get(roomId);
  if (!memory) {
    let cached: unknown = null;
    try {
      cached = JSON.parse(sessionStorage.getItem(cacheKey(roomId)) ?? 'null');
    } catch {
      cached = null;
    }
    memory = { log: MessageLog.restore(cached), joined: false };
    memories.set(roomId, memory);
  }
  return memory;
}

/** Copies the room's messages to sessionStorage. */
export function saveMemory(roomId: string, memory: RoomMemory): void {
  try {
    sessionStorage.setItem(cacheKey(roomId), JSON.stringify(memory.log.snapshot()));
  } catch {
    // Storage full or disabled: the copy is only a convenience.
  }
}
