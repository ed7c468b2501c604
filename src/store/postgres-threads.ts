/**
 * The thread tables of the PostgreSQL store and the one transaction a thread operation is
 * (ThreadChange), as sqlite-threads.ts does them. SQLite runs one writer at a time; here two nodes
 * may apply changes at once, so the expected versions are read `FOR UPDATE`: a second operation
 * on the same thread waits for the first to commit, then finds the version moved.
 */
import { errors } from '../errors.js';
import { lockCovering, type Sql } from './postgres-db.js';
import { appendIn } from './postgres-messages.js';
import { insertMemory, lockThreadsOfMemory, moveMemory } from './postgres-memory.js';
import type { Row } from './rows.js';
import { messageIdsOf, placeLateMemory } from './split-memory.js';
import {
  CHILD_IDS_LISTED,
  crossRoom,
  goneMeanwhile,
  listedChildrenSql,
  listThreadsSql,
  MAIN_THREAD_TITLE,
  newThreadRow,
  roomFull,
  roomsCreatedIn,
  rowToThread,
  threadColumns,
  threadsWithChildren,
  wrongRoom,
} from './thread-rows.js';
import type { NewThread, Thread, ThreadBridge, ThreadChange, ThreadChangeResult, ThreadEvent } from './types.js';

export async function getThread(sql: Sql, id: string): Promise<Thread | null> {
  const { rows } = await sql.query('SELECT * FROM threads WHERE id = $1', [id]);
  if (!rows.length) return null;
  // The count is taken before the LIMIT: it counts every child.
  const children = await sql.query(
    `SELECT id, count(*) OVER () AS n FROM threads WHERE parent_id = $1 ORDER BY created_at DESC, id DESC LIMIT ${CHILD_IDS_LISTED}`,
    [id],
  );
  return rowToThread(rows[0], children.rows.map((r) => r.id as string).reverse(), Number(children.rows[0]?.n ?? 0));
}

export async function listThreads(sql: Sql, roomId: string, archived?: number): Promise<Thread[]> {
  // LIMIT NULL is no limit in PostgreSQL.
  const { rows } = await sql.query(listThreadsSql('$1', '$2'), [roomId, archived ?? null]);
  const children = await sql.query(listedChildrenSql('= ANY($1::text[])'), [rows.map((r) => r.id)]);
  return threadsWithChildren(rows, children.rows);
}

export async function countArchivedThreads(sql: Sql, roomId: string): Promise<number> {
  const { rows } = await sql.query("SELECT count(*)::int AS n FROM threads WHERE room_id = $1 AND status <> 'active'", [roomId]);
  return rows[0].n as number;
}

export async function insertThread(sql: Sql, t: NewThread, at: string): Promise<void> {
  const { columns, values } = newThreadRow(t, at);
  await sql.query(`INSERT INTO threads (${columns.join(', ')}) VALUES (${placeholders(values.length)})`, values);
}

/** Rounds of ensureMainThreadIn before it gives up: each is lost only to a deletion of the main thread. */
const ENSURE_MAIN_ROUNDS = 10;

/**
 * The room's main thread, created if it has none (two nodes at once create one). Its statements
 * run one by one, so the main thread found may be deleted (DELETE /threads/:id allows it) before
 * it is read: then it is created again. Reading only, when it exists, writes nothing.
 */
export async function ensureMainThreadIn(sql: Sql, roomId: string, newId: string): Promise<Thread> {
  const { columns, values } = newThreadRow({ id: newId, roomId, title: MAIN_THREAD_TITLE, main: true }, new Date().toISOString());
  for (let round = 0; round < ENSURE_MAIN_ROUNDS; round++) {
    await sql.query(
      `INSERT INTO threads (${columns.join(', ')}) VALUES (${placeholders(values.length)}) ON CONFLICT (room_id) WHERE main = 1 DO NOTHING`,
      values,
    );
    const { rows } = await sql.query('SELECT id FROM threads WHERE room_id = $1 AND main = 1', [roomId]);
    const thread = rows.length ? await getThread(sql, rows[0].id) : null;
    if (thread) return thread;
  }
  throw new errors.ERR_THREAD_NOT_FOUND(`main thread of ${roomId}`);
}

export async function threadBridges(sql: Sql, threadId: string): Promise<ThreadBridge[]> {
  const { rows } = await sql.query('SELECT * FROM thread_bridges WHERE thread_id = $1 ORDER BY weight DESC, other_id', [threadId]);
  return rows.map((r) => ({ threadId: r.thread_id, otherId: r.other_id, weight: r.weight }));
}

export async function threadHistory(sql: Sql, threadId: string, limit: number): Promise<ThreadEvent[]> {
  const { rows } = await sql.query('SELECT * FROM thread_history WHERE thread_id = $1 ORDER BY id DESC LIMIT $2', [threadId, limit]);
  return rows.reverse().map((r: Row) => ({ threadId: r.thread_id, at: r.at, actor: r.actor, action: r.action, details: JSON.parse(r.details) }));
}

export async function recordEvent(sql: Sql, event: Omit<ThreadEvent, 'at'>, at: string): Promise<void> {
  await sql.query('INSERT INTO thread_history (thread_id, at, actor, action, details) VALUES ($1, $2, $3, $4, $5)', [
    event.threadId,
    at,
    event.actor,
    event.action,
    JSON.stringify(event.details),
  ]);
}

/**
 * Store.deleteThread; call inside a transaction. The thread's children lose their parent, so they
 * are updated too: they are locked with the thread, in id order, as every change locks its threads
 * (lockThreadAndChildren).
 */
export async function deleteThreadIn(sql: Sql, threadId: string): Promise<{ messages: number; memoryIds: number[] } | null> {
  if (!(await lockThreadAndChildren(sql, threadId))) return null;
  // Lines go with their chunks (foreign key).
  const memory = await sql.query('DELETE FROM memory_chunks WHERE thread_id = $1 RETURNING id', [threadId]);
  const messages = await sql.query('DELETE FROM messages WHERE thread_id = $1', [threadId]);
  await writeBridgesIn(sql, { dropBridgesOf: [threadId] });
  await sql.query('DELETE FROM thread_history WHERE thread_id = $1', [threadId]);
  await sql.query('UPDATE threads SET parent_id = NULL WHERE parent_id = $1', [threadId]);
  await sql.query('DELETE FROM threads WHERE id = $1', [threadId]);
  return { messages: messages.rowCount ?? 0, memoryIds: memory.rows.map((r) => r.id as number).sort((a, b) => a - b) };
}

/**
 * Locks a thread and its children, in id order; false when the thread does not exist. The thread
 * alone was locked first and its children later, when their parent was cleared: a merge or fusion
 * of a child that sorts before its parent with that parent locks the child, then waits for the
 * parent, and the deletion then waited for the child (a deadlock). The children are locked only
 * against updates, so appends to them go on; the thread itself then for update, against appends
 * and chunks stored in it. A split of the thread committed while this waited adds children its
 * snapshot did not see; they are then taken again (a savepoint gives the locks back). Once the
 * thread is locked, no child can be added (a split needs its lock).
 */
async function lockThreadAndChildren(sql: Sql, threadId: string): Promise<boolean> {
  const locked = await lockCovering(
    sql,
    async () =>
      (await sql.query('SELECT id FROM threads WHERE id = $1 OR parent_id = $1 ORDER BY id FOR NO KEY UPDATE', [threadId])).rows.map((r) => r.id as string),
    async (locked) =>
      locked.includes(threadId) &&
      Boolean((await sql.query('SELECT 1 FROM threads WHERE parent_id = $1 AND id <> ALL($2::text[]) LIMIT 1', [threadId, locked])).rowCount),
  );
  if (!locked.includes(threadId)) return false;
  await sql.query('SELECT 1 FROM threads WHERE id = $1 FOR UPDATE', [threadId]);
  return true;
}

/** Applies `change`; call inside a transaction. */
export async function applyChangeIn(sql: Sql, change: ThreadChange): Promise<ThreadChangeResult> {
  // Locked in one order, so two operations on the same threads queue instead of deadlocking.
  const versions = new Map<string, number>();
  if (change.expect.length) {
    const ids = change.expect.map((e) => e.id);
    const locked = await sql.query('SELECT id, version FROM threads WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [ids]);
    for (const r of locked.rows) versions.set(r.id, r.version);
  }
  for (const { id, version } of change.expect) {
    if (!versions.has(id)) throw new errors.ERR_THREAD_NOT_FOUND(id);
    if (versions.get(id) !== version) throw new errors.ERR_THREAD_CHANGED(id);
  }
  // Operations creating threads in a room take its lock (released at commit) before they count, so
  // two nodes racing for the room's last place count one after the other.
  const capped = change.maxActiveThreads !== undefined ? roomsCreatedIn(change) : [];
  for (const [roomId] of capped) await sql.query("SELECT pg_advisory_xact_lock(hashtextextended('salon:room-threads:' || $1, 0))", [roomId]);
  for (const t of change.createThreads ?? []) await insertThread(sql, t, change.at);
  for (const u of change.updateThreads ?? []) {
    const { columns, values } = threadColumns(u);
    const sets = [...columns.map((c, i) => `${c} = $${i + 2}`), 'version = version + 1'];
    const { rowCount } = await sql.query(`UPDATE threads SET ${sets.join(', ')} WHERE id = $1`, [u.id, ...values]);
    if (!rowCount) throw new errors.ERR_THREAD_NOT_FOUND(u.id);
  }
  for (const [roomId, created] of capped) {
    const { rows } = await sql.query("SELECT count(*)::int AS n FROM threads WHERE room_id = $1 AND status = 'active'", [roomId]);
    const max = change.maxActiveThreads!;
    if (rows[0].n > max) throw roomFull(max, rows[0].n - created);
  }
  for (const { ids, threadId } of change.moveMessages ?? []) {
    const roomId = await roomOf(sql, threadId);
    const gone = await moveMessages(sql, ids, threadId, roomId);
    if (gone === undefined) continue;
    const elsewhere = await sql.query('SELECT room_id FROM messages WHERE id = $1', [gone]);
    throw elsewhere.rows.length ? crossRoom(`message ${gone}`, elsewhere.rows[0].room_id, threadId, roomId) : goneMeanwhile(change, `message ${gone}`);
  }
  for (const { fromThreadId, threadId } of change.moveThreadMessages ?? []) {
    const [from, to] = [await roomOf(sql, fromThreadId), await roomOf(sql, threadId)];
    if (from !== to) throw crossRoom(`thread ${fromThreadId}`, from, threadId, to);
    await sql.query('UPDATE messages SET thread_id = $1 WHERE thread_id = $2', [threadId, fromThreadId]);
  }
  for (const { threadId, roomId } of change.moveMemory ?? []) {
    const to = await roomOf(sql, threadId);
    if (to !== roomId) throw wrongRoom(threadId, roomId, to);
  }
  for (const { fromThreadId, threadId, roomId } of change.moveThreadMemory ?? []) {
    const [from, to] = [await roomOf(sql, fromThreadId), await roomOf(sql, threadId)];
    if (from !== to) throw crossRoom(`thread ${fromThreadId}`, from, threadId, to);
    if (to !== roomId) throw wrongRoom(threadId, roomId, to);
  }
  for (const { ids, threadId, roomId } of change.moveMemory ?? []) {
    const gone = await moveMemory(sql, ids, threadId, roomId);
    if (gone !== undefined) throw goneMeanwhile(change, `memory chunk ${gone}`);
  }
  if (change.deleteMemory?.length) await deleteMemoryOfThreads(sql, change.deleteMemory);
  const late = await placeLate(sql, change);
  const moved: number[] = [...late.moved];
  for (const { fromThreadId, threadId, roomId } of change.moveThreadMemory ?? []) {
    const { rows } = await sql.query('SELECT id FROM memory_chunks WHERE thread_id = $1 ORDER BY id FOR UPDATE', [fromThreadId]);
    const ids = rows.map((r) => r.id as number);
    await moveMemory(sql, ids, threadId, roomId);
    moved.push(...ids);
  }
  const added: number[] = [];
  for (const m of change.addMemory ?? []) added.push((await insertMemory(sql, m.chunk, change.at, m, m.updatedAt)).id);
  await writeBridgesIn(sql, change);
  for (const e of change.history ?? []) await recordEvent(sql, e, change.at);
  const appended = [];
  for (const m of change.appendMessages ?? []) appended.push((await appendIn(sql, m)).message);
  return { addedMemoryIds: added, movedMemoryIds: moved, appended, ...(late.parted.length ? { partedMemory: late.parted } : {}) };
}

/**
 * ThreadChange.memoryRead: the chunks filed in the thread after the caller read it that cite a
 * message the change moves go with their messages (split-memory.ts). The caller expects the
 * thread's version, so its row is locked for update: a filing, which key-share locks the thread
 * it files into, committed before this read or waits for the commit.
 */
async function placeLate(sql: Sql, change: ThreadChange): Promise<{ moved: number[]; parted: { id: number; messageIds: string[] }[] }> {
  if (!change.memoryRead || !change.moveMessages?.length) return { moved: [], parted: [] };
  const { threadId, ids } = change.memoryRead;
  const { rows } = await sql.query('SELECT id, kind, message_ids FROM memory_chunks WHERE thread_id = $1 AND id <> ALL($2::bigint[]) ORDER BY id FOR UPDATE', [
    threadId,
    ids,
  ]);
  const { moves, parted } = placeLateMemory(
    change,
    threadId,
    rows.map((r) => ({ id: Number(r.id), kind: r.kind, messageIds: messageIdsOf(r.message_ids) })),
  );
  const moved: number[] = [];
  for (const [to, chunkIds] of moves) {
    await moveMemory(sql, chunkIds, to, await roomOf(sql, to));
    moved.push(...chunkIds);
  }
  if (parted.length)
    await deleteMemoryOfThreads(
      sql,
      parted.map((c) => c.id),
    );
  return { moved, parted: parted.map(({ id, messageIds }) => ({ id, messageIds })) };
}

/**
 * Deletes memory chunks and bumps the versions of the threads that held them: an operation that
 * read those threads before (a fusion or a compaction planning for seconds) must not commit a copy
 * or summary of what went. The threads are locked first, in one order as every change locks them
 * (lockThreadsOfMemory); a chunk that a merge moved meanwhile is deleted where it is now, and that
 * thread, locked in that order too, changes.
 */
async function deleteMemoryOfThreads(sql: Sql, ids: number[]): Promise<void> {
  const locked = await lockThreadsOfMemory(sql, ids, 'UPDATE');
  await sql.query('DELETE FROM memory_chunks WHERE id = ANY($1::bigint[])', [ids]);
  await sql.query('UPDATE threads SET version = version + 1 WHERE id = ANY($1::text[])', [locked]);
}

/** Moves messages of `roomId` by id; returns the first id that is gone or in another room, if one is. */
async function moveMessages(sql: Sql, ids: string[], threadId: string, roomId: string): Promise<string | undefined> {
  const { rows } = await sql.query('UPDATE messages SET thread_id = $1 WHERE id = ANY($2::text[]) AND room_id = $3 RETURNING id', [threadId, ids, roomId]);
  const moved = new Set(rows.map((r) => r.id as string));
  return ids.find((id) => !moved.has(id));
}

/** The room of a thread a change moves rows to or from (ERR_THREAD_NOT_FOUND when there is none); a thread never changes room. */
async function roomOf(sql: Sql, threadId: string): Promise<string> {
  const { rows } = await sql.query('SELECT room_id FROM threads WHERE id = $1', [threadId]);
  if (!rows.length) throw new errors.ERR_THREAD_NOT_FOUND(threadId);
  return rows[0].room_id;
}

/**
 * Rewrites bridges (ThreadChange `dropBridgesOf`, `setBridges`, `bridgesRead`); call inside a
 * transaction, after the change's thread locks. Merges, splits, fusions, deletions and every node's
 * periodic refresh rewrite a room's bridges, and a refresh locks no thread: written row by row in
 * each caller's own order, two of them deadlocked (a merge dropping A's bridges then B's, a refresh
 * listing B before A), and a refresh that read its threads before a merge committed wrote bridges
 * of the thread the merge had just archived. So each writer first takes a lock per room of the
 * threads named (advisory, until the commit), in one order, after the change's thread locks; then the refresh's versions are checked, the rows to drop are locked in key
 * order (a bridge of a fusion joins two rooms, so writers holding different rooms' locks can meet
 * on it) and deleted, and only bridges between threads still active are written, in key order.
 */
export async function writeBridgesIn(sql: Sql, change: Pick<ThreadChange, 'dropBridgesOf' | 'setBridges' | 'bridgesRead'>): Promise<void> {
  const set = (change.setBridges ?? []).filter((b) => b.threadId !== b.otherId);
  const dropped = sortedUnique(change.dropBridgesOf ?? []);
  const named = sortedUnique([...dropped, ...(change.bridgesRead ?? []).map((r) => r.id), ...set.flatMap((b) => [b.threadId, b.otherId])]);
  if (!named.length) return;
  const rooms = await sql.query('SELECT DISTINCT room_id FROM threads WHERE id = ANY($1::text[])', [named]);
  for (const roomId of sortedUnique(rooms.rows.map((r) => r.room_id as string))) {
    await sql.query("SELECT pg_advisory_xact_lock(hashtextextended('salon:room-bridges:' || $1, 0))", [roomId]);
  }
  if (change.bridgesRead?.length) await checkVersionsRead(sql, change.bridgesRead);
  if (dropped.length) {
    await sql.query(
      'SELECT count(*) FROM (SELECT 1 FROM thread_bridges WHERE thread_id = ANY($1::text[]) OR other_id = ANY($1::text[]) ORDER BY thread_id COLLATE "C", other_id FOR UPDATE) locked',
      [dropped],
    );
    await sql.query('DELETE FROM thread_bridges WHERE thread_id = ANY($1::text[]) OR other_id = ANY($1::text[])', [dropped]);
  }
  if (!set.length) return;
  const { rows } = await sql.query("SELECT id FROM threads WHERE id = ANY($1::text[]) AND status = 'active'", [named]);
  const active = new Set(rows.map((r) => r.id as string));
  // Both ways, the last given winning as when they were written one by one.
  const written = new Map<string, ThreadBridge>();
  for (const b of set) {
    if (!active.has(b.threadId) || !active.has(b.otherId)) continue;
    written.set(`${b.threadId}\0${b.otherId}`, b);
    written.set(`${b.otherId}\0${b.threadId}`, { threadId: b.otherId, otherId: b.threadId, weight: b.weight });
  }
  const ordered = [...written.values()].sort((x, y) => textOrder(x.threadId, y.threadId) || textOrder(x.otherId, y.otherId));
  if (!ordered.length) return;
  await sql.query(
    `INSERT INTO thread_bridges (thread_id, other_id, weight)
       SELECT * FROM unnest($1::text[], $2::text[], $3::float8[]) AS b(thread_id, other_id, weight) ORDER BY thread_id COLLATE "C", other_id
     ON CONFLICT (thread_id, other_id) DO UPDATE SET weight = excluded.weight`,
    [ordered.map((b) => b.threadId), ordered.map((b) => b.otherId), ordered.map((b) => b.weight)],
  );
}

/** A refresh's threads must still be there at the versions it read (ThreadChange.bridgesRead). */
async function checkVersionsRead(sql: Sql, read: { id: string; version: number }[]): Promise<void> {
  const { rows } = await sql.query('SELECT id, version FROM threads WHERE id = ANY($1::text[])', [read.map((r) => r.id)]);
  const versions = new Map(rows.map((r) => [r.id as string, r.version as number]));
  for (const { id, version } of read) {
    if (!versions.has(id)) throw new errors.ERR_THREAD_NOT_FOUND(id);
    if (versions.get(id) !== version) throw new errors.ERR_THREAD_CHANGED(id);
  }
}

const textOrder = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
const sortedUnique = (ids: string[]) => [...new Set(ids)].sort(textOrder);

function placeholders(n: number): string {
  return Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');
}
