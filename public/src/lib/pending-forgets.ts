/**
 * "Forget them" requests the server has not been told yet (pressed while the room was not
 * connected), kept in localStorage (`salon.forget.<roomId>`, the identity tokens that asked) so
 * that a reload, another tab of the same identity, or the browser opened again later still sends
 * `/forget private` at the room's next welcome. Kept in the page as well, for a browser that
 * refuses storage. Each is for one room and one identity: the server forgets the private memory
 * of whoever sends the command, so a request is only sent by the identity that made it.
 */
import { parseUntrustedJson } from './untrusted-json.js';
import type { StorageLike } from './private-asks.js';

/** Most identities a room's entry keeps (a browser rarely has more than one; a tampered entry could). */
const MAX_TOKENS = 8;

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

  /** `token` asked to forget its private memory of `roomId`. */
  add(roomId: string, token: string): void {
    const tokens = this.read(roomId);
    tokens.add(token);
    this.write(roomId, tokens);
  }

  /** Whether `token` has a request for `roomId` waiting. */
  has(roomId: string, token: string): boolean {
    return this.read(roomId).has(token);
  }

  /** The request was sent (or is being sent: `add` it again if the reply was lost). */
  remove(roomId: string, token: string): void {
    const tokens = this.read(roomId);
    if (!tokens.delete(token)) return;
    this.write(roomId, tokens);
  }

  private read(roomId: string): Set<string> {
    const tokens = new Set(this.inPage.get(roomId));
    let stored: unknown = null;
    try {
      stored = parseUntrustedJson(this.storage?.getItem(key(roomId)) ?? 'null');
    } catch {
      stored = null;
    }
    if (Array.isArray(stored)) for (const t of stored.slice(0, MAX_TOKENS)) if (typeof t === 'string' && t) tokens.add(t);
    return tokens;
  }

  private write(roomId: string, tokens: Set<string>): void {
    const list = [...tokens].slice(-MAX_TOKENS);
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
