/**
 * A thread change that creates a thread with a large memory (a fusion: ~17,000 chunks and 160,000
 * lines) would hold the event loop for seconds in one transaction: better-sqlite3 is synchronous,
 * and so is every room's next message. Instead the new thread's chunks are written first, a slice
 * per transaction with an event-loop turn between slices, under the thread's id, which is listed
 * in `memory_staging` meanwhile (migration 9). Nobody reads them: the thread has no row yet, so no
 * thread read, ask or line search names it, and the whole-table readers (the index load,
 * retention) leave staged threads out. The change itself then commits in one short transaction
 * that checks the versions read, creates the thread (which is what makes its memory visible) and
 * drops the staging entry: readers see all of it or nothing, and a racing operation still gets
 * ERR_THREAD_CHANGED. On any failure the staged rows are deleted again; a process that died
 * meanwhile leaves an entry that the store deletes, with its rows, when it next opens.
 *
 * Deleting a thread with a large memory or many messages runs the other way: one transaction
 * deletes the thread (its bridges and history) and lists its id here, which hides its memory as
 * above and its messages from the room's history (the thread's own reads go through a thread that
 * is gone); both are then deleted in slices.
 */
import type Database from 'better-sqlite3';
import { errors } from '../errors.js';
import { sliceTurn } from '../slice-turns.js';
import type { Row } from './rows.js';
import { SliceBudget } from './slice-budget.js';
import type { NewMemoryEntry, ThreadChange, ThreadChangeResult } from './types.js';

/** Below this many chunks for new threads, the change is simply one transaction. */
export const STAGE_MIN_CHUNKS = 512;
/** From this many messages on, a deleted thread's messages are deleted in slices too. */
export const STAGE_MIN_MESSAGES = 4_096;
/** Chunks written in full per transaction at most (~10–20 ms with their vectors and lines on a quiet machine). */
export const STAGE_SLICE = 256;
/**
 * How long one transaction of staged writes may hold the event loop, its commit included, as the
 * budget sees it (SliceBudget). STAGE_SLICE alone held it 40–80 ms a slice on a busy machine
 * (docs/benchmarks.md, "Forty-ninth session"): a slice now also stops after the step that reaches
 * the budget.
 */
export const STAGE_SLICE_MS = 12;
/** A step of a staged slice, between two looks at the clock: 32 chunks in full, or 256 copies. */
const STAGE_STEP = 32;
/**
 * Copies (`copyOf`) a transaction may write instead of one chunk in full: a copy is one row of one
 * INSERT … SELECT, without vector, lines or text (~250 bytes). A fusion writes ~14,000 of them,
 * and every commit rewrites the index pages it touched, so fewer, larger transactions of copies
 * cost less (2,048 copies: ~20–40 ms).
 */
export const COPIES_PER_FULL_CHUNK = 8;
/**
 * How long one transaction of deleteStaged may hold the event loop, its commit included, as the
 * budget sees it (SliceBudget). Below the 20 ms that anything on the event loop may hold it: a
 * slice stops only after the row that reaches the budget, and a commit may cost more than the
 * estimate. At 15 ms and four rows between two looks at the clock, a deleted fusion source's
 * slices took 11–16 ms of main-thread CPU at the median, 17–20 ms at the 90th percentile; at 10 ms
 * a row at a time, 5–8 and 10–13 ms. Single statements of 20–47 ms (an FTS5 commit, a row whose
 * heir trigger writes lines) remained (docs/benchmarks.md, "Thirty-fifth session"): FTS5's merges,
 * now in slices of their own between these (sqlite-line-merges.ts, "Thirty-sixth session").
 */
export const DELETE_SLICE_MS = 10;
/** Messages deleted by one statement of a slice (~2–3 ms here, and about as much again at the commit). */
const DELETE_MESSAGES_STEP = 128;
/**
 * The start a deleted thread's entry is given: older than any STALE_STAGING_MS, so whichever
 * process opens the store next finishes the deletion (no process is writing those rows).
 */
export const DELETION_STARTED_AT = new Date(0).toISOString();
/** A staging entry this old belongs to a process that died: the store deletes it at open. */
export const STALE_STAGING_MS = 3_600_000;

/** What staging needs of the SQLite store. */
export interface StagingHost {
  db: Database.Database;
  sql(text: string): Database.Statement;
  /** Inserts chunks with their lines (inside a transaction); returns their ids, in order. */
  insertMemory(entries: NewMemoryEntry[], at: string): number[];
  /** Deletes chunks with their lines (inside a transaction). */
  deleteMemory(ids: number[]): void;
  /**
   * deleteMemory a row at a time, inside one transaction: `row` deletes a chunk, `done` then its
   * lines, all together (FTS5 takes them best in rowid order).
   */
  deletingMemory(): { row(id: number): void; done(): void };
  /** Applies a change (inside a transaction). */
  apply(change: ThreadChange): ThreadChangeResult;
  /**
   * The full-text index's merges (sqlite-line-merges.ts), run here between this module's slices
   * (`slice`: one in its own transaction, true while there may be more), within `drive`.
   */
  merges: { slice(): boolean; drive<T>(work: () => Promise<T>): Promise<T> };
  /**
   * Between a deletion's slices: null to go on, or a promise to await first, while the checkpoint
   * worker catches up with a long WAL (WalPacer, sqlite-wal-pace.ts; always null without a worker).
   */
  pace(): Promise<void> | null;
}

/**
 * A turn of the event loop between two slices that passes its poll phase (sockets read, a worker's
 * messages) and its timers, and that no other sliced work's slice shares (sliceTurn: the vector
 * index's removal of the deleted thread's rows runs in turns of its own beside these).
 */
const nextTurn = sliceTurn;

/**
 * A slice of the full-text index's merges after one of the caller's own slices, each in a turn of
 * its own: a slice that writes lines leaves segments to merge (FTS5 no longer merges them as it
 * writes: sqlite-line-merges.ts), and merged at this pace they stay as few as before. A turn after
 * the merge slice too, whatever it found: one that merged up to its budget and then found nothing
 * more held the loop together with the caller's next slice.
 */
async function mergeTurn(host: StagingHost): Promise<void> {
  await nextTurn();
  try {
    host.merges.slice();
  } catch {
    // Not this work's failure (another process holding the write lock, say): the timer merges later.
  }
  await nextTurn();
}

/**
 * Between two slices of a deletion: a merge slice (mergeTurn), then a wait while the WAL is long,
 * so that the writer never checkpoints it itself (sqlite-wal-pace.ts).
 */
async function deletionTurn(host: StagingHost): Promise<void> {
  await mergeTurn(host);
  const paced = host.pace();
  if (paced) await paced;
}

/** The positions in `change.addMemory` of chunks for threads the change creates (what may be staged). */
export function stageable(change: ThreadChange): number[] {
  const created = new Set((change.createThreads ?? []).map((t) => t.id));
  return (change.addMemory ?? []).flatMap((m, i) => (created.has(m.chunk.threadId) ? [i] : []));
}

/** Applies `change`, writing the chunks at `staged` (positions in addMemory) in slices first; see the module comment. */
export async function applyStaged(host: StagingHost, change: ThreadChange, staged: number[]): Promise<ThreadChangeResult> {
  return host.merges.drive(() => applyStagedNow(host, change, staged));
}

async function applyStagedNow(host: StagingHost, change: ThreadChange, staged: number[]): Promise<ThreadChangeResult> {
  const entries = change.addMemory ?? [];
  const perThread = new Map<string, number>();
  for (const i of staged) perThread.set(entries[i].chunk.threadId, (perThread.get(entries[i].chunk.threadId) ?? 0) + 1);
  host.db
    .transaction(() => {
      // Checked now as well as at the end: an operation that has already lost writes nothing.
      checkVersions(host, change.expect);
      for (const id of perThread.keys()) {
        if (host.sql('SELECT 1 FROM threads WHERE id = ?').get(id)) throw new errors.ERR_BAD_THREAD_OP(`thread ${id} exists already`);
        host.sql('INSERT INTO memory_staging (thread_id, started_at) VALUES (?, ?)').run(id, new Date().toISOString());
      }
    })
    .immediate();
  const ids: number[] = [];
  try {
    // The caller may have run for tens of milliseconds before this call: a turn before the first slice too.
    await nextTurn();
    const budget = new SliceBudget(STAGE_SLICE_MS);
    let steps = 0;
    // Slices of at most STAGE_SLICE's weight, each ending early once the budget is spent.
    const write = host.db.transaction(
      budget.timed((slice: number[][]) => {
        const written: number[] = [];
        steps = 0;
        for (const step of slice) {
          written.push(
            ...host.insertMemory(
              step.map((i) => entries[i]),
              change.at,
            ),
          );
          steps++;
          if (!budget.more(steps)) break;
        }
        return written;
      }),
    );
    const weight = (i: number) => (entries[i].copyOf === undefined ? COPIES_PER_FULL_CHUNK : 1);
    const pending = stepsOf(staged, weight, STAGE_STEP * COPIES_PER_FULL_CHUNK);
    while (pending.length) {
      const slice = pending.splice(0, (STAGE_SLICE * COPIES_PER_FULL_CHUNK) / (STAGE_STEP * COPIES_PER_FULL_CHUNK));
      const written = write.immediate(slice);
      budget.committed(steps);
      ids.push(...written);
      // The steps the budget left go first in the next slice.
      pending.unshift(...slice.slice(steps));
      await mergeTurn(host);
    }
    return host.db
      .transaction(() => {
        for (const [threadId, n] of perThread) {
          const { count } = host.sql('SELECT count(*) AS count FROM memory_chunks WHERE thread_id = ?').get(threadId) as Row;
          if (count !== n) throw new errors.ERR_THREAD_CHANGED(threadId);
          host.sql('DELETE FROM memory_staging WHERE thread_id = ?').run(threadId);
        }
        const inStaged = new Set(staged);
        const result = host.apply({ ...change, addMemory: entries.filter((_, i) => !inStaged.has(i)) });
        return { ...result, addedMemoryIds: mergeIds(entries.length, staged, ids, result.addedMemoryIds) };
      })
      .immediate();
  } catch (err) {
    await deleteStagedNow(host, [...perThread.keys()], ids);
    throw err;
  }
}

/** `positions` cut into consecutive runs of at most `budget` weight (each at least one position). */
function stepsOf(positions: number[], weight: (position: number) => number, budget: number): number[][] {
  const out: number[][] = [];
  let current: number[] = [];
  let used = 0;
  for (const p of positions) {
    const w = weight(p);
    if (current.length && used + w > budget) {
      out.push(current);
      current = [];
      used = 0;
    }
    current.push(p);
    used += w;
  }
  if (current.length) out.push(current);
  return out;
}

/**
 * Deletes rows listed under staging entries, then the entries: a failed change's staged rows, or a
 * deleted thread's large memory and messages (SqliteStore.deleteThread), whose originals copied
 * into other threads each hand their lines to an heir as they go (~1 s in one transaction for a
 * thread that fed a fusion). It starts a turn after its caller (whose transaction has just held the
 * event loop) and holds the loop about DELETE_SLICE_MS per transaction, its commit included
 * (SliceBudget), with a turn between, and waits between two while the WAL is long for the checkpoint
 * worker to catch up (`pace`: sqlite-wal-pace.ts).
 */
export async function deleteStaged(host: StagingHost, threadIds: string[], ids: number[], stopped: () => boolean = () => false): Promise<void> {
  return host.merges.drive(() => deleteStagedNow(host, threadIds, ids, stopped));
}

async function deleteStagedNow(host: StagingHost, threadIds: string[], ids: number[], stopped: () => boolean = () => false): Promise<void> {
  await nextTurn();
  // By time rather than by count: a row whose copies take its lines costs ~20 times one that has
  // none. Returns where the next slice starts, counted only once its transaction has committed.
  const rows = new SliceBudget(DELETE_SLICE_MS);
  // One row at a time between looks at the clock: a row costs from ~0.1 ms to several, and a step
  // of four such rows alone held the loop 30 ms. The rows' lines go after them, with the commit
  // (the budget learns what they cost a row).
  const drop = host.db.transaction((from: number) => {
    const deletion = host.deletingMemory();
    const at = rows.timed(() => {
      let next = from;
      do deletion.row(ids[next++]);
      while (next < ids.length && rows.more(next - from));
      return next;
    })(undefined);
    deletion.done();
    return at;
  });
  for (let from = 0; from < ids.length;) {
    if (stopped()) return;
    const next = drop.immediate(from);
    rows.committed(next - from);
    from = next;
    await deletionTurn(host);
  }
  // A deleted thread's messages (a thread that exists keeps its own); true while there may be more.
  const messages = new SliceBudget(DELETE_SLICE_MS);
  let steps = 0;
  const dropMessages = host.db.transaction(
    messages.timed((threadId: string) => {
      steps = 0;
      if (host.sql('SELECT 1 FROM threads WHERE id = ?').get(threadId)) return false;
      const some = host.sql('DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages WHERE thread_id = ? LIMIT ?)');
      let full: boolean;
      do {
        full = some.run(threadId, DELETE_MESSAGES_STEP).changes === DELETE_MESSAGES_STEP;
        steps++;
      } while (full && messages.more(steps));
      return full;
    }),
  );
  for (const id of threadIds) {
    for (;;) {
      const more = dropMessages.immediate(id);
      messages.committed(steps);
      // After the last slice too: the next thread's first, or the entry's transaction, in a turn of its own.
      await deletionTurn(host);
      if (!more) break;
      if (stopped()) return;
    }
  }
  host.db
    .transaction(() => {
      for (const id of threadIds) {
        // And any chunk written under the thread meanwhile by work begun before it went (a window stored late).
        const late = (host.sql('SELECT id FROM memory_chunks WHERE thread_id = ?').all(id) as Row[]).map((r) => r.id as number);
        if (late.length) host.deleteMemory(late);
        // A deleted thread's messages (none for a failed change's new thread), late ones too.
        if (!host.sql('SELECT 1 FROM threads WHERE id = ?').get(id)) host.sql('DELETE FROM messages WHERE thread_id = ?').run(id);
        host.sql('DELETE FROM memory_staging WHERE thread_id = ?').run(id);
      }
    })
    .immediate();
}

/**
 * Deletes what a process that died while staging or deleting left (entries started before
 * `before`), in slices as deleteStaged does: in one transaction at open, a thread of 200,000
 * messages held the write lock for 1.5 s, and a server writing to the same file waited that long
 * (better-sqlite3 waits synchronously) or failed past its busy timeout, each time a CLI command
 * opened the store while a large deletion was still going. `stopped` ends it between slices (the
 * store is closing); the entries left are taken up by the next open.
 */
export async function cleanStaleStaging(host: StagingHost, before: string, stopped: () => boolean): Promise<void> {
  const stale = (host.sql('SELECT thread_id FROM memory_staging WHERE started_at < ?').all(before) as Row[]).map((r) => r.thread_id as string);
  for (const threadId of stale) {
    if (stopped()) return;
    // A thread that exists committed (its entry is dropped in the same transaction, so this is only a safeguard).
    if (host.sql('SELECT 1 FROM threads WHERE id = ?').get(threadId)) {
      host.sql('DELETE FROM memory_staging WHERE thread_id = ?').run(threadId);
      continue;
    }
    const ids = (host.sql('SELECT id FROM memory_chunks WHERE thread_id = ?').all(threadId) as Row[]).map((r) => r.id as number);
    await deleteStaged(host, [threadId], ids, stopped);
  }
}

function checkVersions(host: StagingHost, expect: ThreadChange['expect']): void {
  for (const { id, version } of expect) {
    const row = host.sql('SELECT version FROM threads WHERE id = ?').get(id) as Row | undefined;
    if (!row) throw new errors.ERR_THREAD_NOT_FOUND(id);
    if (row.version !== version) throw new errors.ERR_THREAD_CHANGED(id);
  }
}

/** The ids of all `total` added chunks in addMemory order: the staged ones (at `staged`) and the rest. */
function mergeIds(total: number, staged: number[], stagedIds: number[], restIds: number[]): number[] {
  const out = new Array<number>(total);
  staged.forEach((i, j) => (out[i] = stagedIds[j]));
  let k = 0;
  for (let i = 0; i < total; i++) if (out[i] === undefined) out[i] = restIds[k++];
  return out;
}
