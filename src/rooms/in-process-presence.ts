/** RoomPresence for nodes in one process: one shared table, nothing to expire. */
import { compareJoins, type PresenceEntry, type RoomPresence } from './types.js';

/** roomId → `node\nuserId` → entry. */
export type PresenceTable = Map<string, Map<string, PresenceEntry>>;

const key = (node: string, userId: string) => `${node}\n${userId}`;

export class InProcessPresence implements RoomPresence {
  readonly recheckMs = 0;

  constructor(
    private readonly table: PresenceTable,
    private readonly node: string,
  ) {}

  async set(roomId: string, member: { id: string; name: string }, since: number): Promise<void> {
    let room = this.table.get(roomId);
    if (!room) this.table.set(roomId, (room = new Map()));
    room.set(key(this.node, member.id), { node: this.node, id: member.id, name: member.name, since });
  }

  async remove(roomId: string, userId: string): Promise<void> {
    const room = this.table.get(roomId);
    if (room?.delete(key(this.node, userId)) && !room.size) this.table.delete(roomId);
  }

  async list(roomId: string): Promise<PresenceEntry[]> {
    const room = this.table.get(roomId);
    return room ? [...room.values()].map((e) => ({ ...e })).sort((a, b) => compareJoins(a.since, a.id, b.since, b.id)) : [];
  }

  async activeRooms(max: number): Promise<{ roomId: string; count: number }[]> {
    const out = [...this.table].map(([roomId, room]) => ({ roomId, count: new Set([...room.values()].map((e) => e.id)).size }));
    return out.sort((a, b) => b.count - a.count || a.roomId.localeCompare(b.roomId)).slice(0, max);
  }

  /** Entries here never expire: a node that stops removes its own. */
  async stale(): Promise<string[]> {
    return [];
  }

  /** Removes every entry of this node (it closed). */
  clear(): void {
    for (const [roomId, room] of this.table) {
      for (const [k, entry] of room) if (entry.node === this.node) room.delete(k);
      if (!room.size) this.table.delete(roomId);
    }
  }
}
