// salon-hnsw, the project's hnswlib binding: typed arrays in and out, a multi-threaded build,
// half-precision storage, and files in hnswlib's own format (f32 graphs are readable by
// hnswlib-node, and the other way round).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import hnswlib from 'hnswlib-node';
import { Graph } from 'salon-hnsw';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { clustered, entries, exact, near, recall } from './helpers.js';

const DIM = 48;
const rows = entries(clustered(3000, DIM, 20, 77));

function packed(from: number, to: number): { vectors: Float32Array; labels: Uint32Array } {
  const vectors = new Float32Array((to - from) * DIM);
  const labels = new Uint32Array(to - from);
  for (let i = from; i < to; i++) {
    vectors.set(rows[i].vector, (i - from) * DIM);
    labels[i - from] = rows[i].rowId;
  }
  return { vectors, labels };
}

/** Share of rows [from, to), every `step`-th, that are their own nearest in `graph`. */
function selfRecall(graph: Graph, from: number, to: number, step: number): number {
  let found = 0;
  let asked = 0;
  for (let i = from; i < to; i += step, asked++) if (search(graph, rows[i].vector, 1)[0]?.rowId === rows[i].rowId) found++;
  return found / asked;
}

function search(graph: Graph, query: Float32Array, k: number): { rowId: number; score: number }[] {
  const labels = new Uint32Array(k);
  const distances = new Float32Array(k);
  const n = graph.search(query, k, labels, distances);
  return Array.from({ length: n }, (_, i) => ({ rowId: labels[i], score: 1 - distances[i] }));
}

function meanRecall(graph: Graph, upTo = rows.length): number {
  let total = 0;
  for (let q = 0; q < 40; q++) {
    const query = near(rows[(q * 71) % upTo].vector, q);
    total += recall(search(graph, query, 10), exact(rows.slice(0, upTo), query, 10, { includePrivileged: true }));
  }
  return total / 40;
}

describe('salon-hnsw Graph', () => {
  it('builds on several threads with the recall of a one-thread build, growing past its capacity', () => {
    const one = new Graph(DIM, 100, 16, 96, 100);
    const two = new Graph(DIM, 100, 16, 96, 100);
    const { vectors, labels } = packed(0, rows.length);
    one.addPoints(vectors, labels, 1);
    two.addPoints(vectors, labels, 4);
    expect(one.count).toBe(rows.length);
    expect(two.count).toBe(rows.length);
    expect(two.capacity).toBeGreaterThanOrEqual(rows.length);
    two.setEf(40);
    one.setEf(40);
    expect(meanRecall(two)).toBeGreaterThanOrEqual(0.95);
    expect(Math.abs(meanRecall(two) - meanRecall(one))).toBeLessThan(0.05);
  });

  it('scores by cosine whatever the vectors’ length, nearest first, and writes no more than k hits', () => {
    const g = new Graph(DIM, 10, 8, 50, 1);
    const { vectors, labels } = packed(0, 200);
    for (let i = 0; i < vectors.length; i++) vectors[i] *= 7; // not unit length: normalised inside
    g.addPoints(vectors, labels);
    const hits = search(g, rows[5].vector, 5);
    expect(hits).toHaveLength(5);
    expect(hits[0].rowId).toBe(rows[5].rowId);
    expect(hits[0].score).toBeCloseTo(1, 2); // half precision: about 1e-3
    for (let i = 1; i < hits.length; i++) expect(hits[i].score).toBeLessThanOrEqual(hits[i - 1].score);
    const few = new Uint32Array(3);
    expect(g.search(rows[5].vector, 10, few, new Float32Array(10))).toBe(3);
  });

  it('deletes by label, reports unknown labels, and replaces a label added again', () => {
    const g = new Graph(DIM, 10, 8, 50, 1);
    const { vectors, labels } = packed(0, 100);
    g.addPoints(vectors, labels);
    expect(g.markDelete(rows[3].rowId)).toBe(true);
    expect(g.markDelete(rows[3].rowId)).toBe(false);
    expect(g.markDelete(999_999)).toBe(false);
    expect(search(g, rows[3].vector, 10).map((h) => h.rowId)).not.toContain(rows[3].rowId);
    // Row 4's label now carries row 50's vector.
    g.addPoints(rows[50].vector.slice(), Uint32Array.of(rows[4].rowId));
    expect(g.count).toBe(100);
    const best = search(g, rows[50].vector, 2).map((h) => h.rowId);
    expect(best).toEqual(expect.arrayContaining([rows[4].rowId, rows[50].rowId]));
  });

  // Half floats are the binding's default; eight bits are asked for.
  for (const [encoding, tolerance, given] of [
    ['f16', 2e-3, undefined],
    ['i8', 1.5e-2, 'i8'],
  ] as const) {
    it(`stores ${encoding} elements with the recall of float32 and scores within ${tolerance} of exact`, () => {
      const compact = new Graph(DIM, 100, 16, 96, 5, given);
      const full = new Graph(DIM, 100, 16, 96, 5, 'f32');
      expect(compact.encoding).toBe(encoding);
      expect(full.encoding).toBe('f32');
      const { vectors, labels } = packed(0, rows.length);
      compact.addPoints(vectors, labels, 2);
      full.addPoints(vectors, labels, 2);
      compact.setEf(40);
      full.setEf(40);
      expect(Math.abs(meanRecall(compact) - meanRecall(full))).toBeLessThan(0.03);
      for (let q = 0; q < 20; q++) {
        const query = near(rows[q * 37].vector, q);
        const byRow = new Map(exact(rows, query, 10, { includePrivileged: true }).map((h) => [h.rowId, h.score]));
        for (const h of search(compact, query, 10)) if (byRow.has(h.rowId)) expect(Math.abs(h.score - byRow.get(h.rowId)!)).toBeLessThan(tolerance);
      }
    });
  }

  it('scores exactly enough at a dimension that is not a multiple of the SIMD width (the tail loops)', () => {
    const dim = 101; // 64 + 32 + 5: every loop of the eight-bit distance runs
    const vectors = clustered(60, dim, 4, 9);
    const tolerance = { f32: 1e-5, f16: 2e-3, i8: 1.5e-2 };
    for (const encoding of ['f16', 'f32', 'i8'] as const) {
      const g = new Graph(dim, 60, 8, 100, 2, encoding);
      const packedRows = new Float32Array(60 * dim);
      vectors.forEach((v, i) => packedRows.set(v, i * dim));
      g.addPoints(
        packedRows,
        Uint32Array.from({ length: 60 }, (_, i) => i + 1),
      );
      g.setEf(100); // a 60-node graph searched with ef 100 is exhaustive
      const query = near(vectors[7], 1);
      const truth = exact(entries(vectors), query, 5, { includePrivileged: true });
      const hits = search(g, query, 5);
      if (encoding !== 'i8') expect(hits.map((h) => h.rowId)).toEqual(truth.map((h) => h.rowId));
      const byRow = new Map(truth.map((h) => [h.rowId, h.score]));
      hits.forEach((h, i) => expect(Math.abs(h.score - (byRow.get(h.rowId) ?? truth[i].score))).toBeLessThan(tolerance[encoding]));
    }
  });

  it('gives the same answers with the portable distance code (no AVX2, as on ARM) as with the SIMD code', () => {
    const dim = 101;
    const vectors = clustered(60, dim, 4, 11);
    const packedRows = new Float32Array(60 * dim);
    vectors.forEach((v, i) => packedRows.set(v, i * dim));
    const labels = Uint32Array.from({ length: 60 }, (_, i) => i + 1);
    for (const encoding of ['f16', 'f32', 'i8'] as const) {
      process.env.SALON_HNSW_SCALAR = '1';
      let portable: Graph;
      try {
        portable = new Graph(dim, 60, 8, 100, 2, encoding);
      } finally {
        delete process.env.SALON_HNSW_SCALAR;
      }
      const simd = new Graph(dim, 60, 8, 100, 2, encoding);
      for (const g of [portable, simd]) {
        g.addPoints(packedRows, labels, 1);
        g.setEf(100); // exhaustive on 60 nodes
      }
      for (let q = 0; q < 5; q++) {
        const query = near(vectors[q * 11], q);
        const a = search(portable, query, 8);
        const b = search(simd, query, 8);
        expect(a.map((h) => h.rowId)).toEqual(b.map((h) => h.rowId));
        a.forEach((h, i) => expect(Math.abs(h.score - b[i].score)).toBeLessThan(1e-5));
      }
    }
  });

  it('adds on the thread pool with the graph of a blocking add, searching beside it and refusing every other change until it is done', async () => {
    const blocking = new Graph(DIM, 100, 16, 96, 100);
    const pooled = new Graph(DIM, 100, 16, 96, 100);
    const { vectors, labels } = packed(0, 1500);
    blocking.addPoints(vectors, labels, 1);
    const adding = pooled.addPointsAsync(vectors, labels);
    // Grown before the add started (a resize beside a search would move what it reads).
    expect(pooled.capacity).toBeGreaterThanOrEqual(1500);
    // The rows were copied: the caller's arrays may change at once.
    vectors.fill(0);
    const query = rows[3].vector;
    // Searches go on meanwhile: they find what is linked so far, and only rows of the graph.
    const known = new Set(rows.slice(0, 1500).map((r) => r.rowId));
    for (const hit of search(pooled, query, 5)) expect(known.has(hit.rowId)).toBe(true);
    expect(() => pooled.markDelete(rows[3].rowId)).toThrow(/while points are being added/);
    expect(() => pooled.addPoints(rows[0].vector.slice(), Uint32Array.of(1))).toThrow(/while points are being added/);
    expect(() => pooled.addPointsAsync(rows[0].vector.slice(), Uint32Array.of(1))).toThrow(/while points are being added/);
    await adding;
    expect(pooled.count).toBe(1500);
    pooled.setEf(40);
    blocking.setEf(40);
    // One thread and the same seed and order: the same graph, so the same answers.
    for (let q = 0; q < 20; q++) {
      const near1 = near(rows[(q * 71) % 1500].vector, q);
      expect(search(pooled, near1, 10)).toEqual(search(blocking, near1, 10));
    }
    expect(() => pooled.addPointsAsync(new Float32Array(DIM + 1), Uint32Array.of(1))).toThrow(/multiple of 48/);
    await pooled.addPointsAsync(rows[2000].vector.slice(), Uint32Array.of(rows[2000].rowId));
    expect(search(pooled, rows[2000].vector, 1)[0].rowId).toBe(rows[2000].rowId);
  });

  it('adds on several threads from the pool: every row is linked and found, and other calls wait until the add is done', async () => {
    const pooled = new Graph(DIM, 100, 16, 96, 100);
    const { vectors, labels } = packed(0, 1500);
    const adding = pooled.addPointsAsync(vectors, labels, 2);
    expect(() => pooled.addPoints(rows[0].vector.slice(), Uint32Array.of(1))).toThrow(/while points are being added/);
    await adding;
    expect(pooled.count).toBe(1500);
    pooled.setEf(64);
    // The order in which two threads link the rows varies, so the graph does; each row must still be its own nearest.
    expect(selfRecall(pooled, 0, 1500, 7)).toBeGreaterThan(0.97);
    // An empty graph added to on threads takes its first row alone (an entry point), then the rest.
    const fresh = new Graph(DIM, 10, 8, 50, 3);
    await fresh.addPointsAsync(packed(0, 40).vectors, packed(0, 40).labels, 4);
    expect(fresh.count).toBe(40);
  });
  it('searches beside an add on other threads, one query at a time and in batches, with answers that stay sound', async () => {
    const graph = new Graph(DIM, 16, 16, 96, 5);
    const first = packed(0, 200);
    graph.addPoints(first.vectors, first.labels, 1);
    const rest = packed(200, 3000);
    // Starting nearly empty: the add grows the graph and raises its top level while searches run.
    const adding = graph.addPointsAsync(rest.vectors, rest.labels, 2);
    let settled = false;
    void adding.then(() => (settled = true));
    const known = new Set(rows.map((r) => r.rowId));
    let rounds = 0;
    while (!settled) {
      const q = rows[(rounds * 37) % 200].vector;
      const hits = search(graph, q, 10);
      expect(hits.length).toBeGreaterThan(0);
      hits.forEach((h, i) => {
        expect(known.has(h.rowId)).toBe(true);
        if (i > 0) expect(h.score).toBeLessThanOrEqual(hits[i - 1].score + 1e-6);
      });
      // Rows linked before the add began are there throughout (a point is its own nearest).
      expect(hits[0].rowId).toBe(rows[(rounds * 37) % 200].rowId);
      const n = 8;
      const queries = new Float32Array(n * DIM);
      for (let i = 0; i < n; i++) queries.set(rows[(rounds + i * 13) % 200].vector, i * DIM);
      const labels = new Uint32Array(n * 5);
      const counts = new Uint32Array(n);
      graph.searchMany(queries, 5, labels, new Float32Array(n * 5), counts, 2);
      for (let i = 0; i < n; i++) expect(labels[i * 5]).toBe(rows[(rounds + i * 13) % 200].rowId);
      rounds++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await adding;
    expect(graph.count).toBe(3000);
    graph.setEf(64);
    expect(selfRecall(graph, 200, 3000, 11)).toBeGreaterThan(0.97);
  });

  it('refuses bad arguments with a clear error and stays usable', () => {
    const g = new Graph(DIM, 10, 8, 50, 1);
    expect(() => g.addPoints(new Float32Array(DIM + 1), Uint32Array.of(1))).toThrow(/multiple of 48/);
    expect(() => g.addPoints(new Float32Array(DIM), Uint32Array.of(1, 2))).toThrow(/one label per vector/);
    expect(() => g.addPoints([1, 2] as unknown as Float32Array, Uint32Array.of(1))).toThrow(/Float32Array/);
    expect(() => g.search(new Float32Array(DIM - 1), 1, new Uint32Array(1), new Float32Array(1))).toThrow(/48/);
    expect(() => new Graph(0, 10, 8, 50, 1)).toThrow(/dimensions/);
    expect(() => new Graph(DIM, 10, 8, 50, 1, 'f8' as 'f16')).toThrow(/encoding/);
    expect(g.count).toBe(0);
    expect(g.search(new Float32Array(DIM), 5, new Uint32Array(5), new Float32Array(5))).toBe(0);
    g.addPoints(rows[0].vector.slice(), Uint32Array.of(7));
    expect(search(g, rows[0].vector, 1)[0].rowId).toBe(7);
  });

  it('refuses dimensions, a capacity, m, efConstruction or a seed that is no whole number in its range', async () => {
    // Dimensions of 2^32 were taken as 0, and the graph's first length check divided by zero (SIGFPE).
    expect(() => new Graph(2 ** 32, 10, 8, 50, 1)).toThrow(/dimensions must be a whole number in \[1, 2\^32\)/);
    expect(() => Graph.read('/no/such/graph', 2 ** 32)).toThrow(RangeError);
    expect(() => new Graph(DIM + 0.5, 10, 8, 50, 1)).toThrow(RangeError);
    expect(() => new Graph(DIM, 2 ** 32 + 10, 8, 50, 1)).toThrow(/capacity/);
    // hnswlib draws levels scaled by 1 / log(m): with m = 1 every add failed ("Not enough memory").
    expect(() => new Graph(DIM, 10, 1, 50, 1)).toThrow(/m must be a whole number in \[2, 2\^32\)/);
    expect(() => new Graph(DIM, 10, 8, 0, 1)).toThrow(/efConstruction/);
    expect(() => new Graph(DIM, 10, 8, 50, -1)).toThrow(/seed/);
    expect(() => new Graph(DIM, 10, 8, '50' as unknown as number, 1)).toThrow(TypeError);
    const g = new Graph(DIM, 10, 2, 50, 0);
    const { vectors, labels } = packed(0, 30);
    g.addPoints(vectors, labels);
    expect(search(g, rows[3].vector, 1)[0].rowId).toBe(rows[3].rowId);
    await expect(Graph.read('/no/such/graph', DIM)).rejects.toThrow(/hnswlib/);
  });

  it('refuses a label or capacity outside [0, 2^32) and arguments of the wrong type, changing nothing', () => {
    const g = new Graph(DIM, 10, 8, 50, 1);
    g.addPoints(rows[0].vector.slice(), Uint32Array.of(0));
    g.addPoints(rows[1].vector.slice(), Uint32Array.of(7));
    // A label was taken modulo 2^32 (2^32 + 7 deleted 7), and a label that is no number as 0.
    expect(() => g.markDelete(2 ** 32 + 7)).toThrow(RangeError);
    expect(() => g.markDelete(-1)).toThrow(RangeError);
    expect(() => g.markDelete(7.5)).toThrow(RangeError);
    expect(() => g.markDelete('7' as unknown as number)).toThrow(TypeError);
    expect(search(g, rows[1].vector, 1)[0].rowId).toBe(7);
    expect(search(g, rows[0].vector, 1)[0].rowId).toBe(0);
    expect(() => g.resize(2 ** 32 + 20)).toThrow(RangeError);
    expect(() => g.resize(undefined as unknown as number)).toThrow(TypeError);
    expect(g.capacity).toBe(10);
    expect(() => g.setEf('x' as unknown as number)).toThrow(TypeError);
    expect(() => g.writeSync(5 as unknown as string)).toThrow(TypeError);
    expect(g.markDelete(7)).toBe(true);
    expect(g.markDelete(7)).toBe(false);
    g.resize(20);
    expect(g.capacity).toBe(20);
  });

  it('adds rows whose labels (and vectors) are views of a SharedArrayBuffer, blocking and on the pool', async () => {
    /** `from` copied into a view at byte `offset` of a SharedArrayBuffer. */
    const shared = <T extends Uint32Array | Int32Array | Float32Array>(
      from: T,
      Kind: new (buffer: SharedArrayBuffer, offset: number, length: number) => T,
      offset: number,
    ): T => {
      const view = new Kind(new SharedArrayBuffer(from.byteLength + offset), offset, from.length);
      view.set(from);
      return view;
    };
    const { vectors, labels } = packed(0, 20);
    const g = new Graph(DIM, 10, 8, 50, 1);
    // The labels were read through napi_get_arraybuffer_info, which gives no data for a SharedArrayBuffer: a segfault.
    g.addPoints(shared(vectors.slice(0, 10 * DIM), Float32Array, 0), shared(labels.slice(0, 10), Uint32Array, 4));
    await g.addPointsAsync(shared(vectors.slice(10 * DIM), Float32Array, 0), shared(Int32Array.from(labels.slice(10)), Int32Array, 8));
    expect(g.count).toBe(20);
    for (const i of [0, 9, 10, 19]) expect(search(g, rows[i].vector, 1)[0].rowId).toBe(rows[i].rowId);
  });

  it.skipIf(!existsSync('/usr/bin/prlimit'))('goes on with the threads it could start when a thread cannot be started, instead of aborting the process', () => {
    // A child whose address space leaves room for a few 8 MB thread stacks only: searchMany asks for 64 threads.
    const script = `
      const { execFileSync } = require('node:child_process');
      const { readFileSync } = require('node:fs');
      const { Graph } = require('salon-hnsw');
      const dim = 16, n = 64;
      const g = new Graph(dim, 100, 8, 50, 1, 'f32');
      const v = Float32Array.from({ length: n * dim }, (_, i) => Math.sin(i * 1.7));
      g.addPoints(v, Uint32Array.from({ length: n }, (_, i) => i));
      const labels = new Uint32Array(n * 2), counts = new Uint32Array(n);
      const size = Number(/VmSize:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
      execFileSync('/usr/bin/prlimit', ['--pid', String(process.pid), '--as=' + (size + 40 * 1024 * 1024)]);
      g.searchMany(v, 2, labels, new Float32Array(n * 2), counts, 64);
      console.log(JSON.stringify({ hits: counts.reduce((a, b) => a + b, 0), selves: Array.from({ length: n }, (_, i) => labels[i * 2] === i).filter(Boolean).length }));
    `;
    // The exception of a failed start left threads running, and std::terminate aborted the process (exit 134).
    const run = spawnSync(process.execPath, ['-e', script], { cwd: process.cwd(), encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const { hits, selves } = JSON.parse(run.stdout);
    expect(hits).toBe(128);
    expect(selves).toBeGreaterThan(60);
  });

  it('refuses a searchMany k whose n × k wraps past 2^64, writing no hit outside the out arrays', () => {
    const g = new Graph(DIM, 10, 8, 50, 1);
    const { vectors, labels } = packed(0, 10);
    g.addPoints(vectors, labels);
    const queries = vectors.slice(0, 8 * DIM);
    // 8 × 2^61 is 2^64, which wrapped to 0 and passed the check against the arrays' lengths.
    expect(() => g.searchMany(queries, 2 ** 61, new Uint32Array(16), new Float32Array(16), new Uint32Array(8), 1)).toThrow(RangeError);
    expect(() => g.searchMany(queries, 3, new Uint32Array(23), new Float32Array(24), new Uint32Array(8), 1)).toThrow(RangeError);
    const found = new Uint32Array(16);
    const counts = new Uint32Array(8);
    g.searchMany(queries, 2, found, new Float32Array(16), counts, 1);
    expect([...counts]).toEqual(Array(8).fill(2));
    for (let i = 0; i < 8; i++) expect(found[i * 2]).toBe(labels[i]);
  });

  it('writes and reads float32 graphs as hnswlib files that hnswlib-node reads and writes too, off the event loop', async () => {
    const tmp = tempDir('salon-native-graph-');
    try {
      const g = new Graph(DIM, 10, 16, 96, 3, 'f32');
      const { vectors, labels } = packed(0, 1000);
      g.addPoints(vectors, labels, 2);
      g.setEf(40);
      const before = meanRecall(g, 1000);
      const writing = g.write(join(tmp.dir, 'ours'));
      expect(() => g.addPoints(rows[1000].vector.slice(), Uint32Array.of(rows[1000].rowId))).toThrow(/being written/);
      expect(search(g, rows[9].vector, 1)[0].rowId).toBe(rows[9].rowId); // searches go on meanwhile
      await writing;

      const read = await Graph.read(join(tmp.dir, 'ours'), DIM, 'f32');
      read.setEf(40);
      expect(read.count).toBe(1000);
      expect(meanRecall(read, 1000)).toBeCloseTo(before, 5);

      const theirs = new hnswlib.HierarchicalNSW('cosine', DIM);
      await theirs.readIndex(join(tmp.dir, 'ours'));
      theirs.setEf(40);
      const q = near(rows[12].vector, 1);
      const r = theirs.searchKnn(Array.from(q), 5);
      expect(r.neighbors).toEqual(search(read, q, 5).map((h) => h.rowId));

      theirs.markDelete(rows[12].rowId);
      await theirs.writeIndex(join(tmp.dir, 'theirs'));
      const back = await Graph.read(join(tmp.dir, 'theirs'), DIM, 'f32');
      expect(back.markDelete(rows[12].rowId)).toBe(false); // the deletion came through
      await expect(Graph.read(join(tmp.dir, 'missing'), DIM)).rejects.toThrow(/hnswlib/);
    } finally {
      tmp.cleanup();
    }
  });

  it('refuses to read a graph file of other dimensions or another encoding than it is asked for', async () => {
    const tmp = tempDir('salon-native-graph-');
    try {
      const g = new Graph(DIM, 10, 16, 96, 3, 'f32');
      const { vectors, labels } = packed(0, 100);
      g.addPoints(vectors, labels);
      const file = join(tmp.dir, 'graph');
      await g.write(file);
      // Read as more dimensions, hnswlib kept the file's layout and read and wrote past each vector.
      await expect(Graph.read(file, DIM + 16, 'f32')).rejects.toThrow(
        /hnswlib: the file's elements hold 192 bytes of vector, where 64 dimensions in f32 take 256/,
      );
      await expect(Graph.read(file, DIM / 2, 'f32')).rejects.toThrow(/other dimensions or another encoding/);
      await expect(Graph.read(file, DIM, 'f16')).rejects.toThrow(/other dimensions or another encoding/);
      await expect(Graph.read(file, DIM, 'i8')).rejects.toThrow(/other dimensions or another encoding/);
      const read = await Graph.read(file, DIM, 'f32');
      expect(search(read, rows[5].vector, 1)[0].rowId).toBe(rows[5].rowId);
    } finally {
      tmp.cleanup();
    }
  });

  it('refuses a write that could not open or fill its file instead of reporting it saved', async () => {
    const tmp = tempDir('salon-native-graph-');
    try {
      const g = new Graph(DIM, 10, 16, 96, 3, 'i8');
      const { vectors, labels } = packed(0, 200);
      g.addPoints(vectors, labels, 1);
      // hnswlib never looked at its stream: a full disk "saved" a truncated graph.
      if (existsSync('/dev/full')) await expect(g.write('/dev/full')).rejects.toThrow(/hnswlib: could not write/);
      await expect(g.write(join(tmp.dir, 'no-such-dir', 'graph'))).rejects.toThrow(/hnswlib: could not write/);
      expect(() => g.writeSync(join(tmp.dir, 'no-such-dir', 'graph'))).toThrow(/hnswlib: could not write/);
      await g.write(join(tmp.dir, 'graph')); // the graph is still whole and writable
      expect((await Graph.read(join(tmp.dir, 'graph'), DIM, 'i8')).count).toBe(200);
    } finally {
      tmp.cleanup();
    }
  });

  for (const encoding of ['f16', 'i8'] as const) {
    it(`writes and reads ${encoding} graphs with the same answers`, async () => {
      const tmp = tempDir('salon-native-graph-');
      try {
        const g = new Graph(DIM, 10, 16, 96, 3, encoding);
        const { vectors, labels } = packed(0, 1000);
        g.addPoints(vectors, labels, 2);
        await g.write(join(tmp.dir, encoding));
        const read = await Graph.read(join(tmp.dir, encoding), DIM, encoding);
        expect(read.encoding).toBe(encoding);
        for (let q = 0; q < 10; q++) {
          const query = near(rows[q * 97].vector, q);
          expect(search(read, query, 5)).toEqual(search(g, query, 5));
        }
      } finally {
        tmp.cleanup();
      }
    });
  }
});
