/**
 * Room identities: a user id and the time it was issued, signed with HMAC-SHA256, so a reconnecting
 * user keeps the same id, nobody can claim an id they were not given, and a token copied or leaked
 * stops working once it is older than IDENTITY_TOKEN_TTL_DAYS (each join renews it). The secret is
 * IDENTITY_SECRET when set (required with many nodes: every node must accept every other's
 * tokens), else generated once and kept in DATA_DIR with mode 0600.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseIdentityToken } from '../protocol/identity-token.js';

export const IDENTITY_SECRET_FILE = 'identity.key';
const SECRET_BYTES = 32;
/** Tokens issued by a clock this far ahead of the checking node's are still taken (nodes' clocks drift). */
export const TOKEN_CLOCK_SKEW_SECONDS = 300;
/** IDENTITY_TOKEN_TTL_DAYS's default. */
export const DEFAULT_TOKEN_TTL_DAYS = 30;
const SECONDS_PER_DAY = 86_400;

/** Whether two strings are the same, in a time that does not tell where they differ. */
function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

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

/** Construction options of an Identity. */
export interface IdentityOptions {
  /** Days a token is taken after it was issued (IDENTITY_TOKEN_TTL_DAYS); every join renews it. */
  tokenTtlDays?: number;
  /** The clock, in epoch milliseconds (tests pass their own). */
  now?: () => number;
  /**
   * When a `v1` token, which carries no issue time, counts as issued (epoch seconds): when this
   * deployment first ran with expiring tokens (legacy-tokens.ts reads it from the store). Until it
   * is set, when this Identity was made.
   */
  legacyIssuedAt?: number;
}

/** What a token proves: its user id (`legacy` for a `v1` token), or why it is refused. */
export type TokenCheck = { ok: true; userId: string; legacy: boolean } | { ok: false; reason: 'invalid' | 'expired' };

/**
 * Issues and checks identity tokens: `v2.<userId>.<issuedAtSeconds>.<signature>`, the signature
 * covering the id and the time, taken for `tokenTtlDays` after they were issued. `v1.<userId>.<signature>`
 * tokens (before expiry existed) are taken as if issued at `legacyIssuedAt`.
 */
export class Identity {
  readonly #secret: Buffer;
  readonly #ttlSeconds: number;
  readonly #now: () => number;
  #legacyIssuedAt: number;

  constructor(secret: Buffer, options: IdentityOptions = {}) {
    if (secret.length < 16) throw new TypeError('Identity secret: expected at least 16 bytes');
    const days = options.tokenTtlDays ?? DEFAULT_TOKEN_TTL_DAYS;
    if (!Number.isInteger(days) || days < 1) throw new TypeError(`Identity tokenTtlDays: expected a whole number of days, 1 or more, got ${days}`);
    this.#secret = secret;
    this.#ttlSeconds = days * SECONDS_PER_DAY;
    // Read at each call, not captured: fake timers replace Date after the Identity is made.
    this.#now = options.now ?? (() => Date.now());
    this.#legacyIssuedAt = options.legacyIssuedAt ?? this.#nowSeconds();
  }

  /** Days a token is accepted after it was issued. */
  get tokenTtlDays(): number {
    return this.#ttlSeconds / SECONDS_PER_DAY;
  }

  /** When `v1` tokens count as issued (epoch seconds); see IdentityOptions.legacyIssuedAt. */
  get legacyIssuedAt(): number {
    return this.#legacyIssuedAt;
  }

  set legacyIssuedAt(seconds: number) {
    this.#legacyIssuedAt = seconds;
  }

  /** A new user id and its token. */
  issue(): { id: string; token: string } {
    const id = `u_${randomBytes(12).toString('base64url')}`;
    return { id, token: this.renew(id) };
  }

  /** A token for `userId` issued now: what an accepted hello gets back, so an active member never expires. */
  renew(userId: string): string {
    const issuedAt = this.#nowSeconds();
    return `v2.${userId}.${issuedAt}.${this.#sign(userId, issuedAt)}`;
  }

  /** The user id `token` proves; refused as `invalid` when malformed or forged, `expired` past its lifetime. */
  check(token: string): TokenCheck {
    const parts = parseIdentityToken(token);
    if (!parts) return { ok: false, reason: 'invalid' };
    const issuedAt = parts.version === 2 ? parts.issuedAt : undefined;
    if (!sameText(parts.signature, this.#sign(parts.userId, issuedAt))) return { ok: false, reason: 'invalid' };
    const now = this.#nowSeconds();
    const age = now - (issuedAt ?? this.#legacyIssuedAt);
    // Signed here, yet from the future: a clock far off on some node, which must not lengthen a lifetime.
    if (issuedAt !== undefined && age < -TOKEN_CLOCK_SKEW_SECONDS) return { ok: false, reason: 'invalid' };
    if (age > this.#ttlSeconds) return { ok: false, reason: 'expired' };
    return { ok: true, userId: parts.userId, legacy: parts.version === 1 };
  }

  /**
   * A stable member id for a client known only by its address (the HTTP ask): an HMAC under the
   * server secret, so the id cannot be turned back into the address by hashing guesses, as a plain
   * hash of an IPv4 address can in seconds.
   */
  addressId(address: string): string {
    return `http_${createHmac('sha256', this.#secret).update(`salon-address:${address}`).digest('base64url').slice(0, 22)}`;
  }

  /** A `v2` signature covers the id and the issue time; a `v1` one (no time) only the id. */
  #sign(id: string, issuedAt: number | undefined): string {
    const signed = issuedAt === undefined ? `salon-user:${id}` : `salon-user-v2:${id}.${issuedAt}`;
    return createHmac('sha256', this.#secret).update(signed).digest('base64url');
  }

  #nowSeconds(): number {
    return Math.floor(this.#now() / 1000);
  }
}
