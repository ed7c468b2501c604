/**
 * The ChangeFeed seam: short notices, sent by the node that committed a change to the rows behind
 * the vector indexes, telling every other node which rows to read again (docs/architecture.md,
 * "Content everywhere"). A lone node has nobody to tell: its feed is `LONE_NODE_FEED`.
 */
import type { ProviderHealth } from '../ai/types.js';

/** Carries index change notices between the nodes that share one store. */
export interface ChangeFeed {
  /** False for a lone node: nothing is logged, sent or heard. */
  readonly shared: boolean;
  /** Sends a notice to the other nodes; dropped while the feed is cut off (they catch up from the store). */
  publish(notice: string): Promise<void>;
  /** Registers the handler for notices (this node's own echoes included). */
  subscribe(handler: (notice: string) => void): void;
  /** Registers a handler told when the feed is cut off (`false`) and when it hears notices again (`true`). */
  onConnectionChange(handler: (connected: boolean) => void): void;
  /**
   * Whether this node hears the other nodes' notices (`/readyz`'s `index-feed` check): a node that
   * misses them serves searches without their changes. Absent for a lone node, which has no others.
   */
  health?(): Promise<ProviderHealth>;
  /** Stops for good: no timer left, nothing heard, sent or told from here on (the process closes, after IndexSync). */
  close(): void;
}

/** The feed of a single node. */
export const LONE_NODE_FEED: ChangeFeed = {
  shared: false,
  publish: async () => {},
  subscribe: () => {},
  onConnectionChange: () => {},
  close: () => {},
};
