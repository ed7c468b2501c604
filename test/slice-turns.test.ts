// A deleted thread's slices in the store and the vector index's removal of its rows, turn by turn. Needs the build (the scan pool's workers run from dist/).
import { MessageChannel } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlatIndex, REMOVE_STEP_ROWS } from '../src/search/flat/flat-index.js';
import { ScanPool } from '../src/search/flat/scan-pool.js';
import { sliceTurn } from '../src/slice-turns.js';
import { deleteStaged } from '../src/store/sqlite-staging.js';
import { clustered, entries } from './search/helpers.js';
import { addStagedMessages, aroundTransactions, STAGED_THREAD, stagingDb, stagingHost } from './store/staging-fake.js';

/**
 * Marks on a port: ports, like sockets and workers, deliver in the poll phase, so work that finds
 * every earlier mark delivered runs in a later loop iteration than the work that posted them.
 */
function marks() {
  const channel = new MessageChannel();
  let posted = 0;
  let arrived = 0;
  let by = '';
  channel.port2.on('message', () => arrived++);
  return {
    /** Who posted last, if that was in this loop iteration (no poll phase since); else null. */
    sameIteration: () => (arrived < posted ? by : null),
    post(who: string) {
      channel.port1.postMessage(null);
      posted++;
      by = who;
    },
    close: () => channel.port1.close(),
  };
}

describe('sliceTurn', () => {
  it('lets one waiter go on per loop iteration, in the order they asked, none in the caller’s iteration', async () => {
    const mark = marks();
    const ran: string[] = [];
    const shared: { who: string; with: string | null }[] = [];
    const work = async (who: string, slices: number) => {
      for (let i = 0; i < slices; i++) {
        await sliceTurn();
        shared.push({ who, with: mark.sameIteration() });
        ran.push(who);
        mark.post(who);
      }
    };
    mark.post('caller');
    await Promise.all([work('a', 4), work('b', 4), work('c', 2)]);
    mark.close();
    expect(ran).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'a', 'b']);
    expect(shared.filter((s) => s.with !== null)).toEqual([]);
  });
});

describe('a deleted thread: the store’s slices and the vector index’s removal', () => {
  const DIM = 16;
  let pool: ScanPool;
  beforeAll(() => {
    pool = new ScanPool({ threads: 1 });
  });
  afterAll(async () => pool.close());

  it('never share a loop iteration, and the index takes its rows out in bounded steps, none in the caller’s iteration', async () => {
    const index = new FlatIndex({ dimensions: DIM, pool });
    const rows = entries(clustered(3_000, DIM, 4, 3));
    await index.upsert(rows);
    const gone = rows.slice(0, 2_600).map((r) => r.rowId);

    const mark = marks();
    // Work found in an iteration where other work had already run: [who ran, who was there first].
    const together: [string, string][] = [];
    const steps: number[] = [];
    const removeRow = index.stats.delete.bind(index.stats);
    index.stats.delete = (...args) => {
      const other = mark.sameIteration();
      if (other === null) {
        // A poll phase since the last mark: this row begins a step.
        steps.push(0);
        mark.post('index');
      } else if (other !== 'index') {
        together.push(['index', other]);
        steps.push(0);
        mark.post('index');
      }
      steps[steps.length - 1]++;
      removeRow(...args);
    };

    const db = stagingDb();
    addStagedMessages(db, 600);
    let transactions = 0;
    const transaction = <T>(run: () => T): T => {
      const other = mark.sameIteration();
      if (other !== null) together.push(['store', other]);
      transactions++;
      try {
        return run();
      } finally {
        mark.post('store');
      }
    };
    const host = stagingHost(db, { db: aroundTransactions(db, transaction), merges: { slice: () => transaction(() => false), drive: (work) => work() } });

    // As DELETE /api/v1/threads/:id: the store hides the thread (its slices follow), then the index forgets its rows.
    mark.post('caller');
    const deleting = deleteStaged(host, [STAGED_THREAD], gone);
    const removing = index.remove(gone);
    try {
      await Promise.all([deleting, removing]);
    } finally {
      mark.close();
      db.close();
    }
    expect(index.size).toBe(400);
    expect(transactions).toBeGreaterThan(4);
    expect(together).toEqual([]);
    expect(steps.reduce((a, b) => a + b, 0)).toBe(2_600);
    expect(Math.max(...steps)).toBeLessThanOrEqual(REMOVE_STEP_ROWS);
    await index.close();
  });
});
