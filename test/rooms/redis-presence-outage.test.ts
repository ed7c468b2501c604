/**
 * What RedisPresence keeps to delete once Redis is back (its stranded entries): the entries removed
 * or replaced while Redis was away that Redis may still list, and nothing once every entry the
 * node sent has expired. A link stand-in records the commands; no Redis is needed.
 */
import { describe, expect, it } from 'vitest';
import type { RedisLink } from '../../src/rooms/redis-link.js';
import { RedisPresence } from '../../src/rooms/redis-presence.js';

const TTL_MS = 6_000;
const HEARTBEAT_MS = 2_000;

/** A link whose commands are recorded (name and arguments) and answered with nothing; its clock is set by hand. */
function fakeLink() {
  const commands: unknown[][] = [];
  const batch = (): unknown => {
    const recorder: unknown = new Proxy(
      {},
      {
        get: (_target, name) =>
          name === 'exec'
            ? async () => []
            : (...args: unknown[]) => {
                commands.push([name, ...args]);
                return recorder;
              },
      },
    );
    return recorder;
  };
  /** A MULTI whose EXEC fails, its commands never applied. */
  const failingBatch = (): unknown => {
    const recorder: unknown = new Proxy(
      {},
      {
        get: (_target, name) =>
          name === 'exec'
            ? async () => {
                throw new Error('Connection is closed.');
              }
            : () => recorder,
      },
    );
    return recorder;
  };
  const link = {
    isUp: true,
    clockKnown: true,
    clock: 1_000_000,
    now: () => link.clock,
    syncClock: async () => {},
    /** Whether the next command sent on its own fails (a connection lost meanwhile, a timeout). */
    failing: false,
    cmd: {
      multi: () => (link.failing ? failingBatch() : batch()),
      pipeline: batch,
      zrem: async (...args: unknown[]) => {
        if (link.failing) throw new Error('Connection is closed.');
        commands.push(['zrem', ...args]);
      },
    },
  };
  return {
    link,
    commands,
    presence: new RedisPresence({ link: link as unknown as RedisLink, nodeId: 'n1', prefix: 'p:', heartbeatMs: HEARTBEAT_MS, ttlMs: TTL_MS }),
  };
}

/** The entries the commands recorded delete from `key` (ZREM). */
const removed = (commands: unknown[][], key: string) => commands.filter(([name, k]) => name === 'zrem' && k === key).flatMap((c) => c.slice(2));

describe('RedisPresence across an outage', () => {
  it('deletes at the return an entry removed while Redis may still list it', async () => {
    const { link, commands, presence } = fakeLink();
    await presence.set('news_1', { id: 'u1', name: 'Ana' }, 1);
    link.isUp = false;
    link.clock += TTL_MS / 2;
    await presence.remove('news_1', 'u1');
    link.isUp = true;
    commands.length = 0;
    await presence.heartbeat();
    expect(removed(commands, 'p:presence:news_1')).toEqual([JSON.stringify(['n1', 'u1', 'Ana', 1])]);
  });

  it('deletes at the next heartbeat an entry whose removal or replacement failed on a link that seemed up', async () => {
    const { link, commands, presence } = fakeLink();
    await presence.set('news_1', { id: 'u1', name: 'Ana' }, 1);
    await presence.set('news_1', { id: 'u2', name: 'Ben' }, 2);
    link.failing = true;
    await expect(presence.remove('news_1', 'u1')).rejects.toThrow('Connection is closed.');
    await expect(presence.set('news_1', { id: 'u2', name: 'Benjamin' }, 2)).rejects.toThrow('Connection is closed.');
    link.failing = false;
    commands.length = 0;
    await presence.heartbeat();
    expect(removed(commands, 'p:presence:news_1')).toEqual([JSON.stringify(['n1', 'u1', 'Ana', 1]), JSON.stringify(['n1', 'u2', 'Ben', 2])]);
  });

  it('keeps nothing of the leaves of an outage longer than its entries live: none of them is listed', async () => {
    const { link, commands, presence } = fakeLink();
    await presence.set('news_1', { id: 'u1', name: 'Ana' }, 1);
    link.isUp = false;
    link.clock += 10 * TTL_MS;
    await presence.remove('news_1', 'u1');
    // Members joining and leaving for as long as Redis is away.
    for (let i = 0; i < 1_000; i++) {
      await presence.set('news_1', { id: `g${i}`, name: 'Guest' }, 10 + i);
      await presence.remove('news_1', `g${i}`);
    }
    link.isUp = true;
    commands.length = 0;
    await presence.heartbeat();
    expect(removed(commands, 'p:presence:news_1')).toEqual([]);
  });
});
