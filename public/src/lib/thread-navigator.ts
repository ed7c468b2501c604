/**
 * Which thread of the room the member has open, and what goes with it: the open thread's
 * messages and older pages, the thread list kept current (RoomThreads), and the thread commands
 * the page sends for the member (new thread, merge, split), each answered to the control that
 * asked. RoomController owns the socket and hands this class the room's memory and a way to send
 * a command.
 */
import type { CommandReply } from './command-replies.js';
import { MAX_SCROLLBACK_ENTRIES } from './message-log.js';
import type { RoomMemory } from './room-memory.js';
import { threadsOf, type RoomThreads, type ThreadMerge } from './room-threads.js';
import { entriesOf, hasOlder, loadOlderPage, openThread, regroup, wantsFirstPage } from './thread-paging.js';
import { mergeCommand, newThreadCommand, splitCommand, type SplitLock, type SplitPart } from './threads-api.js';
import { PrivateThreads } from './private-threads.js';
import { lookUpUnlisted } from './unlisted-thread.js';

/** What the navigator needs from the room's controller. */
export interface NavigatorHost {
  /** Sends a slash command in the open thread and resolves with its answer. */
  command(text: string, threadId: string): Promise<CommandReply>;
  /** The room's state changed: re-render and save. */
  changed(): void;
  /** A page of history could not be fetched. */
  failed(code: string, message: string): void;
  /** The store's list names another main thread: `formerMain` was deleted while the page stayed connected. */
  mainReplaced(formerMain: string): void;
  /** The open thread, `absorbedId`, was merged into `survivorId`, which the view now shows. */
  followedMerge(absorbedId: string, survivorId: string): void;
}

export class ThreadNavigator {
  /** The room's threads: list, counts, suggestions. */
  threads: RoomThreads = threadsOf('');
  private memory: RoomMemory | null = null;
  /**
   * The page of older messages being fetched, by thread: each thread pages on its own, and whoever
   * asks for a thread's page while one is on its way ("Load earlier messages", the find bar, a
   * followed source) waits for that one rather than being told there was nothing.
   */
  private readonly loading = new Map<string, Promise<void>>();
  /** The thread the member's own merge from the page absorbs, while it runs: the view leaves it without a notice. */
  private merging = '';
  /** The open thread the page restored that the room's first list left out (cut), until the store says where it leads. */
  private unlisted = '';
  /** What became of the threads of private entries that the room's list cannot say. */
  private readonly privateThreads = new PrivateThreads();

  constructor(private readonly host: NavigatorHost) {}

  /** The thread the member has open (shown, and written to); '' before the room's first welcome. */
  get threadId(): string {
    return this.memory ? openThread(this.memory) : '';
  }

  get mainThreadId(): string {
    return this.memory?.mainThreadId ?? '';
  }

  /** The open thread's messages. */
  get messages() {
    return this.memory ? entriesOf(this.memory, this.threadId) : [];
  }

  /** How many times the server's history replaced the room's log (a reset welcome): what was held before is gone. */
  get resets(): number {
    return this.memory?.log.resets ?? 0;
  }

  /** A page of the open thread's older messages is being fetched (another thread's fetch does not count). */
  get loadingOlder(): boolean {
    return this.loading.has(this.threadId);
  }

  /** The room's log holds as many messages as paging back may gather (MAX_SCROLLBACK_ENTRIES): no older page is taken. */
  get full(): boolean {
    return !!this.memory && this.memory.log.size >= MAX_SCROLLBACK_ENTRIES;
  }

  /** The open thread has older messages on the server than the oldest one held. */
  get hasOlder(): boolean {
    return this.memory ? hasOlder(this.memory, this.threadId) : false;
  }

  /** Follows the room the controller opened (null when it closed one). */
  attach(roomId: string, memory: RoomMemory | null, onChange: () => void): void {
    this.threads.onChange = () => {};
    this.memory = memory;
    this.threads = threadsOf(roomId);
    this.unlisted = '';
    if (memory) this.threads.onChange = onChange;
  }

  /**
   * The thread to file a message of `threadId` under that the server does not file itself (a
   * private answer): the active thread the list says `threadId` was merged into, else `threadId`.
   */
  filedUnder(threadId: string): string {
    return this.threads.mergedSurvivorOf(threadId) ?? threadId;
  }

  /** Opens another thread of the room: its messages show, and what is written goes to it. */
  select(threadId: string): void {
    const memory = this.memory;
    if (!memory || threadId === this.threadId) return;
    memory.threadId = threadId === memory.mainThreadId ? '' : threadId;
    this.unlisted = '';
    this.host.changed();
    void this.refresh();
    this.fill();
  }

  /**
   * Fetches the open thread's page of messages before the oldest one held; resolves once it is in
   * the log. While that thread's page is on its way, resolves with that same fetch.
   */
  loadOlder(): Promise<void> {
    const memory = this.memory;
    const threadId = this.threadId;
    const inFlight = this.loading.get(threadId);
    if (inFlight) return inFlight;
    if (!memory || !this.hasOlder) return Promise.resolve();
    const page = this.fetchOlder(memory, threadId);
    this.loading.set(threadId, page);
    this.host.changed();
    return page;
  }

  private async fetchOlder(memory: RoomMemory, threadId: string): Promise<void> {
    try {
      await loadOlderPage(memory, threadId);
    } catch (err) {
      if (this.memory === memory) this.host.failed((err as { code?: string }).code ?? 'ERR_NETWORK', (err as Error).message);
    } finally {
      this.loading.delete(threadId);
      // A room closed meanwhile has nothing to show or save: its page went into its memory, kept for its return.
      if (this.memory === memory) this.host.changed();
    }
  }

  /**
   * Fetches the thread list again; files messages a split or merge moved under their new thread,
   * and goes back to the main thread when the open one is gone.
   */
  async refresh(): Promise<void> {
    const memory = this.memory;
    const threads = this.threads;
    if (!memory || !threads.roomId) return;
    // The list is fetched after this call (a run under way is followed by another, not shared): it is
    // as new as the main thread the page knows now, unless a welcome changes that meanwhile.
    const mainBefore = memory.mainThreadId;
    const openBefore = memory.threadId;
    try {
      const { regrouped, merged, first } = await threads.refresh(this.threadId);
      const moved = await Promise.all(regrouped.map((id) => regroup(memory, id).catch(() => false)));
      if (memory !== this.memory) return;
      // The first list is the page's first word on the thread it restored; one left out of a cut list is asked about.
      const restored = first ? memory.threadId : '';
      if (restored && !threads.byId(restored) && !threads.complete) this.unlisted = restored;
      const resolved = await this.lookUpRestored(memory);
      if (memory !== this.memory) return;
      // The restored thread still to be asked about is lookUpRestored's, at the next refresh.
      const privateIds = privateThreadIds(memory);
      privateIds.delete(this.unlisted);
      const found = await this.privateThreads.check(threads, privateIds);
      if (memory !== this.memory) return;
      const followed = this.followMerge(memory, [...merged, ...found.merged], restored || resolved);
      const refiled = memory.log.followMergesPrivately((id) => threads.mergedSurvivorOf(id));
      // A list fetched before a welcome named the main thread is older than that: it judges no main thread.
      const current = memory.mainThreadId === mainBefore;
      const replaced = current && this.followMain(memory);
      // The open thread missing from the list was deleted; one the store is still to be asked about stays open meanwhile.
      if (memory.threadId && memory.threadId !== this.unlisted && !threads.byId(memory.threadId)) memory.threadId = '';
      // The entries of deleted threads go (a deleted main thread's too, once a welcome names another).
      const { mainThreadId } = memory;
      const forgot = current && !!mainThreadId && memory.log.forgetPrivate((e) => e.message.threadId !== mainThreadId && found.gone.has(e.message.threadId));
      if (moved.some(Boolean) || forgot || replaced || followed || refiled || memory.threadId !== openBefore) this.host.changed();
      this.fill();
    } catch {
      // The list stays as it was; the next event fetches it again.
    }
  }

  /**
   * Asks the store where the restored open thread the room's first list left out leads
   * (unlisted-thread.ts), and tells the list what it said, so the thread and what it was merged
   * into are known by id: followMerge then opens an active survivor as for a listed thread, and
   * the private entries filed under it follow. A thread not merged stays open (an archived one, as
   * one opened from the list does); one the store does not have leaves the view on the main
   * thread. Without an answer (a network failure) the view stays where it is and the next refresh
   * asks again. Returns the thread's id once the store answered, else ''.
   */
  private async lookUpRestored(memory: RoomMemory): Promise<string> {
    const id = this.unlisted;
    if (!id) return '';
    const found = await lookUpUnlisted(id, (t) => this.threads.byId(t));
    // The member opened another thread meanwhile, or another room: what was asked no longer matters.
    if (memory !== this.memory || this.unlisted !== id || found.kind === 'unknown') return '';
    this.unlisted = '';
    if (found.kind === 'gone') {
      if (memory.threadId === id) memory.threadId = '';
      this.privateThreads.noteGone(id);
      return '';
    }
    this.threads.noteUnlisted(found.chain);
    return id;
  }

  /**
   * Takes the list's main thread as the room's when the one the page knows is gone from the list: it
   * was deleted and the room made a new one (the room is told of the deletion, and fetches the list
   * on it), and the page must show and send to the new one now, not from its next welcome. Only the
   * store's list decides, never a list that still names the page's main thread.
   */
  private followMain(memory: RoomMemory): boolean {
    const formerMain = memory.mainThreadId;
    const main = this.threads.list.find((t) => t.main && t.status === 'active');
    if (!formerMain || !main || main.id === formerMain || this.threads.byId(formerMain)) return false;
    memory.mainThreadId = main.id;
    this.host.mainReplaced(formerMain);
    return true;
  }

  /**
   * Opens the survivor when this refresh is how the page heard that the open thread was merged (the
   * room's members are told of a merge, and fetch the list on it): the merge moved the thread's
   * messages there, and what is written goes there, so the view left on the emptied shell showed
   * nothing until the member sent a message. The room's `first` list does the same for a merged
   * thread the page restored (a reload, sessionStorage): the page was not there to hear the merge.
   * After that, only a merge heard while the thread is open moves the view: an archived thread the
   * member opens from the list stays open. The member's own merge of it (from the page) moves the
   * view without a notice. `restored`: the thread the page restored, when this refresh is the
   * page's first word on it (the first list, or the store's answer about one that list left out).
   */
  private followMerge(memory: RoomMemory, merged: readonly ThreadMerge[], restored: string): boolean {
    const open = memory.threadId;
    const restoredShell = !!restored && restored === open && !!this.threads.byId(open)?.mergedInto;
    if (!open || !(restoredShell || merged.some((m) => m.absorbedId === open))) return false;
    const survivor = this.threads.survivorOf(open);
    if (!survivor) return false;
    memory.threadId = survivor.id === memory.mainThreadId ? '' : survivor.id;
    // The member who merged it needs no telling: the merge's reply says it.
    if (open !== this.merging) this.host.followedMerge(open, survivor.id);
    return true;
  }

  /** The open thread gets a page at once when it shows nothing yet or was never paged (see wantsFirstPage). */
  fill(): void {
    if (this.memory && this.threadId && wantsFirstPage(this.memory, this.threadId)) void this.loadOlder();
  }

  /** `/thread new <title>`; once the new thread is listed, it is opened. */
  async createThread(title: string): Promise<CommandReply> {
    const before = new Set(this.threads.list.map((t) => t.id));
    const reply = await this.run(newThreadCommand(title));
    if (reply.ok) {
      const wanted = title.replace(/\s+/g, ' ').trim();
      const fresh = this.threads.list.filter((t) => !before.has(t.id));
      const created = fresh.find((t) => t.title === wanted) ?? fresh.find((t) => t.origin === 'original');
      if (created) {
        this.select(created.id);
        // The server's reply names the thread's id, which is of no use to read (a phone spent two lines on it).
        return { ok: true, text: `Started thread “${created.title}”.` };
      }
    }
    return reply;
  }

  /** `/merge <survivor> <absorbed>`; the survivor is opened when the absorbed thread was. */
  async merge(survivorId: string, absorbedId: string): Promise<CommandReply> {
    this.merging = absorbedId;
    let reply: CommandReply;
    try {
      reply = await this.run(mergeCommand(survivorId, absorbedId));
    } finally {
      this.merging = '';
    }
    if (reply.ok && this.threadId === absorbedId) this.select(survivorId);
    return reply;
  }

  /** `/split <threadId> confirm …`: the parts become new split-locked threads. */
  async split(threadId: string, parts: readonly SplitPart[], lock: SplitLock): Promise<CommandReply> {
    let text: string;
    try {
      text = splitCommand(threadId, parts, lock);
    } catch (err) {
      return { ok: false, code: 'ERR_BAD_MESSAGE', message: (err as Error).message };
    }
    return this.run(text);
  }

  /** Sends a command; once it is answered, the thread list is fetched again. */
  private async run(text: string): Promise<CommandReply> {
    const reply = await this.host.command(text, this.threadId);
    if (reply.ok) await this.refresh();
    return reply;
  }
}

/** The threads the room's private entries are filed under. */
function privateThreadIds(memory: RoomMemory): Set<string> {
  return new Set(memory.log.privateEntries().flatMap((e) => (e.message.threadId ? [e.message.threadId] : [])));
}
