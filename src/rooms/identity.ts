/**
 * Room identities: a user id plus an HMAC-SHA256 signature of it, so a reconnecting user keeps the
 * same id and nobody can claim an id they were not given. The secret is IDENTITY_SECRET when set
 * (required with many nodes: every node must accept every other's tokens), else generated once
 * and kept in DATA_DIR with mode 0600.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const IDENTITY_SECRET_FILE = 'identity.key';
const SECRET_BYTES = 32;
const USER_ID = /^u_[A-Za-z0-9_-]{16}$/;
const TOKEN_PREFIX = 'v1.';

/** Reads DATA_DIR's identity secret, creating it (mode 0600) when absent. */
export function loadOrCreateSecret(dataDir: string): Buffer {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, IDENTITY_SECRET_FILE);
  try {
    writeFileSync(file, randomBytes(SECRET_BYTES).toString('hex'), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  if (secret.length < 16) throw new Error(`${file}: the identity secret is too short; delete the file to make a new one`);
  return secret;
}

/** Issues and checks identity tokens (`v1.<userId>.<signature>`). */
export class Identity {
  readonly #secret: Buffer;

  constructor(secret: Buffer) {
    if (secret.length < 16) throw new TypeError('Identity secret: expected at least 16 bytes');
    this.#secret = secret;
  }

  /** A new user id and its token. */
  issue(): { id: string; token: string } {
    const id = `u_${randomBytes(12).toString('base64url')}`;
    return { id, token: `${TOKEN_PREFIX}${id}.${this.#sign(id)}` };
  }

  /** The user id a token proves, or null when it is malformed or forged. */
  verify(token: string): string | null {
    if (!token.startsWith(TOKEN_PREFIX)) return null;
    const dot = token.lastIndexOf('.');
    const id = token.slice(TOKEN_PREFIX.length, dot);
    if (!USER_ID.test(id)) return null;
    const given = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(this.#sign(id));
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
  }

  /**
   * A stable member id for a client known only by its address (the HTTP ask): an HMAC under the
   * server secret, so the id cannot be turned back into the address by hashing guesses, as a plain
   * hash of an IPv4 address can in seconds.
   */
  addressId(address: string): string {
    return `http_${createHmac('sha256', this.#secret).update(`salon-address:${address}`).digest('base64url').slice(0, 22)}`;
  }

  #sign(id: string): string {
    return createHmac('sha256', this.#secret).update(`salon-user:${id}`).digest('base64url');
  }
}
