/**
 * How many memory lines each query term is on, remembered between line searches (SqliteStore's
 * rareTerms). Counting a term costs a full-text lookup that reads up to COMMON_TERM_LINES + 1 of
 * its postings, for every term of every question; the answer only matters on one side of
 * COMMON_TERM_LINES. So a count is kept as long as the lines written or deleted since cannot have
 * carried it across: a term on n ≤ COMMON_TERM_LINES lines stays rare until COMMON_TERM_LINES − n
 * more lines are written, one on more stays common until a line is deleted. Lines written through
 * another connection (a CLI command beside the server) are seen through `version` (SQLite's
 * `data_version`, which changes when another connection commits): then every count is dropped.
 * Decisions are therefore exactly those of counting every time.
 */
import { COMMON_TERM_LINES } from './memory-lines.js';

/** Terms remembered at most; the memo is dropped when it fills. */
const MAX_TERMS = 10_000;

interface Counted {
  /** Lines the term was on, counted up to COMMON_TERM_LINES + 1. */
  lines: number;
  /** The counters when it was counted. */
  written: number;
  deleted: number;
}

export class TermLineCounts {
  private readonly counts = new Map<string, Counted>();
  private written = 0;
  private deleted = 0;
  private version: unknown;

  /** Lines written through this connection (a rolled-back write counts too: it only ends counts sooner). */
  linesWritten(n: number): void {
    this.written += n;
  }

  /** Lines deleted through this connection. */
  linesDeleted(n: number): void {
    this.deleted += n;
  }

  /**
   * The terms on at most COMMON_TERM_LINES lines, in order. `count(term)` counts a term's lines (up
   * to COMMON_TERM_LINES + 1) when no count of it is still good; `version` is the database's
   * data_version now.
   */
  rare(terms: string[], count: (term: string) => number, version: unknown): string[] {
    if (version !== this.version) {
      this.counts.clear();
      this.version = version;
    }
    return terms.filter((term) => {
      let c = this.counts.get(term);
      if (!c || !this.stillGood(c)) {
        if (this.counts.size >= MAX_TERMS) this.counts.clear();
        c = { lines: count(term), written: this.written, deleted: this.deleted };
        this.counts.set(term, c);
      }
      return c.lines <= COMMON_TERM_LINES;
    });
  }

  /**
   * The lines `term` was on when it was last counted (up to COMMON_TERM_LINES + 1), if it was: an
   * estimate of a line search's size, which lines written or deleted since may have moved.
   */
  linesWhenCounted(term: string): number | undefined {
    return this.counts.get(term)?.lines;
  }

  private stillGood(c: Counted): boolean {
    if (c.lines <= COMMON_TERM_LINES) return this.written - c.written <= COMMON_TERM_LINES - c.lines;
    return this.deleted === c.deleted;
  }
}
