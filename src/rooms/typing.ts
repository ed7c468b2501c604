/**
 * Server-side typing throttle with Zulip's timings: a typist is announced at once, re-announced at
 * most every `forwardMs` while they keep refreshing, and announced as stopped either when they say
 * so (at once) or `expireMs` after their last refresh.
 */

interface Typist {
  forwardedAt: number;
  refreshedAt: number;
}

export class TypingTracker {
  private readonly typists = new Map<string, Typist>();

  constructor(
    private readonly forwardMs: number,
    private readonly expireMs: number,
  ) {}

  get size(): number {
    return this.typists.size;
  }

  /** Records a typing frame; true when it should be forwarded to the room. */
  update(userId: string, active: boolean, now: number): boolean {
    const t = this.typists.get(userId);
    if (!active) return this.typists.delete(userId);
    if (!t) {
      this.typists.set(userId, { forwardedAt: now, refreshedAt: now });
      return true;
    }
    t.refreshedAt = now;
    if (now - t.forwardedAt < this.forwardMs) return false;
    t.forwardedAt = now;
    return true;
  }

  /** Forgets a typist (they sent a message or left); true when they were shown as typing. */
  clear(userId: string): boolean {
    return this.typists.delete(userId);
  }

  /** Removes and returns typists whose last refresh is older than `expireMs`. */
  expire(now: number): string[] {
    const gone: string[] = [];
    for (const [id, t] of this.typists) {
      if (now - t.refreshedAt >= this.expireMs) {
        this.typists.delete(id);
        gone.push(id);
      }
    }
    return gone;
  }

  /** When the next expiry is due, or null when nobody is typing. */
  nextExpiry(): number | null {
    let next: number | null = null;
    for (const t of this.typists.values()) {
      const at = t.refreshedAt + this.expireMs;
      if (next === null || at < next) next = at;
    }
    return next;
  }
}
