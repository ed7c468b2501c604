/**
 * Source poll leases in the PostgreSQL store are kept on the database's clock: nodes whose clocks
 * disagree still hold a lease for as long as it was taken for, and never take one that has not run out.
 */
import { afterEach, expect, it } from 'vitest';
import type { PostgresStore } from '../../src/store/postgres.js';
import { describePostgres, freshPostgresStore } from './postgres-harness.js';
import { source } from './sources-contract.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const iso = (ms: number) => new Date(ms).toISOString();

/** A node whose clock reads `skewMs` off the real one, asking for `leaseMs`: its `now` and `until`. */
function nodeClock(skewMs: number, leaseMs = 15 * MIN): [string, string] {
  const now = Date.now() + skewMs;
  return [iso(now), iso(now + leaseMs)];
}

describePostgres('PostgreSQL source leases', () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  let store: PostgresStore;

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function withSource(id: string): Promise<void> {
    store = await freshPostgresStore(cleanups);
    await store.addSource(source(id));
  }

  it('keeps a lease taken by a node whose clock runs an hour behind for its whole length', async () => {
    await withSource('src_behind');
    expect(await store.leaseSource('src_behind', 'node-slow', 'job_1', ...nodeClock(-HOUR))).toBe(true);
    // On the slow node's clock the lease ended 45 minutes ago; on the database's it has 15 minutes to run.
    expect(await store.leaseSource('src_behind', 'node-right', 'job_2', ...nodeClock(0))).toBe(false);
    const held = await store.getSource('src_behind');
    expect(held?.leaseOwner).toBe('node-slow');
    expect(Date.parse(held!.leaseUntil!)).toBeGreaterThan(Date.now() + 10 * MIN);
  });

  it('does not let a node whose clock runs an hour ahead take a lease that has not run out', async () => {
    await withSource('src_ahead');
    expect(await store.leaseSource('src_ahead', 'node-right', 'job_1', ...nodeClock(0))).toBe(true);
    expect(await store.leaseSource('src_ahead', 'node-fast', 'job_2', ...nodeClock(HOUR))).toBe(false);
    expect((await store.getSource('src_ahead'))?.leaseOwner).toBe('node-right');
  });

  it('renews a lease by its length on the database clock, whatever the renewing node reads', async () => {
    await withSource('src_renew');
    expect(await store.leaseSource('src_renew', 'node-slow', 'job_1', ...nodeClock(-HOUR))).toBe(true);
    expect(await store.renewSourceLease('src_renew', 'node-slow', 'job_1', ...nodeClock(-HOUR, 30 * MIN))).toBe(true);
    expect(Date.parse((await store.getSource('src_renew'))!.leaseUntil!)).toBeGreaterThan(Date.now() + 25 * MIN);
    expect(await store.leaseSource('src_renew', 'node-fast', 'job_2', ...nodeClock(HOUR))).toBe(false);
  });

  it('lets a lease that ran out on the database clock be taken, whatever the taker reads', async () => {
    await withSource('src_done');
    expect(await store.leaseSource('src_done', 'node-right', 'job_1', ...nodeClock(0, 1))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // A node an hour behind would have waited an hour past the end on its own clock.
    expect(await store.leaseSource('src_done', 'node-slow', 'job_2', ...nodeClock(-HOUR))).toBe(true);
  });
});
