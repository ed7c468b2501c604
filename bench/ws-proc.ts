/**
 * Where a bench:ws process's time went, for telling queueing in the server from queueing in the
 * load generator or on the machine: CPU time, time spent runnable but waiting for a CPU (Linux
 * schedstat: other processes on the core), and event-loop delay (work queued behind work).
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

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

/** A phase's CPU, run-queue wait and event-loop delay, measured from `start()` to `read()`. */
export class PhaseMeter {
  private loop: IntervalHistogram | null = null;
  private cpu0 = 0;
  private sys0 = 0;
  private wait0: number | null = null;

  start(): void {
    this.loop?.disable();
    this.loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    this.loop.enable();
    this.cpu0 = cpuMs();
    this.sys0 = process.cpuUsage().system / 1000;
    this.wait0 = runqueueWaitMs();
  }

  read(): { cpuMs: number; sysMs: number; runqueueWaitMs: number | null; loopDelayP50Ms: number | null; loopDelayP99Ms: number | null } {
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
    };
  }
}
