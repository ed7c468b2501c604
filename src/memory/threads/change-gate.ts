/**
 * How often members may change a room's threads from the room (THREAD_OPS=members). A fusion
 * costs seconds of CPU and a split or a merge reads and rewrites thousands of rows: without a
 * bound, one member repeating them would keep a node's core busy. So a room runs one change at a
 * time (another asked meanwhile is refused, not queued), the node runs at most
 * MAX_CHANGES_AT_ONCE over all its rooms, each member has a budget of
 * MEMBER_THREAD_CHANGES_PER_MINUTE and each client address one of
 * ADDRESS_THREAD_CHANGES_PER_MINUTE (an address may take 30 new identities a minute, each with a
 * member's budget). A count alone let one member hold the gates: ten fusions a minute of seconds
 * each kept a room's gate busy, and one member's changes in two rooms held both of the node's
 * places. So a member, and an address, has one change under way at a time, and the time its
 * changes held the gate is counted too: MEMBER_THREAD_CHANGE_MS_PER_MINUTE, and
 * ADDRESS_THREAD_CHANGE_MS_PER_MINUTE for an address; one past it waits until its debt is paid
 * back. Per node: with several nodes each has its own gate, which bounds what one
 * member's socket can make its node do. The admin's HTTP API is not gated. A change the operation
 * refuses (bad input, a conflict) spends neither budget.
 */
import { errors, SalonError, withRetryAfterMs } from '../../errors.js';
import { TokenBucket } from '../../rooms/token-bucket.js';

/** Thread changes one member may make at once, and then per minute. */
export const MEMBER_THREAD_CHANGES_PER_MINUTE = 10;
/** Thread changes the members on one client address (IPv6: its /64) may make at once, and then per minute. */
export const ADDRESS_THREAD_CHANGES_PER_MINUTE = 20;
/** Milliseconds of thread changes one member may run a minute (the time they hold a gate), saved up to as many. */
export const MEMBER_THREAD_CHANGE_MS_PER_MINUTE = 15_000;
/** Milliseconds of thread changes the members on one address may run a minute. */
export const ADDRESS_THREAD_CHANGE_MS_PER_MINUTE = 30_000;
/**
 * Members' thread changes one node runs at once over all its rooms: one at a time per room left
 * a fusion running in every room someone chose, several seconds of CPU each.
 */
export const MAX_CHANGES_AT_ONCE = 2;
/** Budgets kept (per kind) before the full ones (nothing to remember) are dropped. */
const MAX_BUDGETS = 10_000;

/** Who asks for a change: the member and the address key of their socket. */
export interface ChangeActor {
  userId: string;
  address: string;
}

/** Token buckets by key, forgetting full ones once there are many. */
class Budgets {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly perMinute: number) {}

  /** The bucket of `key`, made full when it is new. */
  of(key: string, now: number): TokenBucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= MAX_BUDGETS) for (const [k, b] of this.buckets) if (b.full(now)) this.buckets.delete(k);
      bucket = new TokenBucket(this.perMinute / 60, this.perMinute, now);
      this.buckets.set(key, bucket);
    }
    return bucket;
  }
}

export class ThreadChangeGate {
  /** Rooms with a change under way. */
  private readonly busy = new Set<string>();
  private readonly members = new Budgets(MEMBER_THREAD_CHANGES_PER_MINUTE);
  private readonly addresses = new Budgets(ADDRESS_THREAD_CHANGES_PER_MINUTE);
  private readonly memberTime = new Budgets(MEMBER_THREAD_CHANGE_MS_PER_MINUTE);
  private readonly addressTime = new Budgets(ADDRESS_THREAD_CHANGE_MS_PER_MINUTE);
  /** Members and addresses (`u:` and `a:` keys) with a change under way. */
  private readonly holding = new Set<string>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Runs `change` for `actor` in `roomId`, or refuses with ERR_RATE_LIMITED. */
  async run<T>(roomId: string, actor: ChangeActor, change: () => Promise<T>): Promise<T> {
    if (this.busy.has(roomId)) throw new errors.ERR_RATE_LIMITED('another thread change is under way in this room; try again once it is done');
    if (this.busy.size >= MAX_CHANGES_AT_ONCE)
      throw new errors.ERR_RATE_LIMITED('the server is busy with thread changes in other rooms; try again in a moment');
    const holders = [`u:${actor.userId}`, `a:${actor.address}`];
    if (holders.some((key) => this.holding.has(key))) throw new errors.ERR_RATE_LIMITED('your thread change is still under way; try again once it is done');
    const now = this.now();
    const member = this.members.of(actor.userId, now);
    const address = this.addresses.of(actor.address, now);
    const memberTime = this.memberTime.of(actor.userId, now);
    const addressTime = this.addressTime.of(actor.address, now);
    // A refusal spends neither budget.
    // The busy refusals above say no wait: a change under way ends when it ends.
    if (!memberTime.has(now))
      throw withRetryAfterMs(
        new errors.ERR_RATE_LIMITED(`a member's thread changes may run ${MEMBER_THREAD_CHANGE_MS_PER_MINUTE / 1000} s a minute`),
        memberTime.waitMs(now),
      );
    if (!addressTime.has(now))
      throw withRetryAfterMs(
        new errors.ERR_RATE_LIMITED(`the thread changes of the members on one address may run ${ADDRESS_THREAD_CHANGE_MS_PER_MINUTE / 1000} s a minute`),
        addressTime.waitMs(now),
      );
    if (!member.has(now))
      throw withRetryAfterMs(new errors.ERR_RATE_LIMITED(`a member may change threads ${MEMBER_THREAD_CHANGES_PER_MINUTE} times a minute`), member.waitMs(now));
    if (!address.has(now))
      throw withRetryAfterMs(
        new errors.ERR_RATE_LIMITED(`the members on one address may change threads ${ADDRESS_THREAD_CHANGES_PER_MINUTE} times a minute`),
        address.waitMs(now),
      );
    member.take(now);
    address.take(now);
    this.busy.add(roomId);
    for (const key of holders) this.holding.add(key);
    try {
      return await change();
    } catch (err) {
      // Refused (bad input, a thread locked, archived or changed meanwhile): nothing changed, so
      // nothing is spent. A failure of the server's own keeps its token: it may have cost the work.
      if (isRefusal(err)) {
        const later = this.now();
        member.giveBack(later);
        address.giveBack(later);
      }
      throw err;
    } finally {
      this.busy.delete(roomId);
      for (const key of holders) this.holding.delete(key);
      // The time it held the gate, refused or not: that is what others waited for.
      const later = this.now();
      for (const time of [memberTime, addressTime]) time.spend(later - now, later);
    }
  }
}

/** An operation's refusal of what it was asked (a 4xx catalogue error), as opposed to a failure. */
function isRefusal(err: unknown): boolean {
  return err instanceof SalonError && err.statusCode < 500;
}
