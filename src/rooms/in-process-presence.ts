/** RoomPresence for nodes in one process: one shared table, nothing to expire. */
import { compareJoins, type PresenceEntry, type RoomPresence } from './types.js';

/** One room's entries and how many of them each user has (one per node they are connected to). */
interface PresenceRoom {
  /** `node\nuserId` → entry. */
  entries: Map<string, PresenceEntry>;
  /** userId → entries: its size is the room's member count, read without a pass over the members. */
  users: Map<string, number>;
}

/** roomId → the room's presence, shared by the nodes of one process. */
export type PresenceTable = Map<string, PresenceRoom>;

const key = (node: string, userId: string) => `${node}\n${userId}`;

export class InProcessPresence implements RoomPresence {
  readonly recheckMs = 0;

  constructor(
    private readonly table: PresenceTable,
    private readonly node: string,
  ) {}

  /** Entries here never expire, so never lapse. */
  onLapsed(): void {}

  async set(roomId: string, member: { id: string; name: string }, since: number): Promise<void> {
    let room = this.table.get(roomId);
    if (!room) this.table.set(roomId, (room = { entries: new Map(), users: new Map() }));
    const k = key(this.node, member.id);
    if (!room.entries.has(k)) room.users.set(member.id, (room.users.get(member.id) ?? 0) + 1);
    room.entries.set(k, { node: this.node, id: member.id, name: member.name, since });
  }

  async remove(roomId: string, userId: string): Promise<void> {
    const room = this.table.get(roomId);
    if (room) this.drop(roomId, room, key(this.node, userId), userId);
  }

  async list(roomId: string): Promise<PresenceEntry[]> {
    const room = this.table.get(roomId);
    return room ? [...room.entries.values()].map((e) => ({ ...e })).sort((a, b) => compareJoins(a.since, a.id, b.since, b.id)) : [];
  }

  async activeRooms(max: number): Promise<{ roomId: string; count: number }[]> {
    const out = [...this.table].map(([roomId, room]) => ({ roomId, count: room.users.size }));
    return out.sort((a, b) => b.count - a.count || a.roomId.localeCompare(b.roomId)).slice(0, max);
  }

  /** Entries here never expire: a node that stops removes its own. */
  async stale(): Promise<string[]> {
    return [];
  }

  /** Removes every entry of this node (it closed). */
  clear(): void {
    for (const [roomId, room] of this.table) for (const [k, entry] of room.entries) if (entry.node === this.node) this.drop(roomId, room, k, entry.id);
  }

  private drop(roomId: string, room: PresenceRoom, k: string, userId: string): void {
    if (!room.entries.delete(k)) return;
    const left = (room.users.get(userId) ?? 1) - 1;
    if (left > 0) room.users.set(userId, left);
    else room.users.delete(userId);
    if (!room.entries.size) this.table.delete(roomId);
  }
}
