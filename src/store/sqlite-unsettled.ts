/**
 * A batch of messages SQLite writes in several transactions (SqliteStore.appendMessages: an import
 * of thousands, a turn of the event loop between slices) is read by nobody until its last slice
 * commits. Readers used to see it grow: a live message stored between two slices took a seq past
 * the rows written so far, and a room catching up from the store (a reconnecting member, a node's
 * resync, a gap) sent its members the first part of the import as the room's history, the live
 * message in the middle of it once the rest came.
 *
 * When its first transaction cannot hold it all, the batch takes every seq it still needs in each
 * room at once (room_seq raised to the top of them: live messages stored meanwhile follow the whole
 * batch) and lists the room's range in `unsettled_seqs`, in that same transaction. Every read of a
 * room's or a thread's messages leaves out rows in a listed range (SETTLED). The last transaction
 * deletes the range: one short statement, and the whole batch is readable. A batch that fails or
 * whose process stops keeps its rows, unread; the same batch again finds them (by their clientIds),
 * and its last transaction deletes every range holding one of them too, so the batch is readable
 * whole then. Seqs taken and not used (messages found stored already) are given back when no later
 * message took a seq.
 */
import type Database from 'better-sqlite3';
import type { Message } from '../protocol/messages.js';
import type { NewMessage } from './types.js';

/** `messages` rows outside every unsettled range: for reads of a room's or a thread's messages (`messages` unaliased). */
export const SETTLED =
  'NOT EXISTS (SELECT 1 FROM unsettled_seqs u WHERE u.room_id = messages.room_id AND u.to_seq >= messages.seq AND u.from_seq <= messages.seq)';

/** Seqs of one room a batch took ahead (UnsettledBatch.hide). */
interface Taken {
  /** Its row in unsettled_seqs. */
  id: number;
  /** The next seq to give. */
  next: number;
  /** The last seq taken. */
  to: number;
  /** room_seq before the batch raised it (0 when the room had none). */
  mark: number;
}

/**
 * The seqs of one batch (SqliteStore.appendMessages), and its unsettled ranges. Every method runs
 * inside the batch's transactions; `seq` and `written` per message, `hide` at the end of a slice
 * that leaves messages to write, `settle` at the end of the last.
 */
export class UnsettledBatch {
  /** Messages still to write, by room. */
  private readonly left = new Map<string, number>();
  /** The first seq the batch gave in each room. */
  private readonly first = new Map<string, number>();
  private readonly taken = new Map<string, Taken>();
  /** Seqs of messages the batch found stored already, by room: a range holding one is settled with the batch. */
  private readonly found = new Map<string, number[]>();
  /** Whether the ranges in `taken` were committed (a slice that failed took its own back). */
  private kept = false;

  constructor(
    private readonly sql: (text: string) => Database.Statement,
    messages: readonly NewMessage[],
  ) {
    for (const m of messages) this.left.set(m.roomId, (this.left.get(m.roomId) ?? 0) + 1);
  }

  /** The seq of the batch's next message in `roomId`: one it took ahead, else the one after `lastSeq()`. */
  seq(roomId: string, lastSeq: () => number): number {
    const taken = this.taken.get(roomId);
    const seq = taken ? taken.next++ : lastSeq() + 1;
    if (!this.first.has(roomId)) this.first.set(roomId, seq);
    return seq;
  }

  /** A message of the batch was stored (as `message`), or found stored already (`duplicate`). */
  written(message: Message, duplicate: boolean): void {
    this.left.set(message.roomId, (this.left.get(message.roomId) ?? 1) - 1);
    if (!duplicate) return;
    const seqs = this.found.get(message.roomId);
    if (seqs) seqs.push(message.seq);
    else this.found.set(message.roomId, [message.seq]);
  }

  /**
   * The slice ending leaves messages to write: the first time, every room of the batch gets its
   * range (the seqs given so far and those still needed), listed unsettled, and room_seq past it.
   */
  hide(lastSeq: (roomId: string) => number): void {
    if (this.taken.size) return;
    const now = new Date().toISOString();
    for (const [roomId, left] of this.left) {
      const last = lastSeq(roomId);
      const mark = (this.sql('SELECT seq FROM room_seq WHERE room_id = ?').pluck().get(roomId) as number | undefined) ?? 0;
      const to = last + left;
      const from = this.first.get(roomId) ?? last + 1;
      const id = Number(
        this.sql('INSERT INTO unsettled_seqs (room_id, from_seq, to_seq, started_at) VALUES (?, ?, ?, ?)').run(roomId, from, to, now).lastInsertRowid,
      );
      if (left > 0)
        this.sql('INSERT INTO room_seq (room_id, seq) VALUES (?, ?) ON CONFLICT (room_id) DO UPDATE SET seq = max(seq, excluded.seq)').run(roomId, to);
      this.taken.set(roomId, { id, next: last + 1, to, mark });
    }
  }

  /** The slice just run committed. */
  committed(): void {
    this.kept = this.taken.size > 0;
  }

  /**
   * The last slice: the batch's ranges go, and so does every range holding a message it found
   * stored (left by the same batch before, failed or stopped). Seqs taken and not used go back when
   * no message took a later one.
   */
  settle(): void {
    for (const [roomId, taken] of this.taken) {
      this.sql('DELETE FROM unsettled_seqs WHERE id = ?').run(taken.id);
      const used = taken.next - 1;
      if (used >= taken.to) continue;
      this.sql('UPDATE room_seq SET seq = max(?, ?) WHERE room_id = ? AND seq = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE room_id = ? AND seq > ?)').run(
        taken.mark,
        used,
        roomId,
        taken.to,
        roomId,
        used,
      );
    }
    for (const [roomId, seqs] of this.found) {
      this.sql('DELETE FROM unsettled_seqs WHERE room_id = ? AND EXISTS (SELECT 1 FROM json_each(?) f WHERE f.value BETWEEN from_seq AND to_seq)').run(
        roomId,
        JSON.stringify(seqs),
      );
    }
  }

  /**
   * The batch failed: a range none of whose rows is left (their thread deleted meanwhile) goes; the
   * others stay unread until the same batch is written again.
   */
  abandon(): void {
    if (!this.kept) return;
    for (const [roomId, taken] of this.taken) {
      this.sql(
        'DELETE FROM unsettled_seqs WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE room_id = ? AND seq BETWEEN unsettled_seqs.from_seq AND unsettled_seqs.to_seq)',
      ).run(taken.id, roomId);
    }
  }
}
