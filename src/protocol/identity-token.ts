/**
 * The shape of an identity token (docs/protocol.md): `v2.<userId>.<issuedAtSeconds>.<signature>`,
 * or the older `v1.<userId>.<signature>`, which carries no issue time. Only the server can tell a
 * good token from a forged one (src/rooms/identity.ts); the browser reads the user id out of the
 * token it keeps, since renewal changes the token at every join but never the id.
 */

/** A user id as the server issues it. */
export const USER_ID = /^u_[A-Za-z0-9_-]{16}$/;
/** An issue time in whole seconds, written as the server writes it (no sign, no leading zeros). */
const ISSUED_AT = /^(?:0|[1-9]\d{0,11})$/;

/** A token taken apart, not yet checked. */
export type TokenParts = { version: 1; userId: string; signature: string } | { version: 2; userId: string; issuedAt: number; signature: string };

/** The parts of `token`, or null when it is not shaped like a token of either version. */
export function parseIdentityToken(token: string): TokenParts | null {
  const parts = token.split('.');
  const [version, userId] = parts;
  if (!USER_ID.test(userId ?? '')) return null;
  if (version === 'v1' && parts.length === 3 && parts[2]) return { version: 1, userId, signature: parts[2] };
  if (version === 'v2' && parts.length === 4 && ISSUED_AT.test(parts[2]) && parts[3]) {
    return { version: 2, userId, issuedAt: Number(parts[2]), signature: parts[3] };
  }
  return null;
}

/** The user id a token names (unchecked), or undefined when it is not shaped like a token. */
export function userIdOfToken(token: string): string | undefined {
  return parseIdentityToken(token)?.userId;
}
