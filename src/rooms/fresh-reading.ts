/**
 * One reading shared by every caller for a while: the first call starts `read(key)`, and calls
 * with the same key get the same promise while it is under way and for `freshMs` from its start
 * (so concurrent callers share one read, and a slow read is not joined by others). A read that
 * fails is not kept: the next call reads again. For reads that go over much shared state and that
 * anyone may ask for often (every node's active rooms, the store's categories).
 */
export class FreshReading<K, T> {
  private last: { at: number; key: K; value: Promise<T>; settled: boolean } | null = null;

  constructor(
    private readonly freshMs: number,
    private readonly read: (key: K) => Promise<T>,
  ) {}

  get(key: K): Promise<T> {
    const now = Date.now();
    const last = this.last;
    if (last && last.key === key && (!last.settled || now - last.at < this.freshMs)) return last.value;
    const reading = { at: now, key, value: this.read(key), settled: false };
    this.last = reading;
    reading.value.then(
      () => (reading.settled = true),
      () => {
        if (this.last === reading) this.last = null;
      },
    );
    return reading.value;
  }
}
