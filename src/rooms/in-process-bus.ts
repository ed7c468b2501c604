/**
 * The default RoomBus: nodes in one process share a network object. A payload reaches every other
 * node of the network that joined the room, asynchronously and in publish order (Redis would also
 * echo it to the publisher; the rooms core drops its own echoes by node id either way,
 * docs/architecture.md). A lone node (the default) has nobody to tell, so single-process
 * deployments pay nothing per publish. Presence lives in the network too: nodes in one process
 * die together, so nothing expires.
 */
import { randomUUID } from 'node:crypto';
import { InProcessPresence, type PresenceTable } from './in-process-presence.js';
import type { RoomBus } from './types.js';

type Handler = (roomId: string, payload: string) => void;

/** A set of in-process nodes that hear each other. */
export class InProcessBusNetwork {
  /** @internal */
  readonly nodes = new Set<InProcessBus>();
  /** @internal */
  readonly presence: PresenceTable = new Map();

  /** A new node on this network. */
  node(nodeId: string = randomUUID()): InProcessBus {
    return new InProcessBus(this, nodeId);
  }
}

export class InProcessBus implements RoomBus {
  readonly presence: InProcessPresence;
  private readonly handlers: Handler[] = [];
  private readonly rooms = new Set<string>();
  private closed = false;

  constructor(
    private readonly network: InProcessBusNetwork = new InProcessBusNetwork(),
    readonly nodeId: string = randomUUID(),
  ) {
    if (!nodeId) throw new TypeError('InProcessBus nodeId: expected a non-empty string');
    network.nodes.add(this);
    this.presence = new InProcessPresence(network.presence, nodeId);
  }

  async publish(roomId: string, payload: string): Promise<void> {
    if (this.closed) throw new Error('the room bus is closed');
    if (this.network.nodes.size === 1) return;
    const targets = [...this.network.nodes].filter((node) => node !== this);
    queueMicrotask(() => {
      for (const node of targets) node.deliver(roomId, payload);
    });
  }

  subscribe(handler: Handler): void {
    this.handlers.push(handler);
  }

  async join(roomId: string): Promise<void> {
    this.rooms.add(roomId);
  }

  leave(roomId: string): void {
    this.rooms.delete(roomId);
  }

  /** An in-process bus is never cut off, so the handler is never called. */
  onConnectionChange(): void {}

  async health() {
    return { ok: true, provider: 'in-process', detail: `in-process bus, ${this.network.nodes.size} node(s)` };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.network.nodes.delete(this);
    this.presence.clear();
  }

  private deliver(roomId: string, payload: string): void {
    if (this.closed || !this.rooms.has(roomId)) return;
    for (const handler of this.handlers) {
      try {
        handler(roomId, payload);
      } catch {
        // One failing subscriber must not keep the payload from the others; handlers log their own errors.
      }
    }
  }
}
