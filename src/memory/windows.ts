/**
 * People's messages grouped into windows for memory: consecutive messages of one thread, closed
 * after `maxMessages` messages, `maxChars` characters of lines, or a quiet spell with no message.
 * Each closed window becomes one memory chunk: one `Name (date, time): text` line per message,
 * after the line just before the window (said without a quiet spell between) as its context: a
 * window often goes on with what that line said ("How was it?" answered in the next window), and
 * that line is read and searched with it but not cited by it (its message belongs to the window
 * before). A full window whose last message asks something leaves that question to the next
 * window, with its answer.
 */
import type { Message } from '../protocol/messages.js';
import { chatLine } from '../rag/recent-chat.js';
import { RecentMap } from './recent-map.js';
import type { NewMemoryChunk } from './types.js';

export const WINDOW_MAX_MESSAGES = 8;
export const WINDOW_MAX_CHARS = 1_500;
/** A thread quiet for this long closes its open window. */
export const WINDOW_QUIET_MS = 10 * 60_000;
/**
 * Threads whose last line is kept as the next window's context, at most (the least recently
 * closed go first). A line serves only a window opened within WINDOW_QUIET_MS of it: 1,024 is more
 * threads than one node's members talk in within that, and at most ~8 MB of 4,000-character lines.
 */
export const DEFAULT_MAX_CONTEXT_LINES = 1_024;

export interface WindowOptions {
  maxMessages?: number;
  maxChars?: number;
  quietMs?: number;
  /** Threads whose last line is kept, at most (DEFAULT_MAX_CONTEXT_LINES). */
  maxContextLines?: number;
  /** The windows are the live chat's: their chunks are marked so (NewMemoryChunk.live). */
  live?: boolean;
  /** Receives every closed window, and the messages it was made of. */
  onWindow(chunk: NewMemoryChunk, messages: readonly Message[]): void;
}

/** A thread's last line, the next window's context (WindowOptions.maxContextLines). */
export interface PreviousLine {
  line: string;
  /** When its message was said (ms). */
  ts: number;
  roomId: string;
}

interface OpenWindow {
  /**
   * The window's messages; their lines are rendered when it closes. Lines held meanwhile outlived
   * young-generation GCs, which copied them (docs/architecture.md, "An open memory window holds
   * its messages, not their lines").
   */
  messages: Message[];
  /** The line before the window's first message, when it came without a quiet spell between. */
  context?: string;
  /** Characters of the window's lines, a newline after each. */
  chars: number;
  timer: NodeJS.Timeout | null;
}

export class MessageWindows {
  private readonly open = new Map<string, OpenWindow>();
  /** Recent threads' last line of their last closed window, that message's time and room. */
  private readonly previous: RecentMap<string, PreviousLine>;
  private readonly maxMessages: number;
  private readonly maxChars: number;
  private readonly quietMs: number;

  constructor(private readonly options: WindowOptions) {
    this.maxMessages = options.maxMessages ?? WINDOW_MAX_MESSAGES;
    this.maxChars = options.maxChars ?? WINDOW_MAX_CHARS;
    this.quietMs = options.quietMs ?? WINDOW_QUIET_MS;
    this.previous = new RecentMap(options.maxContextLines ?? DEFAULT_MAX_CONTEXT_LINES);
  }

  /** Messages waiting in open windows, per thread (all threads without an argument). */
  waiting(threadId?: string): number {
    if (threadId !== undefined) return this.open.get(threadId)?.messages.length ?? 0;
    let n = 0;
    for (const w of this.open.values()) n += w.messages.length;
    return n;
  }

  /** Adds a message to its thread's window, closing the window when it is full. */
  add(message: Message): void {
    let w = this.open.get(message.threadId);
    // Heard twice (a room this node left and joined again replays what it missed): windowed once.
    if (w?.messages.some((m) => m.id === message.id)) return;
    const lineChars = chatLine(message).length;
    // A message that would overflow a window, or that comes after a quiet spell (by the messages'
    // own times: an imported history has its days between sessions), starts the next one.
    const last = w?.messages[w.messages.length - 1];
    const quiet = last !== undefined && Date.parse(message.ts) - Date.parse(last.ts) > this.quietMs;
    if (w && w.messages.length && quiet) {
      this.close(message.threadId);
      w = undefined;
    } else if (w && w.messages.length && w.chars + lineChars + 1 > this.maxChars) {
      w = this.closeFull(message.threadId, w);
    }
    if (!w) {
      const before = this.previous.get(message.threadId);
      const context = before && Date.parse(message.ts) - before.ts <= this.quietMs ? before.line : undefined;
      w = { messages: [], chars: 0, timer: null, context };
      this.open.set(message.threadId, w);
    }
    w.messages.push(message);
    w.chars += lineChars + 1;
    if (w.chars >= this.maxChars) return this.close(message.threadId);
    if (w.messages.length >= this.maxMessages) {
      this.closeFull(message.threadId, w);
      w = this.open.get(message.threadId);
      if (!w) return;
    }
    // One timer per open window, moved on by each message (a new timer per message was a chat
    // message's garbage on the event loop).
    if (w.timer) w.timer.refresh();
    else {
      w.timer = setTimeout(() => this.close(message.threadId), this.quietMs);
      w.timer.unref();
    }
  }

  /**
   * Closes a full window. A last message that asks something is carried into the next window
   * instead: its answer comes next, and a question cut from its answer leaves the window that
   * matches the question without the fact and the one with the fact without its words. Returns
   * the next window when one was opened with the question.
   */
  private closeFull(threadId: string, w: OpenWindow): OpenWindow | undefined {
    const last = w.messages.length > 1 ? w.messages[w.messages.length - 1] : undefined;
    if (!last || !asks(last.text)) {
      this.close(threadId);
      return undefined;
    }
    const lineChars = chatLine(last).length;
    w.messages.pop();
    w.chars -= lineChars + 1;
    // The line closing the window is the next one's context, as after any window.
    const context = this.closeWindow(threadId);
    const next: OpenWindow = { messages: [last], chars: lineChars + 1, timer: null, context };
    this.open.set(threadId, next);
    return next;
  }

  /** Closes the thread's open window now (all threads without an argument). */
  close(threadId?: string): void {
    if (threadId !== undefined) this.closeWindow(threadId);
    else for (const id of [...this.open.keys()]) this.closeWindow(id);
  }

  /** Closes the thread's open window; returns its last line (undefined when none was open). */
  private closeWindow(threadId: string): string | undefined {
    const w = this.open.get(threadId);
    if (!w) return undefined;
    this.open.delete(threadId);
    if (w.timer) clearTimeout(w.timer);
    if (!w.messages.length) return undefined;
    const end = w.messages[w.messages.length - 1];
    const chunk = windowChunk(threadId, w.messages, w.context);
    if (this.options.live) chunk.live = true;
    const line = chatLine(end);
    this.previous.set(threadId, { line, ts: Date.parse(end.ts), roomId: end.roomId });
    this.options.onWindow(chunk, w.messages);
    return line;
  }

  /**
   * Puts `messages` (a closed window's, said after `context`) back in front of the thread's open
   * window, as if that window had not closed before them: another node filed a window that ends
   * inside this one (MemoryService.realign), and the next windows are cut where that node cuts
   * them, so each is filed once. The open window's messages are windowed again after them.
   */
  reopen(threadId: string, messages: readonly Message[], context?: PreviousLine): void {
    const open = this.open.get(threadId)?.messages ?? [];
    this.discardOpen(threadId);
    const known = new Set(messages.map((m) => m.id));
    const all = [...messages, ...open.filter((m) => !known.has(m.id))].sort((a, b) => a.seq - b.seq);
    if (context) this.previous.set(threadId, context);
    else this.previous.delete(threadId);
    for (const m of all) this.add(m);
  }

  /**
   * Ends the room's open windows, and forgets its threads' last lines: what is heard of the room
   * next does not follow on from them (messages of the room went out unheard meanwhile, RoomHubDeps.onGap).
   * A window would join messages across the ones it never held, and a last line would be read as
   * the line said just before the next window.
   */
  endRoom(roomId: string): void {
    for (const [threadId, w] of [...this.open]) if (w.messages[0]?.roomId === roomId) this.closeWindow(threadId);
    for (const [threadId, p] of [...this.previous]) if (p.roomId === roomId) this.previous.delete(threadId);
  }

  /** Drops a thread's open window without keeping it (the thread was deleted). */
  discard(threadId: string): void {
    this.discardOpen(threadId);
    this.previous.delete(threadId);
  }

  /** Drops a thread's open window without keeping it. */
  private discardOpen(threadId: string): void {
    const w = this.open.get(threadId);
    if (w?.timer) clearTimeout(w.timer);
    this.open.delete(threadId);
  }

  /**
   * Messages `ids` now belong to thread `to` (a split moved them): taken out of the other threads'
   * open windows and windowed in `to`, in the order they were said, so their memory is filed, and
   * cites them, where they are now.
   */
  move(ids: ReadonlySet<string>, to: string): void {
    const moved: Message[] = [];
    for (const [threadId, w] of [...this.open]) {
      if (threadId === to || !w.messages.some((m) => ids.has(m.id))) continue;
      const kept = w.messages.filter((m) => !ids.has(m.id));
      for (const m of w.messages) if (ids.has(m.id)) moved.push({ ...m, threadId: to });
      if (!kept.length) {
        this.discardOpen(threadId);
        continue;
      }
      w.messages = kept;
      w.chars = kept.reduce((sum, m) => sum + chatLine(m).length + 1, 0);
    }
    moved.sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts));
    for (const m of moved) this.add(m);
  }

  /** Forgets the thread's last line (the thread was merged into another: nothing more is said in it). */
  forgetContext(threadId: string): void {
    this.previous.delete(threadId);
  }
}

/**
 * The memory chunk of a window of `messages` (one thread's, oldest first): one line per message,
 * after `context` (the line said just before them) when there is one.
 */
export function windowChunk(threadId: string, messages: readonly Message[], context?: string): NewMemoryChunk {
  const first = messages[0];
  const lines = messages.map(chatLine);
  return {
    threadId,
    roomId: first.roomId,
    kind: 'window',
    text: (context ? [context, ...lines] : lines).join('\n'),
    messageIds: messages.map((m) => m.id),
    authors: [...new Set(messages.map((m) => m.author.name))],
    firstTs: first.ts,
    lastTs: messages[messages.length - 1].ts,
    privileged: false,
    owner: null,
  };
}

/** Whether a message ends by asking something (its last sentence is a question). */
export function asks(text: string): boolean {
  return /\?[\s"')\]]*$/.test(text.trim());
}
