/**
 * "Forget them" requests the server has not been told yet (pressed while the room was not
 * connected), kept in localStorage (`salon.forget.<roomId>`, the user ids that asked) so that a
 * reload, another tab of the same identity, or the browser opened again later still sends
 * `/forget private` at the room's next welcome. Kept in the page as well, for a browser that
 * refuses storage. Each is for one room and one identity: the server forgets the private memory
 * of whoever sends the command, so a request is only sent by the identity that made it. Filed by
 * user id, not token: every welcome renews the token, so a token would not find its request again.
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

/** The pending requests of this page, by room: what storage holds, and what it refused to hold. */
export class PendingForgets {
  private readonly inPage = new Map<string, Set<string>>();

  constructor(private readonly storage: StorageLike | null = browserStorage()) {}

  /** `userId` asked to forget its private memory of `roomId`. */
  add(roomId: string, userId: string): void {
    const ids = this.read(roomId);
    ids.add(userId);
    this.write(roomId, ids);
  }

  /** Whether `userId` has a request for `roomId` waiting. */
  has(roomId: string, userId: string): boolean {
    return this.read(roomId).has(userId);
  }

  /** The request was sent (or is being sent: `add` it again if the reply was lost). */
  remove(roomId: string, userId: string): void {
    const ids = this.read(roomId);
    if (!ids.delete(userId)) return;
    this.write(roomId, ids);
  }

  private read(roomId: string): Set<string> {
    const ids = new Set(this.inPage.get(roomId));
    let stored: unknown = null;
    try {
      stored = parseUntrustedJson(this.storage?.getItem(key(roomId)) ?? 'null');
    } catch {
      stored = null;
    }
    if (Array.isArray(stored)) {
      // An entry written before tokens were renewed holds the token that asked: its id is who asked.
      for (const t of stored.slice(0, MAX_IDENTITIES)) if (typeof t === 'string' && t) ids.add(userIdOfToken(t) ?? t);
    }
    return ids;
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
