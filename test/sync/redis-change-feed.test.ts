/**
 * The index change feed on a real Redis: a SUBSCRIBE that fails while the link stays up (a timeout,
 * a refusal) is tried again, so the node hears other nodes' notices before the next outage; a feed
 * closed (with its app) leaves no timer and subscribes nothing more.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { RedisLink } from '../../src/rooms/redis-link.js';
import { FAILURE_SUMMARY_INTERVAL_MS } from '../../src/repeated-failure-log.js';
import { RedisChangeFeed, RESUBSCRIBE_MAX_MS } from '../../src/sync/redis-change-feed.js';
import { describeRedis, FAST, REDIS_URL, redisNetwork, testPrefix } from '../redis/gate.js';
import { linesLog, tempStore } from '../helpers.js';

describeRedis('Redis index change feed', () => {
  const links: RedisLink[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    await Promise.all(links.splice(0).map((l) => l.close()));
  });

  async function link(): Promise<RedisLink> {
    const l = new RedisLink({ url: REDIS_URL, ...FAST });
    links.push(l);
    await l.whenUp();
    return l;
  }

  /** Publishes a notice from `other` until `heard` holds it (a SUBSCRIBE may still be on its way). */
  async function publishedUntilHeard(other: RedisChangeFeed, heard: string[]): Promise<void> {
    await vi.waitFor(
      async () => {
        await other.publish('n1');
        expect(heard).toContain('n1');
      },
      { timeout: 5_000, interval: 100 },
    );
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
    await publishedUntilHeard(other, heard);
    expect(subscribe.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(mine.isUp).toBe(true);
    expect(connected).toContain(true);
  });

  it('hands each notice to every handler, one that throws logged and the others told', async () => {
    const prefix = testPrefix();
    const { log, lines } = linesLog();
    const feed = new RedisChangeFeed({ link: await link(), prefix, log });
    const heard: string[] = [];
    feed.subscribe(() => {
      throw new Error('handler failed');
    });
    feed.subscribe((notice) => heard.push(notice));
    const other = new RedisChangeFeed({ link: await link(), prefix });
    await publishedUntilHeard(other, heard);
    expect(lines).toContain('WARN an index change notice was not handled');
    feed.close();
    other.close();
  });

  it('tries a SUBSCRIBE refused for good less and less often, logs it once then a summary a minute, and once when it works again', async () => {
    const prefix = testPrefix();
    const mine = await link();
    const { lines, log } = linesLog();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    const start = Date.now();
    // Refused without reaching Redis (as an ACL's NOPERM is), while the link stays up.
    const tried: number[] = [];
    const subscribe = vi.spyOn(mine.sub, 'subscribe').mockImplementation((() => {
      tried.push(Date.now() - start);
      return Promise.reject(new Error('NOPERM No permissions to access a channel'));
    }) as never);
    const feed = new RedisChangeFeed({ link: mine, prefix, log });
    const connected: boolean[] = [];
    feed.onConnectionChange((up) => connected.push(up));
    await vi.advanceTimersByTimeAsync(0);
    expect(lines).toEqual([expect.stringMatching(/^WARN index change feed not subscribed; trying again in 1 s/)]);
    await vi.advanceTimersByTimeAsync(FAILURE_SUMMARY_INTERVAL_MS);
    // Tried a second later, then 2, 4, 8, 16 s after each failure…
    expect(tried).toEqual([0, 1_000, 3_000, 7_000, 15_000, 31_000]);
    expect(lines.slice(1)).toEqual([
      'WARN subscribing the index change feed failed 5 more time(s) in the last 60 s; the last: NOPERM No permissions to access a channel',
    ]);
    // …then once a minute at most.
    await vi.advanceTimersByTimeAsync(3 * RESUBSCRIBE_MAX_MS);
    expect(tried.slice(6)).toEqual([63_000, 123_000, 183_000]);
    expect(lines).toHaveLength(5);
    expect(connected).toEqual([]);

    // Allowed: heard from the next try on (at 243 s), logged once.
    subscribe.mockRestore();
    await vi.advanceTimersByTimeAsync(3_000);
    // Redis answers on its own time, with the clock still at 243 s.
    const deadline = performance.now() + 5_000;
    while (!connected.length && performance.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(connected).toEqual([true]);
    expect(lines.slice(5)).toEqual(['INFO subscribing the index change feed works again after 9 failure(s) in 243 s']);
  });

  it('leaves no timer once closed, and subscribes nothing more, not even when the link comes back', async () => {
    const mine = await link();
    const { lines, log } = linesLog();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
    const subscribe = vi.spyOn(mine.sub, 'subscribe').mockRejectedValue(new Error('NOPERM No permissions to access a channel'));
    const feed = new RedisChangeFeed({ link: mine, prefix: testPrefix(), log });
    const connected: boolean[] = [];
    feed.onConnectionChange((up) => connected.push(up));
    // Refused, then refused again a second later: a retry and the failures' summary are pending.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(subscribe).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(2);

    feed.close();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * RESUBSCRIBE_MAX_MS);
    expect(subscribe).toHaveBeenCalledTimes(2);
    expect(lines).toHaveLength(1);

    // The link goes down and comes back: the feed is not subscribed again, and tells nobody.
    vi.useRealTimers();
    const changes: boolean[] = [];
    mine.onChange((up) => changes.push(up));
    mine.sub.disconnect(true);
    await vi.waitFor(() => expect(changes).toEqual([false, true]), { timeout: 5_000, interval: 20 });
    expect(subscribe).toHaveBeenCalledTimes(2);
    expect(connected).toEqual([]);
    expect(lines).toHaveLength(1);
  });

  it('undoes a SUBSCRIBE that answers after the feed closed, tells nobody, and sends nothing', async () => {
    const prefix = testPrefix();
    const mine = await link();
    const sub = mine.sub;
    const subscribe = sub.subscribe.bind(sub) as (...channels: string[]) => Promise<unknown>;
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    vi.spyOn(sub, 'subscribe').mockImplementationOnce(((...channels: string[]) => answered.then(() => subscribe(...channels))) as never);
    const unsubscribe = vi.spyOn(sub, 'unsubscribe');
    const feed = new RedisChangeFeed({ link: mine, prefix });
    const connected: boolean[] = [];
    feed.onConnectionChange((up) => connected.push(up));
    feed.close();
    answer();
    await vi.waitFor(() => expect(unsubscribe).toHaveBeenCalledWith(`${prefix}index`), { timeout: 5_000, interval: 20 });
    expect(connected).toEqual([]);
    // Nothing sent either.
    const publish = vi.spyOn(mine.cmd, 'publish');
    await feed.publish('not sent');
    expect(publish).not.toHaveBeenCalled();
  });

  it('is closed by the app that made it, when the app closes', async () => {
    const temp = tempStore();
    const network = redisNetwork();
    try {
      const bus = await network.bus();
      const app = await buildApp(testConfig({ DATA_DIR: temp.dir, IDENTITY_SECRET: 'one secret for the nodes of this test' }), {
        store: temp.store,
        roomBus: bus,
      });
      await app.ready();
      expect(app.salon.changeFeed).toBeInstanceOf(RedisChangeFeed);
      const close = vi.spyOn(app.salon.changeFeed, 'close');
      await app.close();
      expect(close).toHaveBeenCalledTimes(1);
    } finally {
      await network.cleanup();
      await temp.close();
    }
  });
});
