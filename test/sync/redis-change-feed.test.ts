/**
 * The index change feed on a real Redis: a SUBSCRIBE that fails while the link stays up (a timeout,
 * a refusal) is tried again, so the node hears other nodes' notices before the next outage.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { RedisLink } from '../../src/rooms/redis-link.js';
import { RedisChangeFeed } from '../../src/sync/redis-change-feed.js';
import { describeRedis, FAST, REDIS_URL, testPrefix } from '../redis/gate.js';

describeRedis('Redis index change feed', () => {
  const links: RedisLink[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    await Promise.all(links.splice(0).map((l) => l.close()));
  });

  async function link(): Promise<RedisLink> {
    const l = new RedisLink({ url: REDIS_URL, ...FAST });
    links.push(l);
    await l.whenUp();
    return l;
  }

  it('subscribes again after a SUBSCRIBE failed on a link that stayed up, and says it is heard', async () => {
    const prefix = testPrefix();
    const mine = await link();
    const subscribe = vi.spyOn(mine.sub, 'subscribe').mockRejectedValueOnce(new Error('Command timed out'));
    const feed = new RedisChangeFeed({ link: mine, prefix });
    const heard: string[] = [];
    const connected: boolean[] = [];
    feed.subscribe((notice) => heard.push(notice));
    feed.onConnectionChange((up) => connected.push(up));
    const other = new RedisChangeFeed({ link: await link(), prefix });
    await vi.waitFor(
      async () => {
        await other.publish('n1');
        expect(heard).toContain('n1');
      },
      { timeout: 5_000, interval: 100 },
    );
    expect(subscribe.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(mine.isUp).toBe(true);
    expect(connected).toContain(true);
  });
});
