/** Seams of the rooms core (docs/protocol.md, docs/architecture.md). Only routes/ touches `ws`. */
import type { CloseCodeValue } from '../protocol/close-codes.js';
import type { ItemDetails } from '../content/item-details.js';
import type { AssistantStage, DigestEntry, Member, Message, RoomInfo, ServerMessage, Source } from '../protocol/messages.js';

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
 * A node hears a room only between `join` and `leave`; the hub calls them on the room's first
 * local member and after its last.
 */
export interface RoomBus {
  readonly nodeId: string;
  /** Sends to the nodes that joined the room; dropped while the bus is cut off. Rejects once the bus is closed, or when a send fails. */
  publish(roomId: string, payload: string): Promise<void>;
  /** Registers the handler for traffic published by other nodes. */
  subscribe(handler: (roomId: string, payload: string) => void): void;
  /**
   * Starts hearing `roomId`. Resolves once what others publish from then on will arrive, or at once
   * while the bus is cut off (the room is heard again after the reconnection).
   */
  join(roomId: string): Promise<void>;
  /** Stops hearing `roomId`. */
  leave(roomId: string): void;
  /** Who is in which room, on every node of the bus. */
  readonly presence: RoomPresence;
  /**
   * Registers a handler told when the bus is cut off from the other nodes (`false`) and when it is
   * back (`true`: rooms heard again, this node's presence written again). Traffic in between was lost.
   */
  onConnectionChange(handler: (connected: boolean) => void): void;
  /**
   * Registers a handler told when one room is not heard though the bus is connected (`false`: its
   * SUBSCRIBE failed, a timeout or a refusal) and when it is heard again (`true`): that room alone
   * missed the other nodes' traffic in between. A bus whose join cannot fail on its own leaves it out.
   */
  onRoomHeard?(handler: (roomId: string, heard: boolean) => void): void;
  /** Rooms joined but not heard though the bus is connected (see onRoomHeard), 0 while it is cut off; absent where that cannot happen. */
  readonly unheardRooms?: number;
  /**
   * Whether the bus reaches the other nodes and hears every room it joined: false while it is cut
   * off, and once back until its rooms are subscribed again. Absent where it is never cut off.
   */
  readonly connected?: boolean;
  /** Whether the bus reaches the other nodes and hears every room it joined (`/readyz`). */
  health(): Promise<{ ok: boolean; provider: string; detail: string }>;
  close(): Promise<void>;
}

/** One member of one node in a room's shared presence. */
export interface PresenceEntry {
  /** The node the member is connected to. */
  node: string;
  id: string;
  name: string;
  /** When the member joined on that node (ms since the epoch): the list's order. */
  since: number;
}

/**
 * The member list's order on every node: by join time, then by id, so members who joined in the
 * same millisecond (on two nodes) are listed alike everywhere and across a Redis restore.
 */
export function compareJoins(aSince: number, aId: string, bSince: number, bId: string): number {
  if (aSince !== bSince) return aSince - bSince;
  return aId < bId ? -1 : aId > bId ? 1 : 0;
}

/**
 * The members of every room on every node. A node writes only its own members; entries of a
 * node that stops disappear: at once when it closes, within seconds when it dies.
 */
export interface RoomPresence {
  /**
   * How often a node should list its rooms again to notice members whose node died (their entries
   * expire); 0 when entries never outlive their node (in-process).
   */
  readonly recheckMs: number;
  /**
   * Records (or renames) this node's member. The write is sent before this returns, so a bus
   * publish made after it reaches the other nodes after the change.
   */
  set(roomId: string, member: { id: string; name: string }, since: number): Promise<void>;
  /** Removes this node's member (their last connection here left). Same ordering as `set`. */
  remove(roomId: string, userId: string): Promise<void>;
  /** The live entries of every node, this one's included, oldest first. */
  list(roomId: string): Promise<PresenceEntry[]>;
  /** Of `roomIds`, those holding entries that expired since their node stopped: list them again. */
  stale(roomIds: string[]): Promise<string[]>;
  /**
   * Rooms with live entries on any node and how many distinct members each has, at most `max`
   * rooms (the busiest when there are more).
   */
  activeRooms(max: number): Promise<{ roomId: string; count: number }[]>;
  /**
   * Calls `listener` with the rooms where this node's entries were renewed only after they may
   * have expired (the node was late: a stalled process, a slow store). Other nodes may have
   * dropped those members meanwhile: announce the rooms so they list them again. Never called
   * where entries do not expire.
   */
  onLapsed(listener: (roomIds: string[]) => void): void;
}

/**
 * A room as resolved: what `welcome` shows, and for an item's room the item's details, which the
 * assistant reads (src/rag/room-context.ts) and clients are not sent (shownRoom).
 */
export interface ResolvedRoom extends RoomInfo {
  details?: ItemDetails;
}

/** Resolves a room id; null when there is no such room. */
export type RoomResolver = (roomId: string) => Promise<ResolvedRoom | null>;

/** What clients are shown of a resolved room: its RoomInfo, without the details kept for the assistant. */
export function shownRoom(room: ResolvedRoom): RoomInfo {
  if (room.details === undefined) return room;
  const { details: _kept, ...shown } = room;
  return shown;
}

/** Meta key under which a topic room's generated summary is stored (JSON TopicSummary). */
export const topicSummaryKey = (slug: string) => `topic-summary:${slug}`;

/** A topic room's stored summary (src/rag/topics.ts). */
export interface TopicSummary {
  category: string;
  /** The room's context after its title: the model's lead (if any), then a line and a link per recent item. */
  summary: string;
  itemIds: string[];
  updatedAt: string;
  /** The items the summary lists, one entry each (summaries stored before digests have none). */
  digest?: DigestEntry[];
}

/**
 * What the assistant tells the rooms core beside a frame of a public answer, never inside it (the
 * protocol fixes the frames' fields): the answer it is part of and the seq of its question. During
 * a catch-up the frames of an answer whose question went out already need not wait
 * (held-messages.ts); an `error` frame names the question's clientId, not the answer.
 */
export interface AnswerTag {
  /** The answer's id, as its `assistant.progress` and `assistant.delta` frames carry it. */
  readonly answer: string;
  /** The seq of the room message that asked; absent when none was posted. */
  readonly questionSeq?: number;
}

/** What the rooms core lets the assistant do in a room. */
export interface RoomOutlet {
  /**
   * Sends a frame to every member of the room (on every node). An `assistant.done` frame also joins
   * the room's in-memory history. `tag`: the answer a frame of the assistant is part of.
   */
  broadcast(roomId: string, frame: ServerMessage, tag?: AnswerTag): void;
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

/** An ask's place in the assistant's rate limits, taken (RoomAssistant.admit) before its question was posted. */
export interface AskAdmission {
  readonly roomId: string;
}

/** The room's AI assistant: queues asks fairly and streams answers through a RoomOutlet. */
export interface RoomAssistant {
  /**
   * Queues an ask. Resolves at once with the answer id and queue position; `done` settles when
   * the answer is complete (rejects with a SalonError on failure, after the room got an `error`).
   * Throws ERR_RATE_LIMITED / ERR_ASSISTANT_BUSY when limits refuse the ask. `admission`: what
   * `admit` returned for this ask when the caller checked it before posting its question; its rate
   * limits were counted then.
   */
  ask(request: AskRequest, admission?: AskAdmission): { id: string; position: number; done: Promise<AskResult> };
  /**
   * Throws what `ask` would throw for this request now, or counts it against the rate limits at
   * once and returns its admission for `ask`: a caller posting a question checks first, so a
   * refused one is never written (an assistant without it is asked after the posting).
   */
  admit?(request: AskRequest): AskAdmission;
  /** Gives back an admission whose ask will not be made (its question was not posted after all). */
  release?(admission: AskAdmission): void;
  /**
   * The asker has no connection left in the room on any node, and did not come back within the
   * rooms' `askerReturnGraceMs`: their private asks end.
   */
  askerLeft?(roomId: string, userId: string): void;
  /** A thread was deleted (here or on another node): the asks made in it on this node end unanswered. */
  threadDeleted?(threadId: string): void;
  /** Whether `userId` has a private ask in the room waiting or being answered on this node. */
  hasPrivateAsks?(roomId: string, userId: string): boolean;
  /**
   * `/forget private`: `userId`'s asks in the room waiting or being answered on this node whose
   * exchanges would be their private memory (private asks, and asks in a thread privileged now) go
   * on, but their exchanges are not remembered (onAnswer is not told). They are marked before it
   * returns; it resolves with how many. Those on other nodes are refused by the store as they are
   * filed (Store.markPrivateForget).
   */
  forgetPrivateAsks?(roomId: string, userId: string): Promise<number>;
  /** The room's answers being written, for a welcome: the public ones, and `forUserId`'s own private ones. */
  pending(roomId: string, forUserId?: string): PendingAnswer[];
  /** Connects the assistant to the rooms core once both exist. */
  attach(outlet: RoomOutlet): void;
  close(): Promise<void>;
}
