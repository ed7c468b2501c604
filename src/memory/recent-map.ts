/**
 * A Map that keeps at most `max` entries, the most recently read or written: past `max`, the least
 * recent goes. For what is kept per thread, whose ids come and go without end.
 */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('RecentMap: max must be a whole number ≥ 1');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry of `key`, now the most recent; undefined when there is none. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Sets `key`'s entry as the most recent, dropping the least recent past `max`. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Every entry, least recent first, without making any more recent. */
  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries.entries();
  }
}
