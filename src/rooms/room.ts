/**
 * One live room on this node: its joined connections, its members (room-members.ts: this node's
 * and, with many nodes, the others'), the last messages for fast welcomes, typing state and
 * coalesced presence.
 * Broadcasts take an already-serialised frame and loop without allocating per member.
 */
import { HeldMessages } from './held-messages.js';
import type { Member, Message, RoomInfo } from '../protocol/messages.js';
import type { Thread } from '../store/types.js';
import type { RoomOptions } from './options.js';
import { RoomMembers, type PresenceChange } from './room-members.js';
import { SenderShares, type ShareVerdict } from './sender-shares.js';
import { SeqWindow, type SeqRun } from './seq-window.js';
import { TypingTracker } from './typing.js';

/** A joined connection as the room sees it. */
export interface RoomSession {
  readonly userId: string;
  /**
   * Seqs the connection's welcome carried before this node delivered them (read from the store
   * ahead of the room): their live frames are skipped.
   */
  readonly welcomedAhead: Set<number>;
  /** Frames without a seq held before the connection joined (HeldMessages.framesHeld then): it does not get them. */
  readonly heldFramesFrom: number;
  /** Sends a frame the member must get (messages, answers, errors). */
  deliver(frame: string): void;
  /** Sends an optional frame (typing, presence); skipped while the connection is backed up. */
  offer(frame: string): void;
}

export type LoadState = 'ok' | 'missing' | 'failed';

/**
 * Threads deleted, and threads merged, while a room was live that it remembers (the newest of
 * each): far more than are deleted or merged while a message is on its way.
 */
const MAX_GONE_THREADS = 100;

/**
 * Messages a split moved that the room did not hold (SPLIT_MAX_MESSAGES, one split's most): one of
 * them may still be on its way from the node that stored it, behind the split's notice.
 */
const MAX_MOVED_MESSAGES = 5_000;
/**
 * Runs of late seqs a room remembers (Room.cameLate), far more than arrive out of order between
 * two rejoins: a welcome gives them back to a rejoining member whose lastSeq is past them. Runs,
 * not seqs: an import becomes readable below live messages said meanwhile and is delivered late
 * whole, thousands of seqs, and the 64 seqs kept before left a member who rejoined during its
 * delivery without the rest of it.
 */
const LATE_RUNS_KEPT = 64;

export class Room {
  info: RoomInfo | null = null;
  threadId = '';
  /** Highest seq this node has seen in the room. */
  seq = 0;
  /**
   * Newest seq the load took as delivered without delivering it (Room.init: the history read, and
   * what was stored before it); 0 when it took none. The hub's listener never heard those here.
   */
  loadedSeq = 0;
  /** Settles once the room's info and history are loaded. */
  ready: Promise<LoadState> = Promise.resolve('ok');
  /** Joins under way; the room is not dropped while any are pending. */
  pendingJoins = 0;
  /** Whether this node joined the room's bus channel (a room that does not exist never does). */
  heard = false;
  readonly sessions = new Set<RoomSession>();
  /** The same connections by user, so a private frame does not walk a large room's every connection. */
  private readonly sessionsByUser = new Map<string, Set<RoomSession>>();
  readonly members = new RoomMembers();
  readonly typing: TypingTracker;
  /** Threads of this room other than the main one that messages were already checked against. */
  readonly knownThreads = new Set<string>();
  /** Threads deleted while the room was live (the newest MAX_GONE_THREADS): messages of theirs delivered later join no welcome. */
  private readonly goneThreads = new Set<string>();
  /**
   * Threads merged while the room was live (the newest MAX_GONE_THREADS) → the thread holding their
   * messages now, merges of merges followed: messages of theirs delivered later are filed there.
   */
  private readonly mergedInto = new Map<string, string>();
  /**
   * Messages a split moved while the room was live that it did not hold then (the newest
   * MAX_MOVED_MESSAGES) → the thread they moved to: one delivered later is filed there, once.
   */
  private readonly movedTo = new Map<string, string>();
  /** Threads a message from another node named that are being looked up in the store (thread-lookups.ts). */
  readonly lookingUp = new Set<string>();
  /** Live frames waiting while the room catches up from the store (NodeSync, held-messages.ts). */
  readonly held = new HeldMessages();
  private history: Message[] = [];
  /** Seqs already delivered, so a message arriving twice (bus and resync) goes out once. */
  private readonly delivered = new SeqWindow();
  /**
   * The newest LATE_RUNS_KEPT runs of consecutive seqs delivered after a newer one (cameLate), as
   * [first, last, newest]: `newest`, the newest seq delivered before any of them.
   */
  private readonly lateRuns: [number, number, number][] = [];
  /** Messages remembered while joiners' replays are read from the store, one list per joiner (catchArrivals). */
  private readonly catches = new Set<Message[]>();
  private readonly tasks = new TaskChain();
  private readonly posts = new TaskChain();
  private typingTimer: NodeJS.Timeout | null = null;
  private presenceTimer: NodeJS.Timeout | null = null;
  private presenceAt = 0;
  private presenceChanges: PresenceChange[] = [];
  /** The room's own message rate (one room cannot flood the node), shared fairly by the addresses posting. */
  private readonly messages: SenderShares;

  constructor(
    readonly id: string,
    private readonly options: Readonly<RoomOptions>,
    private readonly onTypingExpired: (room: Room, userIds: string[]) => void,
  ) {
    this.typing = new TypingTracker(options.typingForwardMs, options.typingExpireMs, options.roomTypingPerSecond, Date.now());
    this.messages = new SenderShares(options.roomMessagesPerSecond, Date.now());
  }

  /** Takes one message of `address`'s share of the room's rate: 'ok', or which limit refused it (SenderShares). */
  admitMessage(address: string, now: number): ShareVerdict {
    return this.messages.take(address, now);
  }

  /** Milliseconds from `now` until the limit that gave `verdict` takes a message from `address` again. */
  messageWaitMs(address: string, verdict: ShareVerdict, now: number): number {
    return this.messages.waitMs(address, verdict, now);
  }

  /** Addresses sharing the room's message rate now, and one address's part of it a second. */
  messageShare(): { senders: number; perSecond: number } {
    return { senders: this.messages.sending, perSecond: this.messages.shareRate() };
  }

  /** Runs `task` after every task queued before it: joins, and catch-ups from the store (NodeSync). */
  run<T>(task: () => Promise<T>): Promise<T> {
    return this.tasks.run(task);
  }

  /**
   * Runs a member's post after every post queued before it, so this node's posts are broadcast in
   * seq order. Posts do not wait behind joins and catch-ups (`run`): a post stored during a
   * catch-up waits in `held` like any live message, while the other nodes get it at once.
   */
  runPost<T>(task: () => Promise<T>): Promise<T> {
    return this.posts.run(task);
  }

  /** Fills the loaded state, keeping messages that arrived while loading. */
  init(info: RoomInfo, threadId: string, recent: Message[], lastSeq: number): void {
    this.info = info;
    this.threadId = threadId;
    this.seq = Math.max(this.seq, lastSeq);
    // What was stored before the oldest message loaded is older than anything a member here gets
    // live (every one joins after the load, its welcome read from memory or the store): it counts
    // as delivered, so a catch-up does not send it again and an answer to it streams during one
    // (hub.ts, toEveryone). The store commits seqs in order, so all of it was readable; a seq newer
    // than that and missing from `recent` is not taken as delivered.
    if (recent.length) this.delivered.addThrough(recent[0].seq - 1);
    // A merge or split heard while the store was read may have moved some of them since.
    for (const m of recent) this.remember(this.filed(m));
    this.loadedSeq = recent.reduce((top, m) => Math.max(top, m.seq), 0);
  }

  /** Adds a message to the in-memory history; false when it was already there or already delivered. */
  remember(m: Message): boolean {
    if (this.delivered.has(m.seq)) return false;
    if (m.seq < this.delivered.newest) this.lateAt(m.seq, this.delivered.newest);
    this.delivered.add(m.seq);
    if (this.goneThreads.has(m.threadId)) {
      // Held during a catch-up (or on its way) when its thread was deleted: the members here get it
      // as they would have (it may end an answer they saw begin), but a welcome would serve it on.
      this.seq = Math.max(this.seq, m.seq);
      return true;
    }
    for (const caught of this.catches) {
      caught.push(m);
      // More than a replay may carry never reaches a welcome: the newest are kept.
      if (caught.length > this.options.replayLimit) caught.shift();
    }
    const h = this.history;
    let i = h.length;
    while (i > 0 && h[i - 1].seq > m.seq) i--;
    if (i > 0 && h[i - 1].seq === m.seq) return false;
    if (i === 0 && h.length >= this.options.historySize) {
      this.seq = Math.max(this.seq, m.seq);
      return true;
    }
    h.splice(i, 0, m);
    if (h.length > this.options.historySize) h.shift();
    this.seq = Math.max(this.seq, m.seq);
    return true;
  }

  /**
   * Whether this node delivered `seq` to the room's members, or it is older than the window, or it
   * was stored before the oldest message the room loaded (Room.init). Not "at or below `seq`":
   * messages from the bus go out as they come, so a seq a gap skipped stays undelivered below newer
   * ones until the gap is read from the store (NodeSync.gap), and `seq` starts at the store's last
   * seq read beside the loaded history, which may be newer than it.
   */
  hasDelivered(seq: number): boolean {
    return this.delivered.has(seq);
  }

  /**
   * Highest seq this node delivered or holds to deliver (a catch-up holds live messages, Room.held):
   * where the next message from another node follows on. `seq` alone stays behind while the room
   * holds, and every message from the others then looked like a gap, or too far ahead.
   */
  get heardSeq(): number {
    return Math.max(this.seq, this.held.newestSeq);
  }

  /** Whether every seq after `after` up to `upTo` was delivered (or is older than the window), or is held to be. */
  heardThrough(after: number, upTo: number): boolean {
    for (let seq = after + 1; seq <= upTo; seq++) if (!this.delivered.has(seq) && !this.held.has(seq)) return false;
    return true;
  }

  /**
   * Whether this node delivered `seq` after a newer one (two nodes' messages heard in another order
   * than they were stored, or a gap read from the store): a member whose socket dropped between the
   * two asks back for what came after the newer one (`lastSeq`), and was never given this one.
   * Only after `lastSeq` was delivered: a member who had a message delivered after it had the
   * socket open then, and got it (a room that once took an import late gave all of it again, and
   * `truncated`, to every member rejoining while the room lived).
   */
  cameLate(seq: number, lastSeq: number): boolean {
    return this.lateRuns.some(([first, last, newest]) => first <= seq && seq <= last && newest >= lastSeq);
  }

  /** The runs of late seqs that came after `lastSeq` (cameLate) at or below it, cut there, newest run first. */
  lateUpTo(lastSeq: number): [number, number][] {
    const runs: [number, number][] = [];
    for (let i = this.lateRuns.length - 1; i >= 0; i--) {
      const [first, last, newest] = this.lateRuns[i];
      if (first <= lastSeq && newest >= lastSeq) runs.push([first, Math.min(last, lastSeq)]);
    }
    return runs;
  }

  private lateAt(seq: number, newest: number): void {
    const run = this.lateRuns.at(-1);
    if (run && seq === run[1] + 1) {
      run[1] = seq;
      run[2] = Math.max(run[2], newest);
    } else {
      this.lateRuns.push([seq, seq, newest]);
      if (this.lateRuns.length > LATE_RUNS_KEPT) this.lateRuns.shift();
    }
  }

  /**
   * Seqs of `runs` became readable just now and nobody delivered them (an import settled below
   * newer messages): a catch-up delivers them, once, however old (SeqWindow.reopen).
   */
  reopen(runs: readonly SeqRun[]): void {
    for (const [from, to] of runs) this.delivered.reopen(from, to);
  }

  /** Seqs of `messages` this node has not delivered yet (a welcome read them from the store first). */
  notDelivered(messages: readonly Message[]): Set<number> {
    const seqs = new Set<number>();
    for (const m of messages) if (!this.delivered.has(m.seq)) seqs.add(m.seq);
    return seqs;
  }

  /**
   * Collects every message the room remembers from now on (at most `replayLimit`, the newest), for
   * a joiner whose history is read from the store meanwhile: the in-memory history alone drops
   * the oldest once more than `historySize` arrive. `stop()` ends the collection.
   */
  catchArrivals(): { arrived: readonly Message[]; stop(): void } {
    const arrived: Message[] = [];
    this.catches.add(arrived);
    return { arrived, stop: () => void this.catches.delete(arrived) };
  }

  /** Messages of the in-memory history, and those held during a catch-up, moved to another thread (a merge or split). */
  moveMessages(ids: ReadonlySet<string>, threadId: string): void {
    const found = new Set<string>();
    const move = (m: Message) => {
      if (!ids.has(m.id)) return m;
      found.add(m.id);
      return m.threadId === threadId ? m : { ...m, threadId };
    };
    this.history = this.history.map(move);
    this.held.rewrite(move);
    this.knownThreads.add(threadId);
    // Most are older than the history; the few still on their way are among them, unknowable by id alone.
    for (const id of ids) {
      if (found.has(id)) continue;
      this.movedTo.delete(id);
      this.movedTo.set(id, threadId);
      if (this.movedTo.size > MAX_MOVED_MESSAGES) this.movedTo.delete(this.movedTo.keys().next().value!);
    }
  }

  /**
   * Every message of the in-memory history, and of those held during a catch-up, in `absorbedId`
   * now belongs to `survivorId`, and so do those delivered later (`filed`).
   */
  mergeThread(absorbedId: string, survivorId: string): void {
    // Two nodes' notices may cross: a merge of the survivor itself, heard first, says where it went.
    const into = this.mergedInto.get(survivorId) ?? survivorId;
    const move = (m: Message) => (m.threadId === absorbedId ? { ...m, threadId: into } : m);
    this.history = this.history.map(move);
    this.held.rewrite(move);
    this.knownThreads.delete(absorbedId);
    // Threads merged into the absorbed one before go on to its survivor: one lookup per message.
    for (const [merged, to] of this.mergedInto) if (to === absorbedId) this.mergedInto.set(merged, into);
    this.mergedInto.delete(absorbedId);
    this.mergedInto.set(absorbedId, into);
    if (this.mergedInto.size > MAX_GONE_THREADS) this.mergedInto.delete(this.mergedInto.keys().next().value!);
  }

  /**
   * `m` as the room delivers and remembers it: under the thread a split moved it to, and under the
   * survivor when its thread was merged, while the room was live. Stored before the move and heard
   * after it (another node's publish running late), it names the thread it was moved out of; stored
   * after a merge (a say whose thread was resolved before), it went to the archived shell, whose
   * survivor (`survivorOf`) is the same.
   */
  filed(m: Message): Message {
    const moved = this.movedTo.size ? this.movedTo.get(m.id) : undefined;
    if (moved !== undefined) this.movedTo.delete(m.id);
    const threadId = moved ?? m.threadId;
    const now = this.mergedInto.get(threadId) ?? threadId;
    return now === m.threadId ? m : { ...m, threadId: now };
  }

  /**
   * Whether messages of `threadId` are filed without asking the store: the main thread, one the
   * room checked, merged or deleted while it was live, or one being looked up.
   */
  knowsThread(threadId: string): boolean {
    return (
      threadId === this.threadId ||
      this.knownThreads.has(threadId) ||
      this.mergedInto.has(threadId) ||
      this.goneThreads.has(threadId) ||
      this.lookingUp.has(threadId)
    );
  }

  /**
   * What the store says of a thread the room never heard of: `now` is the thread holding its
   * messages (itself, or the survivor of its merges), null when it is gone. Messages of a thread
   * gone, or of another room's, are kept out of welcomes as a deleted thread's are. Only an active
   * thread joins `knownThreads`, which a say's thread check trusts (chat.ts).
   */
  learnThread(threadId: string, now: Pick<Thread, 'id' | 'roomId' | 'status'> | null): void {
    if (!now || now.roomId !== this.id) this.forgetThread(threadId);
    else if (now.id !== threadId) this.mergeThread(threadId, now.id);
    else if (now.status === 'active') this.knownThreads.add(threadId);
  }

  /** Drops a deleted thread's messages from the in-memory history, and keeps those delivered later out of it. */
  forgetThread(threadId: string): void {
    this.history = this.history.filter((m) => m.threadId !== threadId);
    this.knownThreads.delete(threadId);
    this.goneThreads.add(threadId);
    if (this.goneThreads.size > MAX_GONE_THREADS) this.goneThreads.delete(this.goneThreads.values().next().value!);
  }

  /**
   * The in-memory history as the store holds it now (`stored`: the room's messages over its seqs
   * through `readThrough`): after this node was cut off from the others, a thread deleted meanwhile
   * took its messages, and a merge or split moved them, without this node hearing of it.
   */
  keepStored(stored: Message[], readThrough: number): void {
    const byId = new Map(stored.map((m) => [m.id, m]));
    this.history = this.history.flatMap((m) => {
      if (m.seq > readThrough) return [m];
      const now = byId.get(m.id);
      return now ? [now] : [];
    });
  }

  /** The in-memory history, oldest first. */
  recent(): Message[] {
    return this.history.slice();
  }

  /** Oldest seq held in memory, or Infinity when none. */
  oldestSeq(): number {
    return this.history.length ? this.history[0].seq : Infinity;
  }

  /**
   * Sends to every connection; a message frame (`seq` > 0) skips connections whose welcome carried
   * it, unless it `endsAnAnswer`: an `assistant.done` is what tells a client the answer it may hold
   * as pending is finished, so it goes to them too (clients drop a message they hold already).
   */
  sendAll(frame: string, seq = 0, endsAnAnswer = false): void {
    // The room delivers each seq once, so a carried one is forgotten either way.
    for (const s of this.sessions) if (seq === 0 || !s.welcomedAhead.delete(seq) || endsAnAnswer) s.deliver(frame);
  }

  /**
   * Sends a frame without a seq the room held during a catch-up (the `n`th) to the connections
   * joined before it came: `user`'s alone when it was for one member.
   */
  sendHeldFrame(frame: string, n: number, user?: string): void {
    const sessions = user === undefined ? this.sessions : (this.sessionsByUser.get(user) ?? []);
    for (const s of sessions) if (n >= s.heldFramesFrom) s.deliver(frame);
  }

  /** Offers an optional frame to every connection except those of `exceptUser`. */
  offerAll(frame: string, exceptUser?: string): void {
    for (const s of this.sessions) if (s.userId !== exceptUser) s.offer(frame);
  }

  /** Sends to one user's connections. */
  sendToUser(userId: string, frame: string): void {
    for (const s of this.sessionsByUser.get(userId) ?? []) s.deliver(frame);
  }

  /** Adds a connection (RoomMembers.join: the first makes the user a member, a new name renames). */
  join(session: RoomSession, name: string): { member: Member; isNew: boolean; renamed: boolean; since: number } {
    this.sessions.add(session);
    const own = this.sessionsByUser.get(session.userId);
    if (own) own.add(session);
    else this.sessionsByUser.set(session.userId, new Set([session]));
    return this.members.join(session.userId, name, Date.now());
  }

  /** Removes a connection; returns the member when it was their last one on this node. */
  leave(session: RoomSession): Member | null {
    if (!this.sessions.delete(session)) return null;
    const own = this.sessionsByUser.get(session.userId);
    if (own?.delete(session) && !own.size) this.sessionsByUser.delete(session.userId);
    return this.members.leave(session.userId);
  }

  /** True when nobody is in the room and nobody is joining. */
  get empty(): boolean {
    return this.sessions.size === 0 && this.pendingJoins === 0;
  }

  /** Members for a frame: the first `maxListedMembers` of every node, in join order. */
  listedMembers(): Member[] {
    return this.members.listed(this.options.maxListedMembers);
  }

  /** Members on every node. */
  get memberCount(): number {
    return this.members.count;
  }

  /**
   * Announces a join or leave. The first change in a quiet room goes out at once; changes within
   * the presence window after it are coalesced into one frame at the window's end, so mass joins
   * cost one frame per window instead of one per member.
   */
  presence(change: PresenceChange, now: number): void {
    this.presenceChanges.push(change);
    if (this.presenceTimer) return;
    const window = this.presenceWindow();
    const wait = this.presenceAt + window - now;
    if (wait <= 0) return this.flushPresence(now);
    this.presenceTimer = setTimeout(() => {
      this.presenceTimer = null;
      this.flushPresence(Date.now());
    }, wait);
    this.presenceTimer.unref();
  }

  /**
   * How long presence changes are coalesced: the window grows with the room (10 ms a member by
   * default, from 50 ms up to 1 s at 100 members), as each frame goes to every member and lists up
   * to 100 of them. A fixed 50 ms let anyone's joins and leaves (20 a second per address) make 20
   * frames a second of ~5 KB for each of 100 members: 10 MB a second out of one room.
   */
  private presenceWindow(): number {
    const { largeRoomMembers, largeRoomPresenceWindowMs, presenceWindowMs } = this.options;
    const members = this.members.count;
    if (members > largeRoomMembers) return largeRoomPresenceWindowMs;
    return Math.min(largeRoomPresenceWindowMs, Math.max(presenceWindowMs, (members * largeRoomPresenceWindowMs) / largeRoomMembers));
  }

  private flushPresence(now: number): void {
    const changes = this.presenceChanges;
    this.presenceChanges = [];
    this.presenceAt = now;
    if (!changes.length || !this.sessions.size) return;
    const single = changes.length === 1 ? changes[0] : {};
    this.offerAll(JSON.stringify({ type: 'presence', members: this.listedMembers(), count: this.members.count, ...single }));
  }

  /** Arms the typing timer for the earliest typist to expire or stopped typist to forget. */
  scheduleTypingExpiry(): void {
    if (this.typingTimer) return;
    const at = this.typing.nextExpiry();
    if (at === null) return;
    this.typingTimer = setTimeout(
      () => {
        this.typingTimer = null;
        const gone = this.typing.expire(Date.now());
        if (gone.length) this.onTypingExpired(this, gone);
        this.scheduleTypingExpiry();
      },
      Math.max(0, at - Date.now()),
    );
    this.typingTimer.unref();
  }

  /** Stops the room's timers; called when it is dropped. */
  dispose(): void {
    if (this.typingTimer) clearTimeout(this.typingTimer);
    if (this.presenceTimer) clearTimeout(this.presenceTimer);
    this.typingTimer = this.presenceTimer = null;
  }
}

/** Tasks run one after another, each after every task queued before it; one that fails does not stop the next. */
class TaskChain {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task);
    this.tail = next.catch(() => {});
    return next;
  }
}
