/**
 * Tests against a real Redis (127.0.0.1:6379, or SALON_TEST_REDIS_URL): skipped with a message
 * where none answers, unless SALON_REQUIRE_REDIS=1 (CI), which makes a missing Redis a failure.
 * Every test works under a key and channel prefix of its own, so parallel runs never meet.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { pingRedis } from '../../src/cli/commands/doctor.js';
import { RedisRoomBus, type RedisRoomBusOptions } from '../../src/rooms/redis-bus.js';

export const REDIS_URL = process.env.SALON_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const REQUIRE_REDIS = process.env.SALON_REQUIRE_REDIS === '1';
const probe = await pingRedis(REDIS_URL, 1_000);
export const HAVE_REDIS = probe.ok;

/** Short timings so tests see heartbeats, expiry and reconnection quickly. */
export const FAST: Partial<RedisRoomBusOptions> = { heartbeatMs: 100, presenceTtlMs: 400, retryMinMs: 20, retryMaxMs: 100, commandTimeoutMs: 1_000 };

/** `describe` for a suite that needs Redis. */
export function describeRedis(name: string, body: () => void): void {
  if (!HAVE_REDIS && REQUIRE_REDIS) {
    describe(name, () => {
      it('needs Redis', () => {
        throw new Error(`SALON_REQUIRE_REDIS=1 but ${probe.detail}`);
      });
    });
    return;
  }
  if (!HAVE_REDIS) console.warn(`skipping "${name}": ${probe.detail} (set SALON_REQUIRE_REDIS=1 to fail instead)`);
  describe.skipIf(!HAVE_REDIS)(name, body);
}

/** A fresh prefix for one test's keys and channels. */
export const testPrefix = () => `salon-test:${randomUUID()}:`;

/** Buses on one prefix, connected and ready; `cleanup` closes them and deletes the prefix's keys. */
export function redisNetwork(prefix = testPrefix(), options: Partial<RedisRoomBusOptions> = {}) {
  const made: RedisRoomBus[] = [];
  return {
    prefix,
    async bus(extra: Partial<RedisRoomBusOptions> = {}): Promise<RedisRoomBus> {
      const bus = new RedisRoomBus({ url: REDIS_URL, prefix, ...FAST, ...options, ...extra });
      made.push(bus);
      await bus.ready();
      return bus;
    },
    async nodes(count: number): Promise<RedisRoomBus[]> {
      return Promise.all(Array.from({ length: count }, () => this.bus()));
    },
    async cleanup(): Promise<void> {
      await Promise.all(made.map((b) => b.close()));
      await deleteKeys(prefix);
    },
  };
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
