/**
 * Turns of the event loop for work done in slices on the main thread (a deleted thread's rows and
 * messages, a fusion's staged memory, FTS5's merges between them, the vector index's removal of a
 * deleted thread's rows): `await sliceTurn()` before each slice, and at most one waiter goes on per
 * loop iteration, whichever work it belongs to, in the order they asked.
 *
 * Each kind of work turning on its own let two slices of different work run in one iteration: a
 * deletion's slice and the vector index's removal step each waited on an immediate of their own, so
 * both ran in the same check phase, and the hiding transaction of a deleted fused source, its first
 * removal steps and then each deletion slice beside a removal step held the loop 20–41 ms
 * (docs/benchmarks.md, "Thirty-eighth session").
 *
 * The first turn after a quiet spell is two immediates: one set from a callback of the poll phase
 * (a worker's reply, a request) runs in the same iteration, right after that callback, before any
 * timer or socket is served; the second runs in the next iteration at the earliest, whatever phase
 * the first was set from (docs/benchmarks.md, "Thirty-seventh session"). While work waits, each
 * next release is set from the check phase, so it is in the next iteration too.
 */
// The real immediates even where a test fakes the global ones: a release set under fake timers and
// never run would leave every later waiter of the process waiting.
import { setImmediate } from 'node:timers';

const waiting: (() => void)[] = [];
/** A release is set (an immediate) for the head of `waiting`. */
let releasing = false;

/** Lets the first waiter go on (in the check phase): its slice runs now, the next waiter's an iteration later. */
function release(): void {
  const next = waiting.shift();
  if (waiting.length > 0) setImmediate(release);
  else releasing = false;
  next?.();
}

/**
 * Resolves in a later iteration of the event loop than the caller's, past its poll phase (sockets
 * read, workers' messages) and its timers, and in an iteration of its own among the callers of
 * sliceTurn: run one slice after it, then ask again.
 */
export function sliceTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (releasing) return;
    releasing = true;
    setImmediate(() => setImmediate(release));
  });
}

/** Work between two turns of mapInTurns, in milliseconds. */
export const MAP_SLICE_MS = 10;

/**
 * `list.map(fn)`, letting the event loop turn (sliceTurn) once MAP_SLICE_MS of it have run: for
 * checks of large batches (100 content items of 160 KB took ~0.2 s to validate).
 */
export async function mapInTurns<T, R>(list: readonly T[], fn: (value: T, index: number) => R): Promise<R[]> {
  const out: R[] = [];
  let since = performance.now();
  for (const value of list) {
    if (performance.now() - since >= MAP_SLICE_MS) {
      await sliceTurn();
      since = performance.now();
    }
    out.push(fn(value, out.length));
  }
  return out;
}
