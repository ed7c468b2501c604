/**
 * Vector search benchmark (README, Benchmarks): the flat index (worker pool + WASM SIMD kernel) and the
 * HNSW graph (built by the tiered index in its worker), on clustered synthetic vectors.
 *
 *   npm run bench:search -- --n N --dim D … (USAGE below)
 *
 * Data: a Gaussian mixture of C clusters whose covariance is low-rank (an L-dimensional latent
 * space per cluster) plus isotropic noise — real embeddings concentrate near a low-dimensional
 * manifold, which isotropic noise in 768 dimensions does not (`--latent 0` gives that harder case).
 * Queries are data points plus noise. Recall@10 is measured against exact brute force in plain
 * JS doubles. Event-loop delay is sampled while the graph builds, and its longest holds are listed
 * with the garbage-collection pauses inside them (`event_loop_stalls`). The last line is the JSON.
 *
 * The flat scan is measured against its floor in the same run: before each timed search, the same
 * query goes through salon-hnsw's `scanFloor`, a plain AVX2/FMA loop over the index's own rows on
 * `--threads` native threads (no pool, no filter, no top k), so `flat.floor_p50_ms` and
 * `flat.ratio_to_floor` (flat p50 / floor p50) come from the same minutes of this machine.
 * `--compare-wasm` also times the WebAssembly kernel on a second index, searches alternating with
 * the native ones (`flat_wasm`).
 */
import { availableParallelism, totalmem } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { FlatIndex } from '../src/search/flat/flat-index.js';
import { DEFAULT_HNSW_PARAMS } from '../src/search/graph/hnsw-worker-client.js';
import { ScanPool } from '../src/search/flat/scan-pool.js';
import type { ScanKernelChoice } from '../src/search/flat/native-kernel.js';
import { TieredIndex } from '../src/search/tiered-index.js';
import type { VectorHit } from '../src/search/types.js';
import { prng as rng } from './synthetic-text.js';
import { stderrLogger } from '../src/logger.js';
import { BenchUsageError, benchOptions } from './args.js';
import { helperThreadsAsServed } from './local-app.js';
import { stallLog } from './stalls.js';

const META = { kind: 'news', sourceType: 'document', scope: null, privileged: false } as const;
const WARMUP = 20;
const LOAD_BATCH = 2000;
/** Sampling interval of the event-loop delay histogram. */
const DELAY_RESOLUTION_MS = 5;
const USAGE = `npm run bench:search -- --n N --dim D [--queries Q] [--threads T] [--clusters C]
  [--latent L] [--oracle Q] [--m M] [--ef-construction E] [--ef-search E] [--build-threads T]
  [--ef-sweep 16,32,64] [--no-hnsw] [--kernel auto|native|wasm] [--compare-wasm]`;
const KERNELS: readonly ScanKernelChoice[] = ['auto', 'native', 'wasm'];
const FLAGS = {
  ...Object.fromEntries(
    ['n', 'dim', 'queries', 'threads', 'clusters', 'latent', 'oracle', 'm', 'ef-construction', 'ef-search', 'build-threads', 'ef-sweep', 'kernel'].map(
      (name) => [name, 'string' as const],
    ),
  ),
  'no-hnsw': 'boolean',
  'compare-wasm': 'boolean',
} as const;

function gaussianSource(seed: number): () => number {
  const rand = rng(seed);
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    let u = 0;
    while (u === 0) u = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    const th = 2 * Math.PI * rand();
    spare = r * Math.sin(th);
    return r * Math.cos(th);
  };
}

interface DataOptions {
  n: number;
  dim: number;
  clusters: number;
  latent: number;
  seed: number;
}

/** n normalised vectors, packed. */
function generate(o: DataOptions): Float32Array {
  const g = gaussianSource(o.seed);
  const centers = Array.from({ length: o.clusters }, () => Float32Array.from({ length: o.dim }, g));
  // Per cluster, L directions spanning its spread (scaled so the latent part dominates the noise).
  const bases = Array.from({ length: o.clusters }, () => Float32Array.from({ length: o.latent * o.dim }, () => g() * 0.35));
  const noise = o.latent > 0 ? 0.15 : 0.8;
  const out = new Float32Array(o.n * o.dim);
  const z = new Float32Array(o.latent);
  for (let i = 0; i < o.n; i++) {
    const c = i % o.clusters;
    const center = centers[c];
    const basis = bases[c];
    for (let l = 0; l < o.latent; l++) z[l] = g();
    const row = out.subarray(i * o.dim, (i + 1) * o.dim);
    for (let d = 0; d < o.dim; d++) row[d] = center[d] + noise * g();
    for (let l = 0; l < o.latent; l++) {
      const zl = z[l];
      const off = l * o.dim;
      for (let d = 0; d < o.dim; d++) row[d] += zl * basis[off + d];
    }
    normalise(row);
  }
  return out;
}

function normalise(v: Float32Array): void {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  const k = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let i = 0; i < v.length; i++) v[i] *= k;
}

function queries(data: Float32Array, n: number, dim: number, count: number, seed: number): Float32Array[] {
  const g = gaussianSource(seed);
  const rand = rng(seed + 1);
  return Array.from({ length: count }, () => {
    const base = Math.floor(rand() * n);
    const q = Float32Array.from(data.subarray(base * dim, (base + 1) * dim), (x) => x + 0.02 * g());
    normalise(q);
    return q;
  });
}

/** Exact top k by brute force in doubles: the oracle. */
function bruteForce(data: Float32Array, n: number, dim: number, q: Float32Array, k: number): number[] {
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    const off = i * dim;
    for (let d = 0; d < dim; d++) s += data[off + d] * q[d];
    scores[i] = s;
  }
  const idx = Array.from({ length: n }, (_, i) => i);
  idx.sort((a, b) => scores[b] - scores[a]);
  return idx.slice(0, k).map((i) => i + 1);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/** Flat searches with the floor (and the WebAssembly kernel) timed alternately, query by query. */
async function timeFlat(
  flat: FlatIndex,
  qs: Float32Array[],
  threads: number,
  wasm: FlatIndex | null,
): Promise<{ flat: number[]; floor: number[]; wasm: number[]; results: VectorHit[][]; best: number }> {
  for (const q of qs.slice(0, WARMUP)) {
    await flat.search(q, 10);
    if (wasm) await wasm.search(q, 10);
    flat.floorScan(q, threads);
  }
  const out = { flat: [] as number[], floor: [] as number[], wasm: [] as number[], results: [] as VectorHit[][], best: 0 };
  for (const q of qs) {
    const floor = flat.floorScan(q, threads);
    out.floor.push(floor.ms);
    out.best += floor.best;
    let t = performance.now();
    out.results.push(await flat.search(q, 10));
    out.flat.push(performance.now() - t);
    if (wasm) {
      t = performance.now();
      await wasm.search(q, 10);
      out.wasm.push(performance.now() - t);
    }
  }
  for (const list of [out.flat, out.floor, out.wasm]) list.sort((a, b) => a - b);
  return out;
}

async function loadFlat(flat: FlatIndex, data: Float32Array, n: number, dim: number): Promise<void> {
  for (let i = 0; i < n; i += LOAD_BATCH) {
    const batch = Array.from({ length: Math.min(LOAD_BATCH, n - i) }, (_, j) => ({
      rowId: i + j + 1,
      vector: data.subarray((i + j) * dim, (i + j + 1) * dim),
      meta: META,
    }));
    await flat.upsert(batch);
  }
}

async function timeSearches(
  search: (q: Float32Array) => Promise<VectorHit[]>,
  qs: Float32Array[],
): Promise<{ p50: number; p99: number; results: VectorHit[][] }> {
  for (const q of qs.slice(0, WARMUP)) await search(q);
  const times: number[] = [];
  const results: VectorHit[][] = [];
  for (const q of qs) {
    const t = performance.now();
    results.push(await search(q));
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: pct(times, 50), p99: pct(times, 99), results };
}

function recallAt10(results: VectorHit[][], truth: number[][]): number {
  let found = 0;
  truth.forEach((t, i) => {
    const got = new Set(results[i].slice(0, 10).map((h) => h.rowId));
    found += t.filter((id) => got.has(id)).length;
  });
  return found / (truth.length * 10);
}

async function main(): Promise<void> {
  const o = benchOptions(USAGE, FLAGS, (a) => {
    const whole = (name: string, fallback: number, min = 1) => a.number(name, fallback, { integer: true, min });
    const threads = whole('threads', availableParallelism());
    const queries = whole('queries', 200);
    return {
      n: whole('n', 10_000),
      dim: whole('dim', 768),
      queries,
      threads,
      clusters: whole('clusters', 100),
      latent: whole('latent', 32, 0),
      oracle: Math.min(queries, whole('oracle', 100, 0)),
      // As the app does: one graph, built on every search thread.
      buildThreads: whole('build-threads', threads),
      params: {
        m: whole('m', DEFAULT_HNSW_PARAMS.m, 2),
        efConstruction: whole('ef-construction', DEFAULT_HNSW_PARAMS.efConstruction),
        efSearch: whole('ef-search', DEFAULT_HNSW_PARAMS.efSearch),
      },
      efSweep: (a.text('ef-sweep') ?? '')
        .split(',')
        .filter(Boolean)
        .map((ef) => {
          const value = Number(ef);
          if (!Number.isInteger(value) || value < 1)
            throw new BenchUsageError(`--ef-sweep: expected whole numbers ≥ 1 separated by commas, got ${JSON.stringify(ef)}`);
          return value;
        }),
      hnsw: !a.flag('no-hnsw'),
      kernel: a.choice('kernel', KERNELS, 'auto'),
      compareWasm: a.flag('compare-wasm'),
    };
  });
  const { n, dim, threads, buildThreads, params, clusters, latent } = o;
  const [qCount, oracleCount] = [o.queries, o.oracle];
  // Before the scan pool and the graph's worker start, as a server does it.
  helperThreadsAsServed();

  const t0 = performance.now();
  const data = generate({ n, dim, clusters, latent, seed: 42 });
  const qs = queries(data, n, dim, qCount, 7);
  console.error(`generated ${n}×${dim} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const truth = qs.slice(0, oracleCount).map((q) => bruteForce(data, n, dim, q, 10));
  console.error(`oracle for ${oracleCount} queries done`);

  const kernel = o.kernel;
  const pool = new ScanPool({ threads, kernel });
  const flat = new FlatIndex({ dimensions: dim, pool, initialCapacity: n });
  await loadFlat(flat, data, n, dim);
  const wasmPool = o.compareWasm ? new ScanPool({ threads, kernel: 'wasm' }) : null;
  const wasmFlat = wasmPool ? new FlatIndex({ dimensions: dim, pool: wasmPool, initialCapacity: n }) : null;
  if (wasmFlat) await loadFlat(wasmFlat, data, n, dim);
  const flatRun = await timeFlat(flat, qs, threads, wasmFlat);
  const gbPerS = (ms: number) => round((n * dim * 4) / (ms / 1000) / 1e9, 2);
  const flatP50 = pct(flatRun.flat, 50);
  const floorP50 = pct(flatRun.floor, 50);
  const flatOut = {
    p50_ms: round(flatP50),
    p99_ms: round(pct(flatRun.flat, 99)),
    gb_per_s: gbPerS(flatP50),
    recall_at_10: round(recallAt10(flatRun.results, truth), 4),
    threads,
    kernel: pool.kernel,
    floor_p50_ms: round(floorP50),
    floor_p99_ms: round(pct(flatRun.floor, 99)),
    floor_gb_per_s: gbPerS(floorP50),
    ratio_to_floor: round(flatP50 / floorP50, 2),
  };
  const wasmOut = wasmFlat
    ? {
        p50_ms: round(pct(flatRun.wasm, 50)),
        p99_ms: round(pct(flatRun.wasm, 99)),
        gb_per_s: gbPerS(pct(flatRun.wasm, 50)),
        ratio_to_floor: round(pct(flatRun.wasm, 50) / floorP50, 2),
      }
    : null;
  await wasmFlat?.close();
  await wasmPool?.close();
  console.error(`flat: ${JSON.stringify(flatOut)}`);

  let hnswOut: Record<string, unknown> | null = null;
  if (o.hnsw) {
    const tiered = new TieredIndex({
      flat,
      threshold: 0,
      fingerprint: `bench@${dim}`,
      params,
      buildThreads,
      log: stderrLogger(true),
    });
    const delay = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
    delay.enable();
    const stalls = stallLog({ resolutionMs: DELAY_RESOLUTION_MS });
    const elu = performance.eventLoopUtilization();
    const start = performance.now();
    tiered.hold()(); // crosses the threshold: the build starts in the worker
    await tiered.settled();
    const buildS = (performance.now() - start) / 1000;
    const busy = performance.eventLoopUtilization(elu).utilization;
    delay.disable();
    const buildStalls = stalls.stop();
    if (tiered.mode !== 'hnsw') throw new Error('the HNSW graph was not built');
    const sweep: Record<string, number>[] = [];
    for (const ef of o.efSweep) {
      tiered.setEfSearch(ef);
      const r = await timeSearches((q) => tiered.search(q, 10), qs);
      sweep.push({ ef_search: ef, p50_ms: round(r.p50), p99_ms: round(r.p99), recall_at_10: round(recallAt10(r.results, truth), 4) });
      console.error(`ef_search ${ef}: ${JSON.stringify(sweep[sweep.length - 1])}`);
    }
    tiered.setEfSearch(params.efSearch);
    const run = await timeSearches((q) => tiered.search(q, 10), qs);
    hnswOut = {
      build_s: round(buildS, 2),
      p50_ms: round(run.p50),
      p99_ms: round(run.p99),
      recall_at_10: round(recallAt10(run.results, truth), 4),
      // Node's histogram records whole timer intervals; the delay is what exceeds the interval.
      event_loop_p99_ms: round(Math.max(0, delay.percentile(99) / 1e6 - DELAY_RESOLUTION_MS), 2),
      event_loop_max_ms: round(Math.max(0, delay.max / 1e6 - DELAY_RESOLUTION_MS), 2),
      // Share of the build the main thread spent running code (the rest it was free for rooms).
      event_loop_utilization: round(busy, 3),
      // The longest holds of the loop during the build, and how much of each was garbage collection.
      event_loop_stalls: buildStalls,
      m: params.m,
      ef_construction: params.efConstruction,
      ef_search: params.efSearch,
      build_threads: buildThreads,
      ...(sweep.length ? { ef_sweep: sweep } : {}),
    };
    await tiered.close();
  } else {
    await flat.close();
  }
  await pool.close();
  console.log(
    JSON.stringify({
      n,
      dim,
      flat: flatOut,
      ...(wasmOut ? { flat_wasm: wasmOut } : {}),
      hnsw: hnswOut,
      data: { clusters, latent, queries: qCount, oracle_queries: oracleCount },
      machine: { cores: availableParallelism(), mem_gb: Math.round(totalmem() / 2 ** 30) },
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
