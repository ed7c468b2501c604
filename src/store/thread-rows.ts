/**
 * The threads table as both stores keep it: which column holds each settable field, how a value is
 * written, and how a row reads back as a Thread.
 */
import type { NewThread, Thread, ThreadChange, ThreadFields } from './types.js';
import type { Row } from './rows.js';
import { errors } from '../errors.js';

/**
 * A message or memory chunk a change moves is gone: deleted or pruned after the operation read the
 * thread (the operation checked the ids it was given against what it read). Nothing is changed and
 * the operation can be tried again, so ERR_THREAD_CHANGED, naming the thread the change read last:
 * the one whose rows it moves (a merge's absorbed thread, a split's thread).
 */
export function goneMeanwhile(change: ThreadChange, what: string) {
  const read = change.expect.at(-1)?.id;
  return read ? new errors.ERR_THREAD_CHANGED(read) : new errors.ERR_BAD_THREAD_OP(`${what} is gone`);
}

/**
 * A change would move messages or memory of one room under a thread of another. A message keeps
 * its room's id and per-room seq when it moves, and a room's history, search and memory read by
 * room: under another room's thread it would be listed by neither room rightly. Threads merge and
 * split within their room (the thread service refuses a merge across rooms and points to fusion,
 * which copies memory and moves nothing), so the store refuses too, whoever builds the change.
 */
export function crossRoom(what: string, fromRoomId: string, threadId: string, toRoomId: string): Error {
  return new errors.ERR_BAD_THREAD_OP(
    `${what} is in room ${fromRoomId} and thread ${threadId} in room ${toRoomId}: messages and memory move only within their room (fuse threads of different rooms instead)`,
  );
}

/** Memory moved to a thread is given a room that is not the thread's: the chunks would be scoped to the wrong room. */
export function wrongRoom(threadId: string, givenRoomId: string, roomId: string): Error {
  return new errors.ERR_BAD_THREAD_OP(`memory moved to thread ${threadId} is given room ${givenRoomId}, but the thread is in room ${roomId}`);
}

/** The title of a room's main thread, as the stores create it (no other thread may take one that reads as it). */
export const MAIN_THREAD_TITLE = 'Main';

/** Column of each settable thread field, and how its value is written. */
const COLUMNS: { [K in keyof ThreadFields]: [column: string, write: (v: ThreadFields[K]) => unknown] } = {
  title: ['title', (v) => v],
  main: ['main', (v) => (v ? 1 : 0)],
  memoryEnabled: ['memory_enabled', (v) => (v ? 1 : 0)],
  privileged: ['privileged', (v) => (v ? 1 : 0)],
  status: ['status', (v) => v],
  tags: ['tags', (v) => JSON.stringify(v)],
  summary: ['summary', (v) => v],
  weight: ['weight', (v) => v],
  parentId: ['parent_id', (v) => v],
  origin: ['origin', (v) => v],
  splitLockedUntil: ['split_locked_until', (v) => v],
  mergedInto: ['merged_into', (v) => v],
  isMerged: ['is_merged', (v) => (v ? 1 : 0)],
};

/** The columns and values of the thread fields `fields` sets (other keys are ignored). */
export function threadColumns(fields: Partial<ThreadFields> & object): { columns: string[]; values: unknown[] } {
  const set = Object.entries(fields).filter(([k]) => k in COLUMNS) as [keyof ThreadFields, unknown][];
  return {
    columns: set.map(([k]) => COLUMNS[k][0]),
    values: set.map(([k, v]) => (COLUMNS[k][1] as (x: unknown) => unknown)(v)),
  };
}

/** The columns and values of a new thread's row, created at `at`. */
export function newThreadRow(t: NewThread, at: string): { columns: string[]; values: unknown[] } {
  const { columns, values } = threadColumns(t);
  return { columns: ['id', 'room_id', 'created_at', ...columns], values: [t.id, t.roomId, at, ...values] };
}

/**
 * Children a thread read or listed names (the newest; `childCount` counts them all): a split's
 * children stay its children once merged away, so a main thread split over and over gathers
 * thousands, each id sent again in every listing of the room and every read of the thread.
 */
export const CHILD_IDS_LISTED = 100;

export function rowToThread(r: Row, childIds: string[], childCount = childIds.length): Thread {
  return {
    id: r.id,
    roomId: r.room_id,
    title: r.title,
    main: r.main === 1,
    createdAt: r.created_at,
    memoryEnabled: r.memory_enabled !== 0,
    privileged: r.privileged === 1,
    status: r.status,
    tags: JSON.parse(r.tags),
    summary: r.summary,
    weight: r.weight,
    parentId: r.parent_id ?? null,
    childIds,
    childCount,
    origin: r.origin,
    splitLockedUntil: r.split_locked_until ?? null,
    mergedInto: r.merged_into ?? null,
    isMerged: r.is_merged === 1,
    version: r.version,
  };
}

/** The refusal of an operation that would leave a room with more than `max` active threads (it holds `active`). */
export function roomFull(max: number, active: number): Error {
  return new errors.ERR_BAD_THREAD_OP(`a room holds at most ${max} active threads (this one has ${active}); merge some first`);
}

/** The rooms a change creates threads in, sorted (the order their locks are taken in), with how many it creates in each. */
export function roomsCreatedIn(change: ThreadChange): [roomId: string, created: number][] {
  const created = new Map<string, number>();
  for (const t of change.createThreads ?? []) created.set(t.roomId, (created.get(t.roomId) ?? 0) + 1);
  return [...created].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
}

/**
 * The room's active threads and its newest archived ones (`$archived` of them; every one when
 * negative or null), main first, then by age: archived threads pile up with every merge, and a
 * listing reads only those it shows. `$room` and `$archived` are the placeholders to bind.
 */
export function listThreadsSql(room: string, archived: string): string {
  return `SELECT * FROM threads WHERE room_id = ${room} AND (status = 'active' OR id IN (
    SELECT id FROM threads WHERE room_id = ${room} AND status <> 'active' ORDER BY created_at DESC, id DESC LIMIT ${archived}))
    ORDER BY main DESC, created_at, id`;
}

/**
 * The children a listing names, for the threads whose ids bind to `ids` (an SQL list or array
 * expression): `(id, parent_id, child_count)` rows, the newest CHILD_IDS_LISTED of each parent,
 * oldest first; `child_count` counts all of the parent's children.
 */
export function listedChildrenSql(ids: string): string {
  return `SELECT id, parent_id, child_count FROM (
    SELECT id, parent_id, created_at,
      row_number() OVER (PARTITION BY parent_id ORDER BY created_at DESC, id DESC) AS newest,
      count(*) OVER (PARTITION BY parent_id) AS child_count
    FROM threads WHERE parent_id ${ids}) listed
    WHERE newest <= ${CHILD_IDS_LISTED} ORDER BY created_at, id`;
}

/** A listing's threads with their children (ids ordered by age), from its rows and their children's rows (listedChildrenSql). */
export function threadsWithChildren(rows: Row[], children: Row[]): Thread[] {
  // Pushed, not copied per child: copying the list for each held the event loop 0.2 s at 10,000
  // children (17 s at 20,000), before a listing named only the newest CHILD_IDS_LISTED.
  const byParent = new Map<string, { ids: string[]; count: number }>();
  for (const c of children) {
    const listed = byParent.get(c.parent_id as string);
    if (listed) listed.ids.push(c.id as string);
    else byParent.set(c.parent_id as string, { ids: [c.id as string], count: Number(c.child_count ?? 1) });
  }
  return rows.map((r) => {
    const listed = byParent.get(r.id as string);
    return rowToThread(r, listed?.ids ?? [], listed ? Math.max(listed.count, listed.ids.length) : 0);
  });
}
