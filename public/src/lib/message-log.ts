/**
 * The messages of one room as the client holds them: confirmed messages from the server (keyed by
 * id, ordered by seq) plus the member's own messages still being sent (keyed by clientId).
 * Every path that adds a message goes through here, so a message seen twice — an echo, a replay
 * after reconnect, a cached copy — is shown once.
 */
import type { Author, Message } from '../../../src/protocol/messages.js';

export type EntryState = 'sent' | 'sending' | 'failed';

export interface LogEntry {
  /** Stable render key: `c:<clientId>` for the member's own messages, `m:<id>` otherwise. */
  key: string;
  message: Message;
  state: EntryState;
  /** Why a message failed to send. */
  error?: string;
  /**
   * Where a confirmed message sorts: its seq, or for a message without one (a command's reply, a
   * private answer: seq 0) just after the newest message known when it arrived. A failed message
   * keeps the place it had when it failed: just after the newest message known then.
   */
  order?: number;
  /** A private question (an `ask` frame with `private: true`): never posted, so never echoed. */
  private?: boolean;
  /** A private question read back after a reload whose answer never came: the reload ended the ask. */
  unanswered?: boolean;
  /** A failed command the server refused as written (a typo, a missing id): sending it again would be refused again. */
  final?: boolean;
}

/** A confirmed private question (never echoed, so it has no id) or a private answer (`private_…` id): private-asks.ts keeps them. */
export function isPrivateEntry(entry: LogEntry): boolean {
  return entry.state === 'sent' && (!!entry.private || entry.message.id.startsWith('private_'));
}

/** Most messages kept in memory per room; the oldest confirmed ones go first. */
export const MAX_LOG_ENTRIES = 500;
/** Most messages the member may gather by paging back ("Load earlier messages"); once they have, new messages trim to this too. */
export const MAX_SCROLLBACK_ENTRIES = 2_000;
/** Most confirmed messages written to sessionStorage per room. */
export const MAX_CACHED_ENTRIES = 200;

interface Snapshot {
  v: 1;
  entries: LogEntry[];
}

export class MessageLog {
  private readonly byKey = new Map<string, LogEntry>();
  private readonly keyById = new Map<string, string>();
  /** The member's own entries (`c:` keys) only: every member sees every clientId in the broadcasts. */
  private readonly keyByClientId = new Map<string, string>();
  private sorted: LogEntry[] | null = [];
  /** The member paged back: the log may hold MAX_SCROLLBACK_ENTRIES, so new messages do not trim away what they loaded. */
  private scrollback = false;
  private replaced = 0;
  private changes = 0;

  /** How many times the server's history replaced the log (resetTo): a page asked for before the last one belongs to none of it. */
  get resets(): number {
    return this.replaced;
  }

  /** How many times an entry was added, replaced or removed: unchanged, the log holds what it held. */
  get version(): number {
    return this.changes;
  }

  /**
   * All entries: confirmed by seq with failed ones where they failed, then those still sending in
   * the order they were written. A new array after each change.
   */
  get entries(): readonly LogEntry[] {
    this.sorted ??= [...this.byKey.values()].sort(compareEntries);
    return this.sorted;
  }

  /** Lowest confirmed seq, 0 when none: where paging back continues from. */
  get oldestSeq(): number {
    let min = 0;
    for (const e of this.byKey.values()) if (e.state === 'sent' && e.message.seq > 0 && (min === 0 || e.message.seq < min)) min = e.message.seq;
    return min;
  }

  /**
   * Adds a page of older messages the member asked for. They are kept even past MAX_LOG_ENTRIES
   * (trimming would drop exactly them), up to MAX_SCROLLBACK_ENTRIES. Returns false when the log
   * is that full and took nothing. A message held already is not added again; one of the member's
   * own known only by its `ack` (no seq yet: its echo is still to come) takes its seq and place.
   */
  receiveOlder(messages: readonly Message[]): boolean {
    if (this.byKey.size >= MAX_SCROLLBACK_ENTRIES) return false;
    this.scrollback = true;
    for (const message of messages) {
      if (message.seq <= 0) continue;
      const known = this.keyById.get(message.id);
      const entry = known ? this.byKey.get(known) : undefined;
      if (entry?.state === 'sent' && entry.message.seq === 0) this.put({ ...entry, message, order: message.seq });
      if (known) continue;
      this.put({ key: `m:${message.id}`, message, state: 'sent', order: message.seq });
    }
    return true;
  }

  /** Highest confirmed seq, 0 when none. */
  get lastSeq(): number {
    let max = 0;
    for (const e of this.byKey.values()) if (e.state === 'sent' && e.message.seq > max) max = e.message.seq;
    return max;
  }

  get size(): number {
    return this.byKey.size;
  }

  /**
   * Adds or updates a message from the server. Returns false when nothing changed. A clientId
   * matches only the member's own unconfirmed message written by the same author (or the reply to
   * their slash command): anyone may send a message with a clientId copied from a broadcast.
   */
  receive(message: Message): boolean {
    let known = this.keyById.get(message.id) ?? this.ownPendingKey(message);
    const entry = known ? this.byKey.get(known) : undefined;
    if (entry && message.author.kind === 'system' && entry.state !== 'sent') {
      // A slash command is answered, not stored: the reply takes the command's place.
      this.remove(entry);
      known = undefined;
    } else if (entry) {
      const same = entry.message.seq === message.seq && entry.message.text === message.text && entry.message.threadId === message.threadId;
      if (entry.state === 'sent' && same) return false;
    }
    const order = message.seq > 0 ? message.seq : this.lastSeq + 0.5;
    if (message.seq > 0) this.dropSeqClash(message, known);
    this.put({ key: known ?? `m:${message.id}`, message, state: 'sent', order });
    if (message.author.kind === 'assistant' && message.id.startsWith('private_')) this.answered(message.threadId);
    this.trim();
    return true;
  }

  /**
   * A private answer came in `threadId`: the newest question there marked unanswered (brought back
   * by a reload while its answer was being written, which the server went on with) has it after all.
   */
  private answered(threadId: string): void {
    const waiting = this.privateEntries()
      .filter((e) => e.unanswered && e.message.threadId === threadId)
      .at(-1);
    if (waiting) this.put({ ...waiting, unanswered: false });
  }

  /**
   * The thread the member wrote `message` in ('' for the main view), when `message` is the server's
   * first copy of one of their own (still sending or failed, or known only by its `ack`); undefined
   * otherwise. The server may file it elsewhere: a thread merged meanwhile sends it to the survivor.
   */
  writtenIn(message: Message): string | undefined {
    const key = this.keyById.get(message.id) ?? this.ownPendingKey(message);
    const entry = key?.startsWith('c:') ? this.byKey.get(key) : undefined;
    if (!entry || entry.private || (entry.state === 'sent' && entry.message.seq > 0)) return undefined;
    return entry.message.author.id === message.author.id ? entry.message.threadId : undefined;
  }

  /** A confirmed message with this id is held. */
  has(id: string): boolean {
    return this.keyById.has(id);
  }

  /**
   * A message with this id is held with its seq: not new when it comes again. One of the member's
   * own known only by its `ack` is held without one, and its echo (or a rejoin's history) is its
   * first copy from the room: the thread's count has not counted it yet.
   */
  hasSeq(id: string): boolean {
    const key = this.keyById.get(id);
    return (key ? (this.byKey.get(key)?.message.seq ?? 0) : 0) > 0;
  }

  /**
   * Files held messages under another thread (a split or merge moved them on the server).
   * Returns true when one of them changed.
   */
  moveToThread(ids: Iterable<string>, threadId: string): boolean {
    let moved = false;
    for (const id of ids) {
      const key = this.keyById.get(id);
      const entry = key ? this.byKey.get(key) : undefined;
      if (!entry || entry.message.threadId === threadId) continue;
      this.put({ ...entry, message: { ...entry.message, threadId } });
      moved = true;
    }
    return moved;
  }

  /**
   * Writes the member's unconfirmed messages as `author`, the identity the latest `welcome` gave:
   * messages written before it (or under an identity the server since replaced) are then
   * recognised in the server's echo.
   */
  adopt(author: Author): void {
    for (const entry of [...this.byKey.values()]) {
      if (entry.state === 'sent' || !entry.key.startsWith('c:')) continue;
      if (entry.message.author.id === author.id && entry.message.author.name === author.name) continue;
      this.put({ ...entry, message: { ...entry.message, author } });
    }
  }

  /** Records a message the member is sending; it shows as "sending" until the server echoes it. */
  addLocal(clientId: string, text: string, author: Author, threadId: string, roomId: string, isPrivate = false): LogEntry {
    const message: Message = { id: '', seq: 0, roomId, threadId, author, text, ts: new Date().toISOString(), clientId };
    const entry: LogEntry = { key: `c:${clientId}`, message, state: 'sending', ...(isPrivate ? { private: true } : {}) };
    this.put(entry);
    return entry;
  }

  /**
   * A private question went out: the server echoes none, so it counts as sent once handed to an open
   * socket. One written in the main view ('' thread) is filed under `mainThreadId`, the thread the
   * server took it to: nothing else will ever say, and its answer comes filed there.
   */
  sentPrivately(clientId: string, mainThreadId = ''): void {
    const key = this.keyByClientId.get(clientId);
    const entry = key ? this.byKey.get(key) : undefined;
    if (!entry?.private || entry.state === 'sent') return;
    const message = entry.message.threadId || !mainThreadId ? entry.message : { ...entry.message, threadId: mainThreadId };
    this.put({ ...entry, message, state: 'sent', order: this.lastSeq + 0.5 });
  }

  /**
   * The room's main thread `formerMain` was replaced (deleted, or the store wiped): the member's
   * messages not sent yet that were filed under it were written in the main view, so they go to the
   * room's main thread, whichever it is when they are sent ('' thread). Returns true when one moved.
   */
  toMainView(formerMain: string): boolean {
    let moved = false;
    for (const entry of [...this.byKey.values()]) {
      if (!formerMain || entry.message.threadId !== formerMain || !entry.key.startsWith('c:')) continue;
      if (entry.state === 'sent' || entry.final) continue;
      this.put({ ...entry, message: { ...entry.message, threadId: '' } });
      moved = true;
    }
    return moved;
  }

  /**
   * Files private entries with no thread (kept by a page that filed private questions only once
   * sent, under '') under `threadId`, the main thread they were asked in: unfiled, they showed under
   * whichever thread was main later, and were never forgotten with their own.
   */
  fileUnfiled(threadId: string): boolean {
    if (!threadId) return false;
    const unfiled = this.privateEntries().filter((e) => !e.message.threadId);
    for (const entry of unfiled) this.put({ ...entry, message: { ...entry.message, threadId } });
    return unfiled.length > 0;
  }

  /**
   * Files the member's private questions and answers (sent or not) under the thread their own was
   * merged into, as `survivorOf` names it (undefined for a thread not merged): the merge moved the
   * thread's messages there on the server, which never had these. Returns true when one moved.
   */
  followMergesPrivately(survivorOf: (threadId: string) => string | undefined): boolean {
    let moved = false;
    for (const entry of [...this.byKey.values()]) {
      if (!entry.private && !isPrivateEntry(entry)) continue;
      const survivor = entry.message.threadId ? survivorOf(entry.message.threadId) : undefined;
      if (!survivor || survivor === entry.message.threadId) continue;
      this.put({ ...entry, message: { ...entry.message, threadId: survivor } });
      moved = true;
    }
    return moved;
  }

  /**
   * The member's own message with this clientId while it is not confirmed; undefined otherwise. A
   * private question is never confirmed (nothing echoes it): the server may still refuse it.
   */
  unconfirmed(clientId: string): LogEntry | undefined {
    const key = this.keyByClientId.get(clientId);
    const entry = key ? this.byKey.get(key) : undefined;
    return entry && (entry.state !== 'sent' || entry.private) ? entry : undefined;
  }

  /**
   * The server stored the member's message as `id` while its echo waits behind older messages the
   * room is still sending (an `ack`): it shows as sent, after what is known, and its echo (the same
   * id) gives it its seq and place. Until then it has no seq, so a reconnect still asks for
   * everything after the newest message received. Returns false when no such message is unconfirmed.
   */
  stored(clientId: string, id: string): boolean {
    const entry = this.unconfirmed(clientId);
    if (!entry || entry.private || !id || this.keyById.has(id)) return false;
    this.byKey.delete(entry.key);
    this.put({ key: entry.key, message: { ...entry.message, id }, state: 'sent', order: this.lastSeq + 0.5 });
    return true;
  }

  /** Marks an unconfirmed message (or a private question, see `unconfirmed`) as failed, with the reason shown next to it. */
  fail(clientId: string, error: string, final = false): boolean {
    const entry = this.unconfirmed(clientId);
    if (!entry) return false;
    // It stays where it is now (the end, or a private question's place), not below what others write next.
    const order = entry.state === 'sent' ? entry.order : this.lastSeq + 0.5;
    // Entries sharing a place keep the order they took it in (the map's), and this one takes it now.
    if (entry.state !== 'sent') this.byKey.delete(entry.key);
    this.put({ ...entry, state: 'failed', error, order, ...(final ? { final: true } : {}) });
    return true;
  }

  /**
   * Marks an unconfirmed message as failed for good, filed in the main view (''): the thread it was
   * written in is gone, so no view of it is left to show it in, and sending it anywhere is the
   * member's choice.
   */
  failInGoneThread(clientId: string, error: string): boolean {
    if (!this.fail(clientId, error, true)) return false;
    const entry = this.byKey.get(this.keyByClientId.get(clientId)!)!;
    this.put({ ...entry, message: { ...entry.message, threadId: '' } });
    return true;
  }

  /** Puts a failed message back to "sending" for a retry; returns it, or undefined. */
  retry(clientId: string): LogEntry | undefined {
    const key = this.keyByClientId.get(clientId);
    const entry = key ? this.byKey.get(key) : undefined;
    if (!entry || entry.state !== 'failed') return undefined;
    const next: LogEntry = { key: entry.key, message: entry.message, state: 'sending', ...(entry.private ? { private: true } : {}) };
    this.put(next);
    return next;
  }

  /** Removes an unconfirmed message (the member gave up on it). */
  discard(clientId: string): void {
    const key = this.keyByClientId.get(clientId);
    const entry = key ? this.byKey.get(key) : undefined;
    if (!entry || entry.state === 'sent') return;
    this.remove(entry);
  }

  /** Messages written but not yet confirmed, in order: what to send again after a reconnect. */
  unsent(): LogEntry[] {
    return this.entries.filter((e) => e.state === 'sending');
  }

  /**
   * Makes the server's history the truth: confirmed messages the client held are replaced by
   * `history`; the member's own unconfirmed messages stay, and so do their private questions and
   * answers, which the server never had.
   */
  resetTo(history: readonly Message[]): void {
    this.scrollback = false;
    this.replaced++;
    for (const entry of [...this.byKey.values()]) if (entry.state === 'sent' && !isPrivateEntry(entry)) this.remove(entry);
    for (const m of history) this.receive(m);
  }

  /** The member's private questions and answers, in the conversation's order (what private-asks.ts keeps). */
  privateEntries(): LogEntry[] {
    return this.entries.filter(isPrivateEntry);
  }

  /** Puts back private entries kept from before a reload; an entry the log holds already stays as it is. */
  restorePrivate(entries: readonly LogEntry[]): void {
    for (const entry of entries) if (!this.byKey.has(entry.key)) this.put({ ...entry, private: true });
  }

  /** Removes the private entries `drop` picks; returns true when one went. */
  forgetPrivate(drop: (entry: LogEntry) => boolean): boolean {
    const gone = this.privateEntries().filter(drop);
    for (const entry of gone) this.remove(entry);
    return gone.length > 0;
  }

  /** A JSON-able copy for sessionStorage; private entries are kept apart (private-asks.ts). */
  snapshot(): Snapshot {
    const confirmed = this.entries.filter((e) => e.state === 'sent' && !isPrivateEntry(e)).slice(-MAX_CACHED_ENTRIES);
    return { v: 1, entries: [...confirmed, ...this.entries.filter((e) => e.state !== 'sent')] };
  }

  /** Rebuilds a log from `snapshot()` output; anything malformed gives an empty log. */
  static restore(data: unknown): MessageLog {
    const log = new MessageLog();
    const snap = data as Snapshot | null;
    if (!snap || snap.v !== 1 || !Array.isArray(snap.entries)) return log;
    for (const e of snap.entries) {
      if (!isEntry(e)) continue;
      log.put({
        key: e.key,
        message: e.message,
        state: e.state,
        error: e.error,
        // A failed entry from a snapshot written before failed ones kept a place goes last, as it showed then.
        order: e.state === 'sending' || (e.state === 'failed' && typeof e.order !== 'number') ? undefined : (e.order ?? e.message.seq),
        ...(e.private === true ? { private: true } : {}),
        // A command refused as written stays without Retry after a reload.
        ...(e.final === true && e.state === 'failed' ? { final: true } : {}),
      });
    }
    return log;
  }

  private put(entry: LogEntry): void {
    const old = this.byKey.get(entry.key);
    if (old?.message.id) this.keyById.delete(old.message.id);
    this.byKey.set(entry.key, entry);
    if (entry.message.id) this.keyById.set(entry.message.id, entry.key);
    if (entry.message.clientId && entry.key.startsWith('c:')) this.keyByClientId.set(entry.message.clientId, entry.key);
    this.sorted = null;
    this.changes++;
  }

  /** The key of the member's own unconfirmed message that `message` is the server's answer to. */
  private ownPendingKey(message: Message): string | undefined {
    const key = message.clientId ? this.keyByClientId.get(message.clientId) : undefined;
    const entry = key ? this.byKey.get(key) : undefined;
    if (!entry || entry.state === 'sent') return undefined;
    return message.author.kind === 'system' || message.author.id === entry.message.author.id ? key : undefined;
  }

  private remove(entry: LogEntry): void {
    this.byKey.delete(entry.key);
    if (entry.message.id) this.keyById.delete(entry.message.id);
    if (entry.message.clientId && this.keyByClientId.get(entry.message.clientId) === entry.key) {
      this.keyByClientId.delete(entry.message.clientId);
    }
    this.sorted = null;
    this.changes++;
  }

  /** A different message already holding this seq is stale (e.g. the server's data was reset). */
  private dropSeqClash(message: Message, keep: string | undefined): void {
    for (const entry of this.byKey.values()) {
      if (entry.key !== keep && entry.state === 'sent' && entry.message.seq === message.seq && entry.message.id !== message.id) {
        this.remove(entry);
      }
    }
  }

  private trim(): void {
    const cap = this.scrollback ? MAX_SCROLLBACK_ENTRIES : MAX_LOG_ENTRIES;
    const excess = this.byKey.size - cap;
    if (excess <= 0) return;
    // Private entries exist nowhere else to fetch again; private-asks.ts caps them on its own.
    const trimmable = (e: LogEntry) => e.state === 'sent' && !isPrivateEntry(e);
    if (excess > TRIM_BY_SCAN) {
      for (const entry of this.entries.filter(trimmable).slice(0, excess)) this.remove(entry);
      return;
    }
    // A live message past a full log is one over: the oldest is found without sorting the log (a
    // catch-up of hundreds into a scrolled-back log sorted 2,000 entries for each).
    for (let left = excess; left > 0; left--) {
      let oldest: LogEntry | undefined;
      for (const e of this.byKey.values()) if (trimmable(e) && (!oldest || compareEntries(e, oldest) < 0)) oldest = e;
      if (!oldest) return;
      this.remove(oldest);
    }
  }
}

/** Past this many entries over the cap at once, trim sorts the log rather than scanning it for each. */
const TRIM_BY_SCAN = 8;

/** Where an entry sorts: a confirmed or failed one by its place, one still sending after all of them. */
function placeOf(e: LogEntry): number {
  if (e.state === 'sending' || (e.state === 'failed' && e.order === undefined)) return Infinity;
  return e.order ?? e.message.seq;
}

/** Entries sharing a place stay in the order they took it (a stable sort); those still sending go by when they were written. */
function compareEntries(a: LogEntry, b: LogEntry): number {
  const aPlace = placeOf(a);
  const bPlace = placeOf(b);
  if (aPlace !== bPlace) return aPlace < bPlace ? -1 : 1;
  if (aPlace !== Infinity) return 0;
  return a.message.ts < b.message.ts ? -1 : a.message.ts > b.message.ts ? 1 : 0;
}

function isEntry(e: unknown): e is LogEntry {
  const x = e as LogEntry;
  return (
    !!x &&
    typeof x.key === 'string' &&
    (x.state === 'sent' || x.state === 'sending' || x.state === 'failed') &&
    !!x.message &&
    typeof x.message.text === 'string' &&
    typeof x.message.seq === 'number' &&
    typeof x.message.id === 'string' &&
    !!x.message.author &&
    typeof x.message.author.name === 'string'
  );
}
