/**
 * The bytes all room sockets of a node have queued and not yet sent, against one budget.
 *
 * Each socket may queue up to its own limit (ROOM_MAX_BUFFERED_BYTES) before it is closed, but the
 * node's connection cap times that limit is far more memory than a node has (20,000 × 1 MiB): many
 * sockets that stop reading, from many addresses, could hold it all. Past the node's budget, a
 * socket that is behind by more than the soft limit (the point where it already stops getting
 * typing and presence) is closed like one past its own limit, and can come back with `lastSeq`.
 *
 * Counting is incremental, so a delivery costs two additions: each holder's share is updated when
 * something is sent to it, and a sweep once a second re-reads every socket, because a socket's
 * queue drains without anything being sent to it (until then the total may run high, never low).
 *
 * A holder counts from `add` until `release`: a socket the server closed still holds its queue
 * until its transport is gone (up to the close timeout later), so it is released then, not when it
 * leaves its room.
 */

/** A socket as the budget counts it: the share last counted is kept on the holder itself. */
export interface QueuedBytesHolder {
  /** Bytes the holder had queued when the budget last counted it. */
  countedBytes: number;
  /** Bytes queued now. */
  readonly queuedBytes: number;
}

export class SendBudget {
  private total = 0;
  private readonly holders = new Set<QueuedBytesHolder>();

  /** @param limitBytes the node's budget: bytes all holders together may queue. */
  constructor(readonly limitBytes: number) {}

  /** Bytes queued on the node, as last counted. */
  get queued(): number {
    return this.total;
  }

  /** Counts `holder` from now until it is released. */
  add(holder: QueuedBytesHolder): void {
    this.holders.add(holder);
  }

  /** Counts `holder`'s queue again after a send; true when the node is over its budget. */
  update(holder: QueuedBytesHolder, bytes: number): boolean {
    this.total += bytes - holder.countedBytes;
    holder.countedBytes = bytes;
    return this.total > this.limitBytes;
  }

  /** The holder is gone: its share no longer counts. */
  release(holder: QueuedBytesHolder): void {
    if (!this.holders.delete(holder)) return;
    this.total -= holder.countedBytes;
    holder.countedBytes = 0;
  }

  /** Re-reads every holder's queue (the sweep). */
  recount(): void {
    let total = 0;
    for (const holder of this.holders) {
      const bytes = holder.queuedBytes;
      holder.countedBytes = bytes;
      total += bytes;
    }
    this.total = total;
  }
}
