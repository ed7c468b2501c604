/**
 * A message from another node may name a thread this node's room never heard of: mostly one just
 * created on another node, but also one deleted before the room opened here, whose notice it never
 * got (a message stored before the deletion, published late, newer than the history the room
 * loaded): that one went into the history, and every later welcome served a deleted thread's
 * message. Such a thread is looked up in the store once, and what the room remembers of it is
 * set right by the answer (Room.learnThread). Messages of a thread the room knows cost no read,
 * and the reads are budgeted for the whole node: past the budget (a flood of made-up thread ids)
 * a message is filed as it came, as before there were lookups.
 */
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import { survivorOf } from '../store/thread-survivor.js';
import type { Room } from './room.js';
import { TokenBucket } from './token-bucket.js';

/** Unknown threads a node looks up a second, all rooms together (far more than are created a second). */
export const UNKNOWN_THREAD_LOOKUPS_PER_SECOND = 10;
/** How many it may look up at once after a quiet spell. */
export const UNKNOWN_THREAD_LOOKUPS_BURST = 20;

export class ThreadLookups {
  private readonly budget = new TokenBucket(UNKNOWN_THREAD_LOOKUPS_PER_SECOND, UNKNOWN_THREAD_LOOKUPS_BURST, Date.now());

  constructor(
    private readonly store: Pick<Store, 'getThread'>,
    private readonly log: Logger,
  ) {}

  /** Looks `threadId` up for `room` unless the room knows it, or the budget is spent. */
  lookUp(room: Room, threadId: string): void {
    if (room.knowsThread(threadId) || !this.budget.take(Date.now())) return;
    room.lookingUp.add(threadId);
    survivorOf(this.store, threadId)
      .then(
        (now) => room.learnThread(threadId, now),
        (err: unknown) => this.log.warn({ roomId: room.id, threadId, err }, 'looking a thread up failed; its messages stay filed as they came'),
      )
      .finally(() => room.lookingUp.delete(threadId));
  }
}
