/** Builds the rooms core from the config: the identity secret (IDENTITY_SECRET, else DATA_DIR's) and token lifetime, the bus src/parts.ts chose. */
import type { Config } from '../config.js';
import type { Store } from '../store/types.js';
import { RoomHub, type RoomHubDeps } from './hub.js';
import { Identity, loadOrCreateSecret } from './identity.js';
import { DEFAULT_SOFT_BUFFERED_BYTES, type RoomOptions } from './options.js';
import type { RoomAssistant, RoomBus } from './types.js';
import type { Logger } from '../logger.js';
import type { Message } from '../protocol/messages.js';

export { RoomHub } from './hub.js';

export interface CreateRoomsDeps {
  store: Store;
  log?: Logger;
  assistant?: () => RoomAssistant | undefined;
  /** RoomHubDeps.onMessage. */
  onMessage?: (message: Message) => void;
  /** RoomHubDeps.onGap. */
  onGap?: (roomId: string) => void;
  /** RoomHubDeps.onDelivered. */
  onDelivered?: (message: Message) => void;
  /** RoomHubDeps.onThreadGone. */
  onThreadGone?: RoomHubDeps['onThreadGone'];
  /** RoomHubDeps.onMessagesMoved. */
  onMessagesMoved?: RoomHubDeps['onMessagesMoved'];
  /** RoomHubDeps.onRefused. */
  onRefused?: RoomHubDeps['onRefused'];
  bus: RoomBus;
  /** Overrides for tests (shorter timers, smaller limits). */
  options?: Partial<RoomOptions>;
}

/** The room options the config sets. */
export function roomOptionsFromConfig(config: Config): Partial<RoomOptions> {
  return {
    helloTimeoutMs: config.ROOM_HELLO_TIMEOUT_MS,
    heartbeatMs: config.ROOM_HEARTBEAT_MS,
    maxConnectionsPerIp: config.ROOM_MAX_CONNECTIONS_PER_IP,
    maxConnections: config.ROOM_MAX_CONNECTIONS,
    framesPerSecondPerAddress: config.ROOM_ADDRESS_FRAMES_PER_SECOND,
    newIdentitiesPerMinute: config.ROOM_NEW_IDENTITIES_PER_MINUTE,
    connectsPerMinutePerAddress: config.ROOM_ADDRESS_CONNECTS_PER_MINUTE,
    roomMessagesPerSecond: config.ROOM_MESSAGES_PER_SECOND,
    hardBufferedBytes: config.ROOM_MAX_BUFFERED_BYTES,
    softBufferedBytes: Math.min(DEFAULT_SOFT_BUFFERED_BYTES, config.ROOM_MAX_BUFFERED_BYTES),
    nodeBufferedBytes: config.ROOM_NODE_BUFFERED_BYTES,
  };
}

/** A RoomHub for `config`. */
export function createRooms(config: Config, deps: CreateRoomsDeps): RoomHub {
  return new RoomHub({
    store: deps.store,
    identity: new Identity(config.IDENTITY_SECRET ? Buffer.from(config.IDENTITY_SECRET, 'utf8') : loadOrCreateSecret(config.DATA_DIR), {
      tokenTtlDays: config.IDENTITY_TOKEN_TTL_DAYS,
    }),
    log: deps.log,
    assistant: deps.assistant,
    onMessage: deps.onMessage,
    onGap: deps.onGap,
    onDelivered: deps.onDelivered,
    onThreadGone: deps.onThreadGone,
    onMessagesMoved: deps.onMessagesMoved,
    onRefused: deps.onRefused,
    bus: deps.bus,
    options: { ...roomOptionsFromConfig(config), ...deps.options },
  });
}
