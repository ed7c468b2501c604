// The flat index (worker pool + native or WASM kernel) against exact brute force. Needs the build (workers run from dist/).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { errors } from '../../src/errors.js';
import { FlatIndex, TOUCH_AHEAD_BYTES, UPSERT_STEP_ROWS } from '../../src/search/flat/flat-index.js';
import { rowOffset } from '../../src/search/flat/layout.js';
import { ScanPool } from '../../src/search/flat/scan-pool.js';
import { SUBSET_SCAN_MAX_ROWS } from '../../src/search/meta-stats.js';
import { TopK } from '../../src/search/flat/top-k.js';
import type { VectorEntry, VectorFilter } from '../../src/search/types.js';
import { clustered, entries, exact, near } from './helpers.js';

const DIM = 48;

function expectSameHits(got: { rowId: number; score: number }[], want: { rowId: number; score: number }[]): void {
  expect(got.map((h) => h.rowId)).toEqual(want.map((h) => h.rowId));
  got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i].score, 4));
}

describe('TopK', () => {
  it('keeps the k best, best first, ties broken by the smaller id', () => {
    const top = new TopK(3);
    [
      [5, 0.1],
      [9, 0.9],
      [2, 0.5],
      [7, 0.5],
      [1, 0.5],
      [3, 0.05],
    ].forEach(([id, s]) => top.push(id, s));
    const { ids, scores } = top.sorted();
    expect(Array.from(ids)).toEqual([9, 1, 2]);
    expect(Array.from(scores)).toEqual([expect.closeTo(0.9), 0.5, 0.5]);
  });

  it('rejects a bad k by name', () => {
    expect(() => new TopK(0)).toThrow(/TopK: options.k must be a whole number ≥ 1/);
  });
});

describe.each(['native', 'wasm'] as const)('FlatIndex (%s kernel)', (kernel) => {
  let pool: ScanPool;
  let index: FlatIndex;
  let rows: VectorEntry[];

  beforeAll(async () => {
    pool = new ScanPool({ threads: 2, kernel });
    expect(pool.kernel).toBe(kernel);
    // A tiny initial capacity and task size: the load grows the memory several times and searches split.
    // No scan on the calling thread: these tests are about the pool (one below compares the two).
    index = new FlatIndex({ dimensions: DIM, pool, initialCapacity: 8, minRowsPerTask: 100, inlineScanFloats: 0 });
    rows = entries(clustered(1500, DIM, 12, 1));
    for (let i = 0; i < rows.length; i += 400) await index.upsert(rows.slice(i, i + 400));
  });

  afterAll(async () => {
    await index.close();
    await pool.close();
  });

  it('finds exactly what brute force finds, with cosine scores', async () => {
    expect(index.size).toBe(1500);
    for (let q = 0; q < 10; q++) {
      const query = near(rows[q * 97].vector, q);
      expectSameHits(await index.search(query, 10, { includePrivileged: true }), exact(rows, query, 10, { includePrivileged: true }));
    }
  });

  const filters: [string, VectorFilter][] = [
    ['no filter (privileged rows excluded by default)', {}],
    ['kinds', { kinds: ['news', 'video'] }],
    ['source type', { sourceType: 'conversation', includePrivileged: true }],
    ['scopes (a subset scan)', { scopes: ['room_2', 'room_4'] }],
    ['scopes with privileged rows', { scopes: ['room_2'], includePrivileged: true }],
    ['kind and source together', { kinds: ['post'], sourceType: 'document' }],
  ];
  for (const [name, filter] of filters) {
    it(`applies the filter: ${name}`, async () => {
      const query = near(rows[11].vector, 5);
      const got = await index.search(query, 15, filter);
      const want = exact(rows, query, 15, filter);
      expect(want.length).toBe(15);
      expectSameHits(got, want);
    });
  }

  it('rescores approximate hits exactly, best first, dropping rows it does not hold', () => {
    const query = near(rows[42].vector, 3);
    const truth = exact(rows, query, 5, { includePrivileged: true });
    const rough = [...truth].reverse().map((h) => ({ rowId: h.rowId, score: 0.5 }));
    const rescored = index.rescore(query, [...rough, { rowId: 999_999, score: 0.9 }]);
    expect(rescored.map((h) => h.rowId)).toEqual(truth.map((h) => h.rowId));
    rescored.forEach((h, i) => expect(h.score).toBeCloseTo(truth[i].score, 5));
  });

  it('rescores with a row it holds as the query as with that row’s vector, and says when it does not hold the row', () => {
    const hits = rows.slice(100, 140).map((r) => ({ rowId: r.rowId, score: 0 }));
    const byRow = index.rescoreByRow(rows[7].rowId, hits)!;
    const byVector = index.rescore(rows[7].vector, hits);
    expect(byRow.map((h) => h.rowId)).toEqual(byVector.map((h) => h.rowId));
    byRow.forEach((h, i) => expect(h.score).toBeCloseTo(byVector[i].score, 6));
    expect(index.rescoreByRow(999_999, hits)).toBeNull();
  });

  it('scores many rows against many rows at once as rescoreByRow does, one query at a time (native kernel only)', () => {
    const queries = [rows[3].rowId, 999_999, rows[40].rowId];
    const candidates = [rows.slice(200, 208).map((r) => r.rowId), [rows[1].rowId], [rows[41].rowId, 888_888, rows[3].rowId]];
    const scored = index.cosinesOfRows(queries, candidates);
    if (kernel === 'wasm') {
      expect(scored).toBeNull();
      return;
    }
    expect(scored).not.toBeNull();
    const byRow = (q: number, ids: number[]) => {
      const hits = index.rescoreByRow(
        q,
        ids.map((rowId) => ({ rowId, score: 0 })),
      );
      const scores = new Map((hits ?? []).map((h) => [h.rowId, h.score]));
      return ids.map((id) => scores.get(id));
    };
    // The same kernel reads the same rows: the same float32 scores, not merely close ones.
    expect(scored![0]).toEqual(byRow(queries[0], candidates[0]));
    expect(scored![1]).toEqual([undefined]);
    expect(scored![2][0]).toBe(byRow(queries[2], [rows[41].rowId])[0]);
    expect(scored![2][1]).toBeUndefined();
    expect(scored![2][2]).toBeCloseTo(exact([rows[3]], rows[40].vector, 1, { includePrivileged: true })[0].score, 5);
    expect(index.cosinesOfRows([], [])).toEqual([]);
  });

  it('rescores a mostly-zero query (hashed features) exactly as a dense one', () => {
    const sparse = new Float32Array(DIM);
    for (let i = 0; i < DIM; i += 7) sparse[i] = rows[17].vector[i] + 0.01 * (i % 3);
    const truth = exact(rows, sparse, 8, { includePrivileged: true });
    const rescored = index.rescore(
      sparse,
      truth.map((h) => ({ rowId: h.rowId, score: 0 })),
    );
    expect(rescored.map((h) => h.rowId)).toEqual(truth.map((h) => h.rowId));
    rescored.forEach((h, i) => expect(h.score).toBeCloseTo(truth[i].score, 5));
  });

  it('remembers the group and title flag of each row through replacements and removals', async () => {
    const heads = new FlatIndex({ dimensions: DIM, pool });
    const vectors = clustered(6, DIM, 2, 3);
    const meta = (i: number, group: string | null, title = false) => ({ ...entries(vectors)[i].meta, group, title });
    await heads.upsert(vectors.map((vector, i) => ({ rowId: 10 + i, vector, meta: meta(i, `news_${i % 3}`, i === 0) })));
    expect(heads.heads([10, 11, 13, 99])).toEqual([
      { group: 'news_0', title: true },
      { group: 'news_1', title: false },
      { group: 'news_0', title: false },
      undefined,
    ]);
    await heads.upsert([{ rowId: 11, vector: vectors[1], meta: meta(1, 'news_1#comment:pg') }]);
    // Removing row 10 moves the last row (15) into its place.
    await heads.remove([10, 12]);
    expect(heads.heads([10, 11, 13, 14, 15])).toEqual([
      undefined,
      { group: 'news_1#comment:pg', title: false },
      { group: 'news_0', title: false },
      { group: 'news_1', title: false },
      { group: 'news_2', title: false },
    ]);
    await heads.upsert([{ rowId: 20, vector: vectors[0], meta: meta(0, null) }]);
    expect(heads.heads([20])).toEqual([{ group: null, title: false }]);
    await heads.close();
  });

  it('returns nothing for an unknown scope', async () => {
    expect(await index.search(rows[0].vector, 5, { scopes: ['no-such-room'] })).toEqual([]);
  });

  it('forgets a scope with its last row, finds it again when rows come back, and gives a scope named twice once', async () => {
    const scoped = new FlatIndex({ dimensions: DIM, pool, inlineScanFloats: 0 });
    try {
      const vectors = clustered(60, DIM, 3, 9);
      const meta = (scope: string) => ({ kind: 'thread' as const, sourceType: 'conversation' as const, scope, privileged: false });
      // 20 threads come and go: their scopes used to stay for the process's life.
      for (let t = 0; t < 20; t++) {
        await scoped.upsert([0, 1, 2].map((j) => ({ rowId: t * 3 + j + 1, vector: vectors[t * 3 + j], meta: meta(`thr_${t}`) })));
      }
      expect(scoped.stats.scopes).toBe(20);
      await scoped.remove(Array.from({ length: 57 }, (_, i) => i + 1));
      expect(scoped.stats.scopes).toBe(1);
      expect(await scoped.search(vectors[0], 5, { scopes: ['thr_0'] })).toEqual([]);

      await scoped.upsert([{ rowId: 100, vector: vectors[0], meta: meta('thr_0') }]);
      expect(scoped.stats.scopes).toBe(2);
      expect((await scoped.search(vectors[0], 5, { scopes: ['thr_0'] })).map((h) => h.rowId)).toEqual([100]);
      // A scope's only row written again keeps it searchable under its scope.
      await scoped.upsert([{ rowId: 100, vector: vectors[1], meta: meta('thr_0') }]);
      expect((await scoped.search(vectors[1], 5, { scopes: ['thr_0'] })).map((h) => h.rowId)).toEqual([100]);

      const twice = await scoped.search(vectors[58], 5, { scopes: ['thr_19', 'thr_19', 'thr_0'] });
      expect(twice.map((h) => h.rowId).sort((a, b) => a - b)).toEqual([58, 59, 60, 100]);
    } finally {
      await scoped.close();
    }
  });

  it('scans every row, filtered in the threads, for a kind too common to list, and lists a scope of any size', async () => {
    const big = new FlatIndex({ dimensions: 8, pool, inlineScanFloats: 0 });
    try {
      const n = SUBSET_SCAN_MAX_ROWS * 6;
      const vectors = clustered(n, 8, 6, 10);
      const kinds = ['news', 'news', 'post', 'post', 'post', 'post', 'video', 'video', 'video', 'video'] as const;
      const all = vectors.map((vector, i) => ({
        rowId: i + 1,
        vector,
        meta: { kind: kinds[i % 10], sourceType: 'document' as const, scope: i % 5 === 0 ? 'thr_big' : null, privileged: false },
      }));
      for (let i = 0; i < n; i += 20_000) await big.upsert(all.slice(i, i + 20_000));
      // A fifth of the rows are news: within the fraction, but more than a list's worth.
      const news = big.stats.encode({ kinds: ['news'] });
      expect(big.stats.candidates(news)).toBeNull();
      const scope = big.stats.encode({ scopes: ['thr_big'] });
      expect(big.stats.candidates(scope)).toHaveLength(Math.ceil(n / 5));
      for (const filter of [{ kinds: ['news' as const] }, { scopes: ['thr_big'] }]) {
        expectSameHits(await big.search(vectors[3], 5, filter), exact(all, vectors[3], 5, filter));
      }
    } finally {
      await big.close();
    }
  });

  it('gives the same answers with one worker and with three', async () => {
    const one = new ScanPool({ threads: 1, kernel });
    const three = new ScanPool({ threads: 3, kernel });
    const a = new FlatIndex({ dimensions: DIM, pool: one, minRowsPerTask: 50, inlineScanFloats: 0 });
    const b = new FlatIndex({ dimensions: DIM, pool: three, minRowsPerTask: 50, inlineScanFloats: 0 });
    try {
      await a.upsert(rows);
      await b.upsert(rows);
      for (let q = 0; q < 5; q++) {
        const query = near(rows[q * 301].vector, 40 + q);
        const [ra, rb] = await Promise.all([a.search(query, 20, { includePrivileged: true }), b.search(query, 20, { includePrivileged: true })]);
        expect(rb.map((h) => h.rowId)).toEqual(ra.map((h) => h.rowId));
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
      await Promise.all([one.close(), three.close()]);
    }
  });

  it('answers small scans on the calling thread exactly as the pool does (native kernel)', async () => {
    const inline = new FlatIndex({ dimensions: DIM, pool, inlineScanFloats: 1_000_000 });
    try {
      await inline.upsert(rows);
      for (const filter of [{ includePrivileged: true }, {}, { scopes: ['room_2'] }, { kinds: ['post' as const] }]) {
        const query = near(rows[77].vector, 61);
        expectSameHits(await inline.search(query, 12, filter), await index.search(query, 12, filter));
      }
    } finally {
      await inline.close();
    }
  });

  it('lets a scan that is running finish when its pool closes', async () => {
    const own = new ScanPool({ threads: 1, kernel });
    const index1 = new FlatIndex({ dimensions: DIM, pool: own, minRowsPerTask: 50, inlineScanFloats: 0 });
    try {
      await index1.upsert(rows);
      const query = near(rows[5].vector, 71);
      // The worker is up once a search came back; then a scan is known to run once the pool has posted it.
      await index1.search(query, 5);
      const piscina = (own as unknown as { pool: { run: (...args: unknown[]) => Promise<unknown> } }).pool;
      const run = piscina.run.bind(piscina);
      let posted!: () => void;
      const running = new Promise<void>((resolve) => (posted = resolve));
      piscina.run = (...args: unknown[]) => {
        const result = run(...args);
        posted();
        return result;
      };
      const found = index1.search(query, 5);
      await running;
      await own.close();
      // Stopping the worker at once rejected it (and its answer, arriving after, was an error on the pool).
      expectSameHits(await found, exact(rows, query, 5));
      await expect(index1.search(query, 5)).rejects.toMatchObject({ code: 'ERR_NOT_READY' });
    } finally {
      await index1.close();
      await own.close();
    }
  });

  it('answers many concurrent searches correctly', async () => {
    const queries = Array.from({ length: 24 }, (_, i) => near(rows[i * 50].vector, 100 + i));
    const results = await Promise.all(queries.map((q) => index.search(q, 5)));
    results.forEach((r, i) => expectSameHits(r, exact(rows, queries[i], 5)));
  });
});

describe('FlatIndex changes', () => {
  let pool: ScanPool;
  beforeAll(() => {
    pool = new ScanPool({ threads: 2 });
  });
  afterAll(async () => pool.close());

  it('removes rows (moving the last row into the hole) and keeps answering exactly', async () => {
    const index = new FlatIndex({ dimensions: DIM, pool, minRowsPerTask: 64 });
    let rows = entries(clustered(600, DIM, 6, 2));
    await index.upsert(rows);
    const gone = new Set(rows.filter((_, i) => i % 3 === 0 || i > 560).map((r) => r.rowId));
    await index.remove([...gone, 999_999]);
    rows = rows.filter((r) => !gone.has(r.rowId));
    expect(index.size).toBe(rows.length);
    for (const id of [...gone].slice(0, 5)) expect(index.has(id)).toBe(false);
    for (let q = 0; q < 5; q++) {
      const query = near(rows[q * 40].vector, q);
      expectSameHits(await index.search(query, 10, { includePrivileged: true }), exact(rows, query, 10, { includePrivileged: true }));
    }
    // Scope bookkeeping follows removals and moves.
    expectSameHits(await index.search(rows[3].vector, 8, { scopes: ['room_3'] }), exact(rows, rows[3].vector, 8, { scopes: ['room_3'] }));
    await index.close();
  });

  it('removes thousands of rows with turns of the event loop between slices, a search after them seeing none', async () => {
    const index = new FlatIndex({ dimensions: DIM, pool, minRowsPerTask: 64 });
    const rows = entries(clustered(3_000, DIM, 6, 2));
    await index.upsert(rows);
    const gone = rows.slice(0, 2_500).map((r) => r.rowId);
    // Turns of the event loop counted while the removal runs (none if it never yields).
    let turns = 0;
    let counting = true;
    const tick = () => counting && (turns++, setImmediate(tick));
    setImmediate(tick);
    const removed = index.remove(gone);
    // Queued behind the removal (the write lock): it answers from what is left.
    const searched = index.search(rows[2_700].vector, 5, { includePrivileged: true });
    await removed;
    counting = false;
    expect(turns).toBeGreaterThan(0);
    expect(index.size).toBe(500);
    expectSameHits(await searched, exact(rows.slice(2_500), rows[2_700].vector, 5, { includePrivileged: true }));
    await index.close();
  });

  it('copies rows it holds under new ids with their own metadata, and reports the copies it cannot make', async () => {
    const index = new FlatIndex({ dimensions: DIM, pool, initialCapacity: 8 });
    const rows = entries(clustered(50, DIM, 4, 8));
    await index.upsert(rows);
    const meta = { kind: 'thread' as const, sourceType: 'conversation' as const, scope: 'thr_copy', privileged: false };
    // 40 copies (the memory grows), one of a row it does not hold, and one replacing an earlier copy.
    const copies = rows.slice(0, 40).map((r, i) => ({ rowId: 1000 + i, from: r.rowId, meta }));
    const missing = await index.copyRows([...copies, { rowId: 2000, from: 999_999, meta }, { rowId: 1000, from: rows[45].rowId, meta }]);
    expect(missing).toEqual([{ rowId: 2000, from: 999_999, meta }]);
    expect(index.size).toBe(90);
    const out = new Float32Array(2 * DIM);
    expect(index.copyVectors([1001, rows[1].rowId], out)).toEqual([1001, rows[1].rowId]);
    expect([...out.subarray(0, DIM)]).toEqual([...out.subarray(DIM)]);
    // Visited in place: the same vectors, by position, and rows it does not hold left out.
    const seen: [number, number[]][] = [];
    expect(index.visitVectors([999_999, 1001, rows[1].rowId], (i, v) => seen.push([i, [...v]]))).toBe(2);
    expect(seen).toEqual([
      [1, [...out.subarray(0, DIM)]],
      [2, [...out.subarray(DIM)]],
    ]);
    // Found under their own scope only, with the source's vector.
    const copied = [...rows.slice(1, 40).map((r, i) => ({ ...r, rowId: 1001 + i, meta })), { ...rows[45], rowId: 1000, meta }];
    expectSameHits(await index.search(rows[45].vector, 5, { scopes: ['thr_copy'] }), exact(copied, rows[45].vector, 5, { scopes: ['thr_copy'] }));
    expect((await index.search(rows[3].vector, 1, { scopes: ['thr_copy'] }))[0].rowId).toBe(1003);
    await index.close();
  });

  it('reserves room for rows ahead of them, its pages mapped by the pool, without changing a row it holds', async () => {
    const index = new FlatIndex({ dimensions: DIM, pool, initialCapacity: 8 });
    const rows = entries(clustered(40, DIM, 4, 8));
    await index.upsert(rows.slice(0, 20));
    const before = new Float32Array(20 * DIM);
    index.copyVectors(
      rows.slice(0, 20).map((r) => r.rowId),
      before,
    );
    // Rows written while the pages are being mapped are not touched either.
    await Promise.all([index.reserve(5_000), index.upsert(rows.slice(20))]);
    const after = new Float32Array(20 * DIM);
    index.copyVectors(
      rows.slice(0, 20).map((r) => r.rowId),
      after,
    );
    expect([...after]).toEqual([...before]);
    expectSameHits(await index.search(rows[25].vector, 5), exact(rows, rows[25].vector, 5));
    await index.reserve(0);
    await index.close();
  });

  it('keeps the memory past its last row mapped ahead of rows that arrive one at a time', async () => {
    const dim = 2048;
    const index = new FlatIndex({ dimensions: dim, pool, initialCapacity: 8 });
    const touch = pool.touch.bind(pool);
    const calls: { from: number; to: number; written: number; size: number; done: Promise<void> }[] = [];
    const spy = vi.spyOn(pool, 'touch').mockImplementation((memory, from, to) => {
      const done = touch(memory, from, to);
      calls.push({ from, to, written: rowOffset(index.layout, index.size), size: memory.buffer.byteLength, done });
      return done;
    });
    try {
      const rows = entries(clustered(300, dim, 4, 8));
      for (const r of rows) await index.upsert([r]);
      // A finished touch looks again, so wait until none starts another.
      for (let seen = -1; seen !== calls.length;) {
        seen = calls.length;
        await Promise.all(calls.map((c) => c.done));
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Only memory no row was written to yet, each byte once, at least half a window at a time
      // unless it is the rest of the memory as it then was (once per size): a few touches, not one
      // per row, however the touches and the writes interleave.
      expect(calls.length).toBeGreaterThan(1);
      const half = TOUCH_AHEAD_BYTES / 2;
      for (const [i, c] of calls.entries()) {
        expect(c.from).toBeGreaterThanOrEqual(c.written);
        expect(c.to).toBeGreaterThan(c.from);
        if (i > 0) expect(c.from).toBeGreaterThanOrEqual(calls[i - 1].to);
        if (c.to - c.from < half) expect(c.to).toBe(c.size);
      }
      const short = calls.filter((c) => c.to - c.from < half);
      expect(new Set(short.map((c) => c.size)).size).toBe(short.length);
      expect(calls.length - short.length).toBeLessThanOrEqual(Math.floor(calls[calls.length - 1].to / half));
      // The last rows found their pages mapped ahead of them: the touched memory reaches past them.
      expect(calls[calls.length - 1].to).toBeGreaterThan(rowOffset(index.layout, 300));
      expectSameHits(await index.search(rows[7].vector, 3), exact(rows, rows[7].vector, 3));
    } finally {
      spy.mockRestore();
      await index.close();
    }
  });

  it('never mixes up rows when searches race with removals that move rows', async () => {
    const index = new FlatIndex({ dimensions: DIM, pool, minRowsPerTask: 64, inlineScanFloats: 0 });
    const rows = entries(clustered(1200, DIM, 6, 5));
    const byId = new Map(rows.map((r) => [r.rowId, r.vector]));
    await index.upsert(rows);
    const query = near(rows[0].vector, 77);
    const searches: Promise<{ rowId: number; score: number }[]>[] = [];
    const removals: Promise<void>[] = [];
    for (let round = 0; round < 20; round++) {
      searches.push(index.search(query, 10, { includePrivileged: true }));
      removals.push(index.remove(rows.slice(round * 30, round * 30 + 30).map((r) => r.rowId)));
    }
    await Promise.all(removals);
    const results = await Promise.all(searches);
    results.forEach((hits, round) => {
      // The first search ran before any removal; the removals (writers go first) then ran
      // before the searches queued behind them. Each saw one whole state, never a half-moved one.
      const left = round === 0 ? rows : rows.slice(600);
      expectSameHits(hits, exact(left, query, 10, { includePrivileged: true }));
      for (const h of hits) expect(byId.has(h.rowId)).toBe(true);
    });
    expect(index.size).toBe(600);
    await index.close();
  });

  it('replaces a row on upsert of the same row id, vector and meta', async () => {
    const index = new FlatIndex({ dimensions: DIM, pool });
    const rows = entries(clustered(200, DIM, 4, 3));
    await index.upsert(rows);
    const target = rows[150].vector;
    const replaced: VectorEntry = { rowId: rows[0].rowId, vector: target, meta: { kind: 'video', sourceType: 'document', scope: null, privileged: false } };
    await index.upsert([replaced]);
    expect(index.size).toBe(200);
    const hits = await index.search(target, 2, { kinds: ['video'] });
    expect(hits.map((h) => h.rowId)).toContain(rows[0].rowId);
    // The old meta no longer matches: row 1 was news before.
    const oldKind = await index.search(rows[0].vector, 200, { kinds: [rows[0].meta.kind] });
    expect(oldKind.map((h) => h.rowId)).not.toContain(rows[0].rowId);
    await index.close();
  });

  it('rejects bad input before writing anything', async () => {
    const index = new FlatIndex({ dimensions: 4, pool });
    const good = {
      rowId: 1,
      vector: new Float32Array([1, 0, 0, 0]),
      meta: { kind: 'news' as const, sourceType: 'document' as const, scope: null, privileged: false },
    };
    await expect(index.upsert([good, { ...good, rowId: 2, vector: new Float32Array(3) }])).rejects.toThrow(/3 dimensions; the index has 4/);
    await expect(index.upsert([{ ...good, vector: new Float32Array([NaN, 0, 0, 0]) }])).rejects.toThrow(/non-finite/);
    await expect(index.upsert([{ ...good, rowId: -1 }])).rejects.toThrow(/rowId/);
    expect(index.size).toBe(0);
    await expect(index.search(new Float32Array(4), 0)).rejects.toThrow(/k must be/);
    expect(() => new FlatIndex({ dimensions: 0, pool })).toThrow(/options.dimensions/);
    await index.close();
  });

  it('refuses scans beyond the queue bound with ERR_SEARCH_BUSY, and recovers', async () => {
    const small = new ScanPool({ threads: 1, queuePerThread: 1 });
    const index = new FlatIndex({ dimensions: DIM, pool: small, inlineScanFloats: 0 });
    try {
      await index.upsert(entries(clustered(3000, DIM, 4, 4)));
      const q = new Float32Array(DIM).fill(1);
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => index.search(q, 3)));
      const busy = results.filter((r) => r.status === 'rejected');
      expect(busy.length).toBeGreaterThan(0);
      for (const r of busy) expect((r as PromiseRejectedResult).reason.code).toBe('ERR_SEARCH_BUSY');
      expect(results.some((r) => r.status === 'fulfilled')).toBe(true);
      expect(await index.search(q, 3)).toHaveLength(3);
    } finally {
      await index.close();
      await small.close();
    }
  });
});

describe('FlatIndex when part of a search is refused', () => {
  // A search split into parts used to give back its scratch slot and read lock as soon as one
  // part was refused ERR_SEARCH_BUSY, while its other parts still wrote scores into that slot:
  // the next search took the slot and returned row ids paired with another search's scores.
  it('keeps its slot and read lock until every part has settled', async () => {
    const pool = new ScanPool({ threads: 2, kernel: 'wasm' });
    const index = new FlatIndex({ dimensions: DIM, pool, minRowsPerTask: 10, inlineScanFloats: 0 });
    const realScan = pool.scan.bind(pool);
    try {
      const rows = entries(clustered(400, DIM, 4, 7));
      await index.upsert(rows);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const spy = vi.spyOn(pool, 'scan').mockImplementation(async (task) => {
        if (task.task === 1) throw new errors.ERR_SEARCH_BUSY('test');
        await held;
        return realScan(task);
      });
      const outcome = { search: false, remove: false };
      const search = index.search(rows[0].vector, 3).finally(() => (outcome.search = true));
      search.catch(() => undefined);
      const removal = index.remove([rows[5].rowId]).then(() => (outcome.remove = true));
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(outcome).toEqual({ search: false, remove: false });
      release();
      await expect(search).rejects.toMatchObject({ code: 'ERR_SEARCH_BUSY' });
      await removal;
      spy.mockRestore();
      expect(await index.search(rows[0].vector, 3)).toHaveLength(3);
    } finally {
      await index.close();
      await pool.close();
    }
  });

  it('is refused whole, before any part is queued, when the queue has no room for all its parts', async () => {
    const pool = new ScanPool({ threads: 2, queuePerThread: 1, kernel: 'wasm' });
    const index = new FlatIndex({ dimensions: DIM, pool, minRowsPerTask: 10, inlineScanFloats: 0 });
    try {
      const rows = entries(clustered(400, DIM, 4, 8));
      await index.upsert(rows);
      const queued = vi.spyOn(pool, 'queueSize', 'get').mockReturnValue(1);
      const scans = vi.spyOn(pool, 'scan');
      await expect(index.search(rows[0].vector, 3)).rejects.toMatchObject({ code: 'ERR_SEARCH_BUSY' });
      expect(scans).not.toHaveBeenCalled();
      queued.mockRestore();
      scans.mockRestore();
      expect(await index.search(rows[0].vector, 3)).toHaveLength(3);
    } finally {
      await index.close();
      await pool.close();
    }
  });
});

describe.each(['native', 'wasm'] as const)('FlatIndex past 2 GiB (%s kernel)', (kernel) => {
  // Rows whose byte offset passes 2^31 were addressed with a signed shift: negative indices, so
  // their vectors and meta were never written and a removal moved the wrong words.
  const dim = 1 << 18; // 1 MiB a row: ~2,000 rows reach 2 GiB
  const unit = (axis: number) => Float32Array.from({ length: dim }, (_, i) => (i === axis ? 1 : 0));
  const meta = { kind: 'news', sourceType: 'document', scope: null, privileged: false } as const;

  it('stores, finds, moves and rescores rows beyond 2 GiB', async () => {
    const pool = new ScanPool({ threads: 2, kernel });
    const layoutProbe = new FlatIndex({ dimensions: dim, pool, initialCapacity: 1 });
    const boundary = Math.ceil((2 ** 31 - layoutProbe.layout.rowsBase) / layoutProbe.layout.stride);
    await layoutProbe.close();
    const index = new FlatIndex({ dimensions: dim, pool, initialCapacity: boundary + 2 });
    try {
      // The rows below 2 GiB only fill the space: one is written, the rest copy it word for word
      // (upserting each checked and normalised its 2^18 floats again, 96% of this test's time).
      await index.upsert([{ rowId: 1, vector: unit(0), meta }]);
      const fillers = Array.from({ length: boundary - 1 }, (_, j) => ({ rowId: j + 2, from: 1, meta }));
      expect(await index.copyRows(fillers)).toEqual([]);
      expect(index.size).toBe(boundary);
      const a = 1_000_001;
      const b = 1_000_002;
      await index.upsert([
        { rowId: a, vector: unit(1), meta },
        { rowId: b, vector: unit(2), meta: { kind: 'thread', sourceType: 'conversation', scope: 'secret', privileged: true } },
      ]);
      expect(rowOffset(index.layout, boundary)).toBeGreaterThanOrEqual(2 ** 31);

      expect(await index.search(unit(1), 1)).toEqual([{ rowId: a, score: expect.closeTo(1, 5) }]);
      const secret = await index.search(unit(2), 3, { sourceType: 'conversation', scopes: ['secret'], includePrivileged: true });
      expect(secret).toEqual([{ rowId: b, score: expect.closeTo(1, 5) }]);
      expect(index.rescore(unit(1), [{ rowId: a, score: 0 }])).toEqual([{ rowId: a, score: expect.closeTo(1, 5) }]);

      // Removing row 1 moves the last row (b, past 2 GiB) into its slot.
      await index.remove([1]);
      expect(index.size).toBe(boundary + 1);
      expect(index.has(1)).toBe(false);
      expect(await index.search(unit(2), 1, { sourceType: 'conversation', scopes: ['secret'], includePrivileged: true })).toEqual([
        { rowId: b, score: expect.closeTo(1, 5) },
      ]);
      expect(await index.search(unit(1), 1)).toEqual([{ rowId: a, score: expect.closeTo(1, 5) }]);
      const out = new Float32Array(dim);
      expect(index.copyVectors([a], out)).toEqual([a]);
      expect(out[1]).toBeCloseTo(1, 5);
    } finally {
      await index.close();
      await pool.close();
    }
  }, 120_000);
});

describe('FlatIndex upsert of many rows', () => {
  it('writes them a step at a time, the event loop running between steps', async () => {
    const pool = new ScanPool({ threads: 1 });
    const index = new FlatIndex({ dimensions: DIM, pool });
    try {
      const rows = entries(clustered(3 * UPSERT_STEP_ROWS + 7, DIM, 4, 3));
      let done = false;
      const upserting = index.upsert(rows).finally(() => (done = true));
      const seen: number[] = [];
      while (!done) {
        seen.push(index.size);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await upserting;
      expect(index.size).toBe(rows.length);
      const steps = [...seen, index.size].map((n, i, all) => n - (all[i - 1] ?? 0)).filter((added) => added > 0);
      expect(Math.max(...steps)).toBeLessThanOrEqual(UPSERT_STEP_ROWS);
      const query = near(rows[5].vector, 1);
      expectSameHits(await index.search(query, 5, { includePrivileged: true }), exact(rows, query, 5, { includePrivileged: true }));
    } finally {
      await index.close();
      await pool.close();
    }
  });
});
