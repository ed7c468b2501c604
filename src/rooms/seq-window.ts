/**
 * Which of a room's recent seqs this node already delivered: one bit per seq over the last `size`
 * seqs, in a ring. A seq older than the window counts as delivered, so a late copy of an old
 * message (a resync from the store after the bus was cut off) is never sent twice. A seq that is
 * not a whole number ≥ 1 counts as delivered and never moves the window: taken as the top, an
 * Infinity made every real seq older than the window.
 *
 * A room's window (DEFAULT_SEQ_WINDOW) is wider than an import's seqs (IMPORT_MAX_MESSAGES,
 * 5,000): an import becomes readable all at once below a live message said while it was written
 * (store/sqlite-unsettled.ts), and a window of 4,096 took its first seqs as delivered, so the
 * catch-up that brings it (RoomHub.storedUnpublished) skipped them, out of every member's reach but
 * a reload. 1 KiB of bits a room.
 */
export const DEFAULT_SEQ_WINDOW = 8192;
/**
 * Runs of reopened seqs a window keeps (SeqWindow.reopen), the newest: far more than imports become
 * readable in a room between two repeats of one's notice.
 */
export const REOPENED_RUNS_KEPT = 16;
/** Seqs of one reopened run, at most (2 KiB of bits): an import's batch is IMPORT_MAX_MESSAGES, 5,000. */
export const MAX_REOPENED_SEQS = 16_384;

/** Seqs `from` to `to`, both included. */
export type SeqRun = readonly [from: number, to: number];

/** A run of seqs reopened (SeqWindow.reopen), with a bit for each once delivered. */
interface Reopened {
  from: number;
  to: number;
  bits: Uint32Array;
}

export class SeqWindow {
  private readonly bits: Uint32Array;
  /** Highest seq added. */
  private top = 0;
  /** Highest seq addThrough counted as added without its being added. */
  private through = 0;
  /** Runs reopened (reopen), oldest first: each seq counts by its own bit there, whatever its age. */
  private readonly reopened: Reopened[] = [];

  constructor(readonly size = DEFAULT_SEQ_WINDOW) {
    if (!Number.isInteger(size) || size < 32 || size % 32) throw new RangeError('SeqWindow: size must be a positive multiple of 32');
    this.bits = new Uint32Array(size / 32);
  }

  /** The highest seq added, 0 before any. */
  get newest(): number {
    return this.top;
  }

  has(seq: number): boolean {
    if (!isSeq(seq)) return true;
    const run = this.reopenedAt(seq);
    if (run) return bitOf(run.bits, seq - run.from);
    if (seq > this.top) return false;
    if (seq <= this.top - this.size) return true;
    const i = seq % this.size;
    return (this.bits[i >>> 5] & (1 << (i & 31))) !== 0;
  }

  add(seq: number): void {
    if (!isSeq(seq)) return;
    const run = this.reopenedAt(seq);
    if (run) run.bits[(seq - run.from) >>> 5] |= 1 << ((seq - run.from) & 31);
    if (seq <= this.top - this.size) return;
    if (seq > this.top) {
      if (seq - this.top >= this.size) this.bits.fill(0);
      else for (let s = this.top + 1; s < seq; s++) this.clear(s);
      this.top = seq;
    }
    const i = seq % this.size;
    this.bits[i >>> 5] |= 1 << (i & 31);
  }

  /**
   * Counts every seq up to `seq` as added, without a bit per seq older than the window: a room's
   * messages stored before the oldest one it loaded (Room.init). `has` is as before.
   */
  addThrough(seq: number): void {
    if (!isSeq(seq)) return;
    this.through = Math.max(this.through, seq);
    if (seq > this.top) {
      // Every seq the window then covers is at most `seq`.
      this.bits.fill(0xffffffff);
      this.top = seq;
      return;
    }
    for (let s = Math.max(1, this.top - this.size + 1); s <= seq; s++) this.set(s);
  }

  /**
   * Seqs `from`–`to` were made readable just now, never before (an import whose batch became
   * readable below newer messages, store/sqlite-unsettled.ts): they count as not added, older than
   * the window or counted by addThrough (a room loaded above them) as they may be, until `add`
   * adds them. A seq the window saw added itself stays added (a catch-up may have read the run
   * before its notice came), and so does one of a run reopened before: a notice heard twice (the
   * bus and the change log) delivers once. The newest REOPENED_RUNS_KEPT runs are kept, each cut
   * at MAX_REOPENED_SEQS; a seq of a run dropped counts as the window says again.
   */
  reopen(from: number, to: number): void {
    if (!isSeq(from) || !isSeq(to) || to < from) return;
    let pieces: [number, number][] = [[from, Math.min(to, from + MAX_REOPENED_SEQS - 1)]];
    for (const r of this.reopened) {
      pieces = pieces.flatMap(([a, b]): [number, number][] => {
        if (b < r.from || a > r.to) return [[a, b]];
        const left: [number, number][] = a < r.from ? [[a, r.from - 1]] : [];
        return b > r.to ? [...left, [r.to + 1, b]] : left;
      });
    }
    for (const [a, b] of pieces) {
      const run: Reopened = { from: a, to: b, bits: new Uint32Array(Math.ceil((b - a + 1) / 32)) };
      for (let s = Math.max(a, this.through + 1, this.top - this.size + 1); s <= Math.min(b, this.top); s++) {
        const i = s % this.size;
        if (this.bits[i >>> 5] & (1 << (i & 31))) run.bits[(s - a) >>> 5] |= 1 << ((s - a) & 31);
      }
      this.reopened.push(run);
      if (this.reopened.length > REOPENED_RUNS_KEPT) this.reopened.shift();
    }
  }

  private reopenedAt(seq: number): Reopened | undefined {
    if (!this.reopened.length) return undefined;
    return this.reopened.find((r) => r.from <= seq && seq <= r.to);
  }

  private set(seq: number): void {
    const i = seq % this.size;
    this.bits[i >>> 5] |= 1 << (i & 31);
  }

  private clear(seq: number): void {
    const i = seq % this.size;
    this.bits[i >>> 5] &= ~(1 << (i & 31));
  }
}

function bitOf(bits: Uint32Array, i: number): boolean {
  return (bits[i >>> 5] & (1 << (i & 31))) !== 0;
}

/** Whether `v` is a seq a store can have given: a whole number ≥ 1 that a double holds exactly. */
export function isSeq(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 1;
}
