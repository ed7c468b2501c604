/**
 * Strings as small integers with reference counts, so per-row metadata in an index's shared
 * memory can name a string in one int32 word, and a string no row names any more is forgotten.
 */
export class Interner {
  private readonly ids = new Map<string, number>();
  private readonly strings: (string | undefined)[] = [];
  private readonly counts: number[] = [];
  private readonly free: number[] = [];

  /** The id of `value` with one more reference (−1 for null, which is never counted). */
  acquire(value: string | null | undefined): number {
    if (value === null || value === undefined) return -1;
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.free.pop() ?? this.strings.length;
      this.ids.set(value, id);
      this.strings[id] = value;
      this.counts[id] = 0;
    }
    this.counts[id]++;
    return id;
  }

  /** Drops one reference to `id`; the string is forgotten with its last one. */
  release(id: number): void {
    if (id < 0 || this.strings[id] === undefined) return;
    if (--this.counts[id] > 0) return;
    this.ids.delete(this.strings[id]!);
    this.strings[id] = undefined;
    this.free.push(id);
  }

  /** The string of `id`, or null (−1, or an id released). */
  valueOf(id: number): string | null {
    return id < 0 ? null : (this.strings[id] ?? null);
  }

  /** Distinct strings held. */
  get size(): number {
    return this.ids.size;
  }
}
