/**
 * Whole asks through the assistant with the local providers (README, Benchmarks): N synthetic items are
 * ingested through the item pipeline of a real app, then questions are asked one after another in
 * item rooms. Prints `{items, p50_ms, p95_ms, p99_ms, overhead_p95_ms, …, stages}` (and `stages_cpu` with `--cpu`),
 * where overhead is each ask's time minus the time spent inside embedder and chat model calls
 * (embed, rerank, stream; a model call inside another counts once). Everything else is overhead:
 * admission, queueing, store reads, snippets, passages, the prompt, delta batching, frames and
 * storing the answer, and the caller's own code that runs after a model call has returned its
 * promise and before the model goes on (`timed`).
 *
 * `stages` splits each ask's overhead at the moments the search service, the reranker and the
 * stream are called and return (p50/p95 in ms, model time taken out):
 * - `before_search`: admission, queue, resolving the room, the first progress frame;
 * - `search_service`: the search service call without its query embedding (the search area's:
 *   the vector search, whose hits come back as references, rows unread), and the synchronous
 *   starts of what the pipeline runs beside it (the recent chat's read, the memory search);
 * - `candidates`: merging and deduplication, reading the kept candidates' rows (with their
 *   items' titles), evidence chunks, snippets;
 * - `rerank`: around the model call (timeout and abort wiring);
 * - `context`: sanitising the selection, item reads, passage choice, the prompt;
 * - `write`: streaming around the model (delta batches and frames);
 * - `done`: storing the answer and its `assistant.done` frame.
 * With `--cpu`, `stages_cpu` and `overhead_besides_search_cpu_*` are the same in process CPU time: other
 * processes' load moves their p50 less than wall time's, but they count every thread of the
 * process (the garbage collector's helpers too), so their p95 is no better a figure.
 *
 *   npm run bench:rag -- --items N … (USAGE below)
 *
 * With DATABASE_URL set in the environment, the app runs on that PostgreSQL store instead of SQLite
 * (a fresh schema: `?options=-c%20search_path%3D<schema>`), and prints `store`.
 * `--memory M` asks every question in one room whose thread remembers M chunks (windows of
 * people's messages, imported as 8×M messages before the asks); compare `--memory 0` and
 * `--memory 10000`. `--chat-rate R` has people post R messages a second in that thread while the
 * asks run, so its memory is being indexed meanwhile. Both print as `memory_chunks`, `chat_rate`.
 *
 * `--cpu-prof FILE` writes a V8 CPU profile of the asks alone (not the ingest) to FILE.
 * `--alloc-prof FILE` writes a sampled allocation profile of the asks alone (a `.heapprofile`: every
 * sampled allocation, freed ones included), for finding what makes the collections an ask waits for.
 * `--trace FILE` writes one JSON line per measured ask, for finding what the slowest ones ran
 * into: its question, its overhead and stages (ms), the garbage collections that began during it (`gc`: count
 * and ms), and the store's calls made during it with the time each spent synchronously (`store`:
 * ms by method; on SQLite that is all of their work, on PostgreSQL only the part before the
 * round trip), the process's minor page faults during it (`minor_faults`: every thread's), and how each vector index answered the searches made during it (`searches`: by
 * exact scan or by its graph, which is busy while vectors are being added to it), and the main
 * thread's time on a core and waiting for one during the ask (`main_thread`: Linux schedstat; the
 * wait is other threads and processes holding both cores, which the overhead's wall time counts).
 * `--data-dir DIR` keeps the data in DIR and, when DIR already holds N items, skips the ingest
 * (for repeated runs while working on the pipeline; report figures from fresh runs).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import { LocalChatModel } from '../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../src/ai/local/local-embedder.js';
import type { ChatMessage, ChatModel, Embedder } from '../src/ai/types.js';
import { loadConfig } from '../src/config.js';
import type { ContentItem } from '../src/content/types.js';
import type { SearchService } from '../src/search/types.js';
import { syntheticItems, questionAbout } from './synthetic-text.js';
import { helperThreadsAsServed, percentile } from './local-app.js';
import { benchOptions, runBench } from './args.js';
import { IMPORT_MAX_MESSAGES, importMessages } from '../src/memory/import.js';
import type { MemoryService } from '../src/memory/memory-service.js';
import { WINDOW_MAX_MESSAGES } from '../src/memory/windows.js';
import type { Store } from '../src/store/types.js';

const DEFAULT_ITEMS = 10_000;
const DEFAULT_ASKS = 200;
const USAGE = `npm run bench:rag -- --items N [--asks A] [--memory M] [--chat-rate R] [--cpu] [--cpu-prof FILE] [--alloc-prof FILE]
  [--trace FILE] [--data-dir DIR]`;
const WARMUP_ASKS = 20;

/** A point in time on two clocks: wall (performance.now) and this process's CPU time, both in ms. */
interface Mark {
  wall: number;
  cpu: number;
}

/**
 * Whether marks read the CPU clock (`--cpu`). Off by default: process.cpuUsage() is a system call
 * (~1 µs here, more under a profiler), and the streaming hooks mark every piece of every answer.
 */
let readCpu = false;

function mark(): Mark {
  if (!readCpu) return { wall: performance.now(), cpu: 0 };
  const u = process.cpuUsage();
  return { wall: performance.now(), cpu: (u.user + u.system) / 1000 };
}

const ZERO: Mark = { wall: 0, cpu: 0 };
const minus = (a: Mark, b: Mark): Mark => ({ wall: a.wall - b.wall, cpu: a.cpu - b.cpu });
const plus = (a: Mark, b: Mark): Mark => ({ wall: a.wall + b.wall, cpu: a.cpu + b.cpu });

/**
 * What one ask's hooks saw: time inside model calls (a model call made inside another, as the local
 * chat model embeds during rerank and stream, counts once, in the outer call), and the moments the
 * search service, the reranker and the stream started and ended.
 */
interface AskClock {
  model: Mark;
  /** Model time inside the search service call (the query embedding). */
  searchModel: Mark;
  streamModel: Mark;
  searchFrom?: Mark;
  searchTo?: Mark;
  rerankFrom?: Mark;
  rerankTo?: Mark;
  streamFrom?: Mark;
  streamTo?: Mark;
}

let clock: AskClock = { model: ZERO, searchModel: ZERO, streamModel: ZERO };
/**
 * Model calls under way. Asks run one at a time and nothing else calls the models meanwhile, so a
 * call made while another is under way is inside it. (AsyncLocalStorage would tell for sure, but
 * on Node 20 it turns on promise hooks, which slow every promise of the app being measured.)
 */
let modelDepth = 0;

/**
 * Runs a model call and adds its time to the ask's model time: from the call to the moment the
 * caller resumes with its value, less the caller's own code that runs after the call returned its
 * promise and before the current turn's stack unwinds. The model cannot run then (its remaining
 * work is queued behind that stack), but the pipeline can: it starts the recent chat's read and
 * the memory search beside the search's query embedding (Promise.all), and their synchronous
 * starts ran inside that window, counted as model time and so missing from the overhead.
 */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; took: Mark }> {
  if (modelDepth > 0) return { value: await fn(), took: ZERO };
  modelDepth++;
  const from = mark();
  try {
    // Queued before fn() runs, so ahead of the continuations the model queues (the local chat
    // model's awaits on its own embedder): it runs as soon as the stack that called fn() has
    // unwound, before any more of the model's work, and before this call's continuation.
    let unwound = from;
    queueMicrotask(() => (unwound = mark()));
    const pending = fn();
    const returned = mark();
    const value = await pending;
    const took = minus(minus(mark(), from), minus(unwound, returned));
    clock.model = plus(clock.model, took);
    return { value, took };
  } finally {
    modelDepth--;
  }
}

function timedEmbedder(inner: Embedder): Embedder {
  return {
    model: inner.model,
    dimensions: inner.dimensions,
    similarityThreshold: inner.similarityThreshold,
    relevanceThreshold: inner.relevanceThreshold,
    // The purpose passed on, as every wrapper of an embedder does (the local one ignores it).
    embed: async (texts, signal, purpose) => (await timed(() => inner.embed(texts, signal, purpose))).value,
  };
}

function timedChat(inner: ChatModel): ChatModel {
  return {
    model: inner.model,
    async rerank(q, s, signal) {
      clock.rerankFrom = mark();
      try {
        return (await timed(() => inner.rerank(q, s, signal))).value;
      } finally {
        clock.rerankTo = mark();
      }
    },
    summarize: async (t, q, signal) => (await timed(() => inner.summarize(t, q, signal))).value,
    async *stream(messages: ChatMessage[], signal?: AbortSignal) {
      clock.streamFrom ??= mark();
      const it = inner.stream(messages, signal)[Symbol.asyncIterator]();
      try {
        for (;;) {
          const { value: r, took } = await timed(() => it.next());
          clock.streamModel = plus(clock.streamModel, took);
          if (r.done) return;
          yield r.value;
        }
      } finally {
        clock.streamTo = mark();
      }
    },
  };
}

/** Times the search service call (its embedding counts as model time). */
function timeSearch(search: SearchService): void {
  const inner = search.searchChunkRefsMany.bind(search);
  search.searchChunkRefsMany = async (queries, options) => {
    const before = clock.model;
    clock.searchFrom = mark();
    try {
      return await inner(queries, options);
    } finally {
      clock.searchTo = mark();
      clock.searchModel = minus(clock.model, before);
    }
  };
}

/**
 * One ask's overhead split at the hooks' moments (each part minus the model time inside it):
 * before the search, the search service, from search to rerank, from rerank to the stream, the
 * stream, and from its end to the finished answer.
 */
function segments(c: AskClock, from: Mark, to: Mark): Record<string, Mark> | null {
  const { searchFrom, searchTo, streamFrom, streamTo } = c;
  if (!searchFrom || !searchTo || !streamFrom || !streamTo) return null;
  // With five candidates or fewer there is no rerank call; its part is then empty.
  const rerankFrom = c.rerankFrom ?? searchTo;
  const rerankTo = c.rerankTo ?? searchTo;
  const rerankModel = minus(minus(c.model, c.searchModel), c.streamModel);
  return {
    before_search: minus(searchFrom, from),
    search_service: minus(minus(searchTo, searchFrom), c.searchModel),
    candidates: minus(rerankFrom, searchTo),
    rerank: minus(minus(rerankTo, rerankFrom), rerankModel),
    context: minus(streamFrom, rerankTo),
    write: minus(minus(streamTo, streamFrom), c.streamModel),
    done: minus(to, streamTo),
  };
}

const round = (x: number) => Math.round(x * 100) / 100;

/** What `--trace` gathers during one ask: garbage collections and the store's synchronous time by method. */
interface AskTrace {
  gcCount: number;
  gcMs: number;
  store: Record<string, number>;
  /** Searches each vector index answered during the ask, by exact scan (`flat`) and by its graph (`hnsw`). */
  searches: Record<string, { flat: number; hnsw: number }>;
}

/**
 * Starts gathering AskTraces: every store method is wrapped to add the time its call spends
 * synchronously to the current ask's trace, and GC pauses are observed;
 * `next()` ends the current trace and starts a new one.
 */
function traceAsks(store: Store, indexes: Record<string, unknown>): { next(): AskTrace; stop(): void } {
  // A SearchIndex counts through its current TieredIndex, which it may replace (the counts are read each time).
  type Counted = { searches?: { flat: number; hnsw: number }; current?: Counted | null };
  const searchesOf = (index: unknown) => (index as Counted).current?.searches ?? (index as Counted).searches ?? { flat: 0, hnsw: 0 };
  const counters = Object.entries(indexes).map(([name, index]) => ({ name, index }));
  const counted = () => Object.fromEntries(counters.map(({ name, index }) => [name, { ...searchesOf(index) }]));
  let before = counted();
  let trace: AskTrace = { gcCount: 0, gcMs: 0, store: {}, searches: {} };
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      trace.gcCount++;
      trace.gcMs += e.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const target = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (let proto = Object.getPrototypeOf(store); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || typeof target[name] !== 'function' || Object.hasOwn(target, name)) continue;
      const inner = target[name];
      target[name] = function (this: unknown, ...args: unknown[]) {
        const started = performance.now();
        try {
          return inner.apply(this, args);
        } finally {
          trace.store[name] = (trace.store[name] ?? 0) + performance.now() - started;
        }
      };
    }
  }
  return {
    next() {
      const done = trace;
      const now = counted();
      for (const { name } of counters) done.searches[name] = { flat: now[name].flat - before[name].flat, hnsw: now[name].hnsw - before[name].hnsw };
      before = now;
      trace = { gcCount: 0, gcMs: 0, store: {}, searches: {} };
      return done;
    },
    stop: () => observer.disconnect(),
  };
}

/**
 * The main thread's time on a core and time runnable but waiting for one, in ms since it started
 * (Linux schedstat); null where the kernel does not keep it.
 */
function mainThreadTimes(): { cpu: number; wait: number } | null {
  try {
    const [cpu, wait] = readFileSync('/proc/thread-self/schedstat', 'latin1').trim().split(' ').map(Number);
    return { cpu: cpu / 1e6, wait: wait / 1e6 };
  } catch {
    return null;
  }
}

/** p50 and p95 of a list (sorted in place). */
function spread(values: number[]): { p50_ms: number; p95_ms: number } {
  values.sort((a, b) => a - b);
  return { p50_ms: round(percentile(values, 50)), p95_ms: round(percentile(values, 95)) };
}

/** Fills the main thread of `roomId` with about `chunks` memory windows, through the import path (5,000 messages a call). */
async function rememberWindows(store: Store, memory: MemoryService, roomId: string, chunks: number): Promise<void> {
  const thread = await store.ensureMainThread(roomId);
  const start = Date.UTC(2026, 0, 1);
  const total = chunks * WINDOW_MAX_MESSAGES;
  for (let from = 0; from < total; from += IMPORT_MAX_MESSAGES) {
    const batch = Array.from({ length: Math.min(IMPORT_MAX_MESSAGES, total - from) }, (_, j) => {
      const n = from + j;
      return { author: { name: n % 2 ? 'Ann' : 'Cy' }, text: chatterText(n), ts: new Date(start + n * 1_000).toISOString() };
    });
    await importMessages(store, memory, roomId, thread.id, batch);
    await memory.idle();
  }
}

/** Something a person might say, different every time. */
function chatterText(n: number): string {
  const topics = ['the battery test', 'the new edition', 'the council vote', 'the harbour pier', 'the price', 'the launch'];
  return `message ${n}: I think ${topics[n % topics.length]} matters because of point ${(n * 7) % 101} and ${(n * 13) % 97}`;
}

/** People posting `rate` messages a second in the room's main thread, each fed to memory as live chat is. */
function startChatter(store: Store, memory: MemoryService, roomId: string, rate: number): { stop(): Promise<void> } {
  let n = 0;
  let pending: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    pending = pending.then(async () => {
      const thread = await store.ensureMainThread(roomId);
      for (let j = 0; j < Math.max(1, Math.round(rate / 10)); j++) {
        const { message } = await store.appendMessage({
          roomId,
          threadId: thread.id,
          author: { id: `u_chat${n % 5}`, name: `Person ${n % 5}`, kind: 'user' },
          text: chatterText(n++),
        });
        memory.onMessage(message);
      }
    });
  }, 100);
  return {
    async stop() {
      clearInterval(timer);
      await pending;
    },
  };
}

async function main(): Promise<void> {
  const o = benchOptions(
    USAGE,
    {
      items: 'string',
      asks: 'string',
      memory: 'string',
      'chat-rate': 'string',
      cpu: 'boolean',
      'cpu-prof': 'string',
      'alloc-prof': 'string',
      trace: 'string',
      'data-dir': 'string',
    },
    (a) => ({
      n: a.number('items', DEFAULT_ITEMS, { integer: true, min: 1 }),
      asks: a.number('asks', DEFAULT_ASKS, { integer: true, min: 1 }),
      memoryChunks: a.optionalNumber('memory', { integer: true, min: 0 }) ?? null,
      chatRate: a.number('chat-rate', 0, { min: 0 }),
      cpu: a.flag('cpu'),
      profile: a.text('cpu-prof'),
      allocProfile: a.text('alloc-prof'),
      traceFile: a.text('trace'),
      keep: a.text('data-dir'),
    }),
  );
  const { n, asks, memoryChunks, chatRate, profile, allocProfile, traceFile, keep } = o;
  // Imported once the command line is accepted: `--help` and a refused flag answer without loading the app (~1 s).
  const { buildApp } = await import('../src/app.js');
  readCpu = o.cpu;
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'salon-bench-rag-'));
  helperThreadsAsServed();
  const raw = new LocalEmbedder();
  const app = await buildApp(
    loadConfig({
      DATA_DIR: dir,
      AI_PROVIDER: 'local',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'silent',
      ASK_LIMIT_ROOM: '100000',
      MEMORY_MAX_CHUNKS_PER_THREAD: '1000000',
      // The PostgreSQL store when DATABASE_URL names one (issue 15 measures both).
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      // The graphs' search list size when HNSW_EF_SEARCH sets one (its cost to an ask).
      ...(process.env.HNSW_EF_SEARCH ? { HNSW_EF_SEARCH: process.env.HNSW_EF_SEARCH } : {}),
    }),
    {
      embedder: timedEmbedder(raw),
      chat: timedChat(new LocalChatModel(raw)),
    },
  );
  try {
    await app.ready();
    const { ingest, assistant, store } = app.salon;
    if (!ingest || !assistant) throw new Error('the app has no item pipeline or assistant');
    const items: ContentItem[] = syntheticItems(n);
    const index = app.salon.index as { settled?: () => Promise<void>; bulk?: <T>(fn: () => Promise<T>) => Promise<T> } | undefined;
    const t0 = performance.now();
    const putAll = async (list: ContentItem[]) => {
      for (const item of list) await ingest.pipeline.put(item);
    };
    const have = await store.countItems();
    if (have !== n && have !== 0) throw new Error(`${dir} holds ${have} items, not ${n}`);
    if (have === 0) {
      // The first item creates the index; as one bulk load the rest build the HNSW graph once, at the end.
      await putAll(items.slice(0, 1));
      await (index?.bulk ? index.bulk(() => putAll(items.slice(1))) : putAll(items.slice(1)));
    }
    // Measure the steady state: an HNSW graph being built in the background is not it.
    await index?.settled?.();
    console.error(`${have ? 'reused' : 'ingested'} ${n} items in ${((performance.now() - t0) / 1000).toFixed(1)} s (index settled)`);

    // With --memory or --chat-rate, every ask goes to one room: the thread that remembers.
    const oneRoom = memoryChunks !== null || chatRate > 0 ? items[0] : null;
    if (oneRoom && memoryChunks) {
      const t1 = performance.now();
      await rememberWindows(app.salon.store, app.salon.memory, oneRoom.id, memoryChunks);
      // As for documents: the memory's graph (above MEMORY_HNSW_THRESHOLD) built, not being built.
      await (app.salon.memoryIndex as { settled?: () => Promise<void> }).settled?.();
      console.error(
        `${await store.countMemoryChunks((await store.ensureMainThread(oneRoom.id)).id)} memory chunks in ${((performance.now() - t1) / 1000).toFixed(1)} s`,
      );
    }
    const chatter = oneRoom && chatRate > 0 ? startChatter(app.salon.store, app.salon.memory, oneRoom.id, chatRate) : null;

    timeSearch(app.salon.search!);
    const totals: number[] = [];
    const overheads: Record<'wall' | 'cpu', number[]> = { wall: [], cpu: [] };
    const besidesSearch: Record<'wall' | 'cpu', number[]> = { wall: [], cpu: [] };
    const stages: Record<'wall' | 'cpu', Record<string, number[]>> = { wall: {}, cpu: {} };
    let session: Session | undefined;
    const tracer = traceFile ? traceAsks(app.salon.store, { documents: app.salon.index, memory: app.salon.memoryIndex }) : null;
    const traced: string[] = [];
    for (let i = 0; i < WARMUP_ASKS + asks; i++) {
      if (i === WARMUP_ASKS && (profile || allocProfile)) {
        session = new Session();
        session.connect();
        if (allocProfile) {
          // Every sampled allocation, those the collector has freed since too: what makes the collections.
          await session.post('HeapProfiler.enable');
          await session.post('HeapProfiler.startSampling', {
            samplingInterval: 4096,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          });
        }
        if (profile) {
          await session.post('Profiler.enable');
          await session.post('Profiler.setSamplingInterval', { interval: 100 });
          await session.post('Profiler.start');
        }
      }
      const item = oneRoom ?? items[(i * 7919) % items.length];
      const threadId = (await store.ensureMainThread(item.id)).id;
      clock = { model: ZERO, searchModel: ZERO, streamModel: ZERO };
      tracer?.next();
      const threadFrom = tracer ? mainThreadTimes() : null;
      const faultsFrom = tracer ? process.resourceUsage().minorPageFault : 0;
      const from = mark();
      const question = questionAbout(item, i);
      const { done } = assistant.ask({ roomId: item.id, threadId, text: question, asker: { id: `bench_${i}`, name: 'Bench' } });
      await done;
      const to = mark();
      const threadTo = threadFrom ? mainThreadTimes() : null;
      const faults = tracer ? process.resourceUsage().minorPageFault - faultsFrom : 0;
      if (i < WARMUP_ASKS) continue;
      const parts = segments(clock, from, to);
      if (!parts) throw new Error('an ask made no search or no stream call');
      const overhead = minus(minus(to, from), clock.model);
      if (tracer) {
        const t = tracer.next();
        const ms = (x: number) => round(x);
        traced.push(
          JSON.stringify({
            ask: i - WARMUP_ASKS,
            question,
            overhead_ms: ms(overhead.wall),
            total_ms: ms(to.wall - from.wall),
            stages: Object.fromEntries(Object.entries(parts).map(([name, m]) => [name, ms(m.wall)])),
            gc: { count: t.gcCount, ms: ms(t.gcMs) },
            minor_faults: faults,
            searches: t.searches,
            store: Object.fromEntries(Object.entries(t.store).map(([name, v]) => [name, Math.round(v * 1000) / 1000])),
            ...(threadFrom && threadTo && { main_thread: { cpu_ms: ms(threadTo.cpu - threadFrom.cpu), wait_ms: ms(threadTo.wait - threadFrom.wait) } }),
          }),
        );
      }
      totals.push(to.wall - from.wall);
      for (const k of ['wall', 'cpu'] as const) {
        overheads[k].push(overhead[k]);
        besidesSearch[k].push(overhead[k] - parts.search_service[k]);
        for (const [name, m] of Object.entries(parts)) (stages[k][name] ??= []).push(m[k]);
      }
    }
    await chatter?.stop();
    if (tracer) {
      tracer.stop();
      writeFileSync(traceFile as string, traced.join('\n') + '\n');
      console.error(`${traced.length} asks traced in ${traceFile}`);
    }
    if (session) {
      if (profile) {
        const { profile: cpu } = await session.post('Profiler.stop');
        writeFileSync(profile, JSON.stringify(cpu));
        console.error(`CPU profile of the asks written to ${profile}`);
      }
      if (allocProfile) {
        const { profile: heap } = await session.post('HeapProfiler.stopSampling');
        writeFileSync(allocProfile, JSON.stringify(heap));
        console.error(`allocation profile of the asks written to ${allocProfile}`);
      }
      session.disconnect();
    }
    totals.sort((a, b) => a - b);
    const overhead = spread(overheads.wall);
    const besides = spread(besidesSearch.wall);
    const cpu = spread(besidesSearch.cpu);
    const byStage = (k: 'wall' | 'cpu') => Object.fromEntries(Object.entries(stages[k]).map(([name, v]) => [name, spread(v)]));
    console.log(
      JSON.stringify({
        items: n,
        p50_ms: round(percentile(totals, 50)),
        p95_ms: round(percentile(totals, 95)),
        p99_ms: round(percentile(totals, 99)),
        overhead_p95_ms: overhead.p95_ms,
        overhead_p50_ms: overhead.p50_ms,
        overhead_besides_search_p50_ms: besides.p50_ms,
        overhead_besides_search_p95_ms: besides.p95_ms,
        store: app.salon.store.kind,
        ...(oneRoom && { memory_chunks: memoryChunks ?? 0, chat_rate: chatRate }),
        stages: byStage('wall'),
        ...(readCpu && {
          overhead_besides_search_cpu_p50_ms: cpu.p50_ms,
          overhead_besides_search_cpu_p95_ms: cpu.p95_ms,
          stages_cpu: byStage('cpu'),
        }),
      }),
    );
  } finally {
    await app.close();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
