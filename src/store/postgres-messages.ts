/**
 * Appending messages in the PostgreSQL store. The room's next seq comes from an upsert of its
 * `room_seq` row, which row-locks it until the transaction ends: appends to one room queue there
 * from every node, so seqs are gapless and the duplicate check after it sees every earlier append.
 */
import { randomUUID } from 'node:crypto';
import type { Message } from '../protocol/messages.js';
import type { Sql } from './postgres-db.js';
import { rowToMessage } from './rows.js';
import type { NewMessage } from './types.js';

/**
 * Stores `m` with its room's next seq; call inside a transaction. A message whose (room, author,
 * clientId) is stored already is returned instead, duplicate, and the seq taken is given back.
 */
export async function appendIn(sql: Sql, m: NewMessage): Promise<{ message: Message; duplicate: boolean }> {
  const { rows } = await sql.query(
    `INSERT INTO room_seq (room_id, seq) VALUES ($1, 1) ON CONFLICT (room_id) DO UPDATE SET seq = room_seq.seq + 1 RETURNING seq`,
    [m.roomId],
  );
  const seq = rows[0].seq as number;
  const message: Message = {
    id: randomUUID(),
    seq,
    roomId: m.roomId,
    threadId: m.threadId,
    author: m.author,
    text: m.text,
    ts: m.ts ?? new Date().toISOString(),
    ...(m.clientId ? { clientId: m.clientId } : {}),
    ...(m.replyTo ? { replyTo: m.replyTo } : {}),
    ...(m.sources ? { sources: m.sources } : {}),
  };
  const inserted = await sql.query(
    `INSERT INTO messages (room_id, seq, id, thread_id, author_id, author_name, author_kind, text, ts, client_id, reply_to, sources)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (room_id, author_id, client_id) WHERE client_id IS NOT NULL DO NOTHING`,
    [
      message.roomId,
      seq,
      message.id,
      message.threadId,
      m.author.id,
      m.author.name,
      m.author.kind,
      message.text,
      message.ts,
      m.clientId ?? null,
      m.replyTo ?? null,
      m.sources ? JSON.stringify(m.sources) : null,
    ],
  );
  if (inserted.rowCount) return { message, duplicate: false };
  // A resent message. The room's row is still locked by this transaction, so nothing took a seq since.
  await sql.query('UPDATE room_seq SET seq = seq - 1 WHERE room_id = $1', [m.roomId]);
  const dup = await sql.query('SELECT * FROM messages WHERE room_id = $1 AND author_id = $2 AND client_id = $3', [m.roomId, m.author.id, m.clientId]);
  return { message: rowToMessage(dup.rows[0]), duplicate: true };
}
