// The native scan kernel (salon-hnsw's scanTop, native/hnsw/src/scan.cc) against a scalar oracle,
// on the flat index's own memory layout: its AVX2 loop, its portable loop, the filter from each
// row's metadata, the top k with the TopK order, and its refusals of bad offsets.
import { describe, expect, it } from 'vitest';
import { countSketch, dotRows, scanFloor, scanKernel, scanTop, type ScanSpec } from 'salon-hnsw';
import { dotScalar } from '../../src/search/flat/kernel.js';
import { META_FLAGS, META_ROW_ID, META_SCOPE, makeLayout, packFlags, pagesForRows, queryOffset, rowOffset } from '../../src/search/flat/layout.js';
import { resolveKernel } from '../../src/search/flat/native-kernel.js';
import { gaussian, metaFor, rng } from './helpers.js';

function setup(dim: number, rows: number, seed: number) {
  const layout = makeLayout(dim, 2, 2);
  const memory = new WebAssembly.Memory({ initial: pagesForRows(layout, rows), maximum: 65536, shared: true });
  const buffer = memory.buffer as unknown as SharedArrayBuffer;
  const f32 = new Float32Array(buffer);
  const i32 = new Int32Array(buffer);
  const rand = rng(seed);
  const vectors = Array.from({ length: rows }, () => Float32Array.from({ length: dim }, () => gaussian(rand)));
  // Garbage in the vector padding must not change any score: only the query's zero padding may cancel it.
  f32.fill(7.5);
  vectors.forEach((v, r) => {
    const base = rowOffset(layout, r) >> 2;
    f32.set(v, base);
    const meta = metaFor(r);
    const m = base + layout.padded;
    i32[m + META_FLAGS] = packFlags(meta);
    i32[m + META_SCOPE] = r % 5;
    i32[m + META_ROW_ID] = 1000 + r;
  });
  const query = Float32Array.from({ length: dim }, () => gaussian(rand));
  const q = queryOffset(layout, 1);
  f32.set(query, q >> 2);
  f32.fill(0, (q >> 2) + dim, (q >> 2) + layout.padded);
  const spec = (over: Partial<ScanSpec>): ScanSpec => ({
    q,
    rowsBase: layout.rowsBase,
    stride: layout.stride,
    d16: layout.d16,
    k: 5,
    kindMask: 0,
    source: -1,
    includePrivileged: true,
    scopes: null,
    start: 0,
    end: rows,
    ...over,
  });
  return { layout, i32, vectors, query, spec };
}

/** The oracle: every listed row passing `keep`, scored in doubles, best first, ties by smaller id. */
function oracle(vectors: Float32Array[], query: Float32Array, k: number, rows: number[], keep: (r: number) => boolean) {
  return rows
    .filter(keep)
    .map((r) => ({ id: 1000 + r, score: dotScalar(query, vectors[r]) }))
    .sort((a, b) => b.score - a.score || a.id - b.id)
    .slice(0, k);
}

function run(i32: Int32Array, spec: ScanSpec, portable = false) {
  const ids = new Int32Array(spec.k);
  const scores = new Float32Array(spec.k);
  const n = scanTop(i32, spec, ids, scores, portable);
  return Array.from(ids.subarray(0, n), (id, i) => ({ id, score: scores[i] }));
}

function expectSame(got: { id: number; score: number }[], want: { id: number; score: number }[]) {
  expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
  got.forEach((h, i) => expect(Math.abs(h.score - want[i].score)).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want[i].score))));
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('native scan kernel', () => {
  it('runs the AVX2 loop on this CPU when it has AVX2 and FMA, and auto picks it there', () => {
    expect(['avx2', 'portable']).toContain(scanKernel);
    expect(resolveKernel('auto')).toBe(scanKernel === 'avx2' ? 'native' : 'wasm');
    expect(resolveKernel('wasm')).toBe('wasm');
    expect(resolveKernel('native')).toBe('native');
  });

  for (const portable of [false, true]) {
    const loop = portable ? 'portable' : 'default';
    for (const dim of [1, 5, 16, 17, 100, 768]) {
      it(`keeps the exact top k at dimension ${dim} (${loop} loop), rows in quads and a remainder`, () => {
        const rows = 4 * 9 + 3;
        const { i32, vectors, query, spec } = setup(dim, rows, dim);
        expectSame(
          run(i32, spec({ k: 7 }), portable),
          oracle(vectors, query, 7, range(rows), () => true),
        );
        // A range that starts and ends inside quads.
        expectSame(
          run(i32, spec({ k: 4, start: 3, end: 22 }), portable),
          oracle(vectors, query, 4, range(22).slice(3), () => true),
        );
      });
    }

    it(`applies the filter from each row's metadata (${loop} loop)`, () => {
      const rows = 203;
      const { i32, vectors, query, spec } = setup(48, rows, 11);
      const cases: [Partial<ScanSpec>, (r: number) => boolean][] = [
        [{ includePrivileged: false }, (r) => !metaFor(r).privileged],
        [{ kindMask: (1 << 0) | (1 << 2) }, (r) => ['news', 'video'].includes(metaFor(r).kind)],
        [{ source: 1 }, (r) => metaFor(r).sourceType === 'conversation'],
        [{ scopes: Int32Array.of(4, 2) }, (r) => r % 5 === 2 || r % 5 === 4],
        [{ scopes: Int32Array.of() }, () => false],
        [
          { kindMask: 1 << 3, scopes: Int32Array.of(3), includePrivileged: false },
          (r) => metaFor(r).kind === 'thread' && r % 5 === 3 && !metaFor(r).privileged,
        ],
      ];
      for (const [filter, keep] of cases) expectSame(run(i32, spec({ k: 9, ...filter }), portable), oracle(vectors, query, 9, range(rows), keep));
    });

    it(`scores only the listed rows when given a list (${loop} loop)`, () => {
      const { i32, vectors, query, spec } = setup(64, 40, 9);
      const list = [39, 0, 17, 3, 25, 8, 11];
      const got = run(i32, spec({ k: list.length, rows: Int32Array.from(list), start: undefined, end: undefined }), portable);
      expectSame(
        got,
        oracle(vectors, query, list.length, list, () => true),
      );
    });
  }

  it('keeps the row with the smaller id among equal scores, as TopK does', () => {
    const { i32, layout, spec } = setup(16, 12, 1);
    // Rows 2, 5 and 9 hold the same vector: equal scores.
    const f32 = new Float32Array(i32.buffer);
    for (const r of [5, 9]) f32.copyWithin(rowOffset(layout, r) >> 2, rowOffset(layout, 2) >> 2, (rowOffset(layout, 2) >> 2) + 16);
    const q = spec({}).q >> 2;
    f32.set(f32.subarray(rowOffset(layout, 2) >> 2, (rowOffset(layout, 2) >> 2) + 16), q);
    const got = run(i32, spec({ k: 2 }));
    expect(got.map((h) => h.id)).toEqual([1002, 1005]);
  });

  it('refuses offsets outside the memory and bad arguments with an error, never reading past it', () => {
    const { i32, layout, spec } = setup(32, 10, 2);
    const bytes = i32.byteLength;
    const rowsFit = Math.floor((bytes - layout.rowsBase) / layout.stride);
    expect(() => run(i32, spec({ end: rowsFit + 1 }))).toThrow(RangeError);
    expect(() => run(i32, spec({ start: 5, end: 4 }))).toThrow(RangeError);
    expect(() => run(i32, spec({ q: bytes - 8 }))).toThrow(RangeError);
    expect(() => run(i32, spec({ q: 2 }))).toThrow(RangeError);
    expect(() => run(i32, spec({ rows: Int32Array.of(0, rowsFit), start: undefined, end: undefined }))).toThrow(RangeError);
    expect(() => run(i32, spec({ rows: Int32Array.of(-1), start: undefined, end: undefined }))).toThrow(RangeError);
    expect(() => run(i32, spec({ d16: 0 }))).toThrow(RangeError);
    expect(() => run(i32, spec({ stride: layout.d16 * 64 }))).toThrow(RangeError);
    expect(() => run(i32, spec({ start: -1 }))).toThrow(RangeError);
    expect(() => run(i32, spec({ start: 1.5 }))).toThrow(RangeError);
    expect(() => run(i32, spec({ scopes: [1, 2] as unknown as Int32Array }))).toThrow(TypeError);
    expect(() => scanTop(i32, spec({}), new Int32Array(2), new Float32Array(5))).toThrow(RangeError);
    expect(() => scanTop(i32, spec({ k: 0 }), new Int32Array(2), new Float32Array(2))).toThrow(RangeError);
    expect(() => scanTop(i32, spec({}), new Float32Array(5) as unknown as Int32Array, new Float32Array(5))).toThrow(TypeError);
    expect(() => scanTop({} as Int32Array, spec({}), new Int32Array(5), new Float32Array(5))).toThrow(TypeError);
    // The memory is still whole: a good call after the refusals answers.
    expect(run(i32, spec({})).length).toBe(5);
  });

  it('refuses rows and strides whose offsets wrap past 2^64, instead of reading far outside the memory', () => {
    const { i32, layout, spec } = setup(32, 10, 2);
    const s = spec({});
    // 2^32 rows of 2^32 bytes end at 2^64 bytes, which wrapped to 0: the bounds check passed.
    expect(() => run(i32, spec({ stride: 2 ** 32, start: 0, end: 2 ** 32 }))).toThrow(RangeError);
    expect(() => run(i32, spec({ stride: 2 ** 33, rows: Int32Array.of(2 ** 31 - 1), start: undefined, end: undefined }))).toThrow(RangeError);
    expect(() =>
      dotRows(i32, { ...layout, stride: 2 ** 33 }, Int32Array.of(2 ** 31 - 1), Int32Array.of(0, 1), Int32Array.of(2 ** 31 - 1), new Float32Array(1)),
    ).toThrow(RangeError);
    expect(() => scanFloor(i32, { q: s.q, rowsBase: s.rowsBase, stride: 2 ** 32, d16: s.d16, n: 2 ** 32 }, 1)).toThrow(RangeError);
    // The memory is still whole: a good call after the refusals answers.
    expect(run(i32, spec({})).length).toBe(5);
  });

  it('reads a view over an ordinary ArrayBuffer as well', () => {
    const { i32, vectors, query, spec } = setup(24, 30, 4);
    const copy = new Int32Array(i32.length);
    copy.set(i32);
    expectSame(
      run(copy, spec({ k: 3 })),
      oracle(vectors, query, 3, range(30), () => true),
    );
  });

  it('scanFloor (the benchmark floor) finds the same best score on one thread and on two', () => {
    const rows = 101;
    const { i32, vectors, query, spec } = setup(100, rows, 6);
    const s = spec({});
    const best = Math.max(...vectors.map((v) => dotScalar(query, v)));
    for (const threads of [1, 2]) {
      const floor = scanFloor(i32, { q: s.q, rowsBase: s.rowsBase, stride: s.stride, d16: s.d16, n: rows }, threads);
      expect(Math.abs(floor.best - best)).toBeLessThanOrEqual(1e-3);
      expect(floor.ms).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('countSketch (fusion’s scratch graphs)', () => {
  it('adds each element, signed, into its bucket, row by row, and refuses a bucket out of range', () => {
    const rand = rng(5);
    const dim = 300;
    const vectors = Float32Array.from({ length: 3 * dim }, () => gaussian(rand));
    const buckets = Uint16Array.from({ length: dim }, (_, i) => (i * 7) % 16);
    const signs = Float32Array.from({ length: dim }, (_, i) => (i % 3 ? 1 : -1));
    const out = new Float32Array(3 * 16).fill(9);
    countSketch(vectors, buckets, signs, out);
    const expected = new Float64Array(3 * 16);
    for (let r = 0; r < 3; r++) for (let i = 0; i < dim; i++) expected[r * 16 + buckets[i]] += signs[i] * vectors[r * dim + i];
    out.forEach((x, j) => expect(x).toBeCloseTo(expected[j], 4));
    expect(() =>
      countSketch(
        vectors,
        Uint16Array.from(buckets, () => 16),
        signs,
        out,
      ),
    ).toThrow(/buckets/);
    expect(() => countSketch(vectors.subarray(1), buckets, signs, out)).toThrow(RangeError);
  });
});

describe('dotRows (fusion’s exact scores, many queries at once)', () => {
  it('gives each query row’s dot product with each of its candidate rows, and refuses rows outside the memory', () => {
    const { layout, i32, vectors } = setup(40, 30, 11);
    // Both sides are rows here, so their padding must be zeros, as the flat index writes it (setup fills it with garbage).
    const f32 = new Float32Array(i32.buffer);
    for (let r = 0; r < 30; r++) f32.fill(0, (rowOffset(layout, r) >> 2) + 40, (rowOffset(layout, r) >> 2) + layout.padded);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i], 0);
    const queries = Int32Array.from([2, 9, 17]);
    const offsets = Int32Array.from([0, 3, 3, 5]);
    const candidates = Int32Array.from([0, 2, 29, 16, 18]);
    const out = new Float32Array(5).fill(-9);
    dotRows(i32, layout, queries, offsets, candidates, out);
    const want = [
      dot(vectors[2], vectors[0]),
      dot(vectors[2], vectors[2]),
      dot(vectors[2], vectors[29]),
      dot(vectors[17], vectors[16]),
      dot(vectors[17], vectors[18]),
    ];
    out.forEach((x, j) => expect(x).toBeCloseTo(want[j], 3));
    expect(() => dotRows(i32, layout, queries, offsets, Int32Array.from([0, 2, 1_000_000, 16, 18]), out)).toThrow(/candidates/);
    expect(() => dotRows(i32, layout, Int32Array.from([2, -1, 17]), offsets, candidates, out)).toThrow(/queries/);
    expect(() => dotRows(i32, layout, queries, Int32Array.from([0, 3, 5]), candidates, out)).toThrow(/offsets/);
    expect(() => dotRows(i32, layout, queries, offsets, candidates, new Float32Array(4))).toThrow(/out/);
    expect(() => dotRows(i32, layout, queries, offsets, candidates, new Int32Array(5) as unknown as Float32Array)).toThrow(TypeError);
  });
});
