/**
 * The room's live state for a lit host: a ReactiveController that owns the room's socket
 * (RoomConnection), turns server frames into state (members, messages, answers being written,
 * who is typing, notices) and asks the host to re-render after each change.
 *
 * The server's history is the truth: a fresh page replaces any cached messages with `welcome`'s
 * history; a reconnect within the page sends `lastSeq` and merges what was missed. sessionStorage
 * holds a copy only so an offline page still shows the conversation and the unsent messages.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { Member, Message, RoomInfo, ServerMessage, WelcomeFrame } from '../../../src/protocol/messages.js';
import { CloseCode } from '../../../src/protocol/close-codes.js';
import { displayName, identityToken, identityUserId, newClientId, saveIdentityToken } from './identity.js';
import { RoomConnection, type ConnectionStatus } from './room-connection.js';
import { CommandReplies, type CommandReply } from './command-replies.js';
import { PendingForgets } from './pending-forgets.js';
import { FORGET_RETRY_CAP_MS, MAX_FORGET_REFUSALS, forgetOutcome, forgetRetryDelay, isForgetCommand, type ForgetState } from './forget-retry.js';
import { copyMark, memoryOf, saveMemory, savePrivate, type RoomMemory } from './room-memory.js';
import { ResetProbe } from './reset-probe.js';
import { askRefusedNotice, closeNotice, noticeFor, type Notice } from './room-notices.js';
import { ThreadNavigator } from './thread-navigator.js';
import { AnswersInProgress, type AnswerInProgress } from './answers-in-progress.js';
import { heldMessages, judgeWelcome, type HeldMessage } from './store-reset.js';
import type { LogEntry } from './message-log.js';
import { TypingList } from './typing-list.js';
import { ASK_PREFIX, outgoingText } from './ask-text.js';

/** The server refuses longer messages (DESIGN: text is capped at 4,000 characters). */
export const MAX_MESSAGE_CHARS = 4_000;
/** Resend "typing" at most this often while the member keeps typing. */
const TYPING_RESEND_MS = 3_000;
const CACHE_SAVE_DELAY_MS = 250;
/**
 * Messages sent at once when a welcome finds some unsent (written offline, or while the socket was
 * down), then one every RESEND_INTERVAL_MS. The server admits a socket's frames 5 a second with a
 * burst of 10 (src/rooms/flood-guard.ts), the hello and a pending forget among them: sent all at
 * once, the tenth and later were refused as a flood ("sending messages too fast") and failed.
 */
const RESEND_BURST = 5;
const RESEND_INTERVAL_MS = 250;
/**
 * Said when the server refused "Forget them" for good, or too many times in a row: `why` is the
 * server's last word; `typed`: the member asked by typing `/forget private`, which they may type again.
 */
function forgetRefusedNotice(why: string, typed: boolean): Notice {
  const again = typed
    ? 'Send /forget private again, or press “Forget them” in private mode, to try again.'
    : 'Press “Forget them” in private mode to try again.';
  return {
    code: 'FORGET_REFUSED',
    level: 'error',
    message: `Your private questions in this room were NOT forgotten: the assistant still remembers them. The server refused (${why}). ${again}`,
  };
}
/** The server's answer to a typed `/forget private` (how many exchanges went), said where a command's answer would be. */
function forgetDoneNotice(reply: string): Notice {
  return { code: 'FORGET_DONE', level: 'info', message: reply || 'Forgotten: the assistant no longer remembers your private questions in this room.' };
}
/** Said to a typed `/forget private` from a browser that has never joined: the server holds nothing of it. */
const NOTHING_TO_FORGET: Notice = {
  code: 'FORGET_DONE',
  level: 'info',
  message: 'The assistant remembers no private exchange of yours in this room.',
};
/** Refusals of a command as written (a typo, a missing or wrong id): the same text would be refused again. */
const REFUSED_AS_WRITTEN = new Set([
  'ERR_BAD_MESSAGE',
  'ERR_BAD_THREAD_OP',
  'ERR_THREAD_NOT_FOUND',
  'ERR_THREAD_ARCHIVED',
  'ERR_FORBIDDEN',
  'ERR_MESSAGE_TOO_LONG',
]);
/** Said under a message whose named thread the server no longer has: sent again it would be refused again. */
const THREAD_GONE = 'the thread it was written in was deleted. Copy the text to say it in another thread.';
/** Said under a message whose thread is archived and leads to no active thread: sent again it would be refused again. */
const THREAD_ARCHIVED = 'the thread it was written in is archived and takes no messages. Copy the text to say it in another thread.';
/** Notices a successful rejoin does not clear. */
const KEEP_ON_REJOIN = new Set(['ERR_BAD_TOKEN', 'ERR_TOKEN_EXPIRED', 'ERR_RATE_LIMITED', 'FUSION_FALLBACK', 'FORGET_REFUSED']);

export type { AnswerInProgress };

/** The log becomes `history` (unsent and private entries kept), its oldest seq the floor paging back starts from. */
function startAfresh(memory: RoomMemory, history: readonly Message[], seq: number): void {
  memory.log.resetTo(history);
  // Seqs start at 1 in every room: a floor above 1 means older history to page back to.
  memory.windowFloor = history.length ? Math.min(...history.map((m) => m.seq)) : seq + 1;
  memory.noneBelow.clear();
  memory.paged.clear();
}

function socketUrl(roomId: string): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}/ws/rooms/${encodeURIComponent(roomId)}`;
}

export class RoomController implements ReactiveController {
  roomId = '';
  status: ConnectionStatus = 'idle';
  /** When the next reconnect attempt happens (epoch ms), while reconnecting. */
  retryAt: number | null = null;
  room: RoomInfo | null = null;
  you: Member | null = null;
  members: Member[] = [];
  /** Everyone in the room; the server lists at most the first 200 in `members`. */
  memberCount = 0;
  private readonly inProgress = new AnswersInProgress();
  /** Asks the store about a welcome behind the page that cannot say whether the store was wiped. */
  private readonly probe = new ResetProbe();
  /** The latest problem worth showing; cleared by `dismissNotice` or a good reconnect. */
  notice: Notice | null = null;
  /** Set when the room cannot be joined at all (no such room). */
  fatal: Notice | null = null;
  /** The open thread, its messages and the room's thread list. */
  readonly nav = new ThreadNavigator({
    command: (text, threadId) => this.command(text, threadId),
    changed: () => this.changed(),
    failed: (code, message) => {
      this.notice = noticeFor(code, message);
      this.host.requestUpdate();
    },
    mainReplaced: (formerMain) => this.memory?.log.toMainView(formerMain),
    followedMerge: (absorbedId, survivorId) => {
      this.notice = this.mergedNotice(absorbedId, survivorId, 'this view follows it there.');
    },
  });

  private memory: RoomMemory | null = null;
  private connection: RoomConnection | null = null;
  private readonly typists = new TypingList(() => this.host.requestUpdate());
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  /** The open room's copy as last written or scheduled (copyMark): a change that leaves it so schedules no save. */
  private savedMark = '';
  /** The member's messages waiting their turn to go out after a welcome (clientIds, in the order written): see RESEND_BURST. */
  private outbox: string[] = [];
  private outboxTimer: ReturnType<typeof setTimeout> | undefined;
  private lastTypingSent = 0;
  private typingActive = false;
  /** "Forget them" pressed and the server not told yet (offline then), by room and identity; kept across reloads. */
  private readonly pendingForgets = new PendingForgets();
  /**
   * Rooms and identities whose `/forget private` awaits its reply, each with `privateTraffic` as it
   * was when it went out: what the page asked privately (or heard answered) since, it may not cover.
   */
  private readonly forgetsSent = new Map<string, number>();
  /**
   * Private questions sent and private answers received by this page, counted: a forget that went
   * out before one of them may have reached the server before its exchange was remembered.
   */
  private privateTraffic = 0;
  /** Rooms and identities whose "Forget them" was asked for again while theirs was on its way, after private questions it may miss: another follows its answer. */
  private readonly forgetsAgain = new Set<string>();
  /** Rooms and identities whose pending forget took more than one command: its answer says what all of them did, not what the last one counted. */
  private readonly forgetsFollowed = new Set<string>();
  /** Rooms and identities whose `/forget private` waits out a passing refusal: its timer (one per room and identity, as a reply is). */
  private readonly forgetTimers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Rooms whose "Forget them" the server refused (forget-retry.ts): the button stays offered though the tab keeps nothing. */
  private readonly refusedForgets = new Set<string>();
  /** Rooms and identities whose pending forget this page's member asked for by typing `/forget private`: its answer is told. */
  private readonly typedForgets = new Set<string>();
  private name = displayName();
  private readonly commands = new CommandReplies();

  constructor(private readonly host: ReactiveControllerHost) {
    host.addController(this);
  }

  /** The open thread's messages. */
  get messages() {
    return this.nav.messages;
  }

  /** The thread messages are shown from and sent to; '' before the room's first welcome. */
  get threadId(): string {
    return this.nav.threadId;
  }

  /** The assistant's answers still being written. */
  get answers(): readonly AnswerInProgress[] {
    return this.inProgress.list;
  }

  /** Other members typing now. */
  get typing(): Member[] {
    return this.typists.members;
  }

  hostConnected(): void {
    document.addEventListener('visibilitychange', this.onVisible);
    window.addEventListener('pagehide', this.onLeave);
    if (this.roomId) this.open();
  }

  hostDisconnected(): void {
    document.removeEventListener('visibilitychange', this.onVisible);
    window.removeEventListener('pagehide', this.onLeave);
    this.probe.cancel();
    this.close();
  }

  /** Switches to another room; the old room's messages stay in memory for when it comes back. */
  setRoom(roomId: string): void {
    if (roomId === this.roomId) return;
    this.probe.cancel();
    this.close();
    this.roomId = roomId;
    if (roomId) this.open();
  }

  /**
   * Sends a message; with `ask`, a question for the assistant. A private question (`isPrivate`)
   * is not posted to the room: it is an `ask` frame whose answer only this member receives.
   */
  send(text: string, ask = false, isPrivate = false): boolean {
    const body = text.trim();
    if (!body || !this.memory) return false;
    const privately = isPrivate && (ask || ASK_PREFIX.test(body));
    const finalText = outgoingText(body, ask, isPrivate);
    // The server's limit is the sent text's: a question's mark counts.
    if (finalText.length > MAX_MESSAGE_CHARS) {
      this.notice = noticeFor('ERR_MESSAGE_TOO_LONG', '');
      this.host.requestUpdate();
      return false;
    }
    // Typed, "Forget them" is the button's request: pending, retried and told as it is, sent once.
    if (!privately && isForgetCommand(finalText)) {
      // Its command may wait (offline, a refusal's backoff): the room hears now that the typing is over.
      this.setTyping(false);
      this.forgetPrivate(true);
      return true;
    }
    const clientId = newClientId();
    const author = { id: this.you?.id ?? '', name: this.you?.name ?? this.name, kind: 'user' as const };
    // Written in the main view: filed under '' (shown in the main view), sent without a threadId, so it
    // goes to the room's main thread whichever it is by then (a deleted main thread is replaced).
    const threadId = this.memory.threadId;
    this.memory.log.addLocal(clientId, finalText, author, threadId, this.roomId, privately);
    // The server ends the member's typing when their message or command arrives: a `false` frame
    // just before it only spent the frame budget. A private question posts nothing, so it does not.
    if (privately) this.setTyping(false);
    else this.typingActive = false;
    this.transmit(clientId, finalText, privately, threadId);
    this.changed();
    return true;
  }

  /** Sends a failed message again. */
  retry(clientId: string): void {
    const failed = this.memory?.log.unconfirmed(clientId);
    if (failed?.state === 'failed' && this.takeTypedForget(failed)) return;
    const entry = this.memory?.log.retry(clientId);
    if (!entry) return;
    this.transmit(clientId, entry.message.text, !!entry.private, entry.message.threadId);
    this.changed();
  }

  /**
   * Forgets the member's private questions and answers in this room, here and in the tab's storage,
   * and asks the server to forget its memory of them (`/forget private`): the assistant kept each
   * exchange for the member's later private questions. `typed`: asked by typing the command, whose
   * answer is then told (the button's shows in the emptied list).
   */
  forgetPrivate(typed = false): void {
    if (this.memory?.log.forgetPrivate(() => true)) this.changed();
    const userId = this.identity();
    if (!userId) {
      // No identity yet: the server holds nothing of this browser's.
      if (typed) this.tellQuietly(NOTHING_TO_FORGET);
      this.host.requestUpdate();
      return;
    }
    this.refusedForgets.delete(this.roomId);
    if (this.notice?.code === 'FORGET_REFUSED' || this.notice?.code === 'FORGET_DONE') this.notice = null;
    const sent = `${this.roomId}\n${userId}`;
    if (typed) this.typedForgets.add(sent);
    // One on its way covers what the server remembered when it got there, not a private question
    // asked (or answered) since: another is sent once it is answered. With nothing since, or none on
    // its way (waiting for the room or out a refusal, it goes later, covering all), it is the one.
    const wentOutAt = this.forgetsSent.get(sent);
    if (wentOutAt !== undefined && this.privateTraffic > wentOutAt) this.forgetsAgain.add(sent);
    this.pendingForgets.add(this.roomId, userId);
    this.sendForget();
    this.host.requestUpdate();
  }

  /**
   * A `/forget private` the log holds as a message (an older page kept it unsent, or failed with a
   * Retry): taken out of the conversation and asked as the button asks, so it is never sent beside
   * the pending request. False for any other entry.
   */
  private takeTypedForget(entry: LogEntry): boolean {
    if (entry.private || !entry.message.clientId || !isForgetCommand(entry.message.text)) return false;
    this.memory?.log.discard(entry.message.clientId);
    this.forgetPrivate(true);
    return true;
  }

  /**
   * Where this room's pending forget stands, shown beside the notices (never in their place, nor
   * hidden by them): waiting for the room, or waiting out a passing refusal; null when there is
   * none, or it is on its first way to the server (the one more sent after it too: sendForget).
   */
  get forgetState(): ForgetState | null {
    const userId = this.identity();
    if (!userId || !this.roomId) return null;
    const sent = `${this.roomId}\n${userId}`;
    if (this.forgetTimers.has(sent)) return 'retrying';
    if (this.forgetsSent.has(sent)) return this.pendingForgets.retry(this.roomId, userId).refusals > 0 ? 'retrying' : null;
    return this.status !== 'open' && this.pendingForgets.has(this.roomId, userId) ? 'pending' : null;
  }

  /** Whether the server refused this room's last "Forget them": pressing it again is offered though the tab keeps no private entry. */
  get forgetRefused(): boolean {
    return this.refusedForgets.has(this.roomId);
  }

  /**
   * Who the room knows this page as: the welcome's user id, or before it the id of the token the
   * hello sends. An id, not a token: every welcome renews the token, never the id.
   */
  private identity(): string | undefined {
    return this.status === 'open' ? this.you?.id : identityUserId();
  }

  /**
   * Sends this room's pending `/forget private` while the room is open; otherwise says it will,
   * and the next welcome sends it, in this page or a reloaded one (pending-forgets.ts). It stays
   * pending until the server answers: a reply the connection lost leaves it for the next welcome
   * (forgetting twice is harmless); a refusal that passes sends it again after a backoff, at most
   * MAX_FORGET_REFUSALS times in a row; any other refusal, or the last of those, ends it and tells
   * the member it was NOT forgotten (forget-retry.ts). One at a time: sent or waiting. Asked for
   * again while it is on its way, after private questions it may not cover (forgetPrivate), it is
   * sent once more when answered, as a request of its own (its refusals counted afresh).
   */
  private sendForget(): void {
    const roomId = this.roomId;
    const userId = this.identity();
    if (!userId || !this.pendingForgets.has(roomId, userId)) return;
    // Not open: the room's status says it waits (forgetState), and the next welcome sends it.
    if (this.status !== 'open') {
      this.host.requestUpdate();
      return;
    }
    const sent = `${roomId}\n${userId}`;
    if (this.forgetsSent.has(sent) || this.forgetTimers.has(sent)) return;
    // A wait an earlier refusal set, in this page or one before a reload; never longer than the cap (a clock set back).
    const wait = Math.min(this.pendingForgets.retry(roomId, userId).retryAt - Date.now(), FORGET_RETRY_CAP_MS);
    if (wait > 0) {
      this.forgetTimers.set(
        sent,
        setTimeout(() => {
          this.forgetTimers.delete(sent);
          if (this.roomId === roomId) this.sendForget();
        }, wait),
      );
      return;
    }
    this.forgetsSent.set(sent, this.privateTraffic);
    // This one goes later than every private question asked so far: it is the one asked for again.
    this.forgetsAgain.delete(sent);
    // The room's, whichever thread it is sent in: in the main thread, not the open one, which may lead
    // to no thread by now (merged into one deleted since, deleted), and the server would refuse it.
    void this.command('/forget private', '').then((reply) => {
      this.forgetsSent.delete(sent);
      const outcome = forgetOutcome(reply);
      const here = this.roomId === roomId;
      if (outcome.kind === 'at-welcome') {
        if (here) this.sendForget();
        return;
      }
      const refusals = this.pendingForgets.retry(roomId, userId).refusals + 1;
      const typed = this.typedForgets.has(sent);
      if (outcome.kind === 'done' && this.forgetsAgain.delete(sent)) {
        // Asked for again after private questions this one may have missed: one more goes now (or
        // at the room's next welcome, in this page or the next); its answer is the one told.
        this.pendingForgets.followedBy(roomId, userId);
        this.forgetsFollowed.add(sent);
        if (here) this.sendForget();
      } else if (outcome.kind === 'done') {
        this.pendingForgets.remove(roomId, userId);
        this.typedForgets.delete(sent);
        // What the last command counted is not what all of them forgot: the words say what holds.
        const followed = this.forgetsFollowed.delete(sent);
        // A typed command's answer, as a command's is given; the page may have gone to another room meanwhile.
        if (here && typed) this.tellQuietly(forgetDoneNotice(reply.ok && !followed ? reply.text : ''));
      } else if (outcome.kind === 'retry' && refusals < MAX_FORGET_REFUSALS) {
        this.pendingForgets.refused(roomId, userId, Date.now() + forgetRetryDelay(refusals, Math.random, outcome.retryAfterMs));
        if (here) this.sendForget();
      } else if (here) {
        // Refused for good (or too often): said where it was asked, and offered again. Elsewhere
        // (the page left the room meanwhile) it stays pending, to be sent, and told of, there.
        this.pendingForgets.remove(roomId, userId);
        this.typedForgets.delete(sent);
        this.forgetsAgain.delete(sent);
        this.forgetsFollowed.delete(sent);
        this.refusedForgets.add(roomId);
        this.notice = forgetRefusedNotice(outcome.message || outcome.code, typed);
      }
      if (here) this.host.requestUpdate();
    });
  }

  /** Shows an `info` notice unless a warning or an error holds the area: news never hides a problem. */
  private tellQuietly(notice: Notice): void {
    if (!this.notice || this.notice.level === 'info') this.notice = notice;
  }

  /** How many private questions and answers of this room the tab keeps. */
  get privateCount(): number {
    return this.memory?.log.privateEntries().length ?? 0;
  }

  discard(clientId: string): void {
    this.memory?.log.discard(clientId);
    this.changed();
  }

  /** Tells the room whether the member is typing (throttled). */
  setTyping(active: boolean): void {
    const now = Date.now();
    if (active && this.typingActive && now - this.lastTypingSent < TYPING_RESEND_MS) return;
    if (!active && !this.typingActive) return;
    this.typingActive = active;
    this.lastTypingSent = now;
    this.connection?.send({ type: 'typing', active });
  }

  /** Changes the display name; the room sees it after a quick rejoin. */
  rename(name: string): void {
    if (!name || name === this.name) return;
    this.name = name;
    if (this.roomId) {
      this.close();
      this.open();
    }
  }

  /** Says why a name was not taken; the member stays in the room under the name they had. */
  refuseName(why: 'reserved' | 'unusable'): void {
    this.notice = why === 'reserved' ? noticeFor('ERR_NAME_RESERVED', '') : noticeFor('ERR_NAME_UNUSABLE', '');
    this.host.requestUpdate();
  }

  reconnectNow(): void {
    this.connection?.reconnectNow();
  }

  dismissNotice(): void {
    this.notice = null;
    this.host.requestUpdate();
  }

  /** Sends a slash command whose answer goes back to the caller instead of into the conversation. */
  private command(text: string, threadId: string): Promise<CommandReply> {
    if (this.status !== 'open') {
      return Promise.resolve({ ok: false, code: 'ERR_NOT_JOINED', message: 'Not connected to the room. Try again once it is back.' });
    }
    const clientId = newClientId();
    const reply = this.commands.expect(clientId);
    this.connection?.send({ type: 'say', text, clientId, threadId: threadId || undefined });
    return reply;
  }

  private onVisible = () => {
    // Hidden may be the last the page hears (a tab closed, a phone's browser killed in the background).
    if (document.visibilityState === 'hidden') this.saveNow();
    else if (document.visibilityState === 'visible' && this.nav.threads.loaded) void this.nav.refresh();
  };

  /** The page is going (a reload, a link, the tab closing): what the save delay still holds is written now. */
  private onLeave = () => this.saveNow();

  private open(): void {
    this.memory = memoryOf(this.roomId);
    // Another room's mark says nothing of this one's copy, nor does a page of older messages loaded
    // after the room closed: the first change writes it.
    this.savedMark = '';
    this.nav.attach(this.roomId, this.memory, () => this.host.requestUpdate());
    this.fatal = null;
    this.notice = null;
    this.connection = new RoomConnection(socketUrl(this.roomId), {
      open: () => this.hello(),
      frame: (frame) => this.onFrame(frame),
      closed: (code) => this.onClosed(code),
      status: (status, retryIn) => {
        // An open socket is still "connecting" until the room's welcome arrives.
        this.status = status === 'open' ? 'connecting' : status;
        this.retryAt = retryIn !== undefined ? Date.now() + retryIn : null;
        if (status !== 'open') this.typists.clear();
        this.host.requestUpdate();
      },
    });
    this.connection.start();
    // A request left by an earlier page says it is waiting, as it did there.
    this.sendForget();
    this.host.requestUpdate();
  }

  /** Closes the room's socket (a rename's rejoin, another room, the page leaving); a probe asking is the callers' to cancel. */
  private close(): void {
    this.commands.abandonAll('The connection to the room closed before the answer came.');
    this.clearOutbox();
    // A pending forget's wait is kept with it (pending-forgets.ts): the room's next welcome takes it up.
    for (const timer of this.forgetTimers.values()) clearTimeout(timer);
    this.forgetTimers.clear();
    this.nav.attach(this.roomId, null, () => {});
    this.setTyping(false);
    this.connection?.stop();
    this.connection = null;
    this.saveNow();
    this.members = [];
    this.memberCount = 0;
    this.inProgress.clear();
    this.room = null;
    this.typists.clear();
  }

  private hello(): void {
    const lastSeq = this.memory?.joined ? this.memory.log.lastSeq : undefined;
    this.connection?.send({ type: 'hello', name: this.name, token: identityToken(), ...(lastSeq ? { lastSeq } : {}) });
  }

  /**
   * Sends the member's message, after those still waiting their turn (the outbox) so the room gets
   * them in the order written; not open, it waits for the next welcome, which sends every unsent one.
   */
  private transmit(clientId: string, text: string, isPrivate: boolean, thread: string): void {
    if (this.status !== 'open') return;
    if (this.outbox.length) {
      this.outbox.push(clientId);
      return;
    }
    this.transmitNow(clientId, text, isPrivate, thread);
  }

  /** Sends the unsent messages the welcome found: RESEND_BURST at once, then one every RESEND_INTERVAL_MS. */
  private resendUnsent(clientIds: readonly string[]): void {
    this.clearOutbox();
    this.outbox = [...clientIds];
    this.drainOutbox(RESEND_BURST);
  }

  /** Sends up to `count` messages of the outbox (one gone or failed meanwhile is skipped) and schedules the next. */
  private drainOutbox(count = 1): void {
    clearTimeout(this.outboxTimer);
    this.outboxTimer = undefined;
    if (this.status !== 'open') {
      // The socket went: the next welcome sends what is still unsent.
      this.outbox = [];
      return;
    }
    let sentPrivately = false;
    while (count > 0 && this.outbox.length) {
      const clientId = this.outbox.shift()!;
      const entry = this.memory?.log.unconfirmed(clientId);
      if (entry?.state !== 'sending') continue;
      this.transmitNow(clientId, entry.message.text, !!entry.private, entry.message.threadId);
      sentPrivately ||= !!entry.private;
      count--;
    }
    if (this.outbox.length) this.outboxTimer = setTimeout(() => this.drainOutbox(), RESEND_INTERVAL_MS);
    // A private question counts as sent once it is handed to the socket (MessageLog.sentPrivately).
    if (sentPrivately) this.changed();
  }

  private clearOutbox(): void {
    clearTimeout(this.outboxTimer);
    this.outboxTimer = undefined;
    this.outbox = [];
  }

  /** Sends the member's message now; `thread` '' (or the main thread's id) leaves the thread to the server: the room's main one. */
  private transmitNow(clientId: string, text: string, isPrivate: boolean, thread: string): void {
    if (this.status !== 'open') return;
    const mainThreadId = this.memory?.mainThreadId ?? '';
    const threadId = thread && thread !== mainThreadId ? thread : undefined;
    if (isPrivate || ASK_PREFIX.test(text)) this.inProgress.questionOut(clientId);
    if (!isPrivate) {
      this.connection?.send({ type: 'say', text, clientId, threadId });
      return;
    }
    this.connection?.send({ type: 'ask', text, clientId, threadId, private: true });
    this.privateTraffic++;
    this.memory?.log.sentPrivately(clientId, mainThreadId);
  }

  private onFrame(frame: ServerMessage): void {
    const log = this.memory!.log;
    switch (frame.type) {
      case 'welcome': {
        // Every welcome renews the token (a later issue time, the same id): the newest is kept.
        saveIdentityToken(frame.you.token);
        this.you = { id: frame.you.id, name: frame.you.name };
        this.room = frame.room;
        this.members = frame.members;
        this.memberCount = frame.memberCount ?? frame.members.length;
        const memory = this.memory!;
        log.adopt({ id: frame.you.id, name: frame.you.name, kind: 'user' });
        // A seq below what the page holds: a wiped store, or a node behind the others, whose history
        // agrees with the page's and whose catch-up brings the rest (store-reset.ts). A history that
        // cannot say is kept as "behind" while the store is asked (reset-probe.ts).
        const verdict = judgeWelcome(frame, log);
        const serverReset = verdict === 'reset';
        // A reset settles a probe still asking; any other welcome leaves it asking (a flapping socket
        // would otherwise never hear an answer), and a reset it finds starts from this welcome.
        if (serverReset) this.probe.cancel();
        else this.probe.rebase(frame);
        if (verdict === 'unsure') this.askStore(frame, heldMessages(log), new Set(log.privateEntries().map((e) => e.key)));
        // Private entries an older page kept without a thread were asked in the main thread it knew.
        log.fileUnfiled(memory.mainThreadId || frame.threadId);
        // Another main thread: the old one was deleted (or the store wiped). What the member wrote in
        // the main view and is not sent yet goes to the new one, not to a thread the server refuses.
        if (memory.mainThreadId && memory.mainThreadId !== frame.threadId) log.toMainView(memory.mainThreadId);
        // A truncated rejoin left a gap before its history that paging back must start above, so it
        // starts afresh from that history too (what was held before the gap comes back by paging).
        if (!memory.joined || serverReset || memory.mainThreadId !== frame.threadId || frame.truncated) {
          // The room's data was reset: the private entries' places among its messages are gone too.
          if (serverReset) log.forgetPrivate(() => true);
          // Back after missing more than one replay carries, in any thread: every count is asked again.
          if (memory.joined) this.nav.threads.outdated(this.nav.threads.list.filter((t) => t.status === 'active').map((t) => t.id));
          startAfresh(memory, frame.history, frame.seq);
        } else if (verdict !== 'unsure') {
          // The threads of what was missed (the member's own acked messages too) count it: the next
          // thread list asks for their counts again, as the live messages were not counted.
          this.nav.threads.outdated(frame.history.filter((m) => m.seq > 0 && !log.hasSeq(m.id)).map((m) => m.threadId));
          // An unsure history lies wholly below what the page holds: merged, paging back would skip
          // the messages between it and the page's, so it is left to paging.
          for (const m of frame.history) log.receive(m);
        }
        memory.mainThreadId = frame.threadId;
        memory.joined = true;
        this.status = 'open';
        this.inProgress.replace(frame.pending ?? []);
        // Connection troubles are over; what the member should still read stays until dismissed.
        if (!KEEP_ON_REJOIN.has(this.notice?.code ?? '')) this.notice = null;
        if (frame.truncated) {
          this.notice = {
            code: 'HISTORY_TRUNCATED',
            level: 'info',
            message: 'You missed many messages while away; only the latest are shown. Load earlier messages to read back.',
          };
        }
        this.connection?.joined();
        this.sendForget();
        // A new socket: the server knows nothing of the member typing, so the next key is told at once.
        this.typingActive = false;
        this.lastTypingSent = 0;
        const unsent: string[] = [];
        for (const entry of log.unsent()) if (!this.takeTypedForget(entry)) unsent.push(entry.message.clientId!);
        this.resendUnsent(unsent);
        void this.nav.refresh();
        this.nav.fill();
        break;
      }
      case 'presence':
        this.members = frame.members;
        this.memberCount = frame.count ?? frame.members.length;
        break;
      case 'message': {
        const m = frame.message;
        if (this.commands.message(m)) return;
        // A thread operation someone ran (not stored, no clientId): the list and the moved messages follow.
        if (m.author.kind === 'system' && m.seq === 0 && !m.clientId) {
          void this.nav.refresh();
          break;
        }
        this.nav.threads.noteMessage(m.threadId, m.seq > 0 && !log.hasSeq(m.id), m.seq);
        const writtenIn = log.writtenIn(m);
        log.receive(m);
        if (writtenIn && writtenIn !== m.threadId) this.followOwnMessage(writtenIn, m.threadId);
        this.probe.noteArrival(m);
        this.typists.stop(m.author.id);
        if (m.author.kind === 'assistant') this.inProgress.finished([m.clientId]);
        // Another member's question: an answer first seen before it is not its answer (answers-in-progress.ts).
        else if (m.author.kind === 'user' && m.clientId && ASK_PREFIX.test(m.text)) this.inProgress.questionOut(m.clientId);
        // A command typed in the composer may have changed the threads.
        if (m.author.kind === 'system') void this.nav.refresh();
        break;
      }
      case 'ack':
        // Stored; its echo follows behind older messages the room is still sending.
        if (!log.stored(frame.clientId, frame.id)) return;
        break;
      case 'typing':
        if (frame.user.id !== this.you?.id) this.typists.note(frame.user, frame.active);
        break;
      case 'assistant.progress':
        this.inProgress.update(frame.id, (a) => ({ ...a, stage: frame.stage }));
        break;
      case 'assistant.delta':
        this.inProgress.update(frame.id, (a) => ({ ...a, stage: 'writing', text: a.text + frame.text }));
        break;
      case 'assistant.done': {
        // The stored answer has its own id; the id it streamed under comes back as its clientId.
        this.nav.threads.noteMessage(frame.message.threadId, frame.message.seq > 0 && !log.hasSeq(frame.message.id), frame.message.seq);
        // A private answer names the thread its question was asked in, which may have been merged
        // since: the store files a stored answer under the survivor, this one the page files there.
        const privateAnswer = frame.message.id.startsWith('private_');
        // Its exchange is remembered as it ends: a forget that went out before may have missed it.
        if (privateAnswer) this.privateTraffic++;
        log.receive(privateAnswer ? { ...frame.message, threadId: this.nav.filedUnder(frame.message.threadId) } : frame.message);
        this.probe.noteArrival(frame.message);
        this.inProgress.finished([frame.message.id, frame.message.clientId]);
        break;
      }
      case 'error':
        if (this.commands.error(frame.code, frame.message, frame.clientId, frame.retryAfterMs)) return;
        this.onError(frame.code, frame.message, frame.clientId);
        break;
      case 'warning':
        this.notice = noticeFor(frame.code, frame.message, 'warning');
        // A fusion's warning: the fused thread is new.
        void this.nav.refresh();
        break;
      case 'pong':
        return;
    }
    this.changed();
  }

  /**
   * Asks the store whether the messages the page `held` before `welcome` are still there, unless
   * a probe asks already (its answer serves this welcome too); the page meanwhile goes on as for a
   * node behind. Gone, the store was wiped: the private entries held before the first welcome that
   * could not say are forgotten, and the log starts afresh from the newest welcome's history and
   * what came since. Any other answer leaves everything as it is. Neither a newer welcome nor a
   * closed socket cancels the probe, only another room or a reset welcome (reset-probe.ts).
   */
  private askStore(welcome: WelcomeFrame, held: readonly HeldMessage[], privateBefore: ReadonlySet<string>): void {
    const memory = this.memory!;
    this.probe.start(this.roomId, held, welcome, (answer, fresh) => {
      if (answer !== 'gone' || this.memory !== memory) return;
      memory.log.forgetPrivate((e) => privateBefore.has(e.key));
      startAfresh(memory, [...fresh.history, ...fresh.arrived], fresh.seq);
      this.changed();
      void this.nav.refresh();
    });
  }

  private onError(code: string, message: string, clientId?: string): void {
    const entry = clientId ? this.memory!.log.unconfirmed(clientId) : undefined;
    const question = !!entry && (!!entry.private || ASK_PREFIX.test(entry.message.text));
    const notice = code === 'ERR_RATE_LIMITED' && question ? askRefusedNotice(message) : noticeFor(code, message);
    // A typed command refused as written: the reason under it is the answer, with no Retry (it
    // would be refused again) and no banner repeating it above the room.
    if (entry && !entry.private && entry.message.text.startsWith('/') && !question && REFUSED_AS_WRITTEN.has(code)) {
      this.memory!.log.fail(clientId!, notice.message, true);
      return;
    }
    // A message or question not taken (a command's ERR_THREAD_NOT_FOUND, above, may name its
    // argument; a private question already asked gets it when its thread goes mid-answer) written in
    // a thread that is gone (deleted; a merged one's messages go to the survivor): it would be refused
    // again, so no Retry and no banner, the reason under it, in the main view (its own is gone). One
    // written in the main view names no thread, so this is not it: that one was refused while the
    // room replaced its main thread, and Retry sends it to the new one.
    if (entry && entry.state !== 'sent' && code === 'ERR_THREAD_NOT_FOUND' && entry.message.threadId) {
      this.memory!.log.failInGoneThread(clientId!, THREAD_GONE);
      this.inProgress.failed(code, clientId);
      return;
    }
    // Its thread is archived and leads to no active one (a merged thread's messages go to the
    // survivor, followOwnMessage): the same, but the thread is still there to show it in.
    if (entry && entry.state !== 'sent' && code === 'ERR_THREAD_ARCHIVED' && entry.message.threadId) {
      this.memory!.log.fail(clientId!, THREAD_ARCHIVED, true);
      this.inProgress.failed(code, clientId);
      return;
    }
    if (clientId) this.memory!.log.fail(clientId, notice.message);
    // An assistant failure ends the answer it concerns, not the others still being written.
    this.inProgress.failed(code, clientId);
    this.notice = notice;
  }

  /**
   * The server filed the member's own message in `threadId`, not in `writtenIn`, the thread it was
   * written in: that one was merged (by someone else, or before the page heard of it) and the
   * message went to the survivor. While the member still has `writtenIn` open, the view follows the
   * message there, and says why: left on the archived thread, the message vanished from it.
   */
  private followOwnMessage(writtenIn: string, threadId: string): void {
    if (this.nav.threadId !== writtenIn || !threadId) return;
    this.notice = this.mergedNotice(writtenIn, threadId, 'your message went there, and so does this view.');
    this.nav.select(threadId);
  }

  /** Why the view left `absorbedId` for `survivorId` (`then`: what followed the merge there). */
  private mergedNotice(absorbedId: string, survivorId: string, then: string): Notice {
    const titleOf = (id: string) => this.nav.threads.byId(id)?.title;
    const from = titleOf(absorbedId);
    const to = titleOf(survivorId) ?? (survivorId === this.nav.mainThreadId ? 'Main' : undefined);
    return {
      code: 'THREAD_FOLLOWED',
      level: 'info',
      message: `${from ? `“${from}”` : 'The thread you had open'} was merged into ${to ? `“${to}”` : 'another thread'}: ${then}`,
    };
  }

  private onClosed(code: number): 'retry' | 'now' | 'stop' {
    // A probe asking goes on: its answer is the store's, whichever socket is open (reset-probe.ts).
    // The `error` frame before a 4401 said whether the token was bad or had expired: the notice shows it still.
    const { notice, retry } = closeNotice(code, this.notice?.code);
    if (code === CloseCode.BAD_TOKEN) saveIdentityToken(null);
    this.commands.abandonAll('The connection to the room closed before the answer came.');
    // What waited its turn is still unsent: the next welcome sends it.
    this.clearOutbox();
    if (retry === 'stop') this.fatal = notice;
    else if (notice) this.notice = notice;
    this.members = [];
    this.memberCount = 0;
    this.host.requestUpdate();
    return retry;
  }

  /**
   * Re-renders, and schedules the room's copy when what it holds changed: most frames (presence,
   * typing, an answer's words) change nothing of it, and each used to write the whole copy again
   * and, arriving faster than CACHE_SAVE_DELAY_MS, to put off a save that was due.
   */
  private changed(): void {
    this.host.requestUpdate();
    const memory = this.memory;
    if (!memory || !this.roomId) return;
    savePrivate(this.roomId, memory);
    const mark = copyMark(memory);
    if (mark === this.savedMark) return;
    this.savedMark = mark;
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.saveNow(), CACHE_SAVE_DELAY_MS);
  }

  /**
   * Writes the room's copy now. It may run as the page unloads, where a throw is lost and ends the
   * handler: saveMemory builds the whole copy before one setItem (a refused write keeps the previous
   * copy whole), and nothing else may escape.
   */
  private saveNow(): void {
    clearTimeout(this.saveTimer);
    try {
      if (this.memory && this.roomId) saveMemory(this.roomId, this.memory);
    } catch {
      // The copy is a convenience: a page that cannot write it goes on, or goes.
    }
  }
}
