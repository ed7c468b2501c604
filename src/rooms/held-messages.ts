/**
 * Live messages a room holds back while it catches up from the store (NodeSync.fromStore), so that
 * none overtakes a missed one: a catch-up hands its messages to the sockets over several turns of
 * the event loop, and a message heard meanwhile (from the bus, or stored here) would otherwise
 * reach the members before the older ones still to come. The catch-up sends a held message in its
 * place when it reaches that seq; what is left goes out in seq order once the last catch-up ends.
 */
import type { Message } from '../protocol/messages.js';

/** A live message as it would have been delivered: its frame and the message it carries. */
export interface HeldMessage {
  readonly frame: string;
  readonly message: Message;
}

/**
 * Most messages one room holds. A catch-up whose store read hangs must not hold a busy room's
 * traffic without bound: past this, what is held goes out at once, in seq order, and ordering
 * against the rest of that catch-up is given up (nothing is lost; the catch-up skips what went).
 */
export const MAX_HELD_MESSAGES = 1_000;

export class HeldMessages {
  private catchUps = 0;
  private readonly held = new Map<number, HeldMessage>();

  /** Whether a catch-up is under way, so live messages wait. */
  get holding(): boolean {
    return this.catchUps > 0;
  }

  /** Whether exactly one catch-up is under way: the one that sends what is held. */
  get last(): boolean {
    return this.catchUps === 1;
  }

  /** A catch-up was asked for: live messages wait from now on. */
  begin(): void {
    this.catchUps++;
  }

  /** A catch-up ended: the messages still held, in seq order, once no other one is under way. */
  end(): HeldMessage[] {
    this.catchUps = Math.max(0, this.catchUps - 1);
    return this.catchUps ? [] : this.drain();
  }

  /**
   * Holds a live message with a seq; false when nothing is being held, or when the room holds too
   * many (then `drain` them first). A second copy of a seq replaces the first only when it ends an
   * answer: an `assistant.done` is what tells a client the answer it shows as pending is finished.
   */
  hold(item: HeldMessage, endsAnAnswer: boolean): boolean {
    if (!this.catchUps || this.held.size >= MAX_HELD_MESSAGES) return false;
    if (!this.held.has(item.message.seq) || endsAnAnswer) this.held.set(item.message.seq, item);
    return true;
  }

  /** The live copy of `seq`, taken out, for the catch-up to send in its place. */
  take(seq: number): HeldMessage | undefined {
    const item = this.held.get(seq);
    if (item) this.held.delete(seq);
    return item;
  }

  /** Every held message, in seq order, taken out. */
  drain(): HeldMessage[] {
    const items = [...this.held.values()].sort((a, b) => a.message.seq - b.message.seq);
    this.held.clear();
    return items;
  }
}
