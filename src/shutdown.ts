/**
 * How the process stops on a signal: `app.close()` (sockets get 1001, answers end, conversation
 * memory is stored, the store closes), then exit 0. A shutdown past its grace exits 1, but first
 * stores the conversation memory and closes the store itself, each for a bounded time: the onClose
 * hooks that would have done it may be the ones that hang.
 */
import type { FastifyInstance } from 'fastify';

/** Longest the whole shutdown may take before the process gives up and exits 1. */
export const SHUTDOWN_GRACE_MS = 10_000;
/** Longest each last-resort step (storing memory, closing the store) may take after the grace. */
export const LAST_STEP_MS = 2_000;

export interface ShutdownOptions {
  graceMs?: number;
  lastStepMs?: number;
  /** Ends the process (tests pass their own). */
  exit?: (code: number) => void;
}

/** Resolves when `work` settles or after `ms`, whichever comes first; never rejects. */
async function within(work: () => Promise<unknown>, ms: number): Promise<'done' | 'failed' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  const settled = Promise.resolve()
    .then(work)
    .then(
      () => 'done' as const,
      () => 'failed' as const,
    );
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a shutdown past its grace still does: store the open memory windows, then close the store. */
async function lastResort(app: FastifyInstance, stepMs: number): Promise<void> {
  const { memory, store } = app.salon;
  const stored = await within(() => memory.close(), stepMs);
  const closed = await within(() => store.close(), stepMs);
  app.log.error({ memory: stored, store: closed }, 'shutdown took too long; stored what memory it could and closed the store');
}

/** Whether a shutdown was asked for by a signal (`SIGINT`), not begun by a fatal error. */
function isSignal(reason: string): boolean {
  return reason.startsWith('SIG');
}

/** `process.exitCode` as a number (0 when unset): 1 once a fatal error set it. */
function exitCodeSoFar(): number {
  return process.exitCode === undefined ? 0 : Number(process.exitCode);
}

/** Shuts the app down once (a later signal hurries it: shutdownOnce); `begun` tells whether it was called. */
export interface Shutdown {
  (signal: string): void;
  readonly begun: boolean;
}

/**
 * A function that shuts the app down once and then ends the process: `process.exitCode` (default 0)
 * when the app closed, 1 when closing failed or took past the grace. A later call by a signal ends
 * the wait for the grace: the last resort runs at once, and the exit code is 1; other later calls
 * do nothing.
 */
export function shutdownOnce(app: FastifyInstance, options: ShutdownOptions = {}): Shutdown {
  const graceMs = options.graceMs ?? SHUTDOWN_GRACE_MS;
  const lastStepMs = options.lastStepMs ?? LAST_STEP_MS;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let closing = false;
  let hurry = (_again: string) => {};
  const shutdown = (signal: string) => {
    // Asked again (Ctrl-C pressed twice, a supervisor's second SIGTERM): the last resort at once.
    if (closing) return void (isSignal(signal) && hurry(signal));
    closing = true;
    app.log.info({ signal }, 'shutting down');
    // Before close(), which waits for start-up to end: its long steps stop at their next safe point.
    const stopped = new Error(`shutting down (${signal})`);
    app.salon.stopping.abort(stopped);
    // Past the grace the last resort decides, and the exit code is 1 whatever app.close() does.
    let late = false;
    const giveUp = () => {
      if (late) return;
      late = true;
      clearTimeout(timer);
      void lastResort(app, lastStepMs).finally(() => exit(1));
    };
    const timer = setTimeout(giveUp, graceMs);
    timer.unref();
    hurry = (again) => {
      if (!late) app.log.warn({ signal: again }, 'asked again to stop: storing what memory it can and exiting without waiting for the rest');
      giveUp();
    };
    app.close().then(
      () => {
        if (late) return;
        clearTimeout(timer);
        exit(exitCodeSoFar());
      },
      (err) => {
        // A start-up step the abort stopped: close() ran every hook and only reports why start-up ended.
        const clean = err === stopped;
        if (!clean) app.log.error({ err }, 'error during shutdown');
        if (late) return;
        clearTimeout(timer);
        exit(clean ? exitCodeSoFar() : 1);
      },
    );
  };
  return Object.defineProperty(shutdown, 'begun', { get: () => closing }) as Shutdown;
}

/**
 * Loads the app (its plugins: the index, the demo seeding), then listens on `at`, unless `shutdown`
 * began meanwhile: then it never listens and resolves to false, and the shutdown ends the process.
 * Fastify's own `listen` binds the port after an `app.close()` that came during loading, so a
 * SIGTERM during start-up had the server accept connections until the process exited.
 */
export async function listenUnlessShutDown(app: FastifyInstance, at: { port: number; host: string }, shutdown: Shutdown): Promise<boolean> {
  try {
    await app.ready();
  } catch (err) {
    // The shutdown stopped a start-up step: not a failure to start, and the shutdown ends the process.
    if (shutdown.begun) return false;
    throw err;
  }
  if (shutdown.begun) return false;
  await app.listen(at);
  if (!shutdown.begun) return true;
  // The signal came while HOST's name was being looked up: the close found no server to close.
  app.server.close();
  app.server.closeAllConnections();
  return false;
}
