/**
 * Server-side typing throttle with Zulip's timings: a typist is announced at once, re-announced at
 * most every `forwardMs` while they keep refreshing, and announced as stopped either when they say
 * so (at once) or `expireMs` after their last refresh.
 *
 * Toggling does not reset the throttle: a typist's "started" goes out at most once per `forwardMs`
 * however often they switch between `active: true` and `false`, and a "stopped" goes out only
 * after a "started" did. A start inside the interval is held back until a refresh past it (clients
 * refresh every few seconds while typing). Only a sent message lets the next start out at once:
 * the message was paid for out of the room's message rate. Every start and re-announce also takes
 * a token from the room's typing budget; past it they are dropped (typing is best-effort).
 */
import { TokenBucket } from './token-bucket.js';

interface Typist {
  /** When their "started" was last forwarded; -Infinity when never. */
  forwardedAt: number;
  /** When they last said they were typing; null once they stopped (the entry then only remembers `forwardedAt`). */
  refreshedAt: number | null;
  /** The room was told they are typing, so it must be told when they stop. */
  shown: boolean;
}

/**
 * Brings a typist's times back to `now` when they are later: they were taken before the wall clock
 * was set back, and counted from now a typist waits forwardMs or expireMs at most, not until the
 * clock catches up again (an hour's step left "is typing" shown, and starts held back, an hour).
 */
function notAfter(t: Typist, now: number): void {
  if (t.refreshedAt !== null && t.refreshedAt > now) t.refreshedAt = now;
  if (t.forwardedAt > now) t.forwardedAt = now;
}

export class TypingTracker {
  private readonly typists = new Map<string, Typist>();
  private readonly budget: TokenBucket;

  /**
   * @param forwardMs least time between two forwarded "started" of one typist
   * @param expireMs a typist silent this long is announced as stopped
   * @param startsPerSecond "started" frames (first or repeated) the room forwards a second, bursts of twice that
   */
  constructor(
    private readonly forwardMs: number,
    private readonly expireMs: number,
    startsPerSecond: number,
    now: number,
  ) {
    this.budget = new TokenBucket(startsPerSecond, startsPerSecond * 2, now);
  }

  /** Typists tracked, including stopped ones whose last start is still remembered. */
  get size(): number {
    return this.typists.size;
  }

  /** Records a typing frame; true when it should be forwarded to the room. */
  update(userId: string, active: boolean, now: number): boolean {
    const t = this.typists.get(userId);
    if (t) notAfter(t, now);
    if (!active) return t ? this.stop(userId, t, now) : false;
    if (!t) {
      const fresh: Typist = { forwardedAt: -Infinity, refreshedAt: now, shown: false };
      this.typists.set(userId, fresh);
      return this.announce(fresh, now);
    }
    t.refreshedAt = now;
    return this.announce(t, now);
  }

  /** The typist left: true when they were shown as typing. Their last start stays remembered. */
  clear(userId: string, now: number): boolean {
    const t = this.typists.get(userId);
    return t ? this.stop(userId, t, now) : false;
  }

  /** The typist sent a message: true when they were shown as typing. Their next start goes out at once. */
  sent(userId: string): boolean {
    const t = this.typists.get(userId);
    this.typists.delete(userId);
    return t?.shown ?? false;
  }

  /**
   * Stops typists whose last refresh is older than `expireMs` and forgets stopped ones whose last
   * start is older than `forwardMs`; returns the stopped ones that were shown as typing.
   */
  expire(now: number): string[] {
    const gone: string[] = [];
    for (const [id, t] of this.typists) {
      notAfter(t, now);
      if (t.refreshedAt !== null && now - t.refreshedAt >= this.expireMs) {
        if (t.shown) gone.push(id);
        t.refreshedAt = null;
        t.shown = false;
      }
      if (t.refreshedAt === null && now - t.forwardedAt >= this.forwardMs) this.typists.delete(id);
    }
    return gone;
  }

  /** When `expire` next has something to do, or null when nobody is tracked. */
  nextExpiry(): number | null {
    let next: number | null = null;
    for (const t of this.typists.values()) {
      const at = t.refreshedAt !== null ? t.refreshedAt + this.expireMs : t.forwardedAt + this.forwardMs;
      if (next === null || at < next) next = at;
    }
    return next;
  }

  private announce(t: Typist, now: number): boolean {
    if (now - t.forwardedAt < this.forwardMs || !this.budget.take(now)) return false;
    t.forwardedAt = now;
    t.shown = true;
    return true;
  }

  private stop(userId: string, t: Typist, now: number): boolean {
    const shown = t.shown;
    t.refreshedAt = null;
    t.shown = false;
    if (now - t.forwardedAt >= this.forwardMs) this.typists.delete(userId);
    return shown;
  }
}
