/**
 * A periodic visit of many members spread over the period (docs/architecture.md, "Heartbeat
 * spread over its interval"): each member is visited once per `periodMs`, but members are dealt
 * round-robin into slices and one slice is visited per tick, so no tick does more than a slice's
 * work. The room sockets' heartbeat visits every socket this way: pinging all 4,000 sockets of a
 * node in one turn held its event loop ~100 ms (a write per socket, then 4,000 pongs arriving at
 * once), and every room's messages waited behind it.
 */
import { positiveNumber } from '../options.js';

/** Most slices a period is cut into. */
export const SWEEP_MAX_SLICES = 100;
/** Shortest time between two ticks: a short period gets fewer slices. */
export const SWEEP_MIN_TICK_MS = 50;

export class SpreadSweep<T> {
  private readonly slices: Set<T>[];
  private readonly sliceOf = new Map<T, number>();
  /** The slice the next member joins. */
  private nextSlice = 0;
  /** The slice the next tick visits. */
  private due = 0;
  private readonly timer: ReturnType<typeof setInterval>;

  /** Starts ticking (the timer does not keep the process alive); `visit` must not throw. */
  constructor(periodMs: number, visit: (member: T) => void) {
    positiveNumber('SpreadSweep', 'periodMs', periodMs);
    const count = Math.max(1, Math.min(SWEEP_MAX_SLICES, Math.floor(periodMs / SWEEP_MIN_TICK_MS)));
    this.slices = Array.from({ length: count }, () => new Set<T>());
    this.timer = setInterval(() => {
      const slice = this.slices[this.due];
      this.due = (this.due + 1) % count;
      // A visit may remove members (a terminated socket closes): iterate over a copy.
      for (const member of [...slice]) visit(member);
    }, periodMs / count);
    this.timer.unref();
  }

  /** Members being visited. */
  get size(): number {
    return this.sliceOf.size;
  }

  add(member: T): void {
    if (this.sliceOf.has(member)) return;
    this.slices[this.nextSlice].add(member);
    this.sliceOf.set(member, this.nextSlice);
    this.nextSlice = (this.nextSlice + 1) % this.slices.length;
  }

  delete(member: T): void {
    const slice = this.sliceOf.get(member);
    if (slice === undefined) return;
    this.slices[slice].delete(member);
    this.sliceOf.delete(member);
  }

  /** Every member, in no particular order. */
  members(): IterableIterator<T> {
    return this.sliceOf.keys();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
