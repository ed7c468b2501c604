/**
 * Asks the room's store whether the messages the page holds are still there, when a welcome behind
 * the page cannot say itself (store-reset.ts: `unsure`, its history sharing no message with the
 * page). Every node reads the same store, so `GET /api/v1/rooms/:id/messages?before=&limit=`
 * answers for the room whichever node serves it: a node that is behind has not lost the page's
 * messages, a wiped store has.
 *
 * Only an answer that proves a reset counts as one: the page's messages missing from the newest
 * page before its newest seq, or the room unknown to the store. Anything else (no network, a 5xx,
 * rate limiting, no answer within PROBE_TIMEOUT_MS) proves nothing, and the page keeps what it
 * holds: the member's private questions exist nowhere else, and the next welcome that cannot say asks again.
 */
import type { Message } from '../../../src/protocol/messages.js';
import { ApiError, getJson } from './api.js';
import { MAX_LOG_ENTRIES } from './message-log.js';
import type { HeldMessage } from './store-reset.js';

/** What the store says of the page's messages: still there, gone, or nothing known. */
export type StoreAnswer = 'held' | 'gone' | 'unknown';

/** Messages the probe reads before the page's newest (the API's most): one deleted thread does not hide the rest. */
export const PROBE_PAGE = 100;
/** A probe with no answer by then is given up (as `unknown`). */
export const PROBE_TIMEOUT_MS = 10_000;

/**
 * What a page of the store's messages, the newest up to the page's newest seq, says of `held`: one
 * of them at its seq is proof the store was not wiped (ids are never reused); none, and the store
 * lost them.
 */
export function judgeStorePage(held: readonly HeldMessage[], page: readonly Message[]): 'held' | 'gone' {
  const seqById = new Map(held.map((m) => [m.id, m.seq]));
  return page.some((m) => seqById.get(m.id) === m.seq) ? 'held' : 'gone';
}

/** Asks the store of room `roomId` about `held` (see the module's comment); never throws. */
export async function askStore(roomId: string, held: readonly HeldMessage[], signal?: AbortSignal): Promise<StoreAnswer> {
  const newest = held.reduce((max, m) => Math.max(max, m.seq), 0);
  if (!newest) return 'unknown';
  try {
    const path = `/api/v1/rooms/${encodeURIComponent(roomId)}/messages?before=${newest + 1}&limit=${PROBE_PAGE}`;
    const page = await getJson<{ messages?: unknown }>(path, signal);
    if (!Array.isArray(page?.messages)) return 'unknown';
    return judgeStorePage(held, page.messages.filter(isMessageRef) as Message[]);
  } catch (err) {
    return err instanceof ApiError && err.code === 'ERR_ROOM_NOT_FOUND' ? 'gone' : 'unknown';
  }
}

function isMessageRef(m: unknown): boolean {
  const x = m as { id?: unknown; seq?: unknown } | null;
  return !!x && typeof x.id === 'string' && typeof x.seq === 'number';
}

/** What a reset found by the probe starts afresh from: the latest welcome's history and seq, and what arrived after it. */
export interface FreshStart {
  history: readonly Message[];
  seq: number;
  arrived: readonly Message[];
}

/**
 * One room's probe at a time, kept until it answers or gives up. A newer welcome does not cancel
 * it: the question (are the messages the page held still in the store?) is the same whatever
 * connection asks it, and ids are never reused, so "gone" stays true once it is; a welcome only
 * moves what a reset found starts afresh from (`rebase`). A socket that reconnects more often than
 * the probe takes to answer would otherwise cancel every probe and never settle the question.
 * Only another room (or the page leaving the room) cancels it.
 */
export class ResetProbe {
  private run: { abort: AbortController; timer: ReturnType<typeof setTimeout>; base: { history: readonly Message[]; seq: number }; arrived: Message[] } | null =
    null;

  /** Whether a probe is asking. */
  get pending(): boolean {
    return this.run !== null;
  }

  /**
   * Asks the store of `roomId` about `held`, unless a probe is asking already (then that one's
   * answer serves this welcome too, and returns false). `done` runs once with the answer and what
   * a reset starts afresh from (`welcome`, or the newest welcome `rebase` gave since, and the
   * messages that arrived after it), unless the probe was cancelled first; after PROBE_TIMEOUT_MS
   * the request is aborted and the answer is `unknown`.
   */
  start(
    roomId: string,
    held: readonly HeldMessage[],
    welcome: { history: readonly Message[]; seq: number },
    done: (answer: StoreAnswer, fresh: FreshStart) => void,
  ): boolean {
    if (this.run) return false;
    const abort = new AbortController();
    const run = { abort, timer: setTimeout(() => abort.abort(), PROBE_TIMEOUT_MS), base: welcome, arrived: [] as Message[] };
    this.run = run;
    void askStore(roomId, held, abort.signal).then((answer) => {
      if (this.run !== run) return;
      clearTimeout(run.timer);
      this.run = null;
      done(answer, { history: run.base.history, seq: run.base.seq, arrived: run.arrived });
    });
    return true;
  }

  /** A newer welcome of the room while the probe asks: a reset found starts afresh from it and what arrives after it. */
  rebase(welcome: { history: readonly Message[]; seq: number }): void {
    if (!this.run) return;
    this.run.base = welcome;
    this.run.arrived = [];
  }

  /** A message of the room arrived while the probe asks (kept for a reset found late). */
  noteArrival(message: Message): void {
    if (!this.run || message.seq <= 0) return;
    this.run.arrived.push(message);
    if (this.run.arrived.length > MAX_LOG_ENTRIES) this.run.arrived.shift();
  }

  /** Stops the probe asking: its request is aborted and its answer dropped. */
  cancel(): void {
    const run = this.run;
    if (!run) return;
    this.run = null;
    clearTimeout(run.timer);
    run.abort.abort();
  }
}
