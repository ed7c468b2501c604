/**
 * Appending messages in the PostgreSQL store. The room's next seq comes from an upsert of its
 * `room_seq` row, which row-locks it until the transaction ends: appends to one room queue there
 * from every node, so seqs are gapless and the duplicate check after it sees every earlier append.
 * A message for a thread that no longer exists is refused (ERR_THREAD_NOT_FOUND).
 */
import { errors } from '../errors.js';
import type { Message } from '../protocol/messages.js';
import { placeholders, type Sql } from './postgres-db.js';
import { MESSAGE_COLUMNS, messageValues, newMessage, rowToMessage } from './rows.js';
import type { NewMessage } from './types.js';

/**
 * Stores `m` with its room's next seq; call inside a transaction. A message whose (room, author,
 * clientId) is stored already is returned instead, duplicate, and the seq taken is given back.
 */
export async function appendIn(sql: Sql, m: NewMessage): Promise<{ message: Message; duplicate: boolean }> {
  // The thread's row is share-locked until this transaction ends, so a deleteThread (which locks it
  // for update) either sees this message and deletes it, or ran first and this one is refused.
  const { rows } = await sql.query(
    `WITH thread AS (SELECT 1 FROM threads WHERE id = $2 FOR KEY SHARE)
     INSERT INTO room_seq (room_id, seq) SELECT $1, 1 FROM thread
     ON CONFLICT (room_id) DO UPDATE SET seq = room_seq.seq + 1 RETURNING seq`,
    [m.roomId, m.threadId],
  );
  if (!rows.length) throw new errors.ERR_THREAD_NOT_FOUND(m.threadId);
  const seq = rows[0].seq as number;
  const message = newMessage(m, seq);
  const values = messageValues(message);
  const inserted = await sql.query(
    `INSERT INTO messages (${MESSAGE_COLUMNS}) VALUES (${placeholders(values.length)})
     ON CONFLICT (room_id, author_id, client_id) WHERE client_id IS NOT NULL DO NOTHING`,
    values,
  );
  if (inserted.rowCount) return { message, duplicate: false };
  // A resent message. The room's row is still locked by this transaction, so nothing took a seq since.
  await sql.query('UPDATE room_seq SET seq = seq - 1 WHERE room_id = $1', [m.roomId]);
  const dup = await sql.query('SELECT * FROM messages WHERE room_id = $1 AND author_id = $2 AND client_id = $3', [m.roomId, m.author.id, m.clientId]);
  return { message: rowToMessage(dup.rows[0]), duplicate: true };
}
