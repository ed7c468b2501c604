/**
 * Node's own helper threads yield to the event loop (docs/architecture.md, "Node's helper threads
 * yield to the event loop too"). V8 runs a garbage collection's concurrent marking and sweeping, its
 * scavenges' helpers and the optimising compiler on a few threads of its own, started with the
 * process; when one of them shares a core with the event loop, the scheduler gives it slices of
 * 3–5 ms in which every room's messages wait (bench:ws, docs/benchmarks.md, "Twentieth session").
 * In Linux's SCHED_IDLE class they run whenever a core is free, which a chat server's cores mostly
 * are, and give way at once when the event loop wakes.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';

/** What yieldHelperThreads did: how many threads it moved, or why it moved none. */
export type HelperThreads = { moved: number } | { skipped: 'not-linux' | 'not-main-thread' | 'no-binding' };

/**
 * Moves every thread of this process but the calling one (the event loop's) to SCHED_IDLE. Call it
 * first thing in the process's main thread, before the app starts threads of its own (scan and
 * extraction workers, whose work someone waits for): every other thread then is Node's.
 */
export function yieldHelperThreads(): HelperThreads {
  if (process.platform !== 'linux') return { skipped: 'not-linux' };
  if (!isMainThread) return { skipped: 'not-main-thread' };
  let backgroundThreads: (ids: number[]) => number;
  try {
    ({ backgroundThreads } = createRequire(import.meta.url)('salon-hnsw') as { backgroundThreads: (ids: number[]) => number });
  } catch {
    return { skipped: 'no-binding' };
  }
  // On Linux the main thread's id is the process id.
  const helpers = readdirSync('/proc/self/task')
    .map(Number)
    .filter((id) => Number.isInteger(id) && id !== process.pid);
  return { moved: backgroundThreads(helpers) };
}
