/**
 * A room's message rate, shared fairly among the addresses that post in it. The room takes
 * `perSecond` messages a second from everyone together (bursts of twice that); each sending
 * address (a key from `addressKey`) may use only its share of that: the rate divided by the
 * addresses that posted in the last `activeWindowMs`, plus one. The one kept over is for whoever
 * posts next: however many addresses flood the room, together they leave part of its rate unspent,
 * so a member who has not posted lately is not refused for what the others sent. A share saves up
 * to twice its rate, and always to one message, so every address can post at once.
 *
 * Shares only refuse; the room's own bucket still bounds the total, whatever the shares add up to
 * while senders come and go.
 */
import { positiveNumber, wholeNumber } from '../options.js';
import { plural } from '../text.js';
import { TokenBucket } from './token-bucket.js';

/** How long an address that posted counts as sending (what divides the room's rate). */
export const DEFAULT_ACTIVE_WINDOW_MS = 10_000;

/**
 * The refusal's words for an address past its share: how many share the room's rate, and about
 * how many messages a second each may send.
 */
export function shareWords({ senders, perSecond }: { senders: number; perSecond: number }): string {
  const each = perSecond >= 10 ? Math.floor(perSecond) : Number(perSecond.toPrecision(2));
  return `this room's messages are shared among ${plural(senders, 'address', 'addresses')} posting in it and one more; each may send about ${each} a second`;
}

/** What `SenderShares.take` decided. */
export type ShareVerdict = 'ok' | 'share' | 'room';

interface Share {
  tokens: number;
  refilledAt: number;
  lastAt: number;
}

export class SenderShares {
  private readonly room: TokenBucket;
  /** Addresses that posted (or tried to) in the last window, in the order of their last try. */
  private readonly senders = new Map<string, Share>();

  constructor(
    readonly perSecond: number,
    now: number,
    private readonly activeWindowMs = DEFAULT_ACTIVE_WINDOW_MS,
  ) {
    positiveNumber('SenderShares', 'perSecond', perSecond);
    wholeNumber('SenderShares', 'activeWindowMs', activeWindowMs, 1);
    this.room = new TokenBucket(perSecond, perSecond * 2, now);
  }

  /**
   * Takes one message of `address`'s share and of the room's rate at `now` (ms): 'ok', or which
   * refused it ('share': this address has sent its part; 'room': everyone together has).
   */
  take(address: string, now: number): ShareVerdict {
    const share = this.touch(address, now);
    this.refill(share, now);
    if (share.tokens < 1) return 'share';
    if (!this.room.take(now)) return 'room';
    share.tokens -= 1;
    return 'ok';
  }

  /** Milliseconds from `now` until `verdict`'s refusal would let `address` post again. */
  waitMs(address: string, verdict: ShareVerdict, now: number): number {
    if (verdict === 'room') return this.room.waitMs(now);
    const share = this.senders.get(address);
    if (!share || share.tokens >= 1) return 0;
    return Math.max(1, Math.ceil(((1 - share.tokens) * 1000) / this.shareRate()));
  }

  /** Addresses counted as sending now (the room's rate is divided among them and one more). */
  get sending(): number {
    return this.senders.size;
  }

  /** One address's rate now: the room's divided among the senders and one more. */
  shareRate(): number {
    return this.perSecond / (this.senders.size + 1);
  }

  private touch(address: string, now: number): Share {
    this.forgetIdle(now);
    let share = this.senders.get(address);
    if (share) this.senders.delete(address);
    else share = { tokens: Number.POSITIVE_INFINITY, refilledAt: now, lastAt: now };
    share.lastAt = now;
    this.senders.set(address, share);
    return share;
  }

  private refill(share: Share, now: number): void {
    const rate = this.shareRate();
    const burst = Math.max(1, rate * 2);
    // A wall clock set back refills nothing (as TokenBucket).
    const elapsed = Math.max(0, now - share.refilledAt);
    share.tokens = Math.min(burst, share.tokens + (elapsed * rate) / 1000);
    share.refilledAt = now;
  }

  /** Forgets the addresses at the front whose last try left the window. */
  private forgetIdle(now: number): void {
    for (const [address, share] of this.senders) {
      if (now - share.lastAt < this.activeWindowMs && share.lastAt <= now) return;
      this.senders.delete(address);
    }
  }
}
