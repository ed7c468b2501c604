/**
 * Tunables of the rooms core. Defaults are the protocol's documented limits (docs/protocol.md);
 * app.ts fills the operational ones from config, tests shrink timings through AppOverrides.
 */
import { wholeNumber } from '../options.js';

export const DEFAULT_HELLO_TIMEOUT_MS = 10_000;
export const DEFAULT_HEARTBEAT_MS = 30_000;
export const DEFAULT_MAX_CONNECTIONS_PER_IP = 100;
/** Room sockets one node holds at most; past it new ones are closed with 1013. */
export const DEFAULT_MAX_CONNECTIONS = 20_000;
/** Frames a second one address may send over all its sockets: a few tabs of a busy member. */
export const DEFAULT_ADDRESS_FRAMES_PER_SECOND = 20;
/** Identities one address may take a minute (a hello without a token issues one). */
export const DEFAULT_NEW_IDENTITIES_PER_MINUTE = 30;
/**
 * Room sockets one address may open a minute (bursts of as many): each costs a hello, a join and
 * presence frames to the room, and the other per-address limits count sockets held, not opened.
 */
export const DEFAULT_ADDRESS_CONNECTS_PER_MINUTE = 60;
/** Messages a second one room accepts from all its members together (bursts of twice that). */
export const DEFAULT_ROOM_MESSAGES_PER_SECOND = 30;
/**
 * Slash commands a minute one address may send over all its sockets (bursts of half that). A
 * command is answered from the store: `/threads` counts the messages of up to 120 threads (~8 ms
 * for a room of 200,000), and the frame rate alone let an address ask 20 times a second.
 */
export const DEFAULT_ADDRESS_COMMANDS_PER_MINUTE = 60;
export const DEFAULT_HISTORY_SIZE = 20;
/** Most missed messages one `hello {lastSeq}` replays; older ones are skipped (`welcome.truncated`). */
export const DEFAULT_REPLAY_LIMIT = 500;
/**
 * Most bytes of history one welcome carries: a quarter of the socket's send limit (1 MiB by
 * default), so the welcome and the frames that follow it never trip the limit and close the socket.
 */
export const DEFAULT_REPLAY_MAX_BYTES = 256 * 1024;
export const DEFAULT_MAX_TEXT_CHARS = 4_000;
export const DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024;
export const DEFAULT_RATE_PER_SECOND = 5;
export const DEFAULT_RATE_BURST = 10;
/** Rejected frames within `abuseWindowMs` that close the socket with 4429. */
export const DEFAULT_ABUSE_REJECTIONS = 20;
export const DEFAULT_ABUSE_WINDOW_MS = 10_000;
/** Zulip's timings: a typist is re-announced at most every 10 s and expires 15 s after the last refresh. */
export const DEFAULT_TYPING_FORWARD_MS = 10_000;
export const DEFAULT_TYPING_EXPIRE_MS = 15_000;
/**
 * "Started typing" frames a second one room forwards from all its typists together (bursts of twice
 * that); past it they are dropped. Typing is not counted against the message rate, so without this
 * many typists (many addresses) could broadcast into one room without bound.
 */
export const DEFAULT_ROOM_TYPING_PER_SECOND = 30;
/** Above this many queued bytes a socket no longer gets typing and presence frames. */
export const DEFAULT_SOFT_BUFFERED_BYTES = 64 * 1024;
/** Above this many queued bytes a socket is closed with 1013. */
export const DEFAULT_HARD_BUFFERED_BYTES = 1024 * 1024;
/**
 * Above this many bytes queued by all of a node's sockets together, a socket past the soft limit is
 * closed with 1013 (src/rooms/send-budget.ts): 256 sockets at the hard limit.
 */
export const DEFAULT_NODE_BUFFERED_BYTES = 256 * 1024 * 1024;
/** Joins and leaves within this window (at least; it grows with the room, see Room.presence) are coalesced into one presence frame. */
export const DEFAULT_PRESENCE_WINDOW_MS = 50;
/** Rooms larger than `largeRoomMembers` coalesce presence over this longer window; smaller ones over their share of it. */
export const DEFAULT_LARGE_ROOM_PRESENCE_WINDOW_MS = 1_000;
export const DEFAULT_LARGE_ROOM_MEMBERS = 100;
/** Longest member list in `welcome` and `presence`; `memberCount`/`count` always give the total. */
export const DEFAULT_MAX_LISTED_MEMBERS = 100;
export const DEFAULT_CONTEXT_CHARS = 2_000;
/** How long shutdown waits for clients to answer the 1001 close before cutting them off. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 2_000;
/**
 * How long a socket the server closed (1013, 4429, 4408 …) may take to answer the close before its
 * TCP connection is cut. Until then its unsent frames stay queued, a client that stopped reading
 * never answers, and `ws` waits 30 s by default: sockets dropped for being 1 MiB behind held that
 * MiB each for 30 s after the send budget stopped counting them.
 */
export const DEFAULT_CLOSE_TIMEOUT_MS = 5_000;
/**
 * How long an asker who left a room (a reload, a dropped connection) may take to come back before
 * their private asks end: long enough for a reload or a reconnect's first retries.
 */
export const DEFAULT_ASKER_RETURN_GRACE_MS = 15_000;

export interface RoomOptions {
  helloTimeoutMs: number;
  heartbeatMs: number;
  maxConnectionsPerIp: number;
  maxConnections: number;
  framesPerSecondPerAddress: number;
  newIdentitiesPerMinute: number;
  connectsPerMinutePerAddress: number;
  commandsPerMinutePerAddress: number;
  roomMessagesPerSecond: number;
  historySize: number;
  replayLimit: number;
  replayMaxBytes: number;
  maxTextChars: number;
  maxPayloadBytes: number;
  ratePerSecond: number;
  rateBurst: number;
  abuseRejections: number;
  abuseWindowMs: number;
  typingForwardMs: number;
  typingExpireMs: number;
  roomTypingPerSecond: number;
  softBufferedBytes: number;
  hardBufferedBytes: number;
  nodeBufferedBytes: number;
  presenceWindowMs: number;
  largeRoomPresenceWindowMs: number;
  largeRoomMembers: number;
  maxListedMembers: number;
  contextChars: number;
  shutdownGraceMs: number;
  closeTimeoutMs: number;
  askerReturnGraceMs: number;
}

export const DEFAULT_ROOM_OPTIONS: Readonly<RoomOptions> = Object.freeze({
  helloTimeoutMs: DEFAULT_HELLO_TIMEOUT_MS,
  heartbeatMs: DEFAULT_HEARTBEAT_MS,
  maxConnectionsPerIp: DEFAULT_MAX_CONNECTIONS_PER_IP,
  maxConnections: DEFAULT_MAX_CONNECTIONS,
  framesPerSecondPerAddress: DEFAULT_ADDRESS_FRAMES_PER_SECOND,
  newIdentitiesPerMinute: DEFAULT_NEW_IDENTITIES_PER_MINUTE,
  connectsPerMinutePerAddress: DEFAULT_ADDRESS_CONNECTS_PER_MINUTE,
  commandsPerMinutePerAddress: DEFAULT_ADDRESS_COMMANDS_PER_MINUTE,
  roomMessagesPerSecond: DEFAULT_ROOM_MESSAGES_PER_SECOND,
  historySize: DEFAULT_HISTORY_SIZE,
  replayLimit: DEFAULT_REPLAY_LIMIT,
  replayMaxBytes: DEFAULT_REPLAY_MAX_BYTES,
  maxTextChars: DEFAULT_MAX_TEXT_CHARS,
  maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES,
  ratePerSecond: DEFAULT_RATE_PER_SECOND,
  rateBurst: DEFAULT_RATE_BURST,
  abuseRejections: DEFAULT_ABUSE_REJECTIONS,
  abuseWindowMs: DEFAULT_ABUSE_WINDOW_MS,
  typingForwardMs: DEFAULT_TYPING_FORWARD_MS,
  typingExpireMs: DEFAULT_TYPING_EXPIRE_MS,
  roomTypingPerSecond: DEFAULT_ROOM_TYPING_PER_SECOND,
  softBufferedBytes: DEFAULT_SOFT_BUFFERED_BYTES,
  hardBufferedBytes: DEFAULT_HARD_BUFFERED_BYTES,
  nodeBufferedBytes: DEFAULT_NODE_BUFFERED_BYTES,
  presenceWindowMs: DEFAULT_PRESENCE_WINDOW_MS,
  largeRoomPresenceWindowMs: DEFAULT_LARGE_ROOM_PRESENCE_WINDOW_MS,
  largeRoomMembers: DEFAULT_LARGE_ROOM_MEMBERS,
  maxListedMembers: DEFAULT_MAX_LISTED_MEMBERS,
  contextChars: DEFAULT_CONTEXT_CHARS,
  shutdownGraceMs: DEFAULT_SHUTDOWN_GRACE_MS,
  closeTimeoutMs: DEFAULT_CLOSE_TIMEOUT_MS,
  askerReturnGraceMs: DEFAULT_ASKER_RETURN_GRACE_MS,
});

/** Defaults plus `overrides`; throws naming the first option that is not a positive whole number. */
export function roomOptions(overrides: Partial<RoomOptions> = {}): Readonly<RoomOptions> {
  const out = { ...DEFAULT_ROOM_OPTIONS, ...overrides };
  for (const [name, value] of Object.entries(out)) {
    wholeNumber('rooms', name, value, 1);
  }
  if (out.softBufferedBytes > out.hardBufferedBytes) {
    throw new RangeError('rooms: options.softBufferedBytes must not exceed options.hardBufferedBytes');
  }
  if (out.hardBufferedBytes > out.nodeBufferedBytes) {
    throw new RangeError('rooms: options.hardBufferedBytes must not exceed options.nodeBufferedBytes');
  }
  // A welcome must leave room under the send limit for the frames that follow it.
  out.replayMaxBytes = Math.min(out.replayMaxBytes, Math.floor(out.hardBufferedBytes / 4));
  return Object.freeze(out);
}
