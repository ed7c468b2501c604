/** The room protocol as types (docs/protocol.md): one JSON object per text frame, `type` first. */
import type { ContentKind, SourceType } from '../content/types.js';

export type AuthorKind = 'user' | 'assistant' | 'system';

export interface Author {
  id: string;
  name: string;
  kind: AuthorKind;
}

/** A numbered source cited by an assistant answer. */
export interface Source {
  n: number;
  id: string;
  kind: ContentKind | 'comment' | 'thread';
  title: string;
  url: string | null;
  sourceType: SourceType;
  snippet: string;
  /** Conversation sources: the messages the source is made of, oldest first. */
  messageIds?: string[];
  /** Conversation sources: who spoke in them, in order of first appearance. */
  authors?: string[];
  /** Conversation sources: the first and last message's time (ISO-8601). */
  from?: string;
  to?: string;
}

export interface Message {
  id: string;
  /** Per room, monotonic, assigned by the store. */
  seq: number;
  roomId: string;
  threadId: string;
  author: Author;
  text: string;
  /** ISO-8601. */
  ts: string;
  clientId?: string;
  replyTo?: string;
  sources?: Source[];
}

export interface Member {
  id: string;
  name: string;
}

export type RoomKind = 'news' | 'post' | 'video' | 'topic';

/** One recent item in a topic room's digest: a line about it and where it is. */
export interface DigestEntry {
  id: string;
  kind: ContentKind;
  title: string;
  /** One sentence about the item (its description's first, cut to a line). */
  line: string;
  /** The original (an http or https address of 160 characters at most), or null: the item's page in Salon links to it then. */
  url: string | null;
  /** ISO-8601, or null. */
  publishedAt: string | null;
}

export interface RoomInfo {
  id: string;
  kind: RoomKind;
  title: string;
  url: string | null;
  /** Title + summary, at most 2000 characters. */
  context: string;
  /** Topic rooms: the category's recent items, newest first, as the context's digest lists them (absent until the first digest). */
  digest?: DigestEntry[];
}

// Client → server

export interface HelloFrame {
  type: 'hello';
  name: string;
  token?: string;
  lastSeq?: number;
}
export interface SayFrame {
  type: 'say';
  text: string;
  clientId: string;
  threadId?: string;
}
export interface AskFrame {
  type: 'ask';
  text: string;
  clientId: string;
  threadId?: string;
  private?: boolean;
}
export interface TypingFrame {
  type: 'typing';
  active: boolean;
}
export interface PingFrame {
  type: 'ping';
}

export type ClientMessage = HelloFrame | SayFrame | AskFrame | TypingFrame | PingFrame;

// Server → client

export interface WelcomeFrame {
  type: 'welcome';
  you: { id: string; name: string; token: string };
  room: RoomInfo;
  threadId: string;
  history: Message[];
  /** The first members in join order (at most 100); `memberCount` is the total. */
  members: Member[];
  memberCount?: number;
  seq: number;
  /** Set when more messages were missed than one replay carries: `history` holds the newest of them. */
  truncated?: boolean;
  /** An answer being written when the member joined: its text so far; the rest arrives live. */
  pending?: { id: string; stage: AssistantStage; text: string }[];
}
/**
 * `members` (first 100, join order) and `count` are the room now. `joined`/`left` name the one member
 * who came or went; they are absent when several changes were coalesced into one frame.
 */
export interface PresenceFrame {
  type: 'presence';
  members: Member[];
  count?: number;
  joined?: Member;
  left?: Member;
}
export interface MessageFrame {
  type: 'message';
  message: Message;
}
/**
 * The sender's own message is stored, and its `message` echo waits behind older messages the room
 * is still sending (a catch-up after a server lost touch with the others): shown as sent meanwhile.
 * It carries no seq on purpose: a client resumes from the newest seq it received, and the older
 * ones are still to come.
 */
export interface AckFrame {
  type: 'ack';
  /** The `clientId` the message was sent with. */
  clientId: string;
  /** The stored message's id: its echo carries the same. */
  id: string;
}
export interface TypingEventFrame {
  type: 'typing';
  user: Member;
  active: boolean;
}
export type AssistantStage = 'searching' | 'reranking' | 'writing';
export interface AssistantProgressFrame {
  type: 'assistant.progress';
  id: string;
  stage: AssistantStage;
}
export interface AssistantDeltaFrame {
  type: 'assistant.delta';
  id: string;
  text: string;
}
export interface AssistantDoneFrame {
  type: 'assistant.done';
  message: Message;
  /** Set when no source was relevant enough: the answer says so and cites nothing. */
  abstained?: true;
}
export interface ErrorFrame {
  type: 'error';
  code: string;
  message: string;
  clientId?: string;
  /**
   * ERR_RATE_LIMITED only, and optional: whole milliseconds (1 or more) until the limit that
   * refused takes the same frame again. Clients that do not know it ignore it.
   */
  retryAfterMs?: number;
}
export interface WarningFrame {
  type: 'warning';
  code: string;
  message: string;
}
export interface PongFrame {
  type: 'pong';
}

export type ServerMessage =
  | WelcomeFrame
  | PresenceFrame
  | MessageFrame
  | AckFrame
  | TypingEventFrame
  | AssistantProgressFrame
  | AssistantDeltaFrame
  | AssistantDoneFrame
  | ErrorFrame
  | WarningFrame
  | PongFrame;
