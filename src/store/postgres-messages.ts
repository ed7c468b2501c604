/**
 * Appending messages in the PostgreSQL store. The room's next seq comes from an upsert of its
 * `room_seq` row, which row-locks it until the transaction ends: appends to one room queue there
 * from every node, so seqs are gapless and the duplicate check after it sees every earlier append.
 * A message for a thread that no longer exists is refused (ERR_THREAD_NOT_FOUND); one for a thread
 * merged meanwhile is stored in the thread that absorbed it; one whose thread is archived and leads
 * to no active thread is refused (ERR_THREAD_ARCHIVED, see takesNoMessages).
 */
import { errors } from '../errors.js';
import type { Message } from '../protocol/messages.js';
import { placeholders, type Sql } from './postgres-db.js';
import { MESSAGE_COLUMNS, messageValues, newMessage, rowToMessage } from './rows.js';
import type { NewMessage } from './types.js';
import { MAX_MERGE_HOPS, takesNoMessages } from './thread-survivor.js';

/**
 * Stores `m` with its room's next seq; call inside a transaction. A message whose (room, author,
 * clientId) is stored already is returned instead, duplicate, and the seq taken is given back;
 * so is one whose thread is gone or archived since, rather than refused.
 */
export async function appendIn(sql: Sql, m: NewMessage): Promise<{ message: Message; duplicate: boolean }> {
  // The thread's row is share-locked until this transaction ends, so a deleteThread or a merge
  // (which lock it for update) either sees this message and deletes or moves it, or ran first: then
  // the row read after the wait says so, and the message is refused or follows the merge.
  let threadId = m.threadId;
  let seq: number;
  for (;;) {
    const { rows } = await sql.query(
      `WITH thread AS (SELECT status FROM threads WHERE id = $2 FOR KEY SHARE)
       INSERT INTO room_seq (room_id, seq) SELECT $1, 1 FROM thread WHERE status = 'active'
       ON CONFLICT (room_id) DO UPDATE SET seq = room_seq.seq + 1 RETURNING seq`,
      [m.roomId, threadId],
    );
    if (rows.length) {
      seq = rows[0].seq as number;
      break;
    }
    // Not active: the thread that absorbed it, share-locked as active, so the seq is taken there next.
    try {
      threadId = await activeThreadLocked(sql, m.threadId, threadId);
    } catch (err) {
      // A resend of a message stored before its thread went (moved away by a split, say) is that
      // message, as SQLite finds it first: looked for only here, off the append's common path.
      const dup = m.clientId ? await storedUnder(sql, m) : null;
      if (dup) return { message: dup, duplicate: true };
      throw err;
    }
  }
  const stored = await insertUnlessStored(sql, m, newMessage(threadId === m.threadId ? m : { ...m, threadId }, seq));
  if (stored.inserted) return { message: stored.message, duplicate: false };
  // A resent message. The room's row is still locked by this transaction, so nothing took a seq since.
  await sql.query('UPDATE room_seq SET seq = seq - 1 WHERE room_id = $1', [m.roomId]);
  return { message: stored.message, duplicate: true };
}

/**
 * Stores `m` with `seq`, a seq its batch took ahead (postgres-unsettled.ts), without the room's
 * `room_seq` row, which live appends lock; call inside a transaction. `inserted` false: `message`
 * is the one stored under its clientId already, and `seq` is still free.
 */
export async function appendAt(sql: Sql, m: NewMessage, seq: number): Promise<{ message: Message; inserted: boolean }> {
  let threadId: string;
  try {
    threadId = await activeThreadLocked(sql, m.threadId);
  } catch (err) {
    // As appendIn: a message stored before its thread went is that message.
    const dup = m.clientId ? await storedUnder(sql, m) : null;
    if (dup) return { message: dup, inserted: false };
    throw err;
  }
  return insertUnlessStored(sql, m, newMessage(threadId === m.threadId ? m : { ...m, threadId }, seq));
}

/** Inserts `message` (made from `m`) unless `m`'s clientId is stored already: then that one, `inserted` false. */
async function insertUnlessStored(sql: Sql, m: NewMessage, message: Message): Promise<{ message: Message; inserted: boolean }> {
  const values = messageValues(message);
  const inserted = await sql.query(
    `INSERT INTO messages (${MESSAGE_COLUMNS}) VALUES (${placeholders(values.length)})
     ON CONFLICT (room_id, author_id, client_id) WHERE client_id IS NOT NULL DO NOTHING`,
    values,
  );
  return inserted.rowCount ? { message, inserted: true } : { message: (await storedUnder(sql, m))!, inserted: false };
}

/** The message stored under `m`'s room, author and clientId, if any. */
async function storedUnder(sql: Sql, m: NewMessage): Promise<Message | null> {
  const { rows } = await sql.query('SELECT * FROM messages WHERE room_id = $1 AND author_id = $2 AND client_id = $3', [m.roomId, m.author.id, m.clientId]);
  return rows.length ? rowToMessage(rows[0]) : null;
}

/**
 * The active thread a row written for `requested` is filed in (inside a transaction), walking from
 * `from` along merged_into: that thread when it is active, else the thread that absorbed it, through
 * merges of merges, where the merge moved its messages and memory. Each row read is share-locked
 * until the transaction ends, so the thread returned stays active until then (a merge or a
 * deleteThread locks it for update). ERR_THREAD_NOT_FOUND when a thread on the way is gone;
 * ERR_THREAD_ARCHIVED (takesNoMessages) when the walk ends on an archived thread or passes
 * MAX_MERGE_HOPS: in the archived shell nobody would read or search the row.
 */
export async function activeThreadLocked(sql: Sql, requested: string, from = requested): Promise<string> {
  let threadId = from;
  for (let hops = 0; ; hops++) {
    const { rows } = await sql.query('SELECT status, merged_into FROM threads WHERE id = $1 FOR KEY SHARE', [threadId]);
    if (!rows.length) throw new errors.ERR_THREAD_NOT_FOUND(requested);
    if (rows[0].status === 'active') return threadId;
    const next = rows[0].merged_into as string | null;
    if (!next || hops >= MAX_MERGE_HOPS) throw takesNoMessages(requested, next);
    threadId = next;
  }
}
