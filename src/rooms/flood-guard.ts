/**
 * Per-connection flood control: a token bucket admits frames (`ratePerSecond`, up to `rateBurst`
 * at once); rejected frames are counted, and too many rejections in one window mean abuse.
 * Four numbers per connection, no timers.
 */
import { TokenBucket } from './token-bucket.js';

export interface FloodLimits {
  ratePerSecond: number;
  rateBurst: number;
  abuseRejections: number;
  abuseWindowMs: number;
}

export type Admission = 'ok' | 'rejected' | 'abuse';

export class FloodGuard {
  private readonly bucket: TokenBucket;
  private rejections = 0;
  private windowStart = 0;

  constructor(
    private readonly limits: FloodLimits,
    now: number,
  ) {
    this.bucket = new TokenBucket(limits.ratePerSecond, limits.rateBurst, now);
  }

  /** Takes one token for a frame arriving at `now` (ms). */
  admit(now: number): Admission {
    return this.bucket.take(now) ? 'ok' : this.reject(now);
  }

  /** Counts a rejection; 'abuse' once the window holds `abuseRejections` of them. */
  reject(now: number): 'rejected' | 'abuse' {
    if (now - this.windowStart > this.limits.abuseWindowMs) {
      this.windowStart = now;
      this.rejections = 0;
    }
    this.rejections += 1;
    return this.rejections >= this.limits.abuseRejections ? 'abuse' : 'rejected';
  }
}
