/**
 * Messages stored in a room outside a server (`salon import`) reach the rooms live on the servers
 * sharing the store through the change log (OfflineChanges), as index changes made outside do: a
 * command has no bus. An entry of target `rooms` holds pairs [room key, seq]: the room's messages
 * after that seq were stored and published by nobody. The log's ids are numbers, so a room is named
 * by a 48-bit hash of its id; a node catches up each live room of that key (RoomHub.storedUnpublished),
 * so a collision costs one catch-up that finds nothing new.
 *
 * The seqs an import made readable (runs, NodeSync.storedUnpublished) follow their room's pair, each
 * run as two pairs: [key + RUN_FROM, first seq], [key + RUN_TO, last seq]. A key is below 2^48, so
 * a node that reads pairs alone finds no room of those keys and skips them.
 */
import { createHash } from 'node:crypto';
import type { SeqRun } from '../rooms/seq-window.js';
import type { ChangeApplier } from './index-sync.js';

/** The number a room is named by in the change log. */
export function roomKey(roomId: string): number {
  return createHash('sha256').update(roomId).digest().readUIntBE(0, 6);
}

/** Added to a room's key in the pair giving a run's first seq. */
const RUN_FROM = 2 ** 48;
/** Added to a room's key in the pair giving a run's last seq. */
const RUN_TO = 2 ** 49;

/** The ids of a `rooms` entry: `roomId`'s messages after `afterSeq` were stored unpublished, the seqs of `runs` made readable. */
export function roomChangeIds(roomId: string, afterSeq: number, runs: readonly SeqRun[] = []): number[] {
  const key = roomKey(roomId);
  return [key, Math.max(0, afterSeq), ...runs.flatMap(([from, to]) => [key + RUN_FROM, from, key + RUN_TO, to])];
}

/** What the `rooms` entries need of a node's rooms. */
export interface UnpublishedOutlet {
  /** Ids of the rooms live on this node. */
  liveRoomIds(): Iterable<string>;
  /** This node's live room `roomId` delivers to its members the messages after `afterSeq` they lack, and those of `runs`. */
  catchUpLocal(roomId: string, afterSeq: number, runs: SeqRun[]): void;
}

/** The change log's `rooms` target: entries read from the log make this node's live rooms catch up. */
export function roomChangesApplier(rooms: UnpublishedOutlet): ChangeApplier {
  return {
    async applyStored(ids) {
      const after = new Map<number, number>();
      const runs = new Map<number, SeqRun[]>();
      let first: { key: number; seq: number } | null = null;
      for (let i = 0; i + 1 < ids.length; i += 2) {
        const [key, seq] = [ids[i], ids[i + 1]];
        if (key >= RUN_TO) {
          if (first?.key === key - RUN_TO && first.seq <= seq) runs.set(first.key, [...(runs.get(first.key) ?? []), [first.seq, seq]]);
          first = null;
        } else if (key >= RUN_FROM) first = { key: key - RUN_FROM, seq };
        else after.set(key, Math.min(seq, after.get(key) ?? Infinity));
      }
      for (const roomId of rooms.liveRoomIds()) {
        const key = roomKey(roomId);
        const from = after.get(key);
        if (from !== undefined) rooms.catchUpLocal(roomId, from, runs.get(key) ?? []);
      }
    },
  };
}
