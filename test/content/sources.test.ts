/**
 * Sources that refresh, against loopback sites and an injected clock: a feed that gains an entry
 * gives exactly one new item; an unchanged feed answered 304 costs no parse; a failing source
 * backs off and reports its error; HN stories (one by URL, a list, an HN entry in a feed) arrive
 * with article body and comments; of two nodes on one store (SQLite, and PostgreSQL with a node
 * each), one polls a due source, and keeps polls it has queued; due sources spread over nodes by
 * their free job slots; on PostgreSQL, a feed entry whose guid is too long for a btree entry polls
 * like any other.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { IngestService } from '../../src/content/ingest/ingest.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { SOURCE_ENTRY_KEPT_MS } from '../../src/content/refresh/poll.js';
import { JITTER, MAX_BACKOFF_MS, SourceService, backoff } from '../../src/content/refresh/source-service.js';
import { parseSourceLines, sourceIdOf } from '../../src/content/refresh/source-spec.js';
import type { IngestDeps } from '../../src/content/sources/article.js';
import { parseFeed } from '../../src/content/sources/feeds.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/types.js';
import { loopbackDeps } from '../fixtures-servers/deps.js';
import { describePostgres, freshSchema, POSTGRES_URL } from '../store/postgres-harness.js';
import { startHnServer, type HnServer } from '../fixtures-servers/hn-server.js';
import { articlePage, startFixtureServer, type Answer, type FixtureServer } from '../fixtures-servers/http.js';

const PARAS = ['The harbour council voted on Tuesday to rebuild the old pier with timber from local forests.', 'Engineers said it would last sixty years.'];
const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const MIN = 60_000;

/** An RSS feed of the given entries (each linking to `/a/<slug>` on the site), served with an ETag. */
/** An ingest service on `store` with `maxRunning` job slots, fetching over loopback. */
function slottedIngest(store: Store, hnBase: string, maxRunning: number): IngestService {
  const pipeline = createItemPipeline({ store, bodyMaxChars: 200_000, chunk: { size: 300, overlap: 50 } });
  return new IngestService({ store, pipeline, deps: loopbackDeps(), hn: { base: hnBase, commentLimit: 10, intervalMs: 0 }, bodyMaxChars: 200_000, maxRunning });
}

function rss(origin: string, slugs: string[], extra = ''): string {
  const items = slugs.map(
    (s) => `<item><title>Story ${s}</title><link>${origin}/a/${s}</link><guid>${origin}/a/${s}</guid><description>About ${s}.</description></item>`,
  );
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>Fixture Feed</title><link>${origin}/</link>${items.join('')}${extra}</channel></rss>`;
}

describe('sources that refresh', () => {
  let web: FixtureServer;
  let hn: HnServer;
  let store: SqliteStore;
  let ingest: IngestService;
  let sources: SourceService;
  let clock: number;
  let parses: number;
  /** What /feed.xml serves now; its ETag is a hash of the body. */
  let feedBody: string;
  let feedStatus: number;

  const articlePaths = () => web.requests.map((r) => r.path).filter((p) => p.startsWith('/a/'));

  beforeAll(async () => {
    web = await startFixtureServer({}, (path) => {
      if (path.startsWith('/a/')) return { body: articlePage(`Story ${path.slice(3)}`, PARAS) };
      return { status: 404, body: 'not found' };
    });
    web.routes.set('/feed.xml', (req: IncomingMessage): Answer => {
      if (feedStatus !== 200) return { status: feedStatus, type: 'text/plain', body: 'down' };
      const etag = `"${createHash('sha256').update(feedBody).digest('hex').slice(0, 16)}"`;
      if (req.headers['if-none-match'] === etag) return { status: 304, type: 'application/rss+xml', body: '', headers: { etag } };
      return { type: 'application/rss+xml', body: feedBody, headers: { etag } };
    });
    web.routes.set('/story', { body: articlePage('A linked story', PARAS) });
    hn = await startHnServer(
      { 7001: { by: 'poster', id: 7001, kids: [8001, 8004, 8002], time: 1700000000, title: 'Linked story', type: 'story', url: `${web.origin}/story` } },
      [7001, 8000],
    );
  });
  afterAll(async () => {
    await Promise.all([web.close(), hn.close()]);
  });

  function service(owner: string, store: SqliteStore, ingest: IngestService): SourceService {
    return new SourceService({ store, ingest, owner, leaseMs: 15 * MIN, now: () => clock, random: () => 0.5 });
  }

  beforeEach(() => {
    clock = T0;
    parses = 0;
    feedStatus = 200;
    feedBody = rss(web.origin, ['one', 'two']);
    web.requests.length = 0;
    store = new SqliteStore({ filename: ':memory:' });
    const base = loopbackDeps();
    const deps: IngestDeps = { ...base, parseFeed: async (bytes, ref) => (parses++, parseFeed(bytes, ref)) };
    const pipeline = createItemPipeline({ store, bodyMaxChars: 200_000, chunk: { size: 300, overlap: 50 } });
    ingest = new IngestService({ store, pipeline, deps, hn: { base: hn.base, commentLimit: 10, intervalMs: 0 }, bodyMaxChars: 200_000 });
    sources = service('node-a', store, ingest);
  });
  afterEach(async () => {
    await sources.stop();
    await ingest.close();
    await store.close();
  });

  /** An ingest service with one job slot, and a feed at /slow.xml that answers only once `release` is called. */
  function oneSlotBehindSlowFeed(): { narrow: IngestService; release: () => void } {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    web.routes.set('/slow.xml', async (): Promise<Answer> => (await held, { type: 'application/rss+xml', body: rss(web.origin, ['slow']) }));
    return { narrow: slottedIngest(store, hn.base, 1), release };
  }

  async function pollDue(s = sources): Promise<string[]> {
    const jobs = await s.tick();
    await ingest.idle();
    return jobs;
  }

  it('stores a feed that gains an entry between two polls as exactly one new item, fetching only its article', async () => {
    const added = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 30 });
    expect(added).toMatchObject({ id: sourceIdOf({ kind: 'feed', url: `${web.origin}/feed.xml`, list: null }), itemCount: 0, lastPolledAt: null });
    expect(await pollDue()).toHaveLength(1);
    expect(await store.countItems()).toBe(2);
    expect(articlePaths().sort()).toEqual(['/a/one', '/a/two']);
    // not due yet: nothing happens
    clock += 10 * MIN;
    expect(await pollDue()).toEqual([]);
    feedBody = rss(web.origin, ['three', 'one', 'two']);
    clock += 21 * MIN;
    web.requests.length = 0;
    const [jobId] = await pollDue();
    expect(await ingest.getJob(jobId)).toMatchObject({ status: 'done', total: 1, done: 1, request: { source: added.id } });
    expect(await store.countItems()).toBe(3);
    expect(articlePaths()).toEqual(['/a/three']);
    const after = await sources.get(added.id);
    expect(after).toMatchObject({ itemCount: 3, lastError: null, failures: 0, lastPolledAt: new Date(clock).toISOString(), polling: null });
    // the next poll is everyMinutes later (the fixed random puts the jitter at its middle)
    expect(after.nextDueAt).toBe(new Date(clock + 30 * MIN).toISOString());
  });

  it('asks conditionally: an unchanged feed answered 304 costs no parse and no article fetch; a changed entry is stored again', async () => {
    const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 5 });
    await pollDue();
    expect(parses).toBe(1);
    web.requests.length = 0;
    clock += 6 * MIN;
    const [jobId] = await pollDue();
    expect(parses).toBe(1);
    expect(web.requests.map((r) => r.path)).toEqual(['/feed.xml']);
    expect(await ingest.getJob(jobId)).toMatchObject({ status: 'done', total: 0 });
    expect(await sources.get(id)).toMatchObject({ lastError: null, lastPolledAt: new Date(clock).toISOString() });
    // an entry whose text changed is stored again, the others are not fetched
    feedBody = rss(web.origin, ['one', 'two']).replace('About two.', 'About two, updated.');
    clock += 6 * MIN;
    web.requests.length = 0;
    await pollDue();
    expect(parses).toBe(2);
    expect(articlePaths()).toEqual(['/a/two']);
    expect((await sources.get(id)).itemCount).toBe(2);
  });

  it('reads the feed whole after a poll in which an entry failed, so an unchanged feed is not a 304 that leaves it untried', async () => {
    // An entry that is an HN discussion, while the HN API fails on it.
    feedBody = rss(web.origin, ['one'], '<item><title>Discussed</title><link>https://news.ycombinator.com/item?id=9003</link><guid>hn-9003</guid></item>');
    hn.routes.set('/v0/item/9003.json', { status: 503, type: 'text/plain', body: 'busy' });
    try {
      const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 5 });
      const [first] = await pollDue();
      expect(await ingest.getJob(first)).toMatchObject({ status: 'done', done: 1, failed: 1 });
      expect(await store.getItem('news_hn9003')).toBeNull();
      hn.routes.set('/v0/item/9003.json', {
        type: 'application/json',
        body: JSON.stringify({ by: 'poster', id: 9003, time: 1700000000, title: 'Discussed at last', type: 'story', text: 'A story told here.' }),
      });
      clock += 6 * MIN;
      await pollDue();
      expect(parses).toBe(2);
      expect((await store.getItem('news_hn9003'))?.title).toBe('Discussed at last');
      expect(await sources.get(id)).toMatchObject({ itemCount: 2, lastError: null });
      // Every entry stored: the validators are kept again, and the next poll of the unchanged feed is a 304.
      clock += 6 * MIN;
      await pollDue();
      expect(parses).toBe(2);
    } finally {
      hn.routes.delete('/v0/item/9003.json');
    }
  });

  it('keeps a source never polled due when its interval is changed, and moves a polled one to its last poll + the new interval', async () => {
    const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 30 });
    clock += MIN;
    // Changed before the first look for due sources: it was moved a whole interval ahead, unpolled.
    expect(await sources.update(id, { everyMinutes: 60 })).toMatchObject({ everyMinutes: 60, nextDueAt: new Date(T0).toISOString() });
    expect(await pollDue()).toHaveLength(1);
    const polledAt = clock;
    expect(await sources.get(id)).toMatchObject({ lastPolledAt: new Date(polledAt).toISOString(), itemCount: 2 });
    clock += 5 * MIN;
    expect((await sources.update(id, { everyMinutes: 10 })).nextDueAt).toBe(new Date(polledAt + 10 * MIN).toISOString());
  });

  it('keeps the validators after a poll whose only failure is an entry that can never be an item (no link), so the unchanged feed stays a 304', async () => {
    feedBody = rss(web.origin, ['one'], '<item><title>Announcement</title><guid isPermaLink="false">note-1</guid><description>No link.</description></item>');
    await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 5 });
    const [first] = await pollDue();
    expect(await ingest.getJob(first)).toMatchObject({ status: 'done', done: 1, failed: 1 });
    expect((await ingest.getJob(first))?.failures[0]?.code).toBe('ERR_INVALID_CONTENT');
    expect(parses).toBe(1);
    clock += 6 * MIN;
    await pollDue();
    expect(parses).toBe(1);
  });

  it('ends a poll quietly when its source is deleted during it, storing no entry for the deleted source', async () => {
    const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 30 });
    // The admin deletes the source while its first entry's article is being fetched.
    web.routes.set('/a/one', () => {
      void store.deleteSource(id);
      return { body: articlePage('Story one', PARAS) };
    });
    try {
      const [jobId] = await pollDue();
      const job = await ingest.getJob(jobId);
      expect(job).toMatchObject({ status: 'done', failures: [] });
      // The entry being stored is kept as an item; the poll stops there.
      expect(articlePaths()).toEqual(['/a/one']);
      expect(await sources.list()).toEqual([]);
      await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 30 });
      expect((await sources.get(id)).itemCount).toBe(0);
    } finally {
      web.routes.delete('/a/one');
    }
  });

  it('forgets the entries a feed stopped listing a month ago, keeping their items (a source remembered every entry it ever stored)', async () => {
    const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 60 });
    await pollDue();
    feedBody = rss(web.origin, ['two', 'three']);
    clock += 60 * MIN;
    await pollDue();
    // "one" is unlisted for an hour only: still known, so its return would cost no fetch.
    expect((await sources.get(id)).itemCount).toBe(3);
    feedBody = rss(web.origin, ['three', 'four']);
    clock += SOURCE_ENTRY_KEPT_MS + MIN;
    await pollDue();
    expect((await sources.get(id)).itemCount).toBe(2);
    expect(await store.countItems()).toBe(4);
    expect(
      await store
        .sourceEntryHashes(
          id,
          ['one', 'two', 'three', 'four'].map((s) => `${web.origin}/a/${s}`),
        )
        .then((m) => m.size),
    ).toBe(2);
  });

  it('backs off a failing source, reports its error, and recovers', async () => {
    feedStatus = 503;
    const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 10 });
    const [jobId] = await pollDue();
    expect((await ingest.getJob(jobId)).status).toBe('failed');
    let s = await sources.get(id);
    expect(s).toMatchObject({ failures: 1, lastError: { code: 'ERR_FETCH_HTTP_STATUS' }, lastPolledAt: new Date(clock).toISOString() });
    expect(s.lastError!.message).toContain('503');
    expect(s.nextDueAt).toBe(new Date(clock + 20 * MIN).toISOString());
    clock += 20 * MIN;
    await pollDue();
    s = await sources.get(id);
    expect(s).toMatchObject({ failures: 2, nextDueAt: new Date(clock + 40 * MIN).toISOString() });
    // before the backoff is over nothing is tried, even though everyMinutes has passed
    clock += 15 * MIN;
    expect(await pollDue()).toEqual([]);
    feedStatus = 200;
    clock += 25 * MIN;
    await pollDue();
    s = await sources.get(id);
    expect(s).toMatchObject({ failures: 0, lastError: null, itemCount: 2, nextDueAt: new Date(clock + 10 * MIN).toISOString() });
  });

  it('reports an error of no code of ours as an internal one, not its message (anyone may read a source: the store’s address)', async () => {
    const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 30 });
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.20.30.40:5432'), { code: 'ECONNREFUSED' });
    const real = store.sourceEntryHashes.bind(store);
    store.sourceEntryHashes = async () => Promise.reject(refused);
    try {
      await pollDue();
    } finally {
      store.sourceEntryHashes = real;
    }
    const failed = await sources.get(id);
    expect(failed).toMatchObject({ failures: 1, lastError: { code: 'ERR_INTERNAL', message: 'Internal error' } });
    expect(JSON.stringify(failed)).not.toContain('10.20.30.40');
  });

  it('leaves a source as it was when the server shuts down while its poll waits for a job slot (it was counted as failing and backed off)', async () => {
    const { narrow, release } = oneSlotBehindSlowFeed();
    const a = service('node-a', store, narrow);
    try {
      const slow = await a.add({ kind: 'feed', url: `${web.origin}/slow.xml`, everyMinutes: 60 });
      await a.tick();
      const queued = await a.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 60 });
      // A look leaves a source to other nodes when its job slots are full; a refresh queues it.
      expect(await a.tick()).toEqual([]);
      await a.refresh(queued.id);
      await a.stop();
      const closing = narrow.close();
      // The feed answers once the shutdown has begun (the fetcher's close waits for its request).
      await new Promise((resolve) => setImmediate(resolve));
      release();
      await closing;
      for (const id of [queued.id, slow.id]) {
        expect(await a.get(id)).toMatchObject({ polling: null, failures: 0, lastError: null, lastPolledAt: null, nextDueAt: new Date(T0).toISOString() });
      }
    } finally {
      release();
      await narrow.close();
    }
  });

  it('polls a source whose next time was set on a clock since turned back at once, not after as long as the clock was ahead', async () => {
    feedStatus = 503;
    const failing = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 30 });
    // The machine started with its clock a year ahead; the source was polled (and failed) then.
    const ahead = T0 + 365 * 24 * 60 * MIN;
    clock = ahead;
    await pollDue();
    expect((await sources.get(failing.id)).nextDueAt).toBe(new Date(ahead + 60 * MIN).toISOString());
    feedStatus = 200;
    // The clock is set right: within its longest backoff, the source waits; further ahead, it is due at once.
    clock = ahead - 5 * MIN;
    expect(await pollDue()).toEqual([]);
    clock = T0;
    expect(await pollDue()).toHaveLength(1);
    expect(await sources.get(failing.id)).toMatchObject({ failures: 0, itemCount: 2, nextDueAt: new Date(T0 + 30 * MIN).toISOString() });
  });

  it('goes on with an HN list when the API fails on one of its stories, and tries that story again at the next poll', async () => {
    const topstories = hn.routes.get('/v0/topstories.json')!;
    hn.routes.set('/v0/topstories.json', { type: 'application/json', body: '[9002, 7001]' });
    hn.routes.set('/v0/item/9002.json', { status: 503, type: 'text/plain', body: 'busy' });
    try {
      const top = await sources.add({ kind: 'hn', list: 'top', limit: 2, everyMinutes: 10 });
      const [jobId] = await pollDue();
      const job = await ingest.getJob(jobId);
      expect(job).toMatchObject({ status: 'done', total: 2, done: 1, failed: 1 });
      expect(job.failures.map((f) => f.ref)).toEqual(['hn:9002']);
      expect(await store.getItem('news_hn7001')).not.toBeNull();
      expect(await sources.get(top.id)).toMatchObject({ failures: 0, lastError: null, itemCount: 1 });
      hn.routes.set('/v0/item/9002.json', {
        type: 'application/json',
        body: JSON.stringify({ by: 'poster', id: 9002, time: 1700000000, title: 'Back again', type: 'story', text: 'A story told here.' }),
      });
      clock += 11 * MIN;
      await pollDue();
      expect((await store.getItem('news_hn9002'))?.title).toBe('Back again');
      expect((await sources.get(top.id)).itemCount).toBe(2);
    } finally {
      hn.routes.set('/v0/topstories.json', topstories);
      hn.routes.delete('/v0/item/9002.json');
    }
  });

  it('polls HN: one story by URL, a list, and an HN entry in a feed, each with article body and comments', async () => {
    const story = await sources.add({ kind: 'hn', url: 'https://news.ycombinator.com/item?id=7001', everyMinutes: 15 });
    expect(story.limit).toBe(1);
    const storyReads = () => hn.requests.filter((r) => r.path === '/v0/item/7001.json').length;
    const readBefore = storyReads();
    await pollDue();
    // Read once: the poll's look at the story is the story it stores.
    expect(storyReads() - readBefore).toBe(1);
    const item = (await store.getItem('news_hn7001'))!;
    expect(item.body).toContain('sixty years');
    expect(item.comments.map((c) => c.by)).toEqual(['alice', 'bob']);
    expect((await sources.get(story.id)).itemCount).toBe(1);
    // unchanged story: not ingested again
    clock += 16 * MIN;
    const [again] = await pollDue();
    expect(await ingest.getJob(again)).toMatchObject({ status: 'done', total: 0 });

    const top = await sources.add({ kind: 'hn', list: 'top', limit: 2 });
    clock += 1;
    await pollDue();
    expect((await sources.get(top.id)).itemCount).toBe(2);
    expect(await store.getItem('news_hn8000')).not.toBeNull();

    feedBody = rss(
      web.origin,
      [],
      `<item><title>Linked story</title><link>${web.origin}/story</link><comments>https://news.ycombinator.com/item?id=7001</comments></item>`,
    );
    const feed = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml` });
    clock += 1;
    await pollDue();
    expect(await sources.get(feed.id)).toMatchObject({ itemCount: 1, lastError: null });
    expect((await store.getItem('news_hn7001'))!.comments).toHaveLength(2);
  });

  it('lets one of two nodes poll a due source, and a refresh during a poll returns the running job', async () => {
    const other = service('node-b', store, ingest);
    const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml` });
    const [a, b] = await Promise.all([sources.tick(), other.tick()]);
    expect([...a, ...b]).toHaveLength(1);
    const running = [...a, ...b][0];
    expect(await sources.refresh(id)).toEqual({ jobId: running });
    expect((await sources.get(id)).polling).toBe(running);
    await ingest.idle();
    expect((await sources.get(id)).polling).toBeNull();
    // a refresh polls at once whether or not it is due
    const { jobId } = await other.refresh(id);
    expect(jobId).not.toBe(running);
    await ingest.idle();
    expect((await ingest.getJob(jobId)).status).toBe('done');
    await other.stop();
  });

  it('gives a free job slot to the source due longest, not to the one added first (a later one waited while older ones were due)', async () => {
    const narrow = slottedIngest(store, hn.base, 1);
    const a = service('node-a', store, narrow);
    web.routes.set('/other.xml', { type: 'application/rss+xml', body: rss(web.origin, ['other']) });
    try {
      const first = await a.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 10 });
      clock += MIN;
      const later = await a.add({ kind: 'feed', url: `${web.origin}/other.xml`, everyMinutes: 10 });
      // One slot: the first added, due first, is polled; the later one waits.
      expect(await a.tick()).toHaveLength(1);
      await narrow.idle();
      expect((await a.get(first.id)).lastPolledAt).not.toBeNull();
      // Both due again, the first only since its poll's interval ran out: the later one is due longer.
      clock += 11 * MIN;
      expect(await a.tick()).toHaveLength(1);
      await narrow.idle();
      expect((await a.get(later.id)).lastPolledAt).toBe(new Date(clock).toISOString());
    } finally {
      web.routes.delete('/other.xml');
      await a.stop();
      await narrow.close();
    }
  });

  it('keeps the lease of a poll queued behind a slow one, so neither this node nor another polls the source twice', async () => {
    const { narrow, release } = oneSlotBehindSlowFeed();
    const a = service('node-a', store, narrow);
    const b = service('node-b', store, narrow);
    try {
      const slow = await a.add({ kind: 'feed', url: `${web.origin}/slow.xml`, everyMinutes: 60 });
      const [slowJob] = await a.tick();
      const { id } = await a.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 60 });
      const { jobId: queued } = await a.refresh(id);
      // Past the 15-minute lease taken at submission, looking every 10 minutes: nobody polls either source again.
      for (let look = 0; look < 4; look++) {
        clock += 10 * MIN;
        expect(await a.tick()).toEqual([]);
        expect(await b.tick()).toEqual([]);
      }
      expect((await a.get(id)).polling).toBe(queued);
      expect((await a.get(slow.id)).polling).toBe(slowJob);
      release();
      await narrow.idle();
      expect(await narrow.getJob(queued)).toMatchObject({ status: 'done', done: 2 });
      expect(await a.get(id)).toMatchObject({ polling: null, lastError: null, lastPolledAt: new Date(clock).toISOString() });
      expect(await store.countItems()).toBe(3);
    } finally {
      release();
      await Promise.all([a.stop(), b.stop()]);
      await narrow.close();
    }
  });

  it('spreads due sources over nodes: a node leases only as many as it has free job slots (one node took them all and queued them)', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const [ingestA, ingestB] = [slottedIngest(store, hn.base, 2), slottedIngest(store, hn.base, 2)];
    const a = service('node-a', store, ingestA);
    const b = service('node-b', store, ingestB);
    try {
      for (const n of [1, 2, 3, 4, 5]) {
        web.routes.set(`/held-${n}.xml`, async (): Promise<Answer> => (await held, { type: 'application/rss+xml', body: rss(web.origin, [`held${n}`]) }));
        await a.add({ kind: 'feed', url: `${web.origin}/held-${n}.xml` });
      }
      expect(await a.tick()).toHaveLength(2);
      expect(await b.tick()).toHaveLength(2);
      // Both nodes busy: the fifth source waits for a free slot, leased by nobody.
      expect(await a.tick()).toEqual([]);
      const leased = (await a.list()).map((s) => s.polling !== null);
      expect(leased).toEqual([true, true, true, true, false]);
      release();
      await Promise.all([ingestA.idle(), ingestB.idle()]);
      expect(await b.tick()).toHaveLength(1);
      await ingestB.idle();
      expect(await store.countItems()).toBe(5);
    } finally {
      release();
      await Promise.all([a.stop(), b.stop()]);
      await Promise.all([ingestA.close(), ingestB.close()]);
    }
  });

  it('keeps the lease of a poll started after an earlier one of the node lost it, when the earlier one ends (it released the later one’s lease)', async () => {
    const gates: (() => void)[] = [];
    const opened = [new Promise<void>((resolve) => gates.push(resolve)), new Promise<void>((resolve) => gates.push(resolve))];
    let asked = 0;
    web.routes.set('/gated.xml', async (): Promise<Answer> => (await opened[asked++], { type: 'application/rss+xml', body: rss(web.origin, ['gated']) }));
    const requests = () => web.requests.filter((r) => r.path === '/gated.xml').length;
    const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/gated.xml`, everyMinutes: 60 });
    const [first] = await sources.tick();
    await expect.poll(requests).toBe(1);
    // No look renewed the lease (its store failing, say) and it ran out: a refresh takes it again.
    clock += 16 * MIN;
    const { jobId: second } = await sources.refresh(id);
    expect(second).not.toBe(first);
    await expect.poll(requests).toBe(2);
    gates[0]();
    await expect.poll(async () => (await ingest.getJob(first)).status).toBe('done');
    expect((await sources.get(id)).polling).toBe(second);
    gates[1]();
    await ingest.idle();
    expect(await sources.get(id)).toMatchObject({ polling: null, lastError: null, lastPolledAt: new Date(clock).toISOString() });
  });

  it('checks sources with typed errors and keeps configured ones in step with the configuration', async () => {
    await expect(sources.add({ kind: 'feed' })).rejects.toMatchObject({ code: 'ERR_BAD_REQUEST' });
    await expect(sources.add({ kind: 'hn', list: 'top', url: 'https://news.ycombinator.com/item?id=1' })).rejects.toMatchObject({ code: 'ERR_BAD_REQUEST' });
    await expect(sources.add({ kind: 'hn', url: 'https://example.com/item?id=1' })).rejects.toMatchObject({ code: 'ERR_BAD_REQUEST' });
    await expect(sources.add({ kind: 'feed', url: 'ftp://x/feed' })).rejects.toMatchObject({ code: 'ERR_FETCH_BAD_URL' });
    await expect(sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 0 })).rejects.toMatchObject({ code: 'ERR_BAD_REQUEST' });
    await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml` });
    await expect(sources.add({ kind: 'feed', url: `${web.origin}/feed.xml#x` })).rejects.toMatchObject({ code: 'ERR_SOURCE_EXISTS' });
    await expect(sources.get('src_nope')).rejects.toMatchObject({ code: 'ERR_SOURCE_NOT_FOUND' });

    clock += 1;
    const fixed = parseSourceLines(`# news\nfeed ${web.origin}/other.xml 20\nhn best`, 'DATA_DIR/sources');
    await sources.syncFixed(fixed);
    await service('node-b', store, ingest).syncFixed(fixed);
    let list = await sources.list();
    expect(list.map((s) => [s.origin, s.kind, s.list ?? s.url, s.everyMinutes])).toEqual([
      ['api', 'feed', `${web.origin}/feed.xml`, 60],
      ['config', 'feed', `${web.origin}/other.xml`, 20],
      ['config', 'hn', 'best', 60],
    ]);
    await expect(sources.remove(list[1].id)).rejects.toMatchObject({ code: 'ERR_SOURCE_FIXED' });
    await sources.syncFixed(parseSourceLines('hn best 5', 'SOURCES'));
    list = await sources.list();
    expect(list.map((s) => [s.origin, s.everyMinutes])).toEqual([
      ['api', 60],
      ['config', 5],
    ]);
    expect(() => parseSourceLines('feed', 'SOURCES')).toThrow(/SOURCES entry 1/);
    expect(() => parseSourceLines('rss https://x.test/feed', 'SOURCES')).toThrow(/kind must be one of/);
    expect(parseSourceLines('feed https://alice:s3cret@x.test/feed', 'SOURCES')[0].url).toBe('https://x.test/feed');
  });
});

describe('backoff', () => {
  it('doubles the interval per failure with its jitter, and never waits past a day, the jitter then only shortening the wait', () => {
    const hour = 3_600_000;
    expect(backoff(hour, 1, 1)).toBe(2 * hour);
    expect(backoff(hour, 2, 1 + JITTER)).toBeCloseTo(4 * hour * (1 + JITTER));
    // 16 h doubled past the day: a day at most, whatever the jitter.
    for (const jitter of [1 - JITTER, 1, 1 + JITTER]) {
      expect(backoff(hour, 5, jitter)).toBeLessThanOrEqual(MAX_BACKOFF_MS);
      expect(backoff(hour, 30, jitter)).toBeLessThanOrEqual(MAX_BACKOFF_MS);
    }
    // Just under the cap, the jitter's 10 % more is cut to the day.
    expect(backoff(22 * hour, 0, 1 + JITTER)).toBe(MAX_BACKOFF_MS);
    // At the cap the jitter still moves sources apart.
    expect(backoff(hour, 30, 1 + JITTER)).toBeLessThan(backoff(hour, 30, 1));
  });
});

describePostgres('sources that refresh on PostgreSQL', () => {
  it('polls a source whose dead holder’s lease ran out on the database clock, from a node whose clock runs an hour behind', async () => {
    const schema = await freshSchema();
    const web = await startFixtureServer({}, (path) =>
      path.startsWith('/a/') ? { body: articlePage(`Story ${path.slice(3)}`, PARAS) } : { status: 404, body: 'not found' },
    );
    web.routes.set('/feed.xml', { type: 'application/rss+xml', body: rss(web.origin, ['one']) });
    const clock = Date.now() - 60 * MIN;
    const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema: schema.schema });
    const ingest = slottedIngest(store, web.origin, 1);
    const sources = new SourceService({ store, ingest, owner: 'node-behind', leaseMs: 15 * MIN, now: () => clock, random: () => 0.5 });
    try {
      const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 30 });
      // A node that died polling it: its lease, a millisecond long, ran out on the database's clock,
      // though it ends an hour after the clock of the node looking now.
      const at = Date.now();
      expect(await store.leaseSource(id, 'node-dead', 'job_dead', new Date(at).toISOString(), new Date(at + 1).toISOString())).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [jobId] = await sources.tick();
      expect(jobId).toBeDefined();
      await ingest.idle();
      expect(await ingest.getJob(jobId)).toMatchObject({ status: 'done' });
      expect(await sources.get(id)).toMatchObject({ itemCount: 1, polling: null });
    } finally {
      await sources.stop();
      await ingest.close();
      await store.close();
      await web.close();
      await schema.drop();
    }
  });

  it('polls a feed one of whose entries has a guid of 8,000 random characters, far past a btree entry, again and again', async () => {
    const schema = await freshSchema();
    const web = await startFixtureServer({}, (path) =>
      path.startsWith('/a/') ? { body: articlePage(`Story ${path.slice(3)}`, PARAS) } : { status: 404, body: 'not found' },
    );
    // Random characters: PostgreSQL would compress a repetitive guid enough to fit an index entry.
    const guid = `tag:${randomBytes(6_000).toString('base64url')}`;
    const hostile = `<item><title>Story long</title><link>${web.origin}/a/long</link><guid>${guid}</guid><description>About long.</description></item>`;
    web.routes.set('/feed.xml', { type: 'application/rss+xml', body: rss(web.origin, ['one', 'two'], hostile) });
    const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema: schema.schema });
    const ingest = slottedIngest(store, web.origin, 1);
    const sources = new SourceService({ store, ingest, owner: 'node-a', leaseMs: 15 * MIN, random: () => 0.5 });
    try {
      const { id } = await sources.add({ kind: 'feed', url: `${web.origin}/feed.xml`, everyMinutes: 30 });
      // Polled at once, then again by hand: when it is next due is on the database's clock, which no test moves.
      for (let poll = 0; poll < 2; poll++) {
        const jobId = poll === 0 ? (await sources.tick())[0] : (await sources.refresh(id)).jobId;
        await ingest.idle();
        expect(await ingest.getJob(jobId)).toMatchObject({ status: 'done' });
        expect(await sources.get(id)).toMatchObject({ itemCount: 3, lastError: null, failures: 0 });
      }
      // The second poll knew every entry, the long one by its guid: no article fetched twice.
      expect(
        web.requests
          .filter((r) => r.path.startsWith('/a/'))
          .map((r) => r.path)
          .sort(),
      ).toEqual(['/a/long', '/a/one', '/a/two']);
      expect((await store.sourceEntryHashes(id, [guid])).size).toBe(1);
    } finally {
      await sources.stop();
      await ingest.close();
      await store.close();
      await web.close();
      await schema.drop();
    }
  });

  it('keeps a queued poll on the node that took it: the other node, looking after the first lease ran out, polls nothing', async () => {
    const schema = await freshSchema();
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const web = await startFixtureServer({}, (path) =>
      path.startsWith('/a/') ? { body: articlePage(`Story ${path.slice(3)}`, PARAS) } : { status: 404, body: 'not found' },
    );
    web.routes.set('/slow.xml', async (): Promise<Answer> => (await held, { type: 'application/rss+xml', body: rss(web.origin, ['slow']) }));
    web.routes.set('/feed.xml', { type: 'application/rss+xml', body: rss(web.origin, ['one', 'two']) });
    let clock = T0;
    const node = async (owner: string) => {
      const store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema: schema.schema });
      const ingest = slottedIngest(store, web.origin, 1);
      const sources = new SourceService({ store, ingest, owner, leaseMs: 15 * MIN, now: () => clock, random: () => 0.5 });
      return { store, ingest, sources };
    };
    const a = await node('node-a');
    const b = await node('node-b');
    try {
      await a.sources.add({ kind: 'feed', url: `${web.origin}/slow.xml` });
      await a.sources.tick();
      const { id } = await a.sources.add({ kind: 'feed', url: `${web.origin}/feed.xml` });
      const { jobId: queued } = await a.sources.refresh(id);
      for (let look = 0; look < 3; look++) {
        clock += 10 * MIN;
        expect(await a.sources.tick()).toEqual([]);
        expect(await b.sources.tick()).toEqual([]);
      }
      release();
      await a.ingest.idle();
      expect(await a.ingest.getJob(queued)).toMatchObject({ status: 'done', done: 2 });
      expect(await b.sources.get(id)).toMatchObject({ polling: null, itemCount: 2, lastError: null });
      expect(web.requests.filter((r) => r.path === '/feed.xml')).toHaveLength(1);
    } finally {
      release();
      for (const n of [a, b]) {
        await n.sources.stop();
        await n.ingest.close();
        await n.store.close();
      }
      await web.close();
      await schema.drop();
    }
  });
});
