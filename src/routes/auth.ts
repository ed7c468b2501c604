/**
 * Admin authentication: `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. Failed
 * attempts are counted per client address (IPv6: per /64) on every admin route and wherever a
 * token is offered for more detail (`/readyz`): past ADMIN_FAILURES_PER_MINUTE in a minute, every
 * admin attempt from that address is refused with 429 until the minute has passed, the right token
 * included, so guessing learns nothing more. A request that offers no bearer token guesses nothing
 * and is not counted. Each node counts its own.
 *
 * The token is all that tells the admin from a stranger, so no lock-out can both bound guessing and
 * spare an admin who shares the stranger's address: sparing the right token means comparing every
 * attempt, which hands the locked-out address an answer to each guess. Addresses are kept apart
 * instead: behind a proxy by TRUST_PROXY (src/routes/proxy-check.ts warns when it looks missing),
 * and a lock-out is logged with its address (docs/architecture.md).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { errors, withRetryAfterMs } from '../errors.js';
import { DEFAULT_MAX_KEYS, WindowLimiter } from '../rag/rate-limit.js';
import { addressKey, isLocalNetworkAddress } from '../rooms/address.js';

/** Failed admin authentications one client address may make a minute. */
export const ADMIN_FAILURES_PER_MINUTE = 10;
const MINUTE_MS = 60_000;

/**
 * Compares the SHA-256 digests, which always have the same length: comparing the strings needed
 * equal lengths first, and returning early on a different length told a guesser the token's length.
 */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * How one request's admin authentication went: `blockedForMs` > 0 when the address was locked out
 * already, `lockedOut` when this failure locked it out.
 */
export type AdminCheck = { ok: true } | { ok: false; blockedForMs: number; lockedOut?: true };

/** The token a header offers (`Bearer <token>`), or null when it offers none. */
function offeredToken(header: string | undefined): string | null {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return m === null ? null : m[1].trim();
}

/** The admin token and the failed attempts of each client address (one per app). */
export class AdminAuth {
  private readonly failures: WindowLimiter;

  /** `maxAddresses`: addresses whose failures are remembered at most (see WindowLimiter's cap). */
  constructor(
    private readonly token: string,
    maxAddresses = DEFAULT_MAX_KEYS,
  ) {
    this.failures = new WindowLimiter({ limit: ADMIN_FAILURES_PER_MINUTE, windowMs: MINUTE_MS }, 'AdminAuth', maxAddresses);
  }

  /** Addresses whose failed attempts are remembered now (tests). */
  get addresses(): number {
    return this.failures.size;
  }

  /**
   * Checks `header` (an Authorization header) from `address`. An address past its failures is
   * refused without a comparison (`blockedForMs` > 0); any other wrong token is counted. No
   * bearer token at all is refused and not counted.
   */
  check(header: string | undefined, address: string, now = Date.now()): AdminCheck {
    const key = addressKey(address);
    const blockedForMs = this.failures.waitMs(key, now);
    if (blockedForMs > 0) return { ok: false, blockedForMs };
    const offered = offeredToken(header);
    if (offered === null) return { ok: false, blockedForMs: 0 };
    if (sameSecret(offered, this.token)) return { ok: true };
    this.failures.record(key, now);
    return this.failures.waitMs(key, now) > 0 ? { ok: false, blockedForMs: 0, lockedOut: true } : { ok: false, blockedForMs: 0 };
  }
}

/**
 * onRequest hook for admin routes: needs `Authorization: Bearer <ADMIN_TOKEN>`. It runs before the
 * body is read and validated, so an unauthenticated caller learns nothing about the schema and
 * cannot make the server parse a large body. 401 when the token is wrong or missing; 429 (with
 * Retry-After) from an address past its failed attempts.
 */
export async function requireAdmin(request: FastifyRequest): Promise<void> {
  const checked = checkAdmin(request);
  if (checked.ok) return;
  if (checked.blockedForMs > 0) {
    const seconds = Math.ceil(checked.blockedForMs / 1000);
    const refused = new errors.ERR_RATE_LIMITED(`at most ${ADMIN_FAILURES_PER_MINUTE} failed admin attempts a minute from one address; retry in ${seconds} s`);
    throw withRetryAfterMs(refused, checked.blockedForMs);
  }
  throw new errors.ERR_UNAUTHORIZED();
}

/**
 * Whether the request carries `Authorization: Bearer <ADMIN_TOKEN>` (for routes that show admins
 * more). A wrong token counts as a failed attempt; no Authorization header is no attempt.
 */
export function isAdmin(request: FastifyRequest): boolean {
  if (request.headers.authorization === undefined) return false;
  return checkAdmin(request).ok;
}

/** The check of `request`'s token; a failure that locks its address out is logged. */
function checkAdmin(request: FastifyRequest): AdminCheck {
  const checked = request.server.adminAuth.check(request.headers.authorization, request.ip);
  if (!checked.ok && checked.lockedOut) {
    const address = addressKey(request.ip);
    const hint =
      isLocalNetworkAddress(request.ip) && request.ip === request.raw.socket?.remoteAddress ? '; if this is your proxy, set TRUST_PROXY to its address' : '';
    request.log.warn(
      { address },
      `${ADMIN_FAILURES_PER_MINUTE} failed admin attempts in a minute from ${address}: its admin attempts are refused for a minute${hint}`,
    );
  }
  return checked;
}

/** Security scheme for admin routes in the OpenAPI document. */
export const adminSecurity = [{ adminToken: [] as string[] }];

declare module 'fastify' {
  interface FastifyInstance {
    adminAuth: AdminAuth;
  }
}
