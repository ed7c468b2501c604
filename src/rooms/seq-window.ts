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

export class SeqWindow {
  private readonly bits: Uint32Array;
  /** Highest seq added. */
  private top = 0;

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
    if (seq > this.top) return false;
    if (seq <= this.top - this.size) return true;
    const i = seq % this.size;
    return (this.bits[i >>> 5] & (1 << (i & 31))) !== 0;
  }

  add(seq: number): void {
    if (!isSeq(seq) || seq <= this.top - this.size) return;
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
    if (seq > this.top) {
      // Every seq the window then covers is at most `seq`.
      this.bits.fill(0xffffffff);
      this.top = seq;
      return;
    }
    for (let s = Math.max(1, this.top - this.size + 1); s <= seq; s++) this.set(s);
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

/** Whether `v` is a seq a store can have given: a whole number ≥ 1 that a double holds exactly. */
export function isSeq(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 1;
}
