/**
 * What held the event loop during a benchmark's phase: a timer ticking every `resolutionMs` notes
 * each gap longer than `stallMs` past its interval, and each is matched with the garbage-collection
 * pauses that fell inside it (a delay histogram says how long the loop waited, not why).
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { GC_MINOR, gcKind } from './ws-proc.js';

const hundredths = (x: number) => Math.round(x * 100) / 100;

/** One hold of the event loop: when (s since the log began), how long, the GC pauses inside it, and (when asked) the phase it began in. */
export interface Stall {
  at_s: number;
  ms: number;
  gc_ms: number;
  gc_major: boolean;
  phase?: string;
}

export interface StallLogOptions {
  /** How often the timer ticks (ms). */
  resolutionMs: number;
  /** A gap longer than this past the interval is a stall (ms; 10 by default). */
  stallMs?: number;
  /** The stalls listed, longest first (8 by default). */
  listed?: number;
}

/** Starts the log; `stop` ends it and lists the longest stalls, each named by `phaseAt(performance.now() time)` when given. */
export function stallLog(options: StallLogOptions): { stop(phaseAt?: (at: number) => string): Stall[] } {
  const { resolutionMs, stallMs = 10, listed = 8 } = options;
  const t0 = performance.now();
  const gaps: { from: number; to: number }[] = [];
  const pauses: { from: number; to: number; major: boolean }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push({ from: e.startTime, to: e.startTime + e.duration, major: gcKind(e) !== GC_MINOR });
  });
  observer.observe({ entryTypes: ['gc'] });
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - last - resolutionMs > stallMs) gaps.push({ from: last, to: now });
    last = now;
  }, resolutionMs);
  return {
    stop(phaseAt) {
      clearInterval(timer);
      observer.disconnect();
      return gaps
        .map(({ from, to }) => {
          const inside = pauses.filter((p) => p.to > from && p.from < to);
          return {
            at_s: hundredths((from - t0) / 1000),
            ms: hundredths(to - from - resolutionMs),
            gc_ms: hundredths(inside.reduce((sum, p) => sum + Math.min(p.to, to) - Math.max(p.from, from), 0)),
            gc_major: inside.some((p) => p.major),
            ...(phaseAt ? { phase: phaseAt(from) } : {}),
          };
        })
        .sort((a, b) => b.ms - a.ms)
        .slice(0, listed);
    },
  };
}
