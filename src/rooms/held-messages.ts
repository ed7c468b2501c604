/**
 * Live frames a room holds back while it catches up from the store (NodeSync.fromStore), so that
 * none overtakes a missed message: a catch-up hands its messages to the sockets over several turns
 * of the event loop, and a message heard meanwhile (from the bus, or stored here) would otherwise
 * reach the members before the older ones still to come. The catch-up sends a held message in its
 * place when it reaches that seq; what is left goes out in seq order once the last catch-up ends.
 *
 * Frames for every member that carry no seq (an answer's progress and deltas, the error of a
 * failed answer, notices) wait too, in the order they came, each behind the newest message held
 * when it came, and so do notices to one member (the asker's "queued" warning): an answer's deltas
 * must not reach a member before the question they answer, nor an answer's failure before the
 * question it failed (the asker's client would mark it unsent), nor a notice before what it is about.
 * They go out once the last catch-up ends. An answer whose stored end went out first has its
 * waiting frames dropped: that end holds its whole text. The pieces of an answer that was already
 * streaming when the room began to hold do not wait, nor does its failure: its question went out
 * before them. Nor do those of an answer begun during the catch-up whose question the members have
 * (the room delivered it) while none of its pieces waits. Typing and presence are about people, not
 * messages, and never wait (Room.offerAll).
 */
import type { Message } from '../protocol/messages.js';

/** A live message as it would have been delivered: its frame and the message it carries. */
export interface HeldMessage {
  readonly frame: string;
  readonly message: Message;
}

/** A live frame for every member without a seq, waiting behind the messages held before it came. */
export interface HeldFrame {
  readonly frame: string;
  readonly message?: undefined;
  /** The newest seq held when the frame came: it goes out after that message and before any newer one. */
  readonly after: number;
  /** The answer it is part of (`assistant.progress`, `assistant.delta`, its failure's `error`), dropped once that answer's end went out. */
  readonly answer?: string;
  /** Its place among every frame the room held (`framesHeld`): a member who joined after it came does not get it. */
  readonly n: number;
  /** The member it is for (a notice to one member); every member's when absent. */
  readonly user?: string;
}

export type Held = HeldMessage | HeldFrame;

/**
 * Most messages one room holds. A catch-up whose store read hangs must not hold a busy room's
 * traffic without bound: past this, what is held goes out (NodeSync.releaseHeld), in seq order,
 * and ordering against the rest of that catch-up is given up (nothing is lost; the catch-up skips
 * what went).
 */
export const MAX_HELD_MESSAGES = 1_000;
/** Most frames without a seq one room holds (an answer streams ~25 a second): past this, likewise. */
export const MAX_HELD_FRAMES = 1_000;
/**
 * What a room holds at most, whatever happens: past the caps, what is held is sent in slices a turn
 * at a time; should arrivals outrun that, past twice the caps (counting what is on its way out) the
 * oldest goes out at once for each that arrives (`overfull`, `oldest`), so the order holds.
 */
const HARD_CAP_FACTOR = 2;
/** Answers whose end went out during a catch-up, remembered so that late pieces of them are dropped. */
const MAX_ANSWERED = 1_000;
/**
 * Answers remembered as streaming to the members (their pieces went out as they came), far more
 * than one room has written at once; one is forgotten at its end or its failure. One forgotten (a
 * failure from a node that does not tag it with its answer) only has its pieces wait during a
 * catch-up, as every answer's did.
 */
const MAX_STREAMING = 100;

export class HeldMessages {
  private catchUps = 0;
  private readonly held = new Map<number, HeldMessage>();
  private frames: HeldFrame[] = [];
  /** The newest seq held since holding began. */
  private newest = 0;
  private readonly answered = new Set<string>();
  /** Answers whose pieces went out as they came, in the order they began (streamed). */
  private readonly streaming = new Set<string>();
  /** Answers with a frame held (or on its way out) since holding began: none of their later frames may pass it. */
  private readonly waiting = new Set<string>();
  private framesCount = 0;
  /**
   * What was taken out of `held` and `frames` to go out (`release`), in order; sent from `outAt` on.
   * A message the catch-up took from it to send in its place (`take`) leaves a hole (null).
   */
  private out: (Held | null)[] = [];
  private outAt = 0;
  /** Of `out` still to send: each message's seq and its place there, how many messages and how many frames. */
  private readonly outSeqs = new Map<number, number>();
  private outMessages = 0;
  private outFrames = 0;

  /** The newest seq held since holding began (0 when nothing is held). */
  get newestSeq(): number {
    return this.newest;
  }

  /** Whether a live copy of `seq` is held, or on its way out. */
  has(seq: number): boolean {
    return this.held.has(seq) || this.outSeqs.has(seq);
  }

  /** Whether a catch-up is under way, so live frames wait. */
  get holding(): boolean {
    return this.catchUps > 0;
  }

  /** Whether exactly one catch-up is under way: the one that sends what is held. */
  get last(): boolean {
    return this.catchUps === 1;
  }

  /** Whether the room holds as much as its caps allow: what it holds should go out now (in slices). */
  get full(): boolean {
    return this.held.size >= MAX_HELD_MESSAGES || this.frames.length >= MAX_HELD_FRAMES;
  }

  /** Whether the room holds more than twice its caps, counting what is on its way out: its oldest should go out now (`oldest`). */
  get overfull(): boolean {
    return this.held.size + this.outMessages > MAX_HELD_MESSAGES * HARD_CAP_FACTOR || this.frames.length + this.outFrames > MAX_HELD_FRAMES * HARD_CAP_FACTOR;
  }

  /** Whether something taken out to go out (`release`) is still to be sent. */
  get releasing(): boolean {
    return this.outAt < this.out.length;
  }

  /**
   * Frames without a seq held so far, over the room's life. A member who joins now gets none of
   * those still held: they came before its welcome, which holds what they said (an answer's text so
   * far is in its `pending`), as it would have had they gone out at once.
   */
  get framesHeld(): number {
    return this.framesCount;
  }

  /** The live messages held or still on their way out, oldest first: what a room dropped now never delivered. */
  messages(): Message[] {
    const out = this.out.slice(this.outAt).flatMap((h) => (h?.message ? [h.message] : []));
    return [...out, ...[...this.held.values()].map((h) => h.message)].sort((a, b) => a.seq - b.seq);
  }

  /** A catch-up was asked for: live frames wait from now on. */
  begin(): void {
    this.catchUps++;
  }

  /** A catch-up ended: what is still held, in order, once no other one is under way. */
  end(): Held[] {
    this.catchUps = Math.max(0, this.catchUps - 1);
    if (this.catchUps) return [];
    const rest = [...this.takeOut(), ...this.drain()];
    this.newest = 0;
    this.answered.clear();
    this.waiting.clear();
    return rest;
  }

  /**
   * Holds a live message with a seq; false when nothing is being held (then send it at once). A
   * second copy of a seq replaces the first only when it ends an answer: an `assistant.done` is
   * what tells a client the answer it shows as pending is finished.
   */
  hold(item: HeldMessage, endsAnAnswer: boolean): boolean {
    if (!this.catchUps) return false;
    if (!this.held.has(item.message.seq) || endsAnAnswer) this.held.set(item.message.seq, item);
    this.newest = Math.max(this.newest, item.message.seq);
    return true;
  }

  /**
   * Holds a live frame without a seq behind the messages held so far; false when nothing is being
   * held, or when it is part of an answer that was streaming (`streamed`): then send it at once. So
   * it is when `asked` (the room delivered the answer's question) and no frame of the answer waits:
   * the answer streams from then on, as one begun before the catch-up. A piece of an answer whose
   * end already went out is taken and dropped. `to`: for one member.
   */
  holdFrame(frame: string, answer?: string, to?: string, asked = false): boolean {
    if (!this.catchUps) return false;
    if (answer !== undefined) {
      if (this.answered.has(answer)) return true;
      if (this.streaming.has(answer)) return false;
      if (asked && !this.waiting.has(answer)) {
        this.streamed(answer);
        return false;
      }
      this.waiting.add(answer);
    }
    this.frames.push({
      frame,
      after: this.newest,
      n: this.framesCount++,
      ...(answer !== undefined ? { answer } : {}),
      ...(to !== undefined ? { user: to } : {}),
    });
    return true;
  }

  /**
   * A piece of `answer` went out as it came, while the room held nothing: its question went out
   * before it, so its later pieces go on as they come during a catch-up (members would see the
   * answer stop mid-sentence), and its end waits in seq order like any message.
   */
  streamed(answer: string): void {
    if (this.streaming.has(answer)) return;
    this.streaming.add(answer);
    if (this.streaming.size > MAX_STREAMING) this.streaming.delete(this.streaming.values().next().value!);
  }

  /** The answer `answer` failed and its `error` went out: it has no more frames. */
  failed(answer: string): void {
    this.streaming.delete(answer);
  }

  /** The answer `answer` ended (its stored message went out): its waiting pieces are dropped, and any later ones. */
  ended(answer: string): void {
    this.streaming.delete(answer);
    if (!this.catchUps) return;
    if (this.frames.some((f) => f.answer === answer)) this.frames = this.frames.filter((f) => f.answer !== answer);
    this.answered.add(answer);
    if (this.answered.size > MAX_ANSWERED) this.answered.delete(this.answered.values().next().value!);
  }

  /**
   * The live copy of `seq`, taken out, for the catch-up to send in its place: held, or on its way
   * out (released past the cap, not sent yet). The catch-up would otherwise send the stored copy
   * ahead of it, and the live one, an `assistant.done` where the answer ends, would go nowhere.
   */
  take(seq: number): HeldMessage | undefined {
    const item = this.held.get(seq);
    if (item) {
      this.held.delete(seq);
      return item;
    }
    const at = this.outSeqs.get(seq);
    if (at === undefined) return undefined;
    const out = this.out[at] as HeldMessage;
    this.out[at] = null;
    this.outSeqs.delete(seq);
    this.outMessages--;
    return out;
  }

  /**
   * Gives every message held, or on its way out, back as `move` makes it: a thread merged or split
   * while they waited. Sent as they came, they named a thread that no longer holds them (the
   * catch-up even sent such a copy in place of the store's), and the room remembered them so for
   * newcomers' welcomes.
   */
  rewrite(move: (m: Message) => Message): void {
    for (const [seq, item] of this.held) this.held.set(seq, moved(item, move));
    for (let at = this.outAt; at < this.out.length; at++) {
      const item = this.out[at];
      if (item?.message) this.out[at] = moved(item, move);
    }
  }

  /**
   * Takes everything held out to go out, after what was taken before: `next` gives it a piece at a
   * time. What arrives meanwhile is held again, behind it.
   */
  release(): void {
    const taken = this.drain();
    if (!taken.length) return;
    if (this.outAt >= this.out.length) {
      this.out = [];
      this.outAt = 0;
    }
    for (const item of taken) {
      if (item.message) {
        this.outSeqs.set(item.message.seq, this.out.length);
        this.outMessages++;
      } else this.outFrames++;
      this.out.push(item);
    }
  }

  /**
   * The next of what was released to go out, taken; undefined once all went. A piece (or failure)
   * of an answer whose end went out after it was released is dropped, as a held one is (`ended`):
   * a catch-up sends the stored end of an answer whose live end is on its way out (`take` finds
   * only what is held), and a delta after the end makes clients show an answer that never ends.
   */
  next(): Held | undefined {
    for (;;) {
      if (this.outAt >= this.out.length) return undefined;
      const at = this.outAt++;
      const item = this.out[at];
      if (this.outAt === this.out.length) {
        this.out = [];
        this.outAt = 0;
      }
      // Taken by the catch-up (`take`), which sent it in its place.
      if (item === null) continue;
      if (item.message) {
        if (this.outSeqs.get(item.message.seq) === at) this.outSeqs.delete(item.message.seq);
        this.outMessages--;
        return item;
      }
      this.outFrames--;
      if (item.answer === undefined || !this.answered.has(item.answer)) return item;
    }
  }

  /** The oldest of what the room holds or released, taken, for a room `overfull` to send at once. */
  oldest(): Held | undefined {
    if (!this.releasing) this.release();
    return this.next();
  }

  /** What was released and not sent yet, taken. */
  private takeOut(): Held[] {
    const rest: Held[] = [];
    for (let item = this.next(); item; item = this.next()) rest.push(item);
    return rest;
  }

  /** Everything held, taken out: messages in seq order, each frame without a seq after the message it came behind. */
  private drain(): Held[] {
    const messages = [...this.held.values()].sort((a, b) => a.message.seq - b.message.seq);
    const frames = this.frames;
    this.held.clear();
    this.frames = [];
    if (!frames.length) return messages;
    const out: Held[] = [];
    // Answers whose end is among these: pieces of them that would follow it are dropped.
    const ended = new Set<string>();
    const pass = (frame: HeldFrame) => frame.answer === undefined || !ended.has(frame.answer);
    let f = 0;
    for (const m of messages) {
      for (; f < frames.length && frames[f].after < m.message.seq; f++) if (pass(frames[f])) out.push(frames[f]);
      out.push(m);
      if (m.message.author?.kind === 'assistant' && m.message.clientId) ended.add(m.message.clientId);
    }
    for (; f < frames.length; f++) if (pass(frames[f])) out.push(frames[f]);
    return out;
  }
}

/** `item` with the message `move` makes of it, its frame built again around it; itself when unchanged. */
function moved(item: HeldMessage, move: (m: Message) => Message): HeldMessage {
  const message = move(item.message);
  return message === item.message ? item : { frame: withMessage(item.frame, message), message };
}

/** A message's frame (`message` or `assistant.done`) built again around `message`, its type and other fields (`abstained`) kept. */
export function withMessage(frame: string, message: Message): string {
  return JSON.stringify({ ...(JSON.parse(frame) as object), message });
}
