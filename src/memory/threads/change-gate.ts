/**
 * How often members may change a room's threads from the room (THREAD_OPS=members). A fusion
 * costs seconds of CPU and a split or a merge reads and rewrites thousands of rows: without a
 * bound, one member repeating them would keep a node's core busy. So a room runs one change at a
 * time (another asked meanwhile is refused, not queued), and each member has a budget of
 * MEMBER_THREAD_CHANGES_PER_MINUTE. Per node: with several nodes each has its own gate, which
 * bounds what one member's socket can make its node do. The admin's HTTP API is not gated.
 */
import { errors } from '../../errors.js';
import { TokenBucket } from '../../rooms/token-bucket.js';

/** Thread changes one member may make at once, and then per minute. */
export const MEMBER_THREAD_CHANGES_PER_MINUTE = 10;
/** Members' budgets kept before the full ones (nothing to remember) are dropped. */
const MAX_BUDGETS = 10_000;

export class ThreadChangeGate {
  /** Rooms with a change under way. */
  private readonly busy = new Set<string>();
  private readonly budgets = new Map<string, TokenBucket>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Runs `change` for `userId` in `roomId`, or refuses with ERR_RATE_LIMITED. */
  async run<T>(roomId: string, userId: string, change: () => Promise<T>): Promise<T> {
    if (this.busy.has(roomId)) throw new errors.ERR_RATE_LIMITED('another thread change is under way in this room; try again once it is done');
    const now = this.now();
    let budget = this.budgets.get(userId);
    if (!budget) {
      if (this.budgets.size >= MAX_BUDGETS) for (const [id, b] of this.budgets) if (b.full(now)) this.budgets.delete(id);
      budget = new TokenBucket(MEMBER_THREAD_CHANGES_PER_MINUTE / 60, MEMBER_THREAD_CHANGES_PER_MINUTE, now);
      this.budgets.set(userId, budget);
    }
    if (!budget.take(now)) throw new errors.ERR_RATE_LIMITED(`a member may change threads ${MEMBER_THREAD_CHANGES_PER_MINUTE} times a minute`);
    this.busy.add(roomId);
    try {
      return await change();
    } finally {
      this.busy.delete(roomId);
    }
  }
}
