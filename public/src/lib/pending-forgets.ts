/**
 * "Forget them" requests the server has not been told yet (pressed while the room was not
 * connected), kept in localStorage (`salon.forget.<roomId>`, the user ids that asked) so that a
 * reload, another tab of the same identity, or the browser opened again later still sends
 * `/forget private` at the room's next welcome. Kept in the page as well, for a browser that
 * refuses storage. Each is for one room and one identity: the server forgets the private memory
 * of whoever sends the command, so a request is only sent by the identity that made it. Filed by
 * user id, not token: every welcome renews the token, so a token would not find its request again.
 *
 * Beside each request, the server's passing refusals of it in a row and when it may be sent again
 * (`salon.forget-retry.<roomId>`, forget-retry.ts): kept in storage too, so that a reload neither
 * sends it before its wait is over nor starts the count again. A separate key, so that a page of
 * an older version, which reads and rewrites the list, keeps working on it.
 *
 * A request stays until the last `/forget private` it stands for is answered: one asked for while
 * another was on its way, after private questions that one cannot cover, keeps the entry through
 * the first answer (`followedBy`). A page that goes meanwhile leaves it to the next page, whose
 * welcome sends it, later than all of them: no second flag needs keeping.
 */
import { userIdOfToken } from '../../../src/protocol/identity-token.js';
import { parseUntrustedJson } from './untrusted-json.js';
import type { StorageLike } from './private-asks.js';

/** Most identities a room's entry keeps (a browser rarely has more than one; a tampered entry could). */
const MAX_IDENTITIES = 8;

/** This browser's localStorage, or null where it is refused (privacy settings, sandboxed frames). */
function browserStorage(): StorageLike | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

const key = (roomId: string) => `salon.forget.${roomId}`;
const retryKey = (roomId: string) => `salon.forget-retry.${roomId}`;

/** A pending request's passing refusals in a row, and the earliest time (epoch ms) to send it again. */
export interface ForgetRetry {
  refusals: number;
  retryAt: number;
}

const NO_RETRY: ForgetRetry = Object.freeze({ refusals: 0, retryAt: 0 });

/** The pending requests of this page, by room: what storage holds, and what it refused to hold. */
export class PendingForgets {
  private readonly inPage = new Map<string, Set<string>>();
  private readonly retriesInPage = new Map<string, Map<string, ForgetRetry>>();

  constructor(private readonly storage: StorageLike | null = browserStorage()) {}

  /** `userId` asked to forget its private memory of `roomId`. */
  add(roomId: string, userId: string): void {
    const ids = this.read(roomId);
    // Pressed again while it waits: the count and the wait go on (pressing cannot hurry the server).
    if (!ids.has(userId)) this.writeRetry(roomId, userId, null);
    ids.add(userId);
    this.write(roomId, ids);
  }

  /** Whether `userId` has a request for `roomId` waiting. */
  has(roomId: string, userId: string): boolean {
    return this.read(roomId).has(userId);
  }

  /** The request was sent (or is being sent: `add` it again if the reply was lost). */
  remove(roomId: string, userId: string): void {
    this.writeRetry(roomId, userId, null);
    const ids = this.read(roomId);
    if (!ids.delete(userId)) return;
    this.write(roomId, ids);
  }

  /**
   * The request was answered, and another `/forget private` follows it (asked for after it went
   * out: RoomController.sendForget): the entry stays, so the next page sends it if this one goes
   * first, and its refusals and wait start afresh, as the new command's.
   */
  followedBy(roomId: string, userId: string): void {
    this.writeRetry(roomId, userId, null);
    // Kept, or filed again if another page of the browser took it meanwhile (its own command answered).
    const ids = this.read(roomId);
    ids.add(userId);
    this.write(roomId, ids);
  }

  /** The refusals and wait of `userId`'s request for `roomId` (none: 0 and 0). */
  retry(roomId: string, userId: string): ForgetRetry {
    return this.readRetries(roomId).get(userId) ?? NO_RETRY;
  }

  /** The server refused the request in a way that passes: one more refusal, sent again at `retryAt`. */
  refused(roomId: string, userId: string, retryAt: number): ForgetRetry {
    const next = { refusals: this.retry(roomId, userId).refusals + 1, retryAt };
    this.writeRetry(roomId, userId, next);
    return next;
  }

  /** What the tab holds under `name`, parsed as untrusted; null when absent, unreadable or not JSON. */
  private stored(name: string): unknown {
    try {
      return parseUntrustedJson(this.storage?.getItem(name) ?? 'null');
    } catch {
      return null;
    }
  }

  private read(roomId: string): Set<string> {
    const ids = new Set(this.inPage.get(roomId));
    const stored = this.stored(key(roomId));
    if (Array.isArray(stored)) {
      // An entry written before tokens were renewed holds the token that asked: its id is who asked.
      for (const t of stored.slice(0, MAX_IDENTITIES)) if (typeof t === 'string' && t) ids.add(userIdOfToken(t) ?? t);
    }
    return ids;
  }

  private readRetries(roomId: string): Map<string, ForgetRetry> {
    const retries = new Map(this.retriesInPage.get(roomId));
    const stored = this.stored(retryKey(roomId));
    if (stored && typeof stored === 'object' && !Array.isArray(stored)) {
      for (const [userId, r] of Object.entries(stored).slice(0, MAX_IDENTITIES)) {
        const { refusals, retryAt } = (r ?? {}) as Partial<ForgetRetry>;
        // A tampered entry counts as far as it makes sense: whole refusals, a finite time.
        if (Number.isSafeInteger(refusals) && refusals! > 0 && Number.isFinite(retryAt)) retries.set(userId, { refusals: refusals!, retryAt: retryAt! });
      }
    }
    return retries;
  }

  private writeRetry(roomId: string, userId: string, retry: ForgetRetry | null): void {
    const retries = this.readRetries(roomId);
    if (retry) retries.set(userId, retry);
    else if (!retries.delete(userId)) return;
    const list = [...retries].slice(-MAX_IDENTITIES);
    if (list.length) this.retriesInPage.set(roomId, new Map(list));
    else this.retriesInPage.delete(roomId);
    try {
      if (!list.length) this.storage?.removeItem(retryKey(roomId));
      else this.storage?.setItem(retryKey(roomId), JSON.stringify(Object.fromEntries(list)));
    } catch {
      // As for the list: the page keeps the count.
    }
  }

  private write(roomId: string, ids: Set<string>): void {
    const list = [...ids].slice(-MAX_IDENTITIES);
    if (list.length) this.inPage.set(roomId, new Set(list));
    else this.inPage.delete(roomId);
    try {
      if (!list.length) this.storage?.removeItem(key(roomId));
      else this.storage?.setItem(key(roomId), JSON.stringify(list));
    } catch {
      // Storage full or refused: the page keeps the request until it is sent or the page goes.
    }
  }
}
