/**
 * Tells a welcome from a store that was wiped from one from a node that is behind. Both give a
 * `seq` below the newest the page holds: a wiped store starts its rooms' seqs again from 1, and a
 * node that lost touch with the others (or has not caught up yet) knows the room only up to where
 * it stopped, and welcomes a `lastSeq` ahead of it with its recent messages (src/rooms/loading.ts).
 *
 * Message ids are never reused, so the history decides: a node that is behind sends messages the
 * page holds, with the same ids at the same seqs; a wiped store sends new messages, none of which
 * the page holds, and a seq the page holds under another id. With nothing to compare (an empty
 * history, or one wholly below what the page holds: a node more than its history's length behind)
 * the welcome cannot say, and the store is asked instead (reset-probe.ts).
 */
import type { Message } from '../../../src/protocol/messages.js';
import { isPrivateEntry, type MessageLog } from './message-log.js';

/**
 * What a welcome says of the room's store beside what the page holds: `current` (not behind the
 * page), `behind` (a node behind the others: its history agrees with the page), `reset` (a wiped
 * store: its history gives a held seq to another message) or `unsure` (behind the page, and its
 * history shares no message with it).
 */
export type WelcomeVerdict = 'current' | 'behind' | 'reset' | 'unsure';

/** A message the page holds from the server: its id at its seq. */
export interface HeldMessage {
  id: string;
  seq: number;
}

/** The messages the page holds from the room's store (confirmed, with a seq; not the member's private ones), oldest first. */
export function heldMessages(log: MessageLog): HeldMessage[] {
  const held: HeldMessage[] = [];
  for (const e of log.entries) {
    if (e.state !== 'sent' || e.message.seq <= 0 || isPrivateEntry(e)) continue;
    held.push({ id: e.message.id, seq: e.message.seq });
  }
  return held;
}

/** What `welcome` says of the room's store (see WelcomeVerdict and the module's comment). */
export function judgeWelcome(welcome: { seq: number; history: readonly Message[] }, log: MessageLog): WelcomeVerdict {
  if (welcome.seq >= log.lastSeq) return 'current';
  const seqById = new Map<string, number>();
  const idBySeq = new Map<number, string>();
  for (const { id, seq } of heldMessages(log)) {
    seqById.set(id, seq);
    idBySeq.set(seq, id);
  }
  let agrees = false;
  for (const m of welcome.history) {
    const heldSeq = seqById.get(m.id);
    const heldId = idBySeq.get(m.seq);
    if ((heldSeq !== undefined && heldSeq !== m.seq) || (heldId !== undefined && heldId !== m.id)) return 'reset';
    if (heldSeq === m.seq) agrees = true;
  }
  return agrees ? 'behind' : 'unsure';
}
