/**
 * The thread's recent chat as the prompt sees it: the latest messages before the question, one line
 * each with the speaker's name and time, newest kept first within a character budget, as one
 * conversation source ("From this discussion — Alice, Bob, 24 Nov 2026") that answers can cite.
 */
import type { Message, Source } from '../protocol/messages.js';
import type { Store } from '../store/types.js';
import { CHAT_STAMP, chatStamp, clip, formatDay, squash, withoutBidiControls, withoutCitations } from '../text.js';
import { labelName } from '../ai/label-name.js';
import { splitSentences } from '../ai/local/extractive-text.js';

/** Messages read for the recent chat, at most. */
export const RECENT_CHAT_MESSAGES = 12;
/** Characters of recent chat in the prompt, at most. */
export const RECENT_CHAT_MAX_CHARS = 2_000;
/** One message's text in the recent chat, at most. */
const LINE_TEXT_MAX_CHARS = 400;
const SNIPPET_CHARS = 150;

/** A window of messages rendered for the prompt, with the source that cites it. */
export interface ChatWindow {
  /** One line per message, oldest first. */
  lines: string[];
  messages: Message[];
  /** `n` is given when the prompt numbers its sources. */
  source: Omit<Source, 'n'>;
}

export interface RecentChatOptions {
  maxMessages?: number;
  maxChars?: number;
}

/**
 * The latest messages of `threadId` before seq `beforeSeq` (the question's own message and
 * anything after it are left out), as a ChatWindow; null when the thread has none yet.
 */
export async function recentChat(store: Store, threadId: string, beforeSeq: number | undefined, options: RecentChatOptions = {}): Promise<ChatWindow | null> {
  const maxMessages = options.maxMessages ?? RECENT_CHAT_MESSAGES;
  const maxChars = options.maxChars ?? RECENT_CHAT_MAX_CHARS;
  const messages = (await store.threadChat(threadId, maxMessages, beforeSeq)).filter((m) => m.author.kind !== 'system' && m.text.trim());
  // Newest first until the budget is spent: the latest turns matter most to a follow-up.
  const kept: Message[] = [];
  const lines: string[] = [];
  let chars = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const line = chatLine(messages[i]);
    if (chars + line.length + 1 > maxChars && kept.length) break;
    kept.unshift(messages[i]);
    lines.unshift(clip(line, maxChars));
    chars += line.length + 1;
  }
  return kept.length ? { lines, messages: kept, source: conversationSource(threadId, kept, lines[lines.length - 1]) } : null;
}

/** A stamp and its colon inside a name or a text (`Bob (24 Nov 2026, 19:20):`), which only a line's own may be. */
const STAMP_COLON = new RegExp(`(${CHAT_STAMP.source}):`, 'g');

/** `text` with each STAMP_COLON spelled `(…) :`: a line's speaker is then named before its first stamp and colon alone. */
function unstamped(text: string): string {
  return text.includes('):') ? text.replace(STAMP_COLON, '$1 :') : text;
}

/**
 * `Alice (24 Nov 2026, 19:20): the text`, on one line; an old answer's `[n]` markers are dropped
 * (its numbers are not this prompt's). A member named `Bob (24 Nov 2026, 19:20): yes` would
 * otherwise have spoken as Bob in every line. A long text is cut after its last whole sentence
 * that fits (cutAtSentence).
 */
export function chatLine(m: Message): string {
  const text = m.author.kind === 'assistant' ? withoutCitations(m.text) : m.text;
  return `${unstamped(squash(m.author.name))} (${chatStamp(m.ts)}): ${unstamped(cutAtSentence(squash(text), LINE_TEXT_MAX_CHARS))}`;
}

/**
 * `text` cut to at most `max` characters after its last whole sentence that fits, the cut marked
 * with ` …`; cut at a word (clip) when the sentences that fit hold less than a third of `max`.
 * Cut mid-sentence, an earlier answer's `waits fell from 47 minutes in the…` was quoted back as a
 * later answer.
 */
export function cutAtSentence(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = 0;
  for (const sentence of splitSentences(text)) {
    if (sentence.end > max - 2) break;
    end = sentence.end;
  }
  return end >= max / 3 ? `${text.slice(0, end)} …` : clip(text, max);
}

/** The source a window of messages is cited as. */
export function conversationSource(threadId: string, messages: Message[], snippet: string): Omit<Source, 'n'> {
  const authors = [...new Set(messages.map((m) => squash(m.author.name)))];
  const from = messages[0].ts;
  const to = messages[messages.length - 1].ts;
  return {
    id: threadId,
    kind: 'thread',
    title: conversationLabel(authors, from, to),
    url: null,
    sourceType: 'conversation',
    // One line under the source's title: a bidi control in a message would reorder what follows it there.
    snippet: clip(withoutBidiControls(snippet), SNIPPET_CHARS),
    messageIds: messages.map((m) => m.id),
    authors,
    from,
    to,
  };
}

/**
 * `From this discussion — Alice, Bob, 24 Nov 2026` (two days when the window spans more than one).
 * Each name is on one line, without bidi controls, and quoted where it could pose as more than a
 * name (labelName).
 */
export function conversationLabel(authors: string[], from: string, to: string): string {
  const first = formatDay(from);
  const last = formatDay(to);
  const shown = authors.map(labelName);
  const names = shown.length > 4 ? `${shown.slice(0, 4).join(', ')} and others` : shown.join(', ');
  return `From this discussion — ${names}, ${first === last ? first : `${first} – ${last}`}`;
}
