/**
 * bench:ws server (a child process driven over IPC by bench/ws.ts): the real Salon app on
 * 127.0.0.1 with a fresh DATA_DIR holding one item per bench room. Answers `stats` with its
 * memory (after a full GC when run with --expose-gc), CPU time and connection count. With
 * BENCH_PROFILE=<file>, the measured phase is CPU-profiled into that file.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { blankItem } from '../src/content/types.js';
import { PhaseMeter } from './ws-proc.js';

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
const app = await buildApp(config);
for (let i = 0; i < rooms; i++) {
  await app.salon.store.upsertItem(
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
store.appendMessage = async (m) => {
  const t0 = performance.now();
  try {
    return await append(m);
  } finally {
    appends.push(performance.now() - t0);
    setImmediate(() => setImmediate(() => fanouts.push(performance.now() - t0)));
  }
};
const quantile = (values: number[], p: number) => {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted.length ? Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))].toFixed(3)) : null;
};
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

const gc = (globalThis as { gc?: () => void }).gc;
const profileFile = process.env.BENCH_PROFILE;
const inspector = profileFile ? new Session() : null;
const meter = new PhaseMeter();
// Spawned in its own session (for its own scheduler group), so it must not outlive the bench.
process.on('disconnect', () => process.exit(0));
process.on('message', async (msg: { cmd: string }) => {
  if (msg.cmd === 'meter') {
    meter.start();
    appends = [];
    fanouts = [];
  } else if (msg.cmd === 'metered') {
    process.send!({ evt: 'metered', ...meter.read(), ...appendStats() });
  } else if (msg.cmd === 'profile' && inspector) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.setSamplingInterval', { interval: PROFILE_INTERVAL_US });
    await inspector.post('Profiler.start');
  } else if (msg.cmd === 'profiled' && inspector) {
    const { profile } = await inspector.post('Profiler.stop');
    writeFileSync(profileFile!, JSON.stringify(profile));
  } else if (msg.cmd === 'stats') {
    if (gc) {
      gc();
      gc();
    }
    const cpu = process.cpuUsage();
    let mem: { rss: number | null; heapUsed: number; external: number };
    try {
      mem = process.memoryUsage();
    } catch {
      // Reading RSS opens /proc/self/stat, which fails once every file descriptor is in use.
      mem = { rss: null, heapUsed: NaN, external: NaN };
    }
    process.send!({
      evt: 'stats',
      rss: mem.rss,
      heapUsed: mem.heapUsed,
      external: mem.external,
      cpuMs: (cpu.user + cpu.system) / 1000,
      connections: app.salon.rooms?.connectionCount ?? 0,
    });
  } else if (msg.cmd === 'exit') {
    await app.close();
    process.exit(0);
  }
});
process.send!({ evt: 'listening', port });
