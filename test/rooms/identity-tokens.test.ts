/** Identity tokens that expire: v2 tokens carry their signed issue time, v1 tokens count from the upgrade, every join renews. */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { parseIdentityToken, userIdOfToken } from '../../src/protocol/identity-token.js';
import { Identity, TOKEN_CLOCK_SKEW_SECONDS } from '../../src/rooms/identity.js';
import { LEGACY_TOKENS_META_KEY, adoptLegacyTokenTime } from '../../src/rooms/legacy-tokens.js';

const SECRET = Buffer.alloc(32, 7);
const DAY_MS = 86_400_000;
/** 2026-11-01T00:00:00Z, a whole second. */
const START_MS = Date.UTC(2026, 10, 1);

/** An Identity on a clock the test moves by hand. */
function onClock(options: { tokenTtlDays?: number; legacyIssuedAt?: number } = {}) {
  const clock = { ms: START_MS };
  const identity = new Identity(SECRET, { ...options, now: () => clock.ms });
  return { identity, clock };
}

/** A token as the server wrote them before tokens expired: `v1.<id>.<HMAC of the id>`. */
function v1Token(userId: string, secret = SECRET): string {
  return `v1.${userId}.${createHmac('sha256', secret).update(`salon-user:${userId}`).digest('base64url')}`;
}

const issuedAt = (token: string) => (parseIdentityToken(token) as { issuedAt: number }).issuedAt;

describe('identity tokens', () => {
  it('carry the user id and the issue time, signed', () => {
    const { identity } = onClock();
    const { id, token } = identity.issue();
    expect(token).toMatch(/^v2\.u_[A-Za-z0-9_-]{16}\.\d+\.[A-Za-z0-9_-]+$/);
    expect(parseIdentityToken(token)).toMatchObject({ version: 2, userId: id, issuedAt: START_MS / 1000 });
    expect(userIdOfToken(token)).toBe(id);
    expect(identity.check(token)).toEqual({ ok: true, userId: id, legacy: false });
  });

  it('are refused as expired past IDENTITY_TOKEN_TTL_DAYS, and taken up to it', () => {
    const { identity, clock } = onClock({ tokenTtlDays: 30 });
    const { id, token } = identity.issue();
    clock.ms = START_MS + 30 * DAY_MS;
    expect(identity.check(token)).toEqual({ ok: true, userId: id, legacy: false });
    clock.ms += 1000;
    expect(identity.check(token)).toEqual({ ok: false, reason: 'expired' });
    clock.ms += 365 * DAY_MS;
    expect(identity.check(token)).toEqual({ ok: false, reason: 'expired' });
  });

  it('are renewed with a later issue time and the same id, and the renewed one lives on', () => {
    const { identity, clock } = onClock({ tokenTtlDays: 30 });
    const first = identity.issue();
    clock.ms += 20 * DAY_MS;
    const renewed = identity.renew(first.id);
    expect(userIdOfToken(renewed)).toBe(first.id);
    expect(issuedAt(renewed)).toBe(issuedAt(first.token) + 20 * 86_400);
    clock.ms += 20 * DAY_MS;
    expect(identity.check(first.token)).toEqual({ ok: false, reason: 'expired' });
    expect(identity.check(renewed)).toEqual({ ok: true, userId: first.id, legacy: false });
  });

  it('refuse a changed issue time as forged, whether moved back or forward', () => {
    const { identity, clock } = onClock({ tokenTtlDays: 30 });
    const { token } = identity.issue();
    clock.ms += 40 * DAY_MS;
    const [v, id, at, sig] = token.split('.');
    const now = String(clock.ms / 1000);
    for (const forged of [`${v}.${id}.${now}.${sig}`, `${v}.${id}.${Number(at) + 1}.${sig}`, `${v}.${id}.0${at}.${sig}`, `${v}.${id}.${at}`]) {
      expect(identity.check(forged), forged).toEqual({ ok: false, reason: 'invalid' });
    }
    // A v1 signature of the id does not sign a v2 token of it, whatever time is written in.
    const legacySig = v1Token(id).split('.')[2];
    expect(identity.check(`v2.${id}.${now}.${legacySig}`)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuse a token signed here with an issue time far ahead (a clock off on some node), and take one a little ahead', () => {
    const { identity, clock } = onClock();
    clock.ms = START_MS + TOKEN_CLOCK_SKEW_SECONDS * 1000;
    const near = identity.issue().token;
    clock.ms += 1000;
    const far = identity.issue().token;
    clock.ms = START_MS;
    expect(identity.check(near).ok).toBe(true);
    expect(identity.check(far)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('take a v1 token, as legacy, until the lifetime has passed since v1 tokens count as issued', () => {
    const { identity, clock } = onClock({ tokenTtlDays: 30, legacyIssuedAt: START_MS / 1000 });
    const id = 'u_AAAAAAAAAAAAAAAA';
    const old = v1Token(id);
    clock.ms += 30 * DAY_MS;
    expect(identity.check(old)).toEqual({ ok: true, userId: id, legacy: true });
    expect(identity.check(v1Token(id, Buffer.alloc(32, 8)))).toEqual({ ok: false, reason: 'invalid' });
    clock.ms += 1000;
    expect(identity.check(old)).toEqual({ ok: false, reason: 'expired' });
  });

  it('count v1 tokens from when the Identity was made until told otherwise', () => {
    const { identity, clock } = onClock({ tokenTtlDays: 1 });
    expect(identity.legacyIssuedAt).toBe(START_MS / 1000);
    clock.ms += 2 * DAY_MS;
    expect(identity.check(v1Token('u_AAAAAAAAAAAAAAAA'))).toEqual({ ok: false, reason: 'expired' });
  });

  it('need a lifetime of whole days, one or more', () => {
    for (const tokenTtlDays of [0, -1, 1.5, Number.NaN]) expect(() => new Identity(SECRET, { tokenTtlDays }), String(tokenTtlDays)).toThrow(/tokenTtlDays/);
    expect(new Identity(SECRET, { tokenTtlDays: 7 }).tokenTtlDays).toBe(7);
  });
});

describe('the time v1 tokens count as issued', () => {
  /** The meta calls of a Store, over a Map. */
  function metaStore(entries: Record<string, string> = {}) {
    const meta = new Map(Object.entries(entries));
    return {
      meta,
      getMeta: async (key: string) => meta.get(key) ?? null,
      setMeta: async (key: string, value: string) => void meta.set(key, value),
      claimMeta: async (key: string, value: string) => !meta.has(key) && !!meta.set(key, value),
    };
  }

  it('is claimed by the first start and kept by every later one, on every node', async () => {
    const store = metaStore();
    const first = onClock().identity;
    await adoptLegacyTokenTime(first, store, silentLogger);
    expect(store.meta.get(LEGACY_TOKENS_META_KEY)).toBe(String(START_MS / 1000));

    const later = new Identity(SECRET, { now: () => START_MS + 10 * DAY_MS });
    expect(later.legacyIssuedAt).toBe(START_MS / 1000 + 10 * 86_400);
    await adoptLegacyTokenTime(later, store, silentLogger);
    expect(later.legacyIssuedAt).toBe(START_MS / 1000);
    expect(store.meta.get(LEGACY_TOKENS_META_KEY)).toBe(String(START_MS / 1000));
  });

  it('is replaced by now when the store holds something unreadable, with a warning', async () => {
    const store = metaStore({ [LEGACY_TOKENS_META_KEY]: 'soon' });
    const warnings: string[] = [];
    const { identity } = onClock();
    await adoptLegacyTokenTime(identity, store, { ...silentLogger, warn: (_d, msg) => void warnings.push(msg) });
    expect(identity.legacyIssuedAt).toBe(START_MS / 1000);
    expect(store.meta.get(LEGACY_TOKENS_META_KEY)).toBe(String(START_MS / 1000));
    expect(warnings).toHaveLength(1);
  });
});
