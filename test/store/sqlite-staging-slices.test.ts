import { MessageChannel } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DELETE_SLICE_MS, deleteStaged } from '../../src/store/sqlite-staging.js';
import { addStagedMessages, aroundTransactions, STAGED_THREAD, stagingDb, stagingHost } from './staging-fake.js';

/**
 * deleteStaged's slices on a fake clock: each row deleted costs `rowMs` of the clock, its lines
 * (deleted after the slice's rows) `linesMsPerRow` and the commit `commitMsPerRow` a row, so the
 * rows a transaction deletes follow from the budget alone.
 */
describe('deleteStaged: the slices of a large deletion', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A host whose rows cost fake time; with it, the rows each transaction deleted and the event-loop turns seen before each. */
  function costedHost(rowMs: number, linesMsPerRow: number, commitMsPerRow: number) {
    const db = stagingDb();
    const slices: { rows: number[]; turns: number }[] = [];
    let turns = 0;
    let stop = false;
    const tick = () => {
      turns++;
      if (!stop) setImmediate(tick);
    };
    setImmediate(tick);
    let current: number[] | null = null;
    // Each transaction is a slice; its commit costs the clock `commitMsPerRow` per row it deleted.
    const slice = <T>(run: () => T): T => {
      current = [];
      const turnsBefore = turns;
      const out = run();
      vi.advanceTimersByTime(current.length * commitMsPerRow);
      slices.push({ rows: current, turns: turnsBefore });
      current = null;
      return out;
    };
    const host = stagingHost(db, {
      db: aroundTransactions(db, slice),
      deleteMemory: (ids) => {
        for (const id of ids) {
          vi.advanceTimersByTime(rowMs + linesMsPerRow);
          current!.push(id);
        }
      },
      deletingMemory: () => {
        let rows = 0;
        return {
          row: (id) => {
            vi.advanceTimersByTime(rowMs);
            current!.push(id);
            rows++;
          },
          done: () => vi.advanceTimersByTime(rows * linesMsPerRow),
        };
      },
    });
    // The transactions that deleted rows (not those of the messages and the entry).
    const rowSlices = () => slices.filter((s) => s.rows.length > 0);
    return {
      host,
      db,
      slices: () => rowSlices().map((s) => s.rows),
      turnsAtSlice: () => rowSlices().map((s) => s.turns),
      close: () => ((stop = true), db.close()),
    };
  }

  const ids = Array.from({ length: 40 }, (_, i) => i + 1);

  it('looks at the clock after every row: a slice of dear rows stops one row past its budget at most', async () => {
    // A source row that fused pairs and copies refer to costs up to ~8 ms; four of them between two
    // looks at the clock held the event loop 30 ms and more.
    const { host, slices, close } = costedHost(6, 0, 0);
    await deleteStaged(host, [STAGED_THREAD], ids);
    close();
    expect(slices().flat()).toEqual(ids);
    for (const slice of slices()) expect(slice.length * 6).toBeLessThanOrEqual(DELETE_SLICE_MS + 6);
    // Before any commit is seen, one 6 ms row plus as much again for its commit reaches the budget.
    expect(slices()[0]).toHaveLength(1);
  });

  it('keeps each slice, its commit included, within 20 ms of the event loop, with a turn between slices', async () => {
    // 2.5 ms a row, and 0.5 ms a row for its lines and the commit: the first slice learns what those cost.
    const { host, slices, turnsAtSlice, close } = costedHost(2.5, 0.25, 0.25);
    await deleteStaged(host, [STAGED_THREAD], ids);
    close();
    expect(slices().flat()).toEqual(ids);
    const held = slices().map((s) => s.length * 3);
    expect(Math.max(...held)).toBeLessThanOrEqual(20);
    // 2 rows, then 4 a slice (10 ms of rows plus 2 of lines and commit): bounded turns, not one long one.
    expect(slices().map((s) => s.length)).toEqual([2, ...Array(9).fill(4), 2]);
    const turns = turnsAtSlice();
    for (let i = 1; i < turns.length; i++) expect(turns[i]).toBeGreaterThan(turns[i - 1]);
    expect(DELETE_SLICE_MS).toBeLessThan(20);
  });

  it('reaches the poll phase between any two of its transactions, also after a wait that a worker’s reply ends', async () => {
    const { host, db: raw, close } = costedHost(2.5, 0.25, 0.25);
    // Each transaction posts on a port as it ends; ports, like sockets and workers, deliver in the
    // poll phase, so the next transaction finds every message arrived only if the loop got there.
    const marks = new MessageChannel();
    let posted = 0;
    let arrived = 0;
    marks.port2.on('message', () => arrived++);
    const unread: { what: string; unread: number }[] = [];
    const transaction = <T>(what: string, run: () => T): T => {
      unread.push({ what, unread: posted - arrived });
      try {
        return run();
      } finally {
        marks.port1.postMessage(null);
        posted++;
      }
    };
    const db = aroundTransactions(host.db, (run) => transaction('slice', run));
    // Every third pace waits for a "worker" whose reply arrives as a port message, as the checkpoint
    // worker's does: the slice after it runs in the poll phase. A merge slice that worked to its
    // budget and then found nothing more returns false.
    const worker = new MessageChannel();
    let paces = 0;
    const pace = () => {
      if (++paces % 3) return null;
      return new Promise<void>((resolve) => {
        worker.port2.once('message', () => resolve());
        worker.port1.postMessage(null);
      });
    };
    addStagedMessages(raw, 300);
    try {
      await deleteStaged({ ...host, db, pace, merges: { slice: () => transaction('merge', () => false), drive: (work) => work() } }, [STAGED_THREAD], ids);
    } finally {
      marks.port1.close();
      worker.port1.close();
      close();
    }
    expect(paces).toBeGreaterThan(6);
    expect(unread.filter((t) => t.what === 'merge').length).toBeGreaterThan(6);
    // The rows' slices, the merge slices, the messages' slice and the entry's transaction.
    expect(unread.filter((t) => t.what === 'slice').length).toBeGreaterThan(12);
    expect(unread.filter((t) => t.unread > 0)).toEqual([]);
  });
});
