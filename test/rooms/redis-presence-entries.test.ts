/**
 * What RedisPresence reads back from Redis is checked entry by entry, as an envelope is: an entry
 * another node (or anything with access to Redis) wrote with an id, node or name no node writes
 * (empty, or longer than an envelope may carry), or a join time that is no number, is left out of
 * the members listed and counted, instead of reaching every member's presence frames. A link
 * stand-in answers with the raw entries; no Redis is needed.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ENVELOPE_NAME_CHARS } from '../../src/rooms/envelope.js';
import type { RedisLink } from '../../src/rooms/redis-link.js';
import { RedisPresence } from '../../src/rooms/redis-presence.js';

/** A presence whose Redis holds `raw` as the entries of every room. */
function presenceOver(raw: string[]): RedisPresence {
  const link = {
    isUp: true,
    now: () => 1_000_000,
    cmd: {
      zrangebyscore: async (key: string, ...args: string[]) =>
        key === 'p:presence-rooms' ? ['news_1'] : args.includes('WITHSCORES') ? raw.flatMap((r) => [r, '1006000']) : raw,
      pipeline: () => {
        const replies: [null, string[]][] = [];
        const pipe = {
          zrangebyscore: () => (replies.push([null, raw]), pipe),
          exec: async () => replies,
        };
        return pipe;
      },
    },
  };
  return new RedisPresence({ link: link as unknown as RedisLink, nodeId: 'n1', prefix: 'p:', heartbeatMs: 2_000, ttlMs: 6_000 });
}

describe('RedisPresence entries read from Redis', () => {
  it('lists and counts only the entries a node could have written', async () => {
    const long = 'x'.repeat(MAX_ENVELOPE_NAME_CHARS + 1);
    const entry = (...fields: unknown[]) => JSON.stringify(fields);
    const presence = presenceOver([
      entry('n2', 'u1', 'Ana', 5),
      entry('n2', 'u2', long, 6),
      entry('n2', long, 'Ben', 7),
      entry(long, 'u3', 'Cy', 8),
      entry('n2', '', 'Dan', 9),
      entry('', 'u4', 'Eve', 10),
      entry('n2', 'u5', '', 11),
      entry('n2', 'u6', 'Fay', 12).replace('12]', '1e400]'),
      entry('n2', 'u7', 'Gus', '13'),
      entry('n2', 'u8', 'Hal', 14) + ' '.repeat(100_000),
      '{"n":"n2"}',
      'null',
      'not json',
    ]);
    expect(await presence.list('news_1')).toEqual([{ node: 'n2', id: 'u1', name: 'Ana', since: 5 }]);
    expect(await presence.activeRooms(10)).toEqual([{ roomId: 'news_1', count: 1 }]);
  });
});
