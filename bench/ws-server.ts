/**
 * bench:ws server (a child process driven over IPC by bench/ws.ts): the real Salon app on
 * 127.0.0.1 with a fresh DATA_DIR holding one item per bench room, indexed. Answers `stats` with its
 * memory (after a full GC when run with --expose-gc), CPU time and connection count. With
 * BENCH_PROFILE=<file>, the measured phase is CPU-profiled into that file; with BENCH_TRACE=<file>,
 * traced (ws-proc.ts).
 */
import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { blankItem } from '../src/content/types.js';
import { helperThreadsAsServed } from './local-app.js';
import { PhaseTrace, quantile, serveBenchCommands } from './ws-proc.js';

const rooms = Number(process.env.BENCH_ROOMS ?? '1');
/** Profiler sampling interval: the default 1 ms sees little of a 10 µs delivery. */
const PROFILE_INTERVAL_US = 100;

const config = loadConfig({
  ...process.env,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  SEED_DEMO: 'false',
  SEARCH_WORKERS: '1',
});
helperThreadsAsServed();
const app = await buildApp(config);
// Each room's item goes through the item pipeline, as a served item does: stored, chunked and
// indexed, so the server holds what a server with content holds (its scan threads among them).
await app.ready();
for (let i = 0; i < rooms; i++) {
  await app.salon.ingest.pipeline.put(
    blankItem(`news_bench${i}`, { title: `Bench room ${i}`, description: 'A room for the WebSocket benchmark.', body: 'Benchmark.', category: 'Bench' }),
  );
}
// Times every store append (the synchronous SQLite write on the chat path), and each message's
// fan-out: from its append to the end of the event-loop turn that wrote its frames to the members'
// sockets (the room broadcasts once the append resolves, and the frames leave in a setImmediate
// scheduled then; an immediate scheduled from an immediate runs after it, in the next turn).
const store = app.salon.store;
const append = store.appendMessage.bind(store);
let appends: number[] = [];
let fanouts: number[] = [];
const trace = new PhaseTrace();
store.appendMessage = async (m) => {
  const t0 = performance.now();
  try {
    return await append(m);
  } finally {
    const appended = performance.now() - t0;
    appends.push(appended);
    setImmediate(() =>
      setImmediate(() => {
        const fanout = performance.now() - t0;
        fanouts.push(fanout);
        trace.add('m', trace.at(t0), fanout, appended);
      }),
    );
  }
};
if (trace.enabled) {
  // Every other store call, timed (synchronous SQLite work on the event loop).
  for (const key of ['addMemoryChunk', 'getThread', 'setMemoryVector', 'countMemoryChunks'] as const) {
    const fn = (store[key] as (...a: unknown[]) => Promise<unknown>).bind(store);
    (store as unknown as Record<string, unknown>)[key] = async (...args: unknown[]) => {
      const t0 = performance.now();
      try {
        return await fn(...args);
      } finally {
        trace.add('s', trace.at(t0), performance.now() - t0, key);
      }
    };
  }
}
const appendStats = () => ({
  appends: appends.length,
  appendP50Ms: quantile(appends, 0.5),
  appendP99Ms: quantile(appends, 0.99),
  appendMaxMs: quantile(appends, 1),
  appendTotalMs: Number(appends.reduce((a, b) => a + b, 0).toFixed(1)),
  appendsOver5Ms: appends.filter((t) => t > 5).length,
  fanoutP50Ms: quantile(fanouts, 0.5),
  fanoutP99Ms: quantile(fanouts, 0.99),
  fanoutMaxMs: quantile(fanouts, 1),
});
await app.listen({ port: 0, host: '127.0.0.1', backlog: 4096 });
const { port } = app.server.address() as { port: number };

serveBenchCommands(
  {
    connections: () => app.salon.rooms?.connectionCount ?? 0,
    resetPhase: () => {
      appends = [];
      fanouts = [];
      trace.start();
    },
    phaseStats: () => {
      trace.write();
      return appendStats();
    },
    close: () => app.close(),
  },
  PROFILE_INTERVAL_US,
);
process.send!({ evt: 'listening', port });
