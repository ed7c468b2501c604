/** A token bucket: `ratePerSecond` tokens a second, at most `burst` saved up. Two numbers, no timers. */
export class TokenBucket {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.refilledAt = now;
  }

  /** Takes a token at `now` (ms); false when none is left. */
  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Puts back a token taken for what did not happen after all (a refused change), never past `burst`. */
  giveBack(now: number): void {
    this.refill(now);
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  /**
   * Takes `amount` tokens at `now` whatever the bucket holds, going into debt if need be: for a
   * cost known only once it is paid (the time a change held a gate). Until the debt is refilled
   * `has` is false, and `waitMs` says how long that takes.
   */
  spend(amount: number, now: number): void {
    this.refill(now);
    this.tokens -= Math.max(0, amount);
  }

  /** Whether a token is there to take at `now` (none is taken). */
  has(now: number): boolean {
    this.refill(now);
    return this.tokens >= 1;
  }

  /** Whether the bucket has refilled completely by `now` (it then holds no state worth keeping). */
  full(now: number): boolean {
    this.refill(now);
    return this.tokens >= this.burst;
  }

  /**
   * Whole milliseconds from `now` until a token is there to take (0 when one is now): what a
   * refused client is told to wait (`retryAfterMs` of an `error` frame). Rounded up, and checked
   * against the refill itself, so a take that waited this long is never refused for a rounding.
   */
  waitMs(now: number): number {
    this.refill(now);
    if (this.tokens >= 1) return 0;
    let wait = Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.ratePerSecond));
    while (this.tokens + (wait * this.ratePerSecond) / 1000 < 1) wait += 1;
    return wait;
  }

  private refill(now: number): void {
    // A wall clock set back (NTP, an operator) refills nothing rather than taking tokens away: a
    // negative span would leave every bucket empty, and every client refused, until the clock
    // caught up again.
    const elapsed = Math.max(0, now - this.refilledAt);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.ratePerSecond) / 1000);
    this.refilledAt = now;
  }
}
