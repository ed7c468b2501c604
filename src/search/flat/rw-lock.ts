/**
 * An async readers–writer lock for the flat index. Scans (readers) run in workers over shared
 * memory while the main thread would otherwise move rows under them (swap-remove), so writes wait
 * for the scans in flight, and new scans wait behind a waiting write (writer preference keeps
 * ingestion from starving under constant search traffic).
 */
export class RwLock {
  private readers = 0;
  private writing = false;
  private readonly waitingWriters: (() => void)[] = [];
  private readonly waitingReaders: (() => void)[] = [];

  /** Runs `fn` while holding a read lock. */
  async read<T>(fn: () => Promise<T>): Promise<T> {
    if (this.writing || this.waitingWriters.length > 0) await new Promise<void>((r) => this.waitingReaders.push(r));
    else this.readers++;
    try {
      return await fn();
    } finally {
      this.readers--;
      this.wake();
    }
  }

  /** Runs `fn` while holding the write lock (no scans in flight). */
  async write<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.writing || this.readers > 0) await new Promise<void>((r) => this.waitingWriters.push(r));
    else this.writing = true;
    try {
      return await fn();
    } finally {
      this.writing = false;
      this.wake();
    }
  }

  private wake(): void {
    if (this.writing || this.readers > 0) return;
    const writer = this.waitingWriters.shift();
    if (writer) {
      this.writing = true;
      writer();
      return;
    }
    const readers = this.waitingReaders.splice(0);
    this.readers += readers.length;
    for (const r of readers) r();
  }
}
