/**
 * Per-connection flood control: a token bucket admits frames (`ratePerSecond`, up to `rateBurst`
 * at once), and a bucket of the same size of its own admits typing frames, so that a client's
 * typing notices never spend what its messages need; rejected frames of either kind are counted,
 * and too many rejections in one window mean abuse. Six numbers per connection, no timers.
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
  private readonly typing: TokenBucket;
  private rejections = 0;
  private windowStart = 0;

  constructor(
    private readonly limits: FloodLimits,
    now: number,
  ) {
    this.bucket = new TokenBucket(limits.ratePerSecond, limits.rateBurst, now);
    this.typing = new TokenBucket(limits.ratePerSecond, limits.rateBurst, now);
  }

  /** Takes one token for a frame arriving at `now` (ms). */
  admit(now: number): Admission {
    return this.bucket.take(now) ? 'ok' : this.reject(now);
  }

  /** Milliseconds from `now` until the frame bucket holds a token again (0: it does now). */
  waitMs(now: number): number {
    return this.bucket.waitMs(now);
  }

  /** Takes one token for a typing frame arriving at `now` (ms) from typing's own bucket. */
  admitTyping(now: number): Admission {
    return this.typing.take(now) ? 'ok' : this.reject(now);
  }

  /** Counts a rejection; 'abuse' once the window holds `abuseRejections` of them. */
  reject(now: number): 'rejected' | 'abuse' {
    // A window that starts after `now` (the clock was set back) starts again, as an old one does.
    if (now - this.windowStart > this.limits.abuseWindowMs || now < this.windowStart) {
      this.windowStart = now;
      this.rejections = 0;
    }
    this.rejections += 1;
    return this.rejections >= this.limits.abuseRejections ? 'abuse' : 'rejected';
  }
}
