/**
 * One room's messages seen thread by thread. The room's log holds every thread's messages; a
 * thread's view is the log filtered by `threadId`. The welcome's history covers all threads from
 * its oldest seq (the window floor); below it each thread pages back on its own through
 * `GET /api/v1/threads/:id/messages`, so switching threads keeps what each has loaded.
 */
import { isPrivateEntry, type LogEntry } from './message-log.js';
import type { RoomMemory } from './room-memory.js';
import { threadMessages } from './threads-api.js';

/** Messages fetched per "Load earlier messages". */
export const OLDER_PAGE = 50;
/** Messages per page, and pages at most, while re-filing a thread's messages after a split or merge. */
const REGROUP_PAGE = 100;
const REGROUP_MAX_PAGES = 20;

const views = new WeakMap<RoomMemory, { all: readonly LogEntry[]; threadId: string; floor: number; entries: readonly LogEntry[] }>();

/** The thread shown: the one the member opened, else the main thread ('' before any welcome). */
export function openThread(memory: RoomMemory): string {
  return memory.threadId || memory.mainThreadId;
}

/**
 * The entries of `threadId` (the same array until the log or the thread changes). Before any welcome, all of them.
 * A private entry kept from before a reload shows once the messages around it are loaded: above
 * the oldest one held, or anywhere when nothing older is left to page back to.
 */
export function entriesOf(memory: RoomMemory, threadId: string): readonly LogEntry[] {
  const all = memory.log.entries;
  if (!threadId) return all;
  const floor = hasOlder(memory, threadId) ? pageBefore(memory, threadId) : 0;
  const cached = views.get(memory);
  if (cached && cached.all === all && cached.threadId === threadId && cached.floor === floor) return cached.entries;
  const held = threadEntries(all, memory, threadId);
  const entries = floor ? held.filter((e) => !(isPrivateEntry(e) && (e.order ?? 0) < floor)) : held;
  views.set(memory, { all, threadId, floor, entries });
  return entries;
}

function threadEntries(all: readonly LogEntry[], memory: RoomMemory, threadId: string): readonly LogEntry[] {
  // A message written before the main thread was known belongs to it.
  const isMain = threadId === memory.mainThreadId;
  return all.filter((e) => e.message.threadId === threadId || (isMain && !e.message.threadId));
}

/**
 * The seq to page back from for `threadId`: every message of it from there up is held (the
 * window holds all threads above its floor, and older pages were fetched below it).
 */
function pageBefore(memory: RoomMemory, threadId: string): number {
  let oldest = memory.windowFloor;
  for (const e of threadEntries(memory.log.entries, memory, threadId)) {
    const seq = e.message.seq;
    if (e.state === 'sent' && seq > 0 && seq < oldest) oldest = seq;
  }
  return oldest;
}

/** Whether `threadId` may have messages older than those held. */
export function hasOlder(memory: RoomMemory, threadId: string): boolean {
  if (!memory.joined || !threadId) return false;
  const before = pageBefore(memory, threadId);
  const none = memory.noneBelow.get(threadId);
  return before > 1 && (none === undefined || before > none);
}

/** Whether the open thread should get a page at once: it shows nothing yet, or (not the main thread) it was never paged. */
export function wantsFirstPage(memory: RoomMemory, threadId: string): boolean {
  if (!hasOlder(memory, threadId)) return false;
  return !entriesOf(memory, threadId).length || (threadId !== memory.mainThreadId && !memory.paged.has(threadId));
}

/**
 * Fetches the page before the oldest held message of `threadId` into the log. A page that comes
 * after a welcome replaced the log (a cut catch-up, a wiped store) is dropped: it would stand above
 * a stretch of messages never loaded, and paging back would go on below it, skipping the stretch.
 */
export async function loadOlderPage(memory: RoomMemory, threadId: string): Promise<void> {
  const before = pageBefore(memory, threadId);
  const resets = memory.log.resets;
  const page = await threadMessages(threadId, before, OLDER_PAGE);
  if (memory.log.resets !== resets) return;
  memory.paged.add(threadId);
  const took = memory.log.receiveOlder(page.messages);
  if (!took) {
    memory.noneBelow.set(threadId, before);
    return;
  }
  if (!page.hasMore || !page.messages.length) {
    const lowest = page.messages.reduce((min, m) => Math.min(min, m.seq), before || Infinity);
    memory.noneBelow.set(threadId, Number.isFinite(lowest) ? lowest : 1);
  }
}

/**
 * Files the held messages that now belong to `threadId` under it (a split moved them there, or a
 * merge): pages back through the thread until below what the log holds. Returns true when a
 * message moved.
 */
export async function regroup(memory: RoomMemory, threadId: string): Promise<boolean> {
  const { log } = memory;
  let moved = false;
  let before = 0;
  // Older messages may have joined it: what was known about its start no longer holds.
  memory.noneBelow.delete(threadId);
  for (let pages = 0; pages < REGROUP_MAX_PAGES; pages++) {
    const page = await threadMessages(threadId, before, REGROUP_PAGE);
    const ids = page.messages.map((m) => m.id);
    if (log.moveToThread(ids, threadId)) moved = true;
    const oldest = page.messages[0]?.seq ?? 0;
    if (!page.hasMore) {
      // Seen to its start: when the log holds all of it, there is nothing older to page for.
      if (page.messages.every((m) => log.has(m.id))) memory.noneBelow.set(threadId, oldest || 1);
      break;
    }
    if (!oldest || oldest <= log.oldestSeq) break;
    before = oldest;
  }
  return moved;
}
