/**
 * A source's `polling` (the job of the poll running now) read by a node whose clock is off the
 * database's: PostgreSQL keeps poll leases on its own clock (now()), so whether one holds is its to
 * say, whatever the reading node's clock says.
 */
import { afterEach, expect, it } from 'vitest';
import { SourceService } from '../../src/content/refresh/source-service.js';
import type { IngestService } from '../../src/content/ingest/ingest.js';
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
});
