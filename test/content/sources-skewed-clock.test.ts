/**
 * A source's `polling` (the job of the poll running now) read by a node whose clock is off the
 * database's: PostgreSQL keeps poll leases on its own clock (now()), so whether one holds is its to
 * say, whatever the reading node's clock says. So is when a source is due: a node whose clock is
 * ahead polled it early (and wrote its next time as far ahead again), one behind polled it late.
 */
import { afterEach, expect, it } from 'vitest';
import { SourceService } from '../../src/content/refresh/source-service.js';
import type { IngestService, IngestTask } from '../../src/content/ingest/ingest.js';
import type { IngestJob } from '../../src/store/types.js';
import { describePostgres, freshPostgresStore } from '../store/postgres-harness.js';
import { source } from '../store/sources-contract.js';

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

describePostgres('a source’s polling read on a skewed clock (PostgreSQL)', () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    for (const clean of cleanups.splice(0).reverse()) await clean();
  });

  /** The source `src_a`, its poll leased for `leaseMs` by another node with a right clock, read by a node `skewMs` off. */
  async function readBy(skewMs: number, leaseMs: number): Promise<string | null> {
    const store = await freshPostgresStore(cleanups);
    await store.addSource(source('src_a'));
    const now = Date.now();
    expect(await store.leaseSource('src_a', 'node-right', 'job_poll', iso(now), iso(now + leaseMs))).toBe(true);
    const skewed = new SourceService({ store, ingest: {} as IngestService, owner: 'node-skewed', leaseMs: 15 * MIN, now: () => Date.now() + skewMs });
    const [listed] = await skewed.list();
    const one = await skewed.get('src_a');
    expect(listed.polling).toBe(one.polling);
    return one.polling;
  }

  it('says a poll under a lease that holds on the database’s clock runs, on a node whose clock is ahead', async () => {
    expect(await readBy(20 * MIN, 15 * MIN)).toBe('job_poll');
  });

  it('says no poll runs under a lease that ran out on the database’s clock, on a node whose clock is behind', async () => {
    expect(await readBy(-20 * MIN, -1)).toBeNull();
  });

  /**
   * An ingest service with a free slot whose jobs end at once, failed (no fetch), as their end
   * is recorded; `submitted` lists their ids.
   */
  function failingIngest(): { ingest: IngestService; submitted: string[] } {
    const submitted: string[] = [];
    const submitTask = async (task: IngestTask): Promise<IngestJob> => {
      const at = new Date().toISOString();
      const job: IngestJob = {
        id: task.jobId!,
        request: task.request,
        status: 'failed',
        total: 0,
        done: 0,
        failed: 1,
        itemIds: [],
        failures: [{ ref: task.ref, code: 'ERR_FETCH_FAILED', message: 'down' }],
        createdAt: at,
        updatedAt: at,
      };
      submitted.push(job.id);
      await task.onEnd?.(job);
      return job;
    };
    return { ingest: { freeSlots: 1, submitTask } as unknown as IngestService, submitted };
  }

  /** A node `skewMs` off the database's clock (the test's machine's), polling `src_a`, due `dueInMs` from now. */
  async function nodeOff(skewMs: number, dueInMs: number) {
    const store = await freshPostgresStore(cleanups);
    await store.addSource(source('src_a', { everyMinutes: 30, createdAt: iso(Date.now()), nextDueAt: iso(Date.now() + dueInMs) }));
    const { ingest, submitted } = failingIngest();
    const sources = new SourceService({ store, ingest, owner: 'node-off', leaseMs: 15 * MIN, now: () => Date.now() + skewMs, random: () => 0.5 });
    cleanups.push(() => sources.stop());
    return { store, sources, submitted };
  }

  it('leaves a source due in ten minutes alone on a node whose clock is twenty minutes ahead', async () => {
    const { sources, submitted } = await nodeOff(20 * MIN, 10 * MIN);
    expect(await sources.tick()).toEqual([]);
    expect(submitted).toEqual([]);
  });

  it('polls a source due a minute ago on a node whose clock is twenty minutes behind', async () => {
    const { sources, submitted } = await nodeOff(-20 * MIN, -MIN);
    const started = await sources.tick();
    expect(started).toHaveLength(1);
    expect(submitted).toEqual(started);
  });

  it('sets the next try after a failed poll from the database’s clock, not from a node’s twenty minutes ahead', async () => {
    const { store, sources } = await nodeOff(20 * MIN, -MIN);
    const before = Date.now();
    expect(await sources.tick()).toHaveLength(1);
    const after = Date.now();
    const polled = (await store.getSource('src_a'))!;
    expect(polled).toMatchObject({ failures: 1, leaseOwner: null });
    // One failure: twice the interval (the jitter is 1 with random() = 0.5), from the database's now.
    const next = Date.parse(polled.nextDueAt);
    expect(next).toBeGreaterThanOrEqual(before + 60 * MIN - 1_000);
    expect(next).toBeLessThanOrEqual(after + 60 * MIN + 1_000);
    expect(Date.parse(polled.lastPolledAt!)).toBeLessThanOrEqual(after + 1_000);
    // Not due again on the skewed node's next look.
    expect(await sources.tick()).toEqual([]);
  });
});
