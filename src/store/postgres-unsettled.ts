/**
 * A batch of messages (an import) in the PostgreSQL store: read whole or not at all, as in SQLite
 * (sqlite-unsettled.ts). It was written in one transaction holding its room's `room_seq` row lock
 * throughout, so every live message of the room, from every node, waited for it: 4.3 s behind an
 * import of 5,000. A batch of more than APPEND_SLICE_MESSAGES now takes all its seqs in a short
 * first transaction and lists their range in `unsettled_seqs` (SETTLED leaves rows in a listed
 * range out of every read of a room's or a thread's messages), writes its messages in transactions
 * of APPEND_SLICE_MESSAGES that lock only their threads' rows, and deletes the range in its last
 * one. A failure keeps what was written, unread; the same batch again finds it by its clientIds,
 * and deletes every range holding one of the messages it found. Seqs taken and not used go back
 * when no message took a later one.
 */
import type { Message } from '../protocol/messages.js';
import type { PgDatabase, Sql } from './postgres-db.js';
import { appendAt, appendIn } from './postgres-messages.js';
import type { NewMessage } from './types.js';

/** `messages` rows outside every unsettled range: for reads of a room's or a thread's messages (`messages` unaliased). */
export const SETTLED =
  'NOT EXISTS (SELECT 1 FROM unsettled_seqs u WHERE u.room_id = messages.room_id AND u.to_seq >= messages.seq AND u.from_seq <= messages.seq)';

/** Messages one transaction of a batch writes: ~0.9 ms each on loopback, so a live append to one of its threads waits ~0.2 s at most. */
export const APPEND_SLICE_MESSAGES = 250;

type Appended = { message: Message; duplicate: boolean };

/** A room's seqs a batch took: its range's row, the next seq to give, the last one taken. */
interface Taken {
  id: number;
  next: number;
  to: number;
}

/** Appends `messages` as Store.appendMessages says, in transactions of APPEND_SLICE_MESSAGES. */
export async function appendBatch(db: PgDatabase, messages: NewMessage[]): Promise<Appended[]> {
  if (messages.length <= APPEND_SLICE_MESSAGES) {
    return db.tx(async (sql) => {
      const out: Appended[] = [];
      for (const m of messages) out.push(await appendIn(sql, m));
      await settleFound(sql, out);
      return out;
    });
  }
  const taken = await db.tx((sql) => take(sql, messages));
  const out: Appended[] = [];
  try {
    while (out.length < messages.length) {
      const slice = messages.slice(out.length, out.length + APPEND_SLICE_MESSAGES);
      const last = out.length + slice.length === messages.length;
      // A transaction retried starts again from the seqs it began with.
      const { appended, next } = await db.tx(async (sql) => {
        const next = new Map([...taken].map(([roomId, t]) => [roomId, t.next]));
        const appended: Appended[] = [];
        for (const m of slice) {
          const at = await appendAt(sql, m, next.get(m.roomId)!);
          if (at.inserted) next.set(m.roomId, next.get(m.roomId)! + 1);
          appended.push({ message: at.message, duplicate: !at.inserted });
        }
        if (last) await settle(sql, taken, next, [...out, ...appended]);
        return { appended, next };
      });
      for (const [roomId, seq] of next) taken.get(roomId)!.next = seq;
      out.push(...appended);
    }
  } catch (err) {
    await db.tx((sql) => abandon(sql, taken)).catch(() => undefined);
    throw err;
  }
  return out;
}

/** Takes the seqs `messages` need in each room (room_seq raised past them) and lists their ranges unsettled. */
async function take(sql: Sql, messages: NewMessage[]): Promise<Map<string, Taken>> {
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m.roomId, (counts.get(m.roomId) ?? 0) + 1);
  const taken = new Map<string, Taken>();
  const now = new Date().toISOString();
  for (const [roomId, n] of counts) {
    const { rows } = await sql.query(
      'INSERT INTO room_seq (room_id, seq) VALUES ($1, $2) ON CONFLICT (room_id) DO UPDATE SET seq = room_seq.seq + excluded.seq RETURNING seq',
      [roomId, n],
    );
    const to = rows[0].seq as number;
    const range = await sql.query('INSERT INTO unsettled_seqs (room_id, from_seq, to_seq, started_at) VALUES ($1, $2, $3, $4) RETURNING id', [
      roomId,
      to - n + 1,
      to,
      now,
    ]);
    taken.set(roomId, { id: range.rows[0].id as number, next: to - n + 1, to });
  }
  return taken;
}

/** The last transaction: the batch's ranges go, seqs not used go back, and ranges holding a message it found go too. */
async function settle(sql: Sql, taken: Map<string, Taken>, next: Map<string, number>, appended: Appended[]): Promise<void> {
  for (const [roomId, t] of taken) {
    await sql.query('DELETE FROM unsettled_seqs WHERE id = $1', [t.id]);
    const used = next.get(roomId)! - 1;
    if (used < t.to) await sql.query('UPDATE room_seq SET seq = $1 WHERE room_id = $2 AND seq = $3', [used, roomId, t.to]);
  }
  await settleFound(sql, appended);
}

/** Deletes every unsettled range holding a message the batch found stored already (left by the same batch before, failed or stopped). */
async function settleFound(sql: Sql, appended: Appended[]): Promise<void> {
  const found = appended.filter((a) => a.duplicate).map((a) => a.message);
  if (!found.length) return;
  await sql.query(
    `DELETE FROM unsettled_seqs u USING unnest($1::text[], $2::bigint[]) AS f (room_id, seq)
      WHERE u.room_id = f.room_id AND f.seq BETWEEN u.from_seq AND u.to_seq`,
    [found.map((m) => m.roomId), found.map((m) => m.seq)],
  );
}

/** The batch failed: a range none of whose rows is left (their thread deleted meanwhile) goes; the others stay unread. */
async function abandon(sql: Sql, taken: Map<string, Taken>): Promise<void> {
  for (const [roomId, t] of taken) {
    await sql.query(
      'DELETE FROM unsettled_seqs u WHERE u.id = $1 AND NOT EXISTS (SELECT 1 FROM messages WHERE room_id = $2 AND seq BETWEEN u.from_seq AND u.to_seq)',
      [t.id, roomId],
    );
  }
}
