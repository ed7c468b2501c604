/**
 * Where a bench:ws process's time went, for telling queueing in the server from queueing in the
 * load generator or on the machine: CPU time, time spent runnable but waiting for a CPU (Linux
 * schedstat: other processes on the core), and event-loop delay (work queued behind work).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, performance, PerformanceObserver, type IntervalHistogram } from 'node:perf_hooks';

/** Event-loop delay sampling interval: 1 ms timers cost the server ~2 % of its core. */
const LOOP_RESOLUTION_MS = 2;

/** Milliseconds this process spent runnable but not running; null where schedstat is missing. */
export function runqueueWaitMs(): number | null {
  try {
    const fields = readFileSync('/proc/self/schedstat', 'latin1').trim().split(' ');
    return Number(fields[1]) / 1e6;
  } catch {
    return null;
  }
}

/** CPU time (user + system) of this process in milliseconds. */
export function cpuMs(): number {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1000;
}

/** V8's `kind` of a young-generation collection (a scavenge) in a `gc` performance entry. */
export const GC_MINOR = 1;

/** A `gc` performance entry's kind (GC_MINOR, …); 0 where the entry does not say. */
export function gcKind(entry: PerformanceEntry): number {
  return (entry as { detail?: { kind?: number } }).detail?.kind ?? 0;
}

/**
 * A phase's CPU, run-queue wait, event-loop delay and garbage-collection pauses, measured from
 * `start()` to `read()`.
 */
export class PhaseMeter {
  private loop: IntervalHistogram | null = null;
  private pauses: { ms: number; minor: boolean }[] = [];
  private readonly gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.pauses.push({ ms: e.duration, minor: gcKind(e) === GC_MINOR });
  });
  private cpu0 = 0;
  private sys0 = 0;
  private wait0: number | null = null;
  private faults0 = 0;

  start(): void {
    this.loop?.disable();
    this.loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    this.loop.enable();
    this.cpu0 = cpuMs();
    this.sys0 = process.cpuUsage().system / 1000;
    this.wait0 = runqueueWaitMs();
    this.faults0 = process.resourceUsage().minorPageFault;
    this.pauses = [];
    this.gc.disconnect();
    this.gc.observe({ entryTypes: ['gc'] });
  }

  read(): {
    cpuMs: number;
    sysMs: number;
    runqueueWaitMs: number | null;
    loopDelayP50Ms: number | null;
    loopDelayP99Ms: number | null;
    minorFaults: number;
    /** Young-generation collections: how many, their longest pause and all their pauses (ms). */
    scavenges: number;
    scavengeMaxMs: number;
    scavengeTotalMs: number;
    /** Every other collection's pauses (mark-compact finalisation, incremental steps V8 reports). */
    otherGcMaxMs: number;
  } {
    const wait = runqueueWaitMs();
    const loop = this.loop;
    // The histogram counts the sampling interval itself in every delay: report only the excess.
    const excess = (p: number) => (loop && loop.count ? Math.max(0, loop.percentile(p) / 1e6 - LOOP_RESOLUTION_MS) : null);
    return {
      cpuMs: cpuMs() - this.cpu0,
      sysMs: process.cpuUsage().system / 1000 - this.sys0,
      runqueueWaitMs: wait === null || this.wait0 === null ? null : wait - this.wait0,
      loopDelayP50Ms: excess(50),
      loopDelayP99Ms: excess(99),
      minorFaults: process.resourceUsage().minorPageFault - this.faults0,
      ...this.gcPauses(),
    };
  }

  private gcPauses(): { scavenges: number; scavengeMaxMs: number; scavengeTotalMs: number; otherGcMaxMs: number } {
    const minor = this.pauses.filter((p) => p.minor).map((p) => p.ms);
    const other = this.pauses.filter((p) => !p.minor).map((p) => p.ms);
    const r = (ms: number) => Number(ms.toFixed(2));
    return {
      scavenges: minor.length,
      scavengeMaxMs: r(Math.max(0, ...minor)),
      scavengeTotalMs: r(minor.reduce((a, b) => a + b, 0)),
      otherGcMaxMs: r(Math.max(0, ...other)),
    };
  }
}

const ALLOC_SAMPLING_BYTES = 4096;

/** What a bench:ws server process (Salon's or the bare peer) tells the driver besides CPU and memory. */
export interface BenchServer {
  /** Open room connections. */
  connections(): number;
  /** The measured phase starts: drop what earlier phases recorded. */
  resetPhase(): void;
  /** The measured phase's own figures (store appends, fan-out), merged into `metered`. */
  phaseStats(): Record<string, unknown>;
  close(): Promise<void>;
}

/**
 * Answers bench:ws's IPC commands (`stats`, `meter`/`metered`, `profile`/`profiled`, `exit`) for a
 * server process. `stats` reads memory after a full GC when run with --expose-gc; with
 * BENCH_PROFILE=<file> the measured phase is CPU-profiled into that file every `intervalUs`; with
 * BENCH_ALLOC_PROFILE=<file>, its allocations are sampled every 4 KiB into that file (a
 * .heapprofile for Chrome's DevTools), garbage included (what makes young-generation GCs come
 * often) or, with BENCH_ALLOC_SURVIVORS=1, only what outlived a young-generation GC (what makes
 * each of them long).
 */
export function serveBenchCommands(server: BenchServer, profileIntervalUs: number): void {
  const gc = (globalThis as { gc?: (options?: { type: 'minor' | 'major' }) => void }).gc;
  const profileFile = process.env.BENCH_PROFILE;
  const allocFile = process.env.BENCH_ALLOC_PROFILE;
  const inspector = profileFile || allocFile ? new Session() : null;
  const meter = new PhaseMeter();
  // Spawned in its own session (for its own scheduler group), so it must not outlive the bench.
  process.on('disconnect', () => process.exit(0));
  process.on('message', async (msg: { cmd: string }) => {
    if (msg.cmd === 'meter') {
      meter.start();
      server.resetPhase();
    } else if (msg.cmd === 'metered') {
      process.send!({ evt: 'metered', ...meter.read(), ...server.phaseStats() });
    } else if (msg.cmd === 'profile' && inspector) {
      inspector.connect();
      if (allocFile) {
        await inspector.post('HeapProfiler.enable');
        await inspector.post('HeapProfiler.startSampling', {
          samplingInterval: ALLOC_SAMPLING_BYTES,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: process.env.BENCH_ALLOC_SURVIVORS !== '1',
        });
      }
      if (profileFile) {
        await inspector.post('Profiler.enable');
        await inspector.post('Profiler.setSamplingInterval', { interval: profileIntervalUs });
        await inspector.post('Profiler.start');
      }
    } else if (msg.cmd === 'profiled' && inspector) {
      if (profileFile) writeFileSync(profileFile, JSON.stringify((await inspector.post('Profiler.stop')).profile));
      if (allocFile) {
        // Objects allocated since the last scavenge have not met one yet: without collecting them
        // first, "survivors" would include up to a whole young generation of garbage.
        if (process.env.BENCH_ALLOC_SURVIVORS === '1' && gc) for (let i = 0; i < 2; i++) gc({ type: 'minor' });
        writeFileSync(allocFile, JSON.stringify((await inspector.post('HeapProfiler.stopSampling')).profile));
      }
    } else if (msg.cmd === 'stats') {
      if (gc) {
        gc();
        gc();
      }
      let mem: { rss: number | null; heapUsed: number; external: number };
      try {
        mem = process.memoryUsage();
      } catch {
        // Reading RSS opens /proc/self/stat, which fails once every file descriptor is in use.
        mem = { rss: null, heapUsed: NaN, external: NaN };
      }
      process.send!({ evt: 'stats', rss: mem.rss, heapUsed: mem.heapUsed, external: mem.external, cpuMs: cpuMs(), connections: server.connections() });
    } else if (msg.cmd === 'exit') {
      await server.close();
      process.exit(0);
    }
  });
}

/** The `p` quantile of `values` in ms (3 decimals); null when there are none. */
export function quantile(values: number[], p: number): number | null {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted.length ? Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))].toFixed(3)) : null;
}

/**
 * With BENCH_TRACE=<file>, a server's measured phase as a timeline (ms since the phase began):
 * every message (`m`: when its server work began, how long to its frames written, and for Salon
 * its store append), every GC pause (`gc`) and, for Salon, every other store call (`s`). Written
 * when the phase is read, for finding what the slowest messages ran into.
 */
export class PhaseTrace {
  readonly enabled = Boolean(process.env.BENCH_TRACE);
  private t0 = performance.now();
  private events: unknown[][] = [];
  private readonly gc = this.enabled
    ? new PerformanceObserver((list) => {
        for (const e of list.getEntries()) this.events.push(['gc', this.at(e.startTime), e.duration, gcKind(e)]);
      })
    : null;

  start(): void {
    this.t0 = performance.now();
    this.events = [];
    this.gc?.observe({ entryTypes: ['gc'] });
  }

  /** ms since the phase began, of a performance.now() reading. */
  at(t: number): number {
    return Number((t - this.t0).toFixed(3));
  }

  add(...event: unknown[]): void {
    if (this.enabled) this.events.push(event);
  }

  write(): void {
    if (!this.enabled) return;
    this.gc?.disconnect();
    writeFileSync(process.env.BENCH_TRACE!, this.events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  }
}
