/**
 * Messages stored in a room outside a server (`salon import`) reach the rooms live on the servers
 * sharing the store through the change log (OfflineChanges), as index changes made outside do: a
 * command has no bus. An entry of target `rooms` holds pairs [room key, seq]: the room's messages
 * after that seq were stored and published by nobody. The log's ids are numbers, so a room is named
 * by a 48-bit hash of its id; a node catches up each live room of that key (RoomHub.storedUnpublished),
 * so a collision costs one catch-up that finds nothing new.
 */
import { createHash } from 'node:crypto';
import type { ChangeApplier } from './index-sync.js';

/** The number a room is named by in the change log. */
export function roomKey(roomId: string): number {
  return createHash('sha256').update(roomId).digest().readUIntBE(0, 6);
}

/** The ids of a `rooms` entry: `roomId`'s messages after `afterSeq` were stored unpublished. */
export function roomChangeIds(roomId: string, afterSeq: number): number[] {
  return [roomKey(roomId), Math.max(0, afterSeq)];
}

/** What the `rooms` entries need of a node's rooms. */
export interface UnpublishedOutlet {
  /** Ids of the rooms live on this node. */
  liveRoomIds(): Iterable<string>;
  /** This node's live room `roomId` delivers to its members the messages after `afterSeq` they lack. */
  catchUpLocal(roomId: string, afterSeq: number): void;
}

/** The change log's `rooms` target: entries read from the log make this node's live rooms catch up. */
export function roomChangesApplier(rooms: UnpublishedOutlet): ChangeApplier {
  return {
    async applyStored(ids) {
      const after = new Map<number, number>();
      for (let i = 0; i + 1 < ids.length; i += 2) after.set(ids[i], Math.min(ids[i + 1], after.get(ids[i]) ?? Infinity));
      for (const roomId of rooms.liveRoomIds()) {
        const from = after.get(roomKey(roomId));
        if (from !== undefined) rooms.catchUpLocal(roomId, from);
      }
    },
  };
}
