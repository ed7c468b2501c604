/** Request pacing for an API that asks clients to keep their requests apart (HN, Reddit). */

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Lets requests start at least `intervalMs` apart, in call order, however many callers share it. */
export class Pacer {
  /** Serialises request starts so concurrent callers are paced too. */
  private gate: Promise<void> = Promise.resolve();
  private lastStart = -Infinity;

  constructor(private readonly intervalMs: number) {}

  /** Resolves when the caller may start its request (rejects when `signal` aborts first). */
  async turn(signal?: AbortSignal): Promise<void> {
    // Pace from the actual start of the previous request, not its planned slot: a late timer
    // under load must not squeeze the next gap below intervalMs.
    const turn = this.gate.then(async () => {
      const wait = this.lastStart + this.intervalMs - performance.now();
      if (wait > 0) await sleep(wait, signal);
      // A caller that gave up while its slot was already free starts nothing: it must not hold the next back.
      signal?.throwIfAborted();
      this.lastStart = performance.now();
    });
    this.gate = turn.catch(() => undefined);
    await turn;
  }
}
