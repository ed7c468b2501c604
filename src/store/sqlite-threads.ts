/**
 * The thread tables of the SQLite store: threads with their lineage and locks, bridges between
 * threads, the history of thread operations, and the one transaction a thread operation is
 * (ThreadChange). SqliteStore owns the connection and calls in here inside its transactions.
 */
import type Database from 'better-sqlite3';
import { errors } from '../errors.js';
import type { Message } from '../protocol/messages.js';
import type { Row } from './rows.js';
import { messageIdsOf, placeLateMemory } from './split-memory.js';
import {
  CHILD_IDS_LISTED,
  crossRoom,
  goneMeanwhile,
  listedChildrenSql,
  listThreadsSql,
  newThreadRow,
  roomFull,
  roomsCreatedIn,
  rowToThread,
  threadColumns,
  threadsWithChildren,
  wrongRoom,
} from './thread-rows.js';
import type { NewMessage, NewThread, Thread, ThreadBridge, ThreadChange, ThreadChangeResult, ThreadEvent } from './types.js';

/** What the thread tables need of the store: its statement cache and its memory-chunk writes. */
export interface ThreadTablesHost {
  sql(text: string): Database.Statement;
  /** Inserts memory chunks with their lines and vectors; returns their ids, in order. */
  insertMemory(entries: NonNullable<ThreadChange['addMemory']>, at: string): number[];
  deleteMemory(ids: number[]): void;
  /** Moves chunks to another thread (their lines' scope follows); returns the id of the first chunk that is gone, if one is. */
  moveMemory(ids: number[], threadId: string, roomId: string): number | undefined;
  /** Ids of the memory chunks of a thread, oldest first. */
  memoryIdsOf(threadId: string): number[];
  appendMessage(message: NewMessage): Message;
}

export class SqliteThreadTables {
  constructor(private readonly host: ThreadTablesHost) {}

  /**
   * One statement, its children's ids aggregated in it: each statement outside a transaction takes
   * and releases the WAL's read lock (two fcntl calls, most of a small read's cost in a warm loop),
   * and an ask reads its thread twice (docs/benchmarks.md, twenty-fifth session).
   */
  get(id: string): Thread | null {
    const row = this.row(id);
    return row ? threadOfRow(row) : null;
  }

  /** The row `get` reads (threadOfRow makes it a Thread). */
  row(id: string): Row | undefined {
    return this.host
      .sql(
        `SELECT t.*,
           (SELECT json_group_array(c.id ORDER BY c.created_at, c.id) FROM (
             SELECT id, created_at FROM threads WHERE parent_id = t.id ORDER BY created_at DESC, id DESC LIMIT ${CHILD_IDS_LISTED}) c) AS child_ids,
           (SELECT count(*) FROM threads c WHERE c.parent_id = t.id) AS child_count
         FROM threads t WHERE t.id = ?`,
      )
      .get(id) as Row | undefined;
  }

  list(roomId: string, archived?: number): Thread[] {
    const rows = this.host.sql(listThreadsSql('@room', '@archived')).all({ room: roomId, archived: archived ?? -1 }) as Row[];
    const children = this.host.sql(listedChildrenSql('IN (SELECT value FROM json_each(?))')).all(JSON.stringify(rows.map((r) => r.id))) as Row[];
    return threadsWithChildren(rows, children);
  }

  countArchived(roomId: string): number {
    return (this.host.sql("SELECT count(*) AS n FROM threads WHERE room_id = ? AND status <> 'active'").get(roomId) as Row).n as number;
  }

  insert(t: NewThread, at: string): void {
    const { columns, values } = newThreadRow(t, at);
    this.host.sql(`INSERT INTO threads (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`).run(...values);
  }

  bridges(threadId: string): ThreadBridge[] {
    return (this.host.sql('SELECT * FROM thread_bridges WHERE thread_id = ? ORDER BY weight DESC, other_id').all(threadId) as Row[]).map((r) => ({
      threadId: r.thread_id,
      otherId: r.other_id,
      weight: r.weight,
    }));
  }

  history(threadId: string, limit: number): ThreadEvent[] {
    const rows = this.host.sql('SELECT * FROM thread_history WHERE thread_id = ? ORDER BY id DESC LIMIT ?').all(threadId, limit) as Row[];
    return rows.reverse().map((r) => ({ threadId: r.thread_id, at: r.at, actor: r.actor, action: r.action, details: JSON.parse(r.details) }));
  }

  record(event: Omit<ThreadEvent, 'at'>, at: string): void {
    this.host
      .sql('INSERT INTO thread_history (thread_id, at, actor, action, details) VALUES (?, ?, ?, ?, ?)')
      .run(event.threadId, at, event.actor, event.action, JSON.stringify(event.details));
  }

  /** The room of a thread a change moves rows to or from (ERR_THREAD_NOT_FOUND when there is none). */
  private roomOf(threadId: string): string {
    const row = this.host.sql('SELECT room_id FROM threads WHERE id = ?').get(threadId) as Row | undefined;
    if (!row) throw new errors.ERR_THREAD_NOT_FOUND(threadId);
    return row.room_id;
  }

  /** Applies `change`; call inside a transaction. */
  apply(change: ThreadChange): ThreadChangeResult {
    const { sql } = this.host;
    for (const { id, version } of change.expect) {
      const row = sql('SELECT version FROM threads WHERE id = ?').get(id) as Row | undefined;
      if (!row) throw new errors.ERR_THREAD_NOT_FOUND(id);
      if (row.version !== version) throw new errors.ERR_THREAD_CHANGED(id);
    }
    for (const t of change.createThreads ?? []) this.insert(t, change.at);
    for (const u of change.updateThreads ?? []) {
      const { columns, values } = threadColumns(u);
      const sets = [...columns.map((c) => `${c} = ?`), 'version = version + 1'];
      if (!sql(`UPDATE threads SET ${sets.join(', ')} WHERE id = ?`).run(...values, u.id).changes) throw new errors.ERR_THREAD_NOT_FOUND(u.id);
    }
    // Counted inside the (IMMEDIATE, so serialised) transaction: a racing operation sees these threads.
    if (change.maxActiveThreads !== undefined) {
      for (const [roomId, created] of roomsCreatedIn(change)) {
        const { n } = sql("SELECT count(*) AS n FROM threads WHERE room_id = ? AND status = 'active'").get(roomId) as Row;
        if (n > change.maxActiveThreads) throw roomFull(change.maxActiveThreads, n - created);
      }
    }
    for (const { ids, threadId } of change.moveMessages ?? []) {
      const roomId = this.roomOf(threadId);
      const move = sql('UPDATE messages SET thread_id = ? WHERE id = ? AND room_id = ?');
      for (const id of ids) {
        if (move.run(threadId, id, roomId).changes) continue;
        const elsewhere = sql('SELECT room_id FROM messages WHERE id = ?').get(id) as Row | undefined;
        throw elsewhere ? crossRoom(`message ${id}`, elsewhere.room_id, threadId, roomId) : goneMeanwhile(change, `message ${id}`);
      }
    }
    for (const { fromThreadId, threadId } of change.moveThreadMessages ?? []) {
      const [from, to] = [this.roomOf(fromThreadId), this.roomOf(threadId)];
      if (from !== to) throw crossRoom(`thread ${fromThreadId}`, from, threadId, to);
      sql('UPDATE messages SET thread_id = ? WHERE thread_id = ?').run(threadId, fromThreadId);
    }
    for (const { threadId, roomId } of change.moveMemory ?? []) {
      const to = this.roomOf(threadId);
      if (to !== roomId) throw wrongRoom(threadId, roomId, to);
    }
    for (const { fromThreadId, threadId, roomId } of change.moveThreadMemory ?? []) {
      const [from, to] = [this.roomOf(fromThreadId), this.roomOf(threadId)];
      if (from !== to) throw crossRoom(`thread ${fromThreadId}`, from, threadId, to);
      if (to !== roomId) throw wrongRoom(threadId, roomId, to);
    }
    for (const { ids, threadId, roomId } of change.moveMemory ?? []) {
      const gone = this.host.moveMemory(ids, threadId, roomId);
      if (gone !== undefined) throw goneMeanwhile(change, `memory chunk ${gone}`);
    }
    if (change.deleteMemory?.length) this.deleteMemory(change.deleteMemory);
    const late = this.placeLate(change);
    const moved = (change.moveThreadMemory ?? []).flatMap(({ fromThreadId, threadId, roomId }) => {
      const ids = this.host.memoryIdsOf(fromThreadId);
      this.host.moveMemory(ids, threadId, roomId);
      return ids;
    });
    moved.push(...late.moved);
    const added = this.host.insertMemory(change.addMemory ?? [], change.at);
    // A refresh read its threads before this (serialised) transaction, with turns of the event loop
    // between: a thread operation may have landed since (ThreadChange.bridgesRead).
    for (const { id, version } of change.bridgesRead ?? []) {
      const row = sql('SELECT version FROM threads WHERE id = ?').get(id) as Row | undefined;
      if (!row) throw new errors.ERR_THREAD_NOT_FOUND(id);
      if (row.version !== version) throw new errors.ERR_THREAD_CHANGED(id);
    }
    for (const id of change.dropBridgesOf ?? []) sql('DELETE FROM thread_bridges WHERE thread_id = ? OR other_id = ?').run(id, id);
    const bridge = sql('INSERT OR REPLACE INTO thread_bridges (thread_id, other_id, weight) VALUES (?, ?, ?)');
    const named = (change.setBridges ?? []).flatMap((b) => [b.threadId, b.otherId]);
    const active = new Set(
      named.length
        ? (sql("SELECT id FROM threads WHERE id IN (SELECT value FROM json_each(?)) AND status = 'active'").all(JSON.stringify(named)) as Row[]).map(
            (r) => r.id as string,
          )
        : [],
    );
    for (const b of change.setBridges ?? []) {
      // Deleted or merged away since the caller read it: no bridge to a thread nobody lists.
      if (b.threadId === b.otherId || !active.has(b.threadId) || !active.has(b.otherId)) continue;
      bridge.run(b.threadId, b.otherId, b.weight);
      bridge.run(b.otherId, b.threadId, b.weight);
    }
    for (const e of change.history ?? []) this.record(e, change.at);
    const appended = (change.appendMessages ?? []).map((m) => this.host.appendMessage(m));
    return { addedMemoryIds: added, movedMemoryIds: moved, appended, ...(late.parted.length ? { partedMemory: late.parted } : {}) };
  }

  /**
   * Deletes memory chunks. The threads that held them change: an operation that read them before
   * (a fusion or a compaction planning for seconds) must not commit a copy or summary of what went.
   */
  private deleteMemory(ids: number[]): void {
    this.host
      .sql('UPDATE threads SET version = version + 1 WHERE id IN (SELECT thread_id FROM memory_chunks WHERE id IN (SELECT value FROM json_each(?)))')
      .run(JSON.stringify(ids));
    this.host.deleteMemory(ids);
  }

  /**
   * ThreadChange.memoryRead: the chunks filed in the thread after the caller read it that cite a
   * message the change moves go with their messages (split-memory.ts). No filing commits between
   * this read and the commit: SQLite has one writer.
   */
  private placeLate(change: ThreadChange): { moved: number[]; parted: { id: number; messageIds: string[] }[] } {
    if (!change.memoryRead || !change.moveMessages?.length) return { moved: [], parted: [] };
    const { threadId, ids } = change.memoryRead;
    const rows = this.host
      .sql('SELECT id, kind, message_ids FROM memory_chunks WHERE thread_id = ? AND id NOT IN (SELECT value FROM json_each(?)) ORDER BY id')
      .all(threadId, JSON.stringify(ids)) as Row[];
    const { moves, parted } = placeLateMemory(
      change,
      threadId,
      rows.map((r) => ({ id: r.id as number, kind: r.kind, messageIds: messageIdsOf(r.message_ids) })),
    );
    const moved: number[] = [];
    for (const [to, chunkIds] of moves) {
      this.host.moveMemory(chunkIds, to, this.roomOf(to));
      moved.push(...chunkIds);
    }
    if (parted.length) this.deleteMemory(parted.map((c) => c.id));
    return { moved, parted: parted.map(({ id, messageIds }) => ({ id, messageIds })) };
  }
}

/** A row of SqliteThreadTables.row as a Thread. */
export function threadOfRow(row: Row): Thread {
  return rowToThread(row, JSON.parse(row.child_ids as string) as string[], row.child_count as number);
}
