/**
 * How much memory members' `/fuse` may copy. A fusion leaves both sources as they were and writes
 * a third thread holding their memories (up to MEMORY_MAX_CHUNKS_PER_THREAD passages, a vector
 * each): repeated, a member grew the store by thousands of rows a minute, the change gate's count
 * of changes being all that bounded it. So each room, and each client address over all rooms, may
 * have FUSED_CHUNKS_PER_DAY passages written by fusions a day, saved up to as many. The passages a
 * fusion wrote are counted once it is done (its size is known only then), so one large fusion may
 * pass the budget: the room or address is then refused until that debt is paid back. Per node, as
 * the change gate is. The admin's HTTP API is not counted.
 */
import { errors, withRetryAfterMs } from '../../errors.js';
import { TokenBucket } from '../../rooms/token-bucket.js';

/** Memory passages members' fusions may write a day, in one room and from one address each. */
export const FUSED_CHUNKS_PER_DAY = 20_000;
const DAY_MS = 86_400_000;
/** Budgets kept (per kind) before the full ones (nothing to remember) are dropped. */
const MAX_BUDGETS = 10_000;

/** Who fuses where: the room, and the address key of the member's socket. */
export interface FusionActor {
  roomId: string;
  address: string;
}

export class FusionBudget {
  private readonly rooms = new Map<string, TokenBucket>();
  private readonly addresses = new Map<string, TokenBucket>();

  constructor(
    private readonly perDay = FUSED_CHUNKS_PER_DAY,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Runs `fuse`, which answers with what it did and the passages it wrote, when neither the room
   * nor the address is in debt; else refuses with ERR_RATE_LIMITED and the wait until it is not.
   */
  async run<T>(actor: FusionActor, fuse: () => Promise<{ outcome: T; written: number }>): Promise<T> {
    const now = this.now();
    const room = this.of(this.rooms, actor.roomId, now);
    const address = this.of(this.addresses, actor.address, now);
    for (const [bucket, whose] of [
      [room, 'this room'],
      [address, 'one address'],
    ] as const) {
      if (!bucket.has(now)) {
        const refusal = new errors.ERR_RATE_LIMITED(`fusions copy memory: those of ${whose} may write ${this.perDay} passages a day`);
        throw withRetryAfterMs(refusal, bucket.waitMs(now));
      }
    }
    const { outcome, written } = await fuse();
    const later = this.now();
    room.spend(written, later);
    address.spend(written, later);
    return outcome;
  }

  private of(buckets: Map<string, TokenBucket>, key: string, now: number): TokenBucket {
    let bucket = buckets.get(key);
    if (!bucket) {
      if (buckets.size >= MAX_BUDGETS) for (const [k, b] of buckets) if (b.full(now)) buckets.delete(k);
      bucket = new TokenBucket((this.perDay * 1000) / DAY_MS, this.perDay, now);
      buckets.set(key, bucket);
    }
    return bucket;
  }
}
