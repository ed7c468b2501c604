/**
 * Fusing two large threads (issue 14, "Measured"; README, Benchmarks):
 *
 *   npm run bench:fusion -- [--chunks N] … (USAGE below)
 *
 * Two threads, in two rooms, each remember N memory chunks (default 10,000): synthetic people's
 * messages imported through the import path, 8 to a window, as bench:rag's `--memory` fills a
 * thread. A share S of B's windows (default 0.3) are near-duplicates of A's: the same messages at
 * the same times, one of the eight reworded; the rest of B is chatter of its own. Then
 * ThreadService.fuse([A, B]) runs R times (default 3; the fused threads of earlier runs stay, and
 * each run waits until the memory index has settled: its graph rebuilt after the previous run) and
 * its phases are timed from outside, by wrapping the store, memory and scratch-graph methods it
 * calls (src/ is not changed):
 * - `read_ms`: from the call to the sources' chunks and vectors in hand (`read_rows_ms`: the store's
 *   pages of rows, read without their vectors, which stay in the memory index until the plan reads
 *   them there);
 * - `plan_ms`: fuseMemories, from the vectors to the store call (`plan_graph_add_ms`: A's chunks
 *   into the scratch HNSW graph; `plan_graph_search_ms`, `plan_graph_remove_ms`: B's lookups and
 *   the fused chunks taken out; `plan_other_ms`: the rest: cosines, the word gate, fused pairs);
 * - `store_ms`: the store's change: the fused thread's chunks written in slices (sqlite-staging.ts),
 *   then the one transaction that creates the thread;
 * - `index_ms`: from the store's change to the new chunks in the memory's vector index (with the
 *   vectors the plan holds): what is left of the index mapping memory for their rows on a scan
 *   thread, begun with the store's change (`index_reserve_ms`, all of it, beside the store), then the copy;
 * - `other_ms`: what is left (thread reads, the intro's broadcast);
 * - `loop_delay_max_ms`: the longest the event loop was held during the fusion (every room waits
 *   that long); `loop_stalls_runs`: each run's longest holds of 10 ms or more (`at_s`, `ms`, the
 *   collections inside, `phase`: read, plan, store, index, other, or after the fusion returned);
 * - after the runs, thread A is deleted (`delete_source_ms`, and `delete_loop_delay_max_ms` the
 *   longest the event loop was held meanwhile: A's chunks that fused threads copy hand them their
 *   lines as they go);
 * - `cpu_ms`: the process's CPU time (user + system, all its threads) during the fusion: other work
 *   sharing the cores stretches `fuse_ms` but hardly this; `main_cpu_ms`: the main thread's alone
 *   (Linux only).
 * Prints `{chunks_a, chunks_b, dup_share, fused, near_duplicates, ms, kept, chunks_fused, fuse_ms, …}`
 * (`near_duplicates`: B's windows made to repeat A's, which `fused` should match; `ms` =
 * `fuse_ms`, as DESIGN §8 names it); fuse_ms and the phases are medians over the runs,
 * `fuse_ms_runs` lists every run.
 * `--cpu-prof FILE` writes a V8 CPU profile of the last run's fusion to FILE, `--delete-prof FILE`
 * one of the deletion (sampled every 0.2 ms: its holds are tens of milliseconds).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config.js';
import { IMPORT_MAX_MESSAGES, importMessages } from '../src/memory/import.js';
import { DEFAULT_FUSION_THRESHOLD } from '../src/memory/threads/fusion.js';
import { WINDOW_MAX_MESSAGES } from '../src/memory/windows.js';
import { LocalGraph } from '../src/search/graph/local-graph.js';
import { helperThreadsAsServed, percentile } from './local-app.js';
import { BenchUsageError, benchOptions, runBench } from './args.js';
import { stallLog, type Stall } from './stalls.js';

const DEFAULT_CHUNKS = 10_000;
const DEFAULT_DUP_SHARE = 0.3;
const DEFAULT_RUNS = 3;
const SETTLE_MS = 3_000;
const START = Date.UTC(2026, 0, 1);

const TOPICS_A = ['the battery test', 'the new edition', 'the council vote', 'the harbour pier', 'the price', 'the launch'];
const TOPICS_B = ['the ferry timetable', 'the library hours', 'the cycling lane', 'the school canteen', 'the river festival', 'the museum roof'];

/** Message `n` of thread A (and of B's near-duplicate windows). */
function textA(n: number): string {
  return `message ${n}: I think ${TOPICS_A[n % TOPICS_A.length]} matters because of point ${(n * 7) % 101} and ${(n * 13) % 97}`;
}

/** Message `n` of B's own windows: other words, other numbers. */
function textB(n: number): string {
  return `note ${n + 500_000}: we wondered whether ${TOPICS_B[n % TOPICS_B.length]} could change after item ${(n * 11) % 89} or ${(n * 17) % 83}`;
}

/** Whether B's window `w` repeats A's: a share `dupShare` of windows, spread evenly. */
function isDuplicate(w: number, dupShare: number): boolean {
  return Math.floor((w + 1) * dupShare) > Math.floor(w * dupShare);
}

/**
 * B's message `n`: in a near-duplicate window A's message, the window's first one reworded. A
 * window's chunk carries the line said just before it as context (windows.ts), so the last message
 * before a near-duplicate window is A's too: otherwise every such chunk would open with B's
 * numbers, and the word gate would rightly keep it apart.
 */
function messageOfB(n: number, dupShare: number): string {
  const w = Math.floor(n / WINDOW_MAX_MESSAGES);
  if (isDuplicate(w, dupShare)) return n % WINDOW_MAX_MESSAGES === 0 ? textA(n).replace('I think', 'I really believe') : textA(n);
  const last = n % WINDOW_MAX_MESSAGES === WINDOW_MAX_MESSAGES - 1;
  return last && isDuplicate(w + 1, dupShare) ? textA(n) : textB(n);
}

/** How many of B's `chunks` windows repeat A's. */
function duplicates(chunks: number, dupShare: number): number {
  let n = 0;
  for (let w = 0; w < chunks; w++) if (isDuplicate(w, dupShare)) n++;
  return n;
}

/** Fills the main thread of `roomId` with `chunks` windows of `text(n)`, through the import path. */
async function rememberWindows(app: FastifyInstance, roomId: string, chunks: number, text: (n: number) => string): Promise<string> {
  const { store, memory } = app.salon;
  const thread = await store.ensureMainThread(roomId);
  const total = chunks * WINDOW_MAX_MESSAGES;
  for (let from = 0; from < total; from += IMPORT_MAX_MESSAGES) {
    const batch = Array.from({ length: Math.min(IMPORT_MAX_MESSAGES, total - from) }, (_, j) => {
      const n = from + j;
      return { author: { name: n % 2 ? 'Ann' : 'Cy' }, text: text(n), ts: new Date(START + n * 1_000).toISOString() };
    });
    await importMessages(store, memory, roomId, thread.id, batch);
    await memory.idle();
  }
  return thread.id;
}

type Phases = Record<string, number>;
/** The stall log's tick (ms): holds of 10 ms or more past it are listed, with the phase each began in. */
const STALL_RESOLUTION_MS = 5;
/** Holds listed per run, longest first. */
const STALLS_LISTED = 4;

/** Calls of wrapped methods while `on` is set: when each began and ended, by key. */
interface Meter {
  on: boolean;
  calls: Record<string, { from: number; to: number }[]>;
}

/** Wraps `target[name]` (async or not) so that its calls are recorded in `m` under `key`. */
function meter<T extends object>(target: T, name: keyof T & string, m: Meter, key: string = name): void {
  const inner = target[name] as unknown as (...args: unknown[]) => unknown;
  const add = (from: number) => (m.calls[key] ??= []).push({ from, to: performance.now() });
  (target as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
    if (!m.on) return inner.apply(this, args);
    const from = performance.now();
    const out = inner.apply(this, args);
    if (out instanceof Promise) return out.finally(() => add(from));
    add(from);
    return out;
  };
}

/** Instruments the store, memory and scratch graph as the module comment says. */
function instrument(app: FastifyInstance): Meter {
  const m: Meter = { on: false, calls: {} };
  const { store, memory, memoryIndex } = app.salon;
  meter(store, 'scanThreadMemory', m);
  meter(store, 'applyThreadChange', m);
  meter(memory, 'indexedVectors', m);
  meter(memory, 'reserve', m);
  meter(memory, 'indexStored', m);
  meter(memoryIndex, 'upsert', m);
  meter(LocalGraph.prototype, 'add', m, 'graphAdd');
  meter(LocalGraph.prototype, 'search', m, 'graphSearch');
  meter(LocalGraph.prototype, 'searchMany', m, 'graphSearch');
  meter(LocalGraph.prototype, 'remove', m, 'graphRemove');
  return m;
}

/** One fusion, timed by phase. The fused threads of earlier runs stay. */
async function fuseOnce(
  app: FastifyInstance,
  m: Meter,
  a: string,
  b: string,
  threshold: number,
  profile?: string,
): Promise<{ phases: Phases; stalls: Stall[]; fused: number; kept: number; chunks: number }> {
  m.calls = {};
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const stallsLog = stallLog({ resolutionMs: STALL_RESOLUTION_MS, listed: STALLS_LISTED });
  m.on = true;
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMs();
  const mono0 = process.hrtime.bigint();
  const t0 = performance.now();
  const outcome = await app.salon.threads.fuse([a, b], 'admin', threshold);
  const t1 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const main = mainThreadCpuMs() - main0;
  const mono1 = process.hrtime.bigint();
  m.on = false;
  // The loop's sampling timer reports a stall when it next fires: let it fire once more.
  await new Promise((resolve) => setTimeout(resolve, 30));
  loop.disable();
  const stalled = stallsLog.stop;
  if (session) {
    const { profile: cpu } = await session.post('Profiler.stop');
    writeFileSync(profile!, JSON.stringify(cpu));
    session.disconnect();
    console.error(`CPU profile of the fusion written to ${profile}`);
  }
  if (outcome.fallback) throw new Error(`fusion fell back to a union: ${outcome.fallback}`);
  const calls = (k: string) => m.calls[k] ?? [];
  // The wall time covered by a method's calls: a graph's adds queue behind each other (each call's
  // promise settles after the earlier ones), so summing their durations would count it many times.
  const ms = (k: string) => {
    let covered = 0;
    let until = -Infinity;
    for (const c of [...calls(k)].sort((a, b) => a.from - b.from)) {
      covered += Math.max(0, c.to - Math.max(c.from, until));
      until = Math.max(until, c.to);
    }
    return covered;
  };
  // The plan runs from the sources' vectors in hand (the second indexedVectors) to the store's change.
  const planFrom = calls('indexedVectors')[1].to;
  const planTo = calls('applyThreadChange')[0].from;
  const plan = planTo - planFrom;
  const index = Math.max(...calls('indexStored').map((c) => c.to)) - calls('applyThreadChange')[0].to;
  const storedAt = calls('applyThreadChange')[0].to;
  const stalls = stalled((at) =>
    at < planFrom ? 'read' : at < planTo ? 'plan' : at < storedAt ? 'store' : at < storedAt + index ? 'index' : at < t1 ? 'other' : 'after',
  );
  const phases: Phases = {
    fuse_ms: t1 - t0,
    read_ms: planFrom - t0,
    read_rows_ms: ms('scanThreadMemory'),
    plan_ms: plan,
    plan_graph_add_ms: ms('graphAdd'),
    plan_graph_search_ms: ms('graphSearch'),
    plan_graph_remove_ms: ms('graphRemove'),
    plan_other_ms: plan - ms('graphAdd') - ms('graphSearch') - ms('graphRemove'),
    store_ms: ms('applyThreadChange'),
    index_ms: index,
    index_reserve_ms: ms('reserve'),
    other_ms: t1 - t0 - (planFrom - t0) - plan - ms('applyThreadChange') - index,
    loop_delay_max_ms: loop.max / 1e6,
    cpu_ms: (cpu.user + cpu.system) / 1000,
    main_cpu_ms: main,
  };
  console.error(JSON.stringify({ ...Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, round(v)])), loop_stalls: stalls }));
  // For `perf record -k CLOCK_MONOTONIC` of the whole benchmark: `perf report --time FROM,TO` sees the fusion alone.
  console.error(`fusion from ${seconds(mono0)} to ${seconds(mono1)} (CLOCK_MONOTONIC, s)`);
  const chunks = await app.salon.store.countMemoryChunks(outcome.thread.id);
  return { phases, stalls, fused: outcome.fused, kept: outcome.kept, chunks };
}

const seconds = (ns: bigint) => (Number(ns / 1000n) / 1e6).toFixed(6);
const round = (x: number) => Math.round(x * 10) / 10;

/**
 * CPU time of the main thread alone (Linux: /proc, in 10 ms ticks; NaN elsewhere): the event
 * loop's own work, which neither other processes nor the process's other threads (graph builds,
 * GC helpers, the memory index's rebuild) add to.
 */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

function median(values: number[]): number {
  return percentile(
    [...values].sort((x, y) => x - y),
    50,
  );
}

const USAGE = 'npm run bench:fusion -- [--chunks N] [--dup-share S] [--runs R] [--threshold T] [--cpu-prof FILE] [--delete-prof FILE]';

function options(): { chunks: number; dupShare: number; runs: number; threshold: number; profile?: string; deleteProfile?: string } {
  const flags = { chunks: 'string', 'dup-share': 'string', runs: 'string', threshold: 'string', 'cpu-prof': 'string', 'delete-prof': 'string' } as const;
  return benchOptions(USAGE, flags, (a) => {
    const threshold = a.number('threshold', DEFAULT_FUSION_THRESHOLD, { min: 0, max: 1 });
    if (threshold === 0) throw new BenchUsageError('--threshold: expected a number above 0 and ≤ 1, got "0"');
    return {
      chunks: a.number('chunks', DEFAULT_CHUNKS, { integer: true, min: 1 }),
      dupShare: a.number('dup-share', DEFAULT_DUP_SHARE, { min: 0, max: 1 }),
      runs: a.number('runs', DEFAULT_RUNS, { integer: true, min: 1 }),
      threshold,
      profile: a.text('cpu-prof'),
      deleteProfile: a.text('delete-prof'),
    };
  });
}

/**
 * Deletes source thread A as `DELETE /api/v1/threads/:id` does (store, then memory index), once the
 * fusions are done: every chunk of A that a fused thread copies hands it its lines as it goes.
 * `delete_source_ms` is the whole deletion, `delete_loop_delay_max_ms` the longest the event loop
 * was held meanwhile.
 */
async function deleteSource(app: FastifyInstance, threadId: string, profile?: string): Promise<{ delete_source_ms: number; delete_loop_delay_max_ms: number }> {
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
  }
  const loop = monitorEventLoopDelay({ resolution: 10 });
  // The monitor's timer measures from its first firing, and records a hold once it fires after it.
  const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));
  loop.enable();
  await tick(30);
  const t = performance.now();
  const removed = await app.salon.store.deleteThread(threadId);
  if (!removed) throw new Error(`thread ${threadId} is not there to delete`);
  const replied = performance.now() - t;
  await app.salon.memory.forgetThread(threadId, removed.memoryIds);
  // SQLite deletes a large memory in slices after it replies: until its entry in memory_staging goes.
  const db = (app.salon.store as { db?: { prepare(sql: string): { get(): unknown } } }).db;
  const staged = () => (db?.prepare('SELECT count(*) AS n FROM memory_staging').get() as { n: number } | undefined)?.n ?? 0;
  while (staged() > 0) await tick();
  const ms = performance.now() - t;
  await tick(30);
  loop.disable();
  if (session) {
    const { profile: cpu } = await session.post('Profiler.stop');
    writeFileSync(profile!, JSON.stringify(cpu));
    session.disconnect();
    console.error(`CPU profile of the deletion written to ${profile}`);
  }
  console.error(`deleting thread A: replied after ${round(replied)} ms, all deleted after ${round(ms)} ms`);
  return { delete_source_ms: round(ms), delete_loop_delay_max_ms: round(loop.max / 1e6) };
}

async function main(): Promise<void> {
  const { chunks, dupShare, runs, threshold, profile, deleteProfile } = options();
  // Imported once the command line is accepted: `--help` and a refused flag answer without loading the app (~1 s).
  const { buildApp } = await import('../src/app.js');
  helperThreadsAsServed();
  const dir = mkdtempSync(join(tmpdir(), 'salon-bench-fusion-'));
  const app = await buildApp(
    loadConfig({ DATA_DIR: dir, AI_PROVIDER: 'local', SEED_DEMO: 'false', LOG_LEVEL: 'silent', MEMORY_MAX_CHUNKS_PER_THREAD: String(chunks * 4) }),
  );
  try {
    await app.ready();
    const { store } = app.salon;
    const t0 = performance.now();
    const a = await rememberWindows(app, 'bench_fusion_a', chunks, textA);
    const b = await rememberWindows(app, 'bench_fusion_b', chunks, (n) => messageOfB(n, dupShare));
    const [sizeA, sizeB] = [await store.countMemoryChunks(a), await store.countMemoryChunks(b)];
    console.error(`${sizeA} + ${sizeB} memory chunks in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // The import scheduled a refresh of each room's bridges (10 s later); it would read both threads during a fusion.
    app.salon.threads.bridges.close();
    const m = instrument(app);
    const results: Awaited<ReturnType<typeof fuseOnce>>[] = [];
    const memoryIndex = app.salon.memoryIndex as { settled?: () => Promise<void> };
    for (let i = 0; i < runs; i++) {
      // Each fusion starts on a settled server: the memory's graph built (after the import, and
      // rebuilt in its worker after each earlier fusion added 17,000 rows at once) rather than being
      // rebuilt on both cores beside it, and a pause lets the store's background WAL checkpoint finish.
      await memoryIndex.settled?.();
      if (i) await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      results.push(await fuseOnce(app, m, a, b, threshold, i === runs - 1 ? profile : undefined));
    }
    const last = results[results.length - 1];
    const expected = duplicates(chunks, dupShare);
    if (last.fused !== expected) console.error(`warning: ${last.fused} pairs fused, but B repeats ${expected} of A's windows`);
    const phases = Object.fromEntries(Object.keys(last.phases).map((k) => [k, round(median(results.map((r) => r.phases[k])))]));
    const deleted = await deleteSource(app, a, deleteProfile);
    console.log(
      JSON.stringify({
        chunks_a: sizeA,
        chunks_b: sizeB,
        dup_share: dupShare,
        threshold,
        fused: last.fused,
        near_duplicates: expected,
        ms: phases.fuse_ms,
        kept: last.kept,
        chunks_fused: last.chunks,
        runs,
        ...phases,
        fuse_ms_runs: results.map((r) => round(r.phases.fuse_ms)),
        loop_stalls_runs: results.map((r) => r.stalls),
        ...deleted,
      }),
    );
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
