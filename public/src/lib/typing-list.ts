/** Who else is typing, each entry expiring on its own if no "stopped" arrives. */
import type { Member } from '../../../src/protocol/messages.js';

/**
 * An entry without a refresh disappears after this long: a little more than the server's own
 * expiry (it re-announces a typist every 10 s and says "stopped" 15 s after the last key).
 */
export const TYPING_TTL_MS = 16_000;
/** Shortest wait before pruning again, so a burst of expiries is handled in one pass. */
const MIN_PRUNE_DELAY_MS = 50;

export class TypingList {
  /** The typists now, in the order they started. A new array after each change. */
  members: Member[] = [];
  private readonly until = new Map<string, { member: Member; until: number }>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `expired` is called when entries ran out on their own. */
  constructor(
    private readonly expired: () => void,
    private readonly ttlMs = TYPING_TTL_MS,
  ) {}

  note(member: Member, active: boolean): void {
    if (active) this.until.set(member.id, { member, until: Date.now() + this.ttlMs });
    else this.until.delete(member.id);
    this.refresh();
  }

  /** Someone who just sent a message is no longer typing. */
  stop(userId: string): void {
    if (this.until.delete(userId)) this.refresh();
  }

  clear(): void {
    this.until.clear();
    this.members = [];
    clearTimeout(this.timer);
  }

  private refresh(): void {
    const now = Date.now();
    for (const [id, t] of this.until) if (t.until <= now) this.until.delete(id);
    this.members = [...this.until.values()].map((t) => t.member);
    clearTimeout(this.timer);
    if (this.until.size === 0) return;
    const next = Math.min(...[...this.until.values()].map((t) => t.until)) - now;
    this.timer = setTimeout(
      () => {
        this.refresh();
        this.expired();
      },
      Math.max(MIN_PRUNE_DELAY_MS, next),
    );
  }
}
