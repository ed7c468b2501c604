/** Seams of the rooms core (docs/protocol.md, docs/architecture.md). Only routes/ touches `ws`. */
import type { CloseCodeValue } from '../protocol/close-codes.js';
import type { AssistantStage, Member, Message, RoomInfo, ServerMessage, Source } from '../protocol/messages.js';

/** One client's socket as the room core sees it. */
export interface Connection {
  readonly id: string;
  /** Sends an already-serialised frame. */
  send(frame: string): void;
  /** Closes with `code` and its fixed reason (CLOSE_REASONS); never throws. */
  close(code: CloseCodeValue): void;
  /** Bytes queued but not yet written; used to skip optional frames for slow consumers. */
  readonly bufferedAmount: number;
}

/**
 * Carries room traffic between nodes. In-process by default; Redis for many nodes.
 * Deliver locally first, then publish; each node ignores its own echoes (docs/architecture.md).
 */
export interface RoomBus {
  readonly nodeId: string;
  publish(roomId: string, payload: string): Promise<void>;
  /** Registers the handler for traffic published by other nodes. */
  subscribe(handler: (roomId: string, payload: string) => void): void;
  close(): Promise<void>;
}

/** Resolves a room id to what `welcome` shows; null when there is no such room. */
export type RoomResolver = (roomId: string) => Promise<RoomInfo | null>;

/** Meta key under which a topic room's generated summary is stored (JSON TopicSummary). */
export const topicSummaryKey = (slug: string) => `topic-summary:${slug}`;

export interface TopicSummary {
  category: string;
  summary: string;
  itemIds: string[];
  updatedAt: string;
}

/** What the rooms core lets the assistant do in a room. */
export interface RoomOutlet {
  /** Sends a frame to every member of the room (on every node). An `assistant.done` frame also joins the room's in-memory history. */
  broadcast(roomId: string, frame: ServerMessage): void;
  /** Sends a frame to one user's connections in the room. */
  sendToUser(roomId: string, userId: string, frame: ServerMessage): void;
}

export interface AskRequest {
  roomId: string;
  threadId: string;
  text: string;
  asker: Member;
  /** The asker's client address key (src/rooms/address.ts), for the per-address ask limit. */
  address?: string;
  clientId?: string;
  /** Id of the room message that asked (absent for private asks); the answer's `replyTo`. */
  questionId?: string;
  /** Seq of that message: the recent chat the assistant reads ends just before it. */
  questionSeq?: number;
  /** Private mode: the exchange is not kept in shared memory. */
  private?: boolean;
}

export interface AskResult {
  message: Message;
  sources: Source[];
  /** No source was relevant enough; the answer says so and cites nothing. */
  abstained: boolean;
  /** Stage timings and counts for the HTTP answer and troubleshooting. */
  stages: Record<string, unknown>;
}

/** An answer still being written, for members who join mid-answer. */
export interface PendingAnswer {
  id: string;
  stage: AssistantStage;
  text: string;
}

/** The room's AI assistant: queues asks fairly and streams answers through a RoomOutlet. */
export interface RoomAssistant {
  /**
   * Queues an ask. Resolves at once with the answer id and queue position; `done` settles when
   * the answer is complete (rejects with a SalonError on failure, after the room got an `error`).
   * Throws ERR_RATE_LIMITED / ERR_ASSISTANT_BUSY when limits refuse the ask.
   */
  ask(request: AskRequest): { id: string; position: number; done: Promise<AskResult> };
  pending(roomId: string): PendingAnswer[];
  /** Connects the assistant to the rooms core once both exist. */
  attach(outlet: RoomOutlet): void;
  close(): Promise<void>;
}
