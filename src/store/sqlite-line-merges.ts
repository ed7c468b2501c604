/**
 * FTS5's merges of the memory lines' segments (`memory_lines`), taken out of the writes and done in
 * bounded slices of their own, with event-loop turns between.
 *
 * FTS5 writes the line changes of a transaction out as a new segment (at the commit, or whenever a
 * change's rowid is not above the last one), and with its `automerge` on, the statement that writes
 * one also merges older segments: 64 pages × the index's levels each time another 64 pages have
 * been written, and every segment of a level at once when the level reaches 16 (`crisismerge`).
 * A single statement or commit that did that held the event loop 20–47 ms while a fused source
 * thread was deleted, whatever the slices around it (docs/benchmarks.md, "Thirty-sixth session"),
 * and so did any message's write that happened to cross the 64 pages. Migration 28 turns
 * `automerge` off (it is stored in the table: every connection and process writing to the file
 * goes without); the merges happen here instead: a step is one `merge` command of MERGE_STEP_PAGES
 * pages of output (FTS5 stops at the end of the term it is on, so a term on very many lines makes a
 * step longer), a slice as many steps as fit MERGE_SLICE_MS, its commit included (SliceBudget).
 * FTS5 merges on a positive `merge` only a level of `usermerge` (4) segments or more, or one whose
 * merge has begun: what automerge would merge, so the index keeps its shape, merged a little later.
 * `crisismerge` stays as it was, the bound should nothing merge for a while (a process that writes
 * lines and stops before its slices ran: the next store to write lines, or to open, merges them).
 *
 * Who runs the slices: a write of lines asks for them (`written`), and a timer runs one a little
 * later, then another after each pause while a slice did some work. Work that runs in slices of its
 * own (deleting a thread, writing a fusion's memory) runs merge slices between its own instead
 * (`drive`), with a turn between each, and the timer stands down meanwhile: a merge slice and one of
 * that work's never run back to back.
 */
import type Database from 'better-sqlite3';
import { SliceBudget } from './slice-budget.js';

/** Pages of merged output one `merge` step writes (FTS5's pages: 4,050 bytes by default). */
export const MERGE_STEP_PAGES = 32;
/** How long one slice of merge steps may hold the event loop, its commit included (SliceBudget). */
export const MERGE_SLICE_MS = 10;
/** From a write of lines to the first slice. */
export const MERGE_DELAY_MS = 50;
/** Between two slices while there is more to merge. */
export const MERGE_PAUSE_MS = 10;
/** After a slice that failed (the write lock held by another process past the busy timeout). */
export const MERGE_RETRY_MS = 5_000;

export class LineMerges {
  readonly #budget = new SliceBudget(MERGE_SLICE_MS);
  readonly #slice: Database.Transaction<() => boolean>;
  #steps = 0;
  /** Lines were written since a slice last found nothing to merge. */
  #pending = false;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #driving = 0;
  #stopped = false;

  constructor(private readonly db: Database.Database) {
    // A literal: FTS5 reads the value as an integer, and better-sqlite3 binds a number as a real.
    const step = db.prepare(`INSERT INTO memory_lines (memory_lines, rank) VALUES ('merge', ${MERGE_STEP_PAGES})`);
    const changes = db.prepare('SELECT total_changes()').pluck();
    this.#slice = db.transaction(
      this.#budget.timed(() => {
        this.#steps = 0;
        // A step costs from ~0.1 ms to ~10 (FTS5 finishes the term it is on), and a slice that
        // began one more just under its budget ended at 15–20 ms: the next step is expected to take
        // as long as the longest of the slice so far, and runs only if that fits.
        let longest = 0;
        let merged: boolean;
        do {
          const before = changes.get() as number;
          const started = performance.now();
          step.run();
          longest = Math.max(longest, performance.now() - started);
          // FTS5's documented test: a step that merged something changed two rows or more.
          merged = (changes.get() as number) - before >= 2;
          this.#steps++;
        } while (merged && this.#budget.more(this.#steps, longest));
        return merged;
      }),
    );
  }

  /**
   * One slice of merge steps, in a transaction of its own (not inside another): whether its last
   * step merged something, so that there may be more.
   */
  slice(): boolean {
    const more = this.#slice.immediate();
    this.#budget.committed(this.#steps);
    if (!more) this.#pending = false;
    return more;
  }

  /** Lines were written (or are being, in a transaction): merge a little later. */
  written(): void {
    this.#pending = true;
    this.#schedule(MERGE_DELAY_MS);
  }

  /**
   * Runs `work`, which calls slice() between slices of its own (a turn between each), while the
   * timer stands down; what is left to merge after it goes on by the timer.
   */
  async drive<T>(work: () => Promise<T>): Promise<T> {
    this.#driving++;
    try {
      return await work();
    } finally {
      this.#driving--;
      if (this.#pending) this.#schedule(MERGE_PAUSE_MS);
    }
  }

  /** No more slices (the store is closing). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #schedule(ms: number): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setTimeout(() => this.#run(), ms);
    this.#timer.unref?.();
  }

  #run(): void {
    this.#timer = null;
    // A driver merges between its own slices, and asks for the timer again when it is done.
    if (this.#driving > 0 || !this.#pending || !this.db.open) return;
    try {
      if (this.slice()) this.#schedule(MERGE_PAUSE_MS);
    } catch {
      // The write lock held past the busy timeout, say: the merges wait, the index only has more segments meanwhile.
      if (!this.#stopped) this.#timer = setTimeout(() => this.#run(), MERGE_RETRY_MS);
      this.#timer?.unref?.();
    }
  }
}
