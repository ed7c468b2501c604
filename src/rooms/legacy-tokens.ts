/**
 * When `v1` identity tokens, which carry no issue time, count as issued: when this deployment first
 * started with expiring tokens, claimed once in the store so that every node and every later start
 * agree. A `v1` token so stops working IDENTITY_TOKEN_TTL_DAYS after the upgrade, unless its user
 * joined meanwhile and got a `v2` token (docs/architecture.md).
 */
import type { Logger } from '../logger.js';
import type { Store } from '../store/types.js';
import type { Identity } from './identity.js';

export const LEGACY_TOKENS_META_KEY = 'identity-v1-issued-at';

/** Sets `identity.legacyIssuedAt` from the store, claiming the Identity's own start time when the store has none. */
export async function adoptLegacyTokenTime(identity: Identity, store: Pick<Store, 'claimMeta' | 'getMeta' | 'setMeta'>, log: Logger): Promise<void> {
  const started = String(identity.legacyIssuedAt);
  if (await store.claimMeta(LEGACY_TOKENS_META_KEY, started)) return;
  const stored = await store.getMeta(LEGACY_TOKENS_META_KEY);
  if (stored !== null && /^\d{1,12}$/.test(stored)) {
    identity.legacyIssuedAt = Number(stored);
    return;
  }
  // Left unreadable, every start would open a new window for v1 tokens: this start's time is kept instead.
  log.warn({ key: LEGACY_TOKENS_META_KEY, stored }, 'the time v1 identity tokens count as issued was unreadable; replaced by now');
  await store.setMeta(LEGACY_TOKENS_META_KEY, started);
}
