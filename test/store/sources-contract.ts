/** The Store contract's part for sources that refresh: rows, poll leases, stored entries. */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { NewSource, Store } from '../../src/store/types.js';

export function source(id: string, over: Partial<NewSource> = {}): NewSource {
  return {
    id,
    kind: 'feed',
    url: `https://example.com/${id}.xml`,
    list: null,
    limit: 50,
    everyMinutes: 30,
    origin: 'api',
    createdAt: '2026-01-01T00:00:00.000Z',
    nextDueAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:05:00.000Z';
const T2 = '2026-01-01T00:20:00.000Z';
const iso = (ms: number) => new Date(ms).toISOString();

/** Runs inside storeContract's describe; `store()` is the fresh store of the current test. */
export function sourcesContract(store: () => Store): void {
  it('adds, reads, lists, updates and deletes sources; a taken id is ERR_SOURCE_EXISTS', async () => {
    const a = await store().addSource(source('src_a'));
    expect(a).toMatchObject({
      id: 'src_a',
      kind: 'feed',
      limit: 50,
      everyMinutes: 30,
      itemCount: 0,
      lastPolledAt: null,
      lastError: null,
      failures: 0,
      leaseOwner: null,
    });
    await store().addSource(source('src_b', { kind: 'hn', url: null, list: 'best', createdAt: T1, origin: 'config' }));
    await expect(store().addSource(source('src_a'))).rejects.toMatchObject({ code: 'ERR_SOURCE_EXISTS' });
    expect((await store().listSources()).map((s) => [s.id, s.list, s.origin])).toEqual([
      ['src_a', null, 'api'],
      ['src_b', 'best', 'config'],
    ]);
    expect(await store().updateSource('src_a', { everyMinutes: 5, nextDueAt: T2 })).toMatchObject({ everyMinutes: 5, nextDueAt: T2, limit: 50 });
    expect(await store().updateSource('src_nope', { everyMinutes: 5 })).toBeNull();
    expect(await store().deleteSource('src_a')).toBe(true);
    expect(await store().deleteSource('src_a')).toBe(false);
    expect(await store().getSource('src_a')).toBeNull();
  });

  /**
   * Lease times from the real clock: PostgreSQL keeps a lease on its own clock (the length the
   * caller asks for, from its now), SQLite as given; both agree only for times near the real now.
   */
  function leaseTimes(): { L0: string; L1: string; L2: string } {
    const at = Date.now();
    return { L0: iso(at), L1: iso(at + 5 * 60_000), L2: iso(at + 20 * 60_000) };
  }
  /** A lease's end, within what a test takes to run of `expected`. */
  function endsAbout(leaseUntil: string | null | undefined, expected: string): void {
    expect(Math.abs(Date.parse(leaseUntil ?? '') - Date.parse(expected))).toBeLessThan(60_000);
  }

  it('leases a source to one owner at a time until the lease expires or the poll ends', async () => {
    const { L0, L1, L2 } = leaseTimes();
    await store().addSource(source('src_l'));
    const [a, b] = await Promise.all([store().leaseSource('src_l', 'node-a', 'job_1', L0, L2), store().leaseSource('src_l', 'node-b', 'job_2', L0, L2)]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    const holder = a ? 'node-a' : 'node-b';
    const held = await store().getSource('src_l');
    expect(held).toMatchObject({ leaseOwner: holder, leaseJob: a ? 'job_1' : 'job_2' });
    endsAbout(held?.leaseUntil, L2);
    // held: nobody else, not even the holder, takes it before it expires
    expect(await store().leaseSource('src_l', 'node-c', 'job_3', L1, L2)).toBe(false);
    // another owner cannot end it
    const state = { etag: '"e"', lastModified: null, lastPolledAt: T1, lastError: null, failures: 0 };
    expect(await store().endSourcePoll('src_l', 'node-c', a ? 'job_1' : 'job_2', state, T2)).toBe(false);
    // The holder's earlier poll, whose lease ran out and was taken again, releases nothing.
    expect(await store().endSourcePoll('src_l', holder, 'job_0', state, T2)).toBe(false);
    expect(await store().endSourcePoll('src_l', holder, a ? 'job_1' : 'job_2', state, T2)).toBe(true);
    expect(await store().getSource('src_l')).toMatchObject({ leaseOwner: null, leaseJob: null, etag: '"e"', lastPolledAt: T1, nextDueAt: T2 });
    // an expired lease is taken over
    const start = Date.now();
    expect(await store().leaseSource('src_l', 'node-a', 'job_4', iso(start), iso(start + 1))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const later = Date.now();
    expect(await store().leaseSource('src_l', 'node-b', 'job_5', iso(later), iso(later + 60 * 60_000))).toBe(true);
    expect((await store().getSource('src_l'))?.leaseOwner).toBe('node-b');
  });

  it('renews a lease only for the owner and poll that hold it', async () => {
    const { L0, L1, L2 } = leaseTimes();
    await store().addSource(source('src_r'));
    expect(await store().leaseSource('src_r', 'node-a', 'job_1', L0, L1)).toBe(true);
    expect(await store().renewSourceLease('src_r', 'node-b', 'job_1', L0, L2)).toBe(false);
    expect(await store().renewSourceLease('src_r', 'node-a', 'job_other', L0, L2)).toBe(false);
    expect(await store().renewSourceLease('src_r', 'node-a', 'job_1', L0, L2)).toBe(true);
    const renewed = await store().getSource('src_r');
    expect(renewed).toMatchObject({ leaseOwner: 'node-a', leaseJob: 'job_1' });
    endsAbout(renewed?.leaseUntil, L2);
    // renewed past L1: still held then
    expect(await store().leaseSource('src_r', 'node-b', 'job_2', L1, L2)).toBe(false);
    expect(await store().renewSourceLease('src_nope', 'node-a', 'job_1', L0, L2)).toBe(false);
  });

  it('keeps one entry per key with its latest hash, counts them as the source item count, and drops them with the source', async () => {
    await store().addSource(source('src_e'));
    await store().putSourceEntry('src_e', 'guid-1', 'h1', 'news_1', T0);
    await store().putSourceEntry('src_e', 'guid-2', 'h2', 'news_2', T0);
    await store().putSourceEntry('src_e', 'guid-1', 'h1b', 'news_1', T1);
    const hashes = await store().sourceEntryHashes('src_e', ['guid-1', 'guid-2', 'guid-3']);
    expect([...hashes].sort()).toEqual([
      ['guid-1', 'h1b'],
      ['guid-2', 'h2'],
    ]);
    expect((await store().getSource('src_e'))?.itemCount).toBe(2);
    await store().deleteSource('src_e');
    await store().addSource(source('src_e'));
    expect((await store().sourceEntryHashes('src_e', ['guid-1'])).size).toBe(0);
  });

  it('forgets the entries a source no longer lists once they have gone unseen long enough, keeping those listed however old (they grew for good)', async () => {
    await store().addSource(source('src_s'));
    await store().addSource(source('src_other'));
    for (const key of ['guid-1', 'guid-2', 'guid-3', 'guid-€']) await store().putSourceEntry('src_s', key, 'h', 'news_1', T0);
    await store().putSourceEntry('src_s', 'guid-4', 'h', 'news_4', T1);
    await store().putSourceEntry('src_other', 'guid-2', 'h', 'news_2', T0);
    // Listed now: guid-1 and guid-€ (as old as the rest); guid-4 is unlisted but seen since the cut.
    expect(await store().sweepSourceEntries('src_s', ['guid-1', 'guid-€', 'guid-9'], T2, T1)).toBe(2);
    expect(
      [
        ...(await store()
          .sourceEntryHashes('src_s', ['guid-1', 'guid-2', 'guid-3', 'guid-4', 'guid-€'])
          .then((m) => m.keys())),
      ].sort(),
    ).toEqual(['guid-1', 'guid-4', 'guid-€']);
    expect((await store().getSource('src_other'))?.itemCount).toBe(1);
    // The listed ones were marked seen at T2: a later sweep with nothing listed keeps them until T2 is past.
    expect(await store().sweepSourceEntries('src_s', [], T2, T2)).toBe(1);
    expect((await store().getSource('src_s'))?.itemCount).toBe(2);
    expect(await store().sweepSourceEntries('src_nope', ['guid-1'], T2, T2)).toBe(0);
  });

  it('records no entry for a source that is gone, answering false instead of failing', async () => {
    await store().addSource(source('src_gone'));
    expect(await store().putSourceEntry('src_gone', 'guid-1', 'h1', 'news_1', T0)).toBe(true);
    expect(await store().putSourceEntry('src_gone', 'guid-1', 'h1b', 'news_1', T1)).toBe(true);
    await store().deleteSource('src_gone');
    expect(await store().putSourceEntry('src_gone', 'guid-2', 'h2', 'news_2', T1)).toBe(false);
    await store().addSource(source('src_gone'));
    expect((await store().sourceEntryHashes('src_gone', ['guid-1', 'guid-2'])).size).toBe(0);
  });

  it('keeps an entry whose key is longer than an index entry may be (a feed’s 8,192-character guid)', async () => {
    await store().addSource(source('src_long'));
    // Random characters: PostgreSQL compresses a repetitive key enough to fit.
    const long = `tag:example.com,2026:€${randomBytes(6_000).toString('base64url')}`;
    // Differs in its last character only (never the same: base64url may end in "x").
    const other = `${long.slice(0, -1)}${long.endsWith('x') ? 'y' : 'x'}`;
    await store().putSourceEntry('src_long', long, 'h1', 'news_1', T0);
    await store().putSourceEntry('src_long', other, 'h2', 'news_2', T0);
    await store().putSourceEntry('src_long', long, 'h1b', 'news_1', T1);
    const hashes = await store().sourceEntryHashes('src_long', [long, other, 'guid-3']);
    expect(hashes.get(long)).toBe('h1b');
    expect(hashes.get(other)).toBe('h2');
    expect(hashes.size).toBe(2);
  });
}
