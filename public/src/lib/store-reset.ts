/**
 * Tells a welcome from a store that was wiped from one from a node that is behind. Both give a
 * `seq` below the newest the page holds: a wiped store starts its rooms' seqs again from 1, and a
 * node that lost touch with the others (or has not caught up yet) knows the room only up to where
 * it stopped, and welcomes a `lastSeq` ahead of it with its recent messages (src/rooms/loading.ts).
 *
 * Message ids are never reused, so the history decides: a node that is behind sends messages the
 * page holds, with the same ids at the same seqs; a wiped store sends new messages, none of which
 * the page holds, and a seq the page holds under another id. With nothing to compare (an empty
 * history, or one wholly below what the page holds) the page cannot tell, and takes it as the
 * reset it looks like: kept as "behind", the page would ask from a seq a wiped store never reaches.
 */
import type { Message } from '../../../src/protocol/messages.js';
import { isPrivateEntry, type MessageLog } from './message-log.js';

/** Whether the room's store was wiped since the page last heard from it (see the module's comment). */
export function storeWasReset(welcome: { seq: number; history: readonly Message[] }, log: MessageLog): boolean {
  if (welcome.seq >= log.lastSeq) return false;
  const seqById = new Map<string, number>();
  const idBySeq = new Map<number, string>();
  for (const e of log.entries) {
    if (e.state !== 'sent' || e.message.seq <= 0 || isPrivateEntry(e)) continue;
    seqById.set(e.message.id, e.message.seq);
    idBySeq.set(e.message.seq, e.message.id);
  }
  let agrees = false;
  for (const m of welcome.history) {
    const heldSeq = seqById.get(m.id);
    const heldId = idBySeq.get(m.seq);
    if ((heldSeq !== undefined && heldSeq !== m.seq) || (heldId !== undefined && heldId !== m.id)) return true;
    if (heldSeq === m.seq) agrees = true;
  }
  return !agrees;
}
