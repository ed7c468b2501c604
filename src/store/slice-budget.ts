/**
 * A time budget for work done in slices, one transaction each, that counts the commit too.
 *
 * A slice that stops itself after N ms of statements still holds the event loop through its commit,
 * which writes every page the statements dirtied to the WAL (zeroed first: secure_delete). For
 * deletions the commit costs more than the statements: deleting 1,024 messages took ~17 ms and its
 * commit ~27 ms more, so slices meant to last 15 ms held the loop 45–80 ms. The budget learns what
 * one unit of work (a row, a batch) adds to the commit from the slices already committed, and a
 * slice stops once its time so far plus the commit it has built up would reach the budget.
 */
export class SliceBudget {
  /** What one unit adds to the commit, in ms; negative until a slice has committed. */
  #commitPerUnit = -1;
  #started = 0;
  #ended = 0;

  /** @param ms what a slice may take, its commit included. */
  constructor(private readonly ms: number) {}

  /** `statements` (a transaction's function) timed as a slice's statements, for more() and committed(). */
  timed<A, R>(statements: (arg: A) => R): (arg: A) => R {
    return (arg) => {
      this.#started = performance.now();
      const result = statements(arg);
      this.#ended = performance.now();
      return result;
    };
  }

  /**
   * Whether a slice that has done `units` so far may do more (call it between units; the first
   * always runs). Until a slice has committed, its commit is taken to cost as much as its statements.
   * `nextMs`: what the next unit is expected to take, when the caller knows (0: nothing is counted).
   */
  more(units: number, nextMs = 0): boolean {
    const elapsed = performance.now() - this.#started;
    return elapsed + nextMs + (this.#commitPerUnit < 0 ? elapsed : units * this.#commitPerUnit) < this.ms;
  }

  /**
   * Records the slice just committed, of `units`: what its commit took beyond its statements. The
   * estimate follows the latest slices, since a commit's cost changes with what the pages held.
   */
  committed(units: number): void {
    if (units <= 0) return;
    const perUnit = Math.max(0, performance.now() - this.#ended) / units;
    this.#commitPerUnit = this.#commitPerUnit < 0 ? perUnit : (this.#commitPerUnit + perUnit) / 2;
  }
}
