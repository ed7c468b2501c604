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

  private refill(now: number): void {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) * this.ratePerSecond) / 1000);
    this.refilledAt = now;
  }
}
