/**
 * Discussion threads behind URLs (the CommentSource seam): an HN `item?id=N` URL given to ingest or
 * found in a feed goes through the (recorded) HN API with its linked article as the body and its
 * top comments attached; a Reddit thread URL goes through a loopback fake of Reddit's thread JSON.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFetcher, type Fetcher } from '../../src/content/fetch/fetcher.js';
import { IngestService } from '../../src/content/ingest/ingest.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { hnStoryIdOf } from '../../src/content/sources/hn.js';
import { redditThreadOf } from '../../src/content/sources/reddit.js';
import type { Logger } from '../../src/logger.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { loopbackDeps } from '../fixtures-servers/deps.js';
import { startHnServer, type HnServer } from '../fixtures-servers/hn-server.js';
import { articlePage, startFixtureServer, type FixtureServer } from '../fixtures-servers/http.js';
import { startRedditServer, type RedditServer } from '../fixtures-servers/reddit-server.js';

const PARAS = [
  'The harbour council voted on Tuesday to rebuild the old pier with timber from local forests, ending a decade of debate.',
  'Engineers said the new structure would last sixty years and cost less than the steel design proposed in 2019.',
];

/** A Logger double keeping every message. */
export function recordingLogger(): Logger & { lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (_details: object, msg: string) => void lines.push({ level, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('discussion threads (HN and Reddit) behind URLs', () => {
  let web: FixtureServer;
  let hn: HnServer;
  let reddit: RedditServer;
  let store: SqliteStore;
  let service: IngestService;
  let log: ReturnType<typeof recordingLogger>;

  beforeAll(async () => {
    web = await startFixtureServer({ '/story': { body: articlePage('A linked story', PARAS) } });
    hn = await startHnServer({
      7001: { by: 'poster', id: 7001, kids: [8001, 8004, 8002], time: 1700000000, title: 'Linked story', type: 'story', url: `${web.origin}/story` },
    });
    reddit = await startRedditServer([
      {
        id: 'abc12',
        title: 'Timber pier approved',
        url: `${web.origin}/story`,
        comments: [
          { author: 'AutoModerator', body: 'Please keep it civil.', stickied: true },
          { author: 'ana', body: 'Sixty years sounds optimistic for timber.' },
          { author: '[deleted]', body: '[deleted]' },
          { author: 'ben', body: 'It is treated oak, it will last.' },
        ],
      },
      { id: 'self9', title: 'Ask: how long does oak last in salt water?', selftext: 'Asking for a pier.', comments: [{ author: 'cy', body: 'Decades.' }] },
      {
        id: 'busy7',
        title: 'Everyone has an opinion on the pier',
        selftext: 'Discuss.',
        comments: [
          ...Array.from({ length: 5 }, () => ({ author: '[deleted]', body: '[removed]' })),
          ...Array.from({ length: 400 }, (_, i) => ({ author: `reader${i}`, body: `Opinion number ${i}.` })),
        ],
      },
    ]);
    web.routes.set('/feed.xml', {
      type: 'application/rss+xml',
      body: `<?xml version="1.0"?><rss version="2.0"><channel><title>Hacker News</title><link>https://news.ycombinator.com/</link>
<item><title>Linked story</title><link>${web.origin}/story</link><comments>https://news.ycombinator.com/item?id=7001</comments></item>
<item><title>Timber pier approved</title><link>https://www.reddit.com/r/programming/comments/abc12/timber_pier_approved/</link></item>
</channel></rss>`,
    });
  });
  afterAll(async () => {
    await Promise.all([web.close(), hn.close(), reddit.close()]);
  });
  beforeEach(() => {
    store = new SqliteStore({ filename: ':memory:' });
    log = recordingLogger();
    const pipeline = createItemPipeline({ store, bodyMaxChars: 200_000, chunk: { size: 300, overlap: 50 } });
    service = new IngestService({
      store,
      pipeline,
      deps: loopbackDeps(),
      hn: { base: hn.base, commentLimit: 10, intervalMs: 0 },
      reddit: { base: reddit.base, commentLimit: 10, intervalMs: 0 },
      bodyMaxChars: 200_000,
      log,
    });
  });
  afterEach(async () => {
    await service.close();
    await store.close();
  });

  it('knows thread URLs without fetching them', () => {
    expect(hnStoryIdOf('https://news.ycombinator.com/item?id=8863')).toBe(8863);
    expect(hnStoryIdOf('https://news.ycombinator.com/item?id=8863&p=2')).toBe(8863);
    expect(hnStoryIdOf('https://news.ycombinator.com/news?id=8863')).toBeNull();
    expect(hnStoryIdOf('https://evil.example/item?id=8863')).toBeNull();
    expect(redditThreadOf('https://www.reddit.com/r/programming/comments/abc12/timber_pier/')).toBe('abc12');
    expect(redditThreadOf('https://old.reddit.com/comments/ABC12')).toBe('abc12');
    expect(redditThreadOf('https://redd.it/abc12')).toBe('abc12');
    expect(redditThreadOf('https://www.reddit.com/r/programming/')).toBeNull();
    expect(redditThreadOf('https://reddit.com.evil.example/comments/abc12')).toBeNull();
  });

  it('ingests an HN item URL through the HN API: the article as body, the top comments attached, the seed log lines', async () => {
    const job = await service.run({ url: 'https://news.ycombinator.com/item?id=7001' });
    expect(job).toMatchObject({ status: 'done', done: 1, itemIds: ['news_hn7001'], failures: [] });
    const item = (await store.getItem('news_hn7001'))!;
    // The page names no author: its submitter is none.
    expect(item).toMatchObject({ title: 'Linked story', url: `${web.origin}/story`, source: 'hn', author: null });
    expect(item.body).toContain('sixty years');
    expect(item.comments.map((c) => c.by)).toEqual(['alice', 'bob']);
    const messages = log.lines.map((l) => l.msg);
    expect(messages).toContain('Fetched comments for HN story 7001');
    expect(messages).toContain('Indexing article: Linked story');
    // the article page was fetched, the HN page never was
    expect(web.requests.map((r) => r.path)).toContain('/story');
  });

  it('ingests a feed whose entries point at an HN story (<comments>) and a Reddit thread (<link>) as those threads', async () => {
    const job = await service.run({ feed: `${web.origin}/feed.xml` });
    expect(job).toMatchObject({ status: 'done', done: 2, failed: 0 });
    expect(job.itemIds).toEqual(['news_hn7001', 'news_redditabc12']);
    const story = (await store.getItem('news_hn7001'))!;
    expect(story.body).toContain('sixty years');
    expect(story.comments.map((c) => c.by)).toEqual(['alice', 'bob']);
    const thread = (await store.getItem('news_redditabc12'))!;
    expect(thread.body).toContain('sixty years');
    expect(thread.comments.map((c) => c.by)).toEqual(['ana', 'ben']);
  });

  it('ingests Reddit threads: a link post with its article, a text post with its own text; stickied and deleted comments left out', async () => {
    const link = await service.run({ url: 'https://www.reddit.com/r/programming/comments/abc12/timber_pier_approved/' });
    expect(link).toMatchObject({ status: 'done', itemIds: ['news_redditabc12'] });
    const item = (await store.getItem('news_redditabc12'))!;
    expect(item).toMatchObject({ title: 'Timber pier approved', url: `${web.origin}/story`, source: 'reddit', siteName: 'Fixture Times', author: null });
    expect(item.comments).toEqual([
      { by: 'ana', text: 'Sixty years sounds optimistic for timber.', time: 1_700_000_101 },
      { by: 'ben', text: 'It is treated oak, it will last.', time: 1_700_000_103 },
    ]);
    const self = await service.run({ url: 'https://redd.it/self9' });
    expect(self.itemIds).toEqual(['news_redditself9']);
    // A text post is its poster's own.
    expect(await store.getItem('news_redditself9')).toMatchObject({
      author: 'poster',
      body: 'Asking for a pier.',
      siteName: 'Reddit',
      comments: [{ by: 'cy', text: 'Decades.' }],
    });
    expect(log.lines.map((l) => l.msg)).toContain('Fetched comments for Reddit thread abc12');
  });

  it('asks Reddit for a few more first-level comments than it keeps, not a busy thread’s hundreds', async () => {
    const job = await service.run({ url: 'https://www.reddit.com/r/programming/comments/busy7/' });
    expect(job.itemIds).toEqual(['news_redditbusy7']);
    // 10 kept (REDDIT_COMMENT_LIMIT here): 25 asked for, the removed ones skipped.
    expect(reddit.queries.at(-1)?.get('limit')).toBe('25');
    expect((await store.getItem('news_redditbusy7'))!.comments.map((c) => c.by)).toEqual(Array.from({ length: 10 }, (_, i) => `reader${i}`));
  });

  it('fails a missing Reddit thread with a typed code and stores nothing', async () => {
    const job = await service.run({ url: 'https://www.reddit.com/comments/nope1/' });
    expect(job.status).toBe('failed');
    expect(job.failures[0]).toMatchObject({ code: 'ERR_FETCH_HTTP_STATUS' });
    expect(await store.countItems()).toBe(0);
  });
});

describe('an HN story whose comments the API cannot serve', () => {
  // The real fetcher, so that its failures say whether asking again could help.
  let api: FixtureServer;
  let fetcher: Fetcher;
  let store: SqliteStore;
  let service: IngestService;
  const json = (body: unknown) => ({ type: 'application/json', body: JSON.stringify(body) });
  const comment = (id: number, by: string) => json({ id, type: 'comment', by, text: `Comment by ${by}.`, time: 1_700_000_000 });
  const story = (id: number, kids: number[]) => json({ id, type: 'story', by: 'op', title: `Story ${id}`, text: 'Own text.', time: 1_700_000_000, kids });

  beforeAll(async () => {
    api = await startFixtureServer({
      '/v0/item/1.json': story(1, [11, 12, 13, 14, 15]),
      '/v0/item/11.json': comment(11, 'ana'),
      '/v0/item/12.json': { type: 'application/json', body: '{"id": 12, "by": "cut' },
      '/v0/item/13.json': { status: 404, type: 'application/json', body: '{"error":"Permission denied"}' },
      '/v0/item/14.json': { type: 'text/html', body: '<p>a login page</p>' },
      '/v0/item/15.json': comment(15, 'ben'),
      '/v0/item/2.json': story(2, [21, 22]),
      '/v0/item/21.json': comment(21, 'cy'),
      '/v0/item/22.json': { status: 503, type: 'text/plain', body: 'down for a moment' },
    });
    fetcher = createFetcher({ timeoutMs: 2000, maxBytes: 100_000, allowHosts: ['127.0.0.1'], retries: 0 });
  });
  afterAll(async () => {
    await fetcher.close();
    await api.close();
  });
  beforeEach(() => {
    store = new SqliteStore({ filename: ':memory:' });
    service = new IngestService({
      store,
      pipeline: createItemPipeline({ store, bodyMaxChars: 10_000, chunk: { size: 300, overlap: 50 } }),
      deps: { ...loopbackDeps(), fetchJson: (url, signal) => fetcher.fetchJson(url, signal) },
      hn: { base: `${api.origin}/v0`, commentLimit: 10, intervalMs: 0 },
      bodyMaxChars: 10_000,
    });
  });
  afterEach(async () => {
    await service.close();
    await store.close();
  });

  it('stores the story without the comments whose answers were refused, and notes each on the job', async () => {
    const job = await service.run({ url: 'https://news.ycombinator.com/item?id=1' });
    expect(job).toMatchObject({ status: 'done', done: 1, failed: 0, itemIds: ['news_hn1'] });
    expect((await store.getItem('news_hn1'))!.comments.map((c) => c.by)).toEqual(['ana', 'ben']);
    expect(job.failures.map((f) => [f.ref, f.code])).toEqual([
      ['hn:12', 'ERR_FETCH_FAILED'],
      ['hn:13', 'ERR_FETCH_HTTP_STATUS'],
      ['hn:14', 'ERR_FETCH_CONTENT_TYPE'],
    ]);
  });

  it('fails the story, storing nothing, when a comment could not be had now: a later poll tries it whole', async () => {
    const job = await service.run({ url: 'https://news.ycombinator.com/item?id=2' });
    expect(job).toMatchObject({ status: 'failed', done: 0 });
    expect(job.failures).toEqual([expect.objectContaining({ code: 'ERR_FETCH_HTTP_STATUS' })]);
    expect(await store.getItem('news_hn2')).toBeNull();
  });
});
