/** Identity tokens over the room protocol: renewed at every hello, refused past their lifetime, v1 tokens taken once and renewed. */
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { Identity, loadOrCreateSecret } from '../../src/rooms/identity.js';
import { OTHER_ROOM, ROOM, inject, joined, roomsApp } from './helpers.js';

const DAY_MS = 86_400_000;
/**
 * Where the store keeps when v1 tokens count as issued. Written out, not imported: a new name
 * would open a new window for v1 tokens on every deployment that upgrades.
 */
const LEGACY_TOKENS_META_KEY = 'identity-v1-issued-at';

/** A token's version, user id and issue time (epoch seconds; v2 only), read by hand as a client would. */
function tokenParts(token: string): { version: string; userId: string; issuedAt?: number } {
  const [version, userId, ...rest] = token.split('.');
  return { version, userId, ...(version === 'v2' ? { issuedAt: Number(rest[0]) } : {}) };
}

/** A hello with `token` that the server refuses: the error frame's code and the close code. */
async function refused(app: FastifyInstance, token: string): Promise<{ code: string; message: string; closedWith: number }> {
  const c = await inject(app);
  c.send({ type: 'hello', name: 'Eve', token });
  const error = await c.next('error');
  return { code: error.code, message: error.message, closedWith: (await c.closed).code };
}

describe('identity tokens in the room protocol', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ app, close } = await roomsApp({ IDENTITY_TOKEN_TTL_DAYS: '30' }));
  });
  afterEach(async () => close());

  const secret = () => loadOrCreateSecret(app.salon.config.DATA_DIR);
  /** A token of the app's secret issued `daysAgo` days ago (a clock of the test's, not waiting). */
  const issuedDaysAgo = (daysAgo: number) => new Identity(secret(), { now: () => Date.now() - daysAgo * DAY_MS }).issue();
  /** A token as the server wrote them before tokens expired. */
  const v1Token = (userId: string) => `v1.${userId}.${createHmac('sha256', secret()).update(`salon-user:${userId}`).digest('base64url')}`;

  it('renews the token at every hello: the same id, a later issue time, and the renewed token works', async () => {
    const old = issuedDaysAgo(10);
    const { welcome } = await joined(app, 'Ana', ROOM, { token: old.token });
    expect(welcome.you.id).toBe(old.id);
    expect(welcome.you.token).not.toBe(old.token);
    const [renewed, before] = [tokenParts(welcome.you.token), tokenParts(old.token)];
    expect(renewed).toMatchObject({ version: 'v2', userId: old.id });
    expect(renewed.issuedAt! - before.issuedAt!).toBeGreaterThanOrEqual(10 * 86_400);
    const again = await joined(app, 'Ana', OTHER_ROOM, { token: welcome.you.token });
    expect(again.welcome.you.id).toBe(old.id);
  });

  it('refuses a token past IDENTITY_TOKEN_TTL_DAYS with ERR_TOKEN_EXPIRED and close 4401, and takes one inside it', async () => {
    expect(await refused(app, issuedDaysAgo(31).token)).toEqual({
      code: 'ERR_TOKEN_EXPIRED',
      message: 'The identity token has expired: it was issued more than 30 days ago',
      closedWith: CloseCode.BAD_TOKEN,
    });
    const recent = issuedDaysAgo(29);
    expect((await joined(app, 'Ana', ROOM, { token: recent.token })).welcome.you.id).toBe(recent.id);
  });

  it('refuses a token whose issue time was changed as a bad token', async () => {
    const { token } = issuedDaysAgo(40);
    const [v, id, , sig] = token.split('.');
    const forged = `${v}.${id}.${Math.floor(Date.now() / 1000)}.${sig}`;
    expect(await refused(app, forged)).toMatchObject({ code: 'ERR_BAD_TOKEN', closedWith: CloseCode.BAD_TOKEN });
  });

  it('takes a v1 token and renews it to v2, until the lifetime has passed since the server first ran with expiry', async () => {
    const id = 'u_v1v1v1v1v1v1v1v1';
    const old = v1Token(id);
    const { welcome } = await joined(app, 'Ana', ROOM, { token: old });
    expect(welcome.you.id).toBe(id);
    expect(tokenParts(welcome.you.token)).toMatchObject({ version: 'v2', userId: id });

    // The start claimed when v1 tokens count as issued; moved 31 days back, they have expired.
    const identity = app.salon.rooms.identity;
    expect(await app.salon.store.getMeta(LEGACY_TOKENS_META_KEY)).toBe(String(identity.legacyIssuedAt));
    identity.legacyIssuedAt -= 31 * 86_400;
    expect(await refused(app, old)).toMatchObject({ code: 'ERR_TOKEN_EXPIRED', closedWith: CloseCode.BAD_TOKEN });
    // The token it was renewed to is its own.
    expect((await joined(app, 'Ana', ROOM, { token: welcome.you.token })).welcome.you.id).toBe(id);
  });

  it('counts the lifetime IDENTITY_TOKEN_TTL_DAYS sets', async () => {
    const short = await roomsApp({ IDENTITY_TOKEN_TTL_DAYS: '2' });
    try {
      const mint = (daysAgo: number) => new Identity(loadOrCreateSecret(short.app.salon.config.DATA_DIR), { now: () => Date.now() - daysAgo * DAY_MS }).issue();
      expect(await refused(short.app, mint(3).token)).toMatchObject({ code: 'ERR_TOKEN_EXPIRED', message: expect.stringContaining('2 days') });
      const fresh = mint(1);
      expect((await joined(short.app, 'Ana', ROOM, { token: fresh.token })).welcome.you.id).toBe(fresh.id);
    } finally {
      await short.close();
    }
  });
});
