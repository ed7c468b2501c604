/**
 * Memory chunk writes of the PostgreSQL store, inside the caller's transaction: a chunk with its
 * lines (postgres-text.ts) and its vector, deleted or moved with them.
 */
import { errors } from '../errors.js';
import { wordsKey } from '../memory/repeats.js';
import { scopeOf } from '../memory/scopes.js';
import type { MemoryChunk, NewMemoryChunk } from '../memory/types.js';
import { lockCovering, placeholders, type Sql } from './postgres-db.js';
import { insertLines, rescopeLines } from './postgres-text.js';
import { MEMORY_CHUNK_COLUMNS, memoryChunkValues, rowToStoredMemoryChunk } from './rows.js';
import { ClaimedMessages, ForgottenExchange, MovedMessages, movedCited, refusesForgotten, type MemoryFiling, type StoredMemoryChunk } from './types.js';
import { activeThreadLocked } from './postgres-messages.js';

/**
 * Stores a chunk with its lines; `now` is its createdAt, `updatedAt` (default `now`) when it was
 * last seen; `forgetMark` the one its row keeps (memoryChunkValues).
 */
export async function insertMemory(
  sql: Sql,
  c: NewMemoryChunk,
  now: string,
  vector?: { vector: Float32Array; model: string },
  updatedAt = now,
  forgetMark: number | null = null,
): Promise<MemoryChunk> {
  const values = memoryChunkValues(c, now, updatedAt, vector, forgetMark);
  const { rows } = await sql.query(`INSERT INTO memory_chunks (${MEMORY_CHUNK_COLUMNS}) VALUES (${placeholders(values.length)}) RETURNING id`, values);
  const id = rows[0].id as number;
  await insertLines(sql, id, c.text, scopeOf(c));
  // `live` only asked the filing to claim (claimMessages): no row keeps it, nor the chunk returned.
  const { live, ...stored } = c;
  return { ...stored, id, createdAt: now, updatedAt };
}

/**
 * insertMemory into the thread a message for `c.threadId` would go to (appendIn): the active thread
 * activeThreadLocked walks to, its row share-locked as appendIn locks it, so a deleteThread or a
 * merge on any node either sees this chunk and deletes or moves it, or ran first and the chunk is
 * refused or follows the merge.
 */
export async function insertMemoryInThread(sql: Sql, c: NewMemoryChunk, now: string, vector?: { vector: Float32Array; model: string }): Promise<MemoryChunk> {
  const forgetMark = await refuseForgotten(sql, c);
  // The lines' scope names the thread (insertLines), so the chunk is filed before they are written.
  const filed = await filedChunk(sql, c);
  await claimMessages(sql, c, now);
  return insertMemory(sql, filed, now, vector, now, forgetMark);
}

/**
 * Claims a live window's messages (NewMemoryChunk.live); call inside its filing's transaction.
 * ClaimedMessages, rolling the filing back, when a live window filed before holds any of them. Two
 * nodes claiming at once: the second's insert waits on the first's rows, then skips those it committed.
 */
async function claimMessages(sql: Sql, c: NewMemoryChunk, now: string): Promise<void> {
  if (!c.live || !c.messageIds.length) return;
  const { rows } = await sql.query(
    'INSERT INTO memory_claims (message_id, claimed_at) SELECT unnest($1::text[]), $2 ON CONFLICT (message_id) DO NOTHING RETURNING message_id',
    [c.messageIds, now],
  );
  if (rows.length === c.messageIds.length) return;
  const taken = new Set(rows.map((r) => r.message_id as string));
  throw new ClaimedMessages(c.messageIds.filter((id) => !taken.has(id)));
}

/** Store.pruneMemoryClaims. */
export async function pruneClaimsBefore(sql: Sql, before: string): Promise<number> {
  return (await sql.query('DELETE FROM memory_claims WHERE claimed_at < $1', [before])).rowCount ?? 0;
}

/**
 * Store.fileMemoryChunk; call inside a transaction. The repeat is looked for once the thread the
 * chunk goes to is share-locked (insertMemoryInThread): a merge into or of that thread locks it
 * for update, so none commits between the lookup and the insert, and one that committed before is
 * seen by the lookup (each statement reads what was committed when it began). The share lock does
 * not exclude another node filing the same words into the same thread: both looked, found
 * nothing and inserted. So the lookup also waits for lockFiling, which one filing of those words
 * into that thread holds until it commits; the next then sees its chunk.
 */
export async function fileMemoryInThread(
  sql: Sql,
  c: NewMemoryChunk,
  now: string,
  vector: { vector: Float32Array; model: string } | undefined,
  notRepeats: number[],
): Promise<MemoryFiling> {
  const forgetMark = await refuseForgotten(sql, c);
  const filed = await filedChunk(sql, c);
  await lockFiling(sql, filed);
  const repeat = await findRepeatIn(sql, filed, forgetMark);
  if (repeat && !notRepeats.includes(repeat.id)) return { repeat };
  await claimMessages(sql, c, now);
  return { stored: await insertMemory(sql, filed, now, vector, now, forgetMark) };
}

/**
 * Takes the transaction-scoped advisory lock of `c`'s words (wordsKey) in the thread it is filed
 * in: filings of other words or into other threads go on. It adds no deadlock with merges: it is
 * taken after the thread's key-share locks, a filing waiting for it holds only those, and its
 * holder then only inserts, which conflicts with none of them but a live window's claims
 * (claimMessages): those wait only on another filing's claims, whose holder never waits for this
 * lock afterwards; two filings claiming shared messages in different orders may deadlock, which
 * PostgreSQL breaks and `tx` retries (the retry finds them claimed). A hash collision only queues
 * two unrelated filings.
 */
async function lockFiling(sql: Sql, c: NewMemoryChunk): Promise<void> {
  await sql.query("SELECT pg_advisory_xact_lock(hashtextextended('salon:memory-filing:' || $1 || ':' || $2, 0))", [c.threadId, wordsKey(c.text)]);
}

/** The transaction-scoped advisory lock of `owner`'s forget mark in `roomId`: shared by the filings that read it, exclusive for markForgetIn. */
function forgetLock(shared: boolean): string {
  return `SELECT pg_advisory_xact_lock${shared ? '_shared' : ''}(hashtextextended('salon:private-forget:' || $1 || ':' || $2, 0))`;
}

/** `owner`'s forget mark in `roomId` (Store.privateForgetMark), 0 if they never forgot there. */
export async function forgetMarkOf(sql: Sql, owner: string, roomId: string): Promise<number> {
  const { rows } = await sql.query('SELECT mark FROM private_forgets WHERE owner = $1 AND room_id = $2', [owner, roomId]);
  return rows.length ? Number(rows[0].mark) : 0;
}

/**
 * Store.markPrivateForget; call inside a transaction. The exclusive lock waits for every filing
 * that read the old mark (they hold the shared one until they commit), so the caller's read of the
 * store after this commits finds their chunks; a filing after it reads the new mark.
 */
export async function markForgetIn(sql: Sql, owner: string, roomId: string): Promise<number> {
  await sql.query(forgetLock(false), [owner, roomId]);
  const { rows } = await sql.query(
    'INSERT INTO private_forgets (owner, room_id, mark) VALUES ($1, $2, 1) ON CONFLICT (owner, room_id) DO UPDATE SET mark = private_forgets.mark + 1 RETURNING mark',
    [owner, roomId],
  );
  return Number(rows[0].mark);
}

/**
 * Throws ForgottenExchange for a private exchange asked before its asker's last forget in its
 * room (refusesForgotten); a public one takes no lock. A row lock would not do: a member's first forget inserts the mark's row, which a filing reading
 * it meanwhile could not have locked; the advisory lock exists before the row does. Returns the
 * mark the chunk's row keeps: the one checked, or null.
 */
async function refuseForgotten(sql: Sql, c: NewMemoryChunk): Promise<number | null> {
  if (!refusesForgotten(c)) return null;
  if (c.forgetMark === null) throw new ForgottenExchange(c.roomId);
  await sql.query(forgetLock(true), [c.owner, c.roomId]);
  if ((await forgetMarkOf(sql, c.owner!, c.roomId)) !== c.forgetMark) throw new ForgottenExchange(c.roomId);
  return c.forgetMark as number;
}

/**
 * The chunk in the thread it goes to (activeThreadLocked); MovedMessages when some of the messages
 * it must follow (movedCited) are in another thread. A split of that thread locks it for update, so one
 * that commits after this read waits for the filing and finds its chunk (ThreadChange.memoryRead).
 */
async function filedChunk(sql: Sql, c: NewMemoryChunk): Promise<NewMemoryChunk> {
  const threadId = await activeThreadLocked(sql, c.threadId);
  const cited = movedCited(c);
  if (cited.length) {
    const { rows } = await sql.query('SELECT id, thread_id FROM messages WHERE id = ANY($1::text[]) AND thread_id <> $2', [cited, threadId]);
    if (rows.length) throw new MovedMessages(rows.map((r) => ({ id: r.id as string, threadId: r.thread_id as string })));
  }
  return threadId === c.threadId ? c : { ...c, threadId };
}

/**
 * The first chunk (by id) of `c`'s thread and scope (privilege and owner) whose words are its
 * (src/memory/repeats.ts), if any: fileMemoryInThread's lookup, in the thread it files in. A row
 * filed under an older forget mark than `forgetMark`, the one the chunk's row will keep, is no
 * repeat: filed before a forget that is still deleting (its scan would delete it, refreshed, and
 * the chunk with it).
 */
async function findRepeatIn(sql: Sql, c: NewMemoryChunk, forgetMark: number | null): Promise<StoredMemoryChunk | null> {
  const { rows } = await sql.query(
    // A public chunk's owner is only its asker (kept for a privileged thread); scope is privilege and, when private, owner.
    `SELECT * FROM memory_chunks WHERE words_key = $1 AND thread_id = $2 AND privileged = $3 AND (privileged = 0 OR coalesce(owner, '') = $4)
       AND ($5::bigint IS NULL OR forget_mark IS NULL OR forget_mark >= $5) ORDER BY id LIMIT 1`,
    [wordsKey(c.text), c.threadId, c.privileged ? 1 : 0, c.owner ?? '', forgetMark],
  );
  return rows.length ? rowToStoredMemoryChunk(rows[0]) : null;
}

/** Deletes chunks; their lines go with them (foreign key). */
export async function deleteMemory(sql: Sql, ids: number[]): Promise<void> {
  if (ids.length) await sql.query('DELETE FROM memory_chunks WHERE id = ANY($1::bigint[])', [ids]);
}

/** Moves chunks to another thread, their lines to its scope; returns the id of the first chunk that is gone, if one is. */
export async function moveMemory(sql: Sql, ids: number[], threadId: string, roomId: string): Promise<number | undefined> {
  for (const id of ids) {
    const { rows } = await sql.query('UPDATE memory_chunks SET thread_id = $1, room_id = $2 WHERE id = $3 RETURNING privileged, owner', [threadId, roomId, id]);
    if (!rows.length) return id;
    await rescopeLines(sql, id, scopeOf({ threadId, privileged: rows[0].privileged === 1, owner: rows[0].owner }));
  }
  return undefined;
}

/**
 * Store.pruneMemory; call inside a transaction. The threads it changes are locked first, in id
 * order (lockThreadsOfMemory): those holding the expired chunks, and `threadId`, whose chunks over
 * the cap it locks next. Those were locked without their thread, newest first, while a merge
 * moving them locks its threads and then the chunks in id order: each waited for a chunk the
 * other held.
 */
export async function pruneIn(sql: Sql, threadId: string | null, maxPerThread: number, olderThan: string, limit?: number): Promise<number[]> {
  const expired = await sql.query('SELECT id FROM memory_chunks WHERE updated_at < $1 ORDER BY updated_at, id LIMIT $2', [olderThan, limit ?? null]);
  const candidates = expired.rows.map((r) => r.id as number);
  await lockThreadsOfMemory(sql, candidates, 'NO KEY UPDATE', threadId);
  const ids = await deleteExpired(sql, candidates, olderThan);
  if (threadId !== null && (limit === undefined || ids.length < limit)) {
    const over = await sql.query(
      'SELECT id FROM memory_chunks WHERE thread_id = $1 AND updated_at >= $2 ORDER BY updated_at DESC, id DESC OFFSET $3 FOR UPDATE',
      [threadId, olderThan, maxPerThread],
    );
    const oldestFirst = over.rows.map((r) => r.id as number).reverse();
    const dropped = limit === undefined ? oldestFirst : oldestFirst.slice(0, limit - ids.length);
    await deleteMemory(sql, dropped);
    ids.push(...dropped);
  }
  return ids;
}

/**
 * Deletes the chunks of `candidates` still expired, oldest first, and gives the threads that held
 * them a new version, as a thread change that deletes memory does (postgres-threads.ts): a fusion
 * or compaction that read them before must not commit a copy or summary of what expired. The
 * threads are locked before (pruneIn), in id order, as every change locks them, but only against
 * updates: the appends and chunks that share-lock a thread's key go on. A chunk a repeat
 * refreshed meanwhile stays.
 */
async function deleteExpired(sql: Sql, candidates: number[], olderThan: string): Promise<number[]> {
  if (!candidates.length) return [];
  const { rows } = await sql.query('DELETE FROM memory_chunks WHERE id = ANY($1::bigint[]) AND updated_at < $2 RETURNING id, thread_id', [
    candidates,
    olderThan,
  ]);
  if (!rows.length) return [];
  await sql.query('UPDATE threads SET version = version + 1 WHERE id = ANY($1::text[])', [[...new Set(rows.map((r) => r.thread_id as string))]]);
  const deleted = new Set(rows.map((r) => r.id as number));
  return candidates.filter((id) => deleted.has(id));
}

/**
 * Locks the threads that hold the chunks `ids`, and `alsoThread`, in id order, and returns their
 * ids; call inside a transaction, before the chunks are touched. Every thread change locks its
 * threads in id order and then its chunks, so a deletion of memory must lock, before it deletes
 * anything, every thread it will give a new version. The threads are read in the locking statement's snapshot: a merge or
 * split holding one of them may move a chunk and commit while the lock waits, and the deletion
 * then found that chunk in a thread it had not locked and updated that thread while holding the
 * deleted chunks, a deadlock against any change holding that thread and waiting for one of them.
 * So the threads are read again once locked; if a chunk has moved, the locks are given back (a
 * savepoint) and taken again, in order, of the threads that hold the chunks now. Once this
 * returns, no chunk of `ids` can leave its thread before the transaction ends: a move needs its
 * thread's lock.
 */
export async function lockThreadsOfMemory(sql: Sql, ids: number[], strength: 'UPDATE' | 'NO KEY UPDATE', alsoThread: string | null = null): Promise<string[]> {
  if (!ids.length) {
    if (alsoThread === null) return [];
    return (await sql.query(`SELECT id FROM threads WHERE id = $1 FOR ${strength}`, [alsoThread])).rows.map((r) => r.id as string);
  }
  return lockCovering(
    sql,
    async () => {
      const { rows } = await sql.query(
        `SELECT id FROM threads WHERE id IN (SELECT thread_id FROM memory_chunks WHERE id = ANY($1::bigint[])) OR id = $2 ORDER BY id FOR ${strength}`,
        [ids, alsoThread],
      );
      return rows.map((r) => r.id as string);
    },
    // A chunk whose thread row is gone changes no version: it cannot count as moved.
    async (locked) =>
      Boolean(
        (
          await sql.query(
            'SELECT 1 FROM memory_chunks c JOIN threads t ON t.id = c.thread_id WHERE c.id = ANY($1::bigint[]) AND c.thread_id <> ALL($2::text[]) LIMIT 1',
            [ids, locked],
          )
        ).rowCount,
      ),
  );
}
