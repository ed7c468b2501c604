/**
 * A set that holds a value as many times as it was added: a value added twice stays until it has
 * been deleted twice.
 */
export class CountedSet<T> {
  private readonly counts = new Map<T, number>();

  add(value: T): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
  }

  /** Takes one of the value's additions back; it leaves the set with its last. */
  delete(value: T): void {
    const n = this.counts.get(value);
    if (n === undefined) return;
    if (n > 1) this.counts.set(value, n - 1);
    else this.counts.delete(value);
  }

  has(value: T): boolean {
    return this.counts.has(value);
  }

  /** Distinct values held. */
  get size(): number {
    return this.counts.size;
  }

  values(): IterableIterator<T> {
    return this.counts.keys();
  }
}
