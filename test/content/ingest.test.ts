import { readFileSync, writeFileSync, mkdirSync, symlinkSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ingestCommand } from '../../src/cli/commands/ingest.js';
import type { IngestDeps } from '../../src/content/sources/article.js';
import { testConfig } from '../../src/config.js';
import { idForUrl } from '../../src/content/ids.js';
import { IngestService, validateIngestRequest } from '../../src/content/ingest/ingest.js';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { LOCAL_FILE_MAX_BYTES } from '../../src/local-files.js';
import type { ChunkRow } from '../../src/content/types.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { loopbackDeps } from '../fixtures-servers/deps.js';
import { startHnServer, type HnServer } from '../fixtures-servers/hn-server.js';
import { articlePage, startFixtureServer, type FixtureServer } from '../fixtures-servers/http.js';
import { CORPORA, tempDir } from '../helpers.js';

const FEEDS = join(CORPORA, 'feeds/rss-parser/test/input');
const PARAS = [
  'The harbour council voted on Tuesday to rebuild the old pier with timber from local forests, ending a decade of debate.',
  'Engineers said the new structure would last sixty years and cost less than the steel design proposed in 2019.',
  'Fishermen welcomed the decision but asked that work pause during the herring season between March and May.',
];

/** Привет in windows-1251. */
const CP1251_TITLE = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]);

function rssFeed(origin: string): string {
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>Fixture Feed</title><link>${origin}/</link>
<item><title>Pier rebuilt</title><link>${origin}/pier</link><description>&lt;p&gt;Short pier summary.&lt;/p&gt;</description><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate><category>Local</category></item>
<item><title>Gone story</title><link>${origin}/gone</link><description>The feed's own text about the gone story.</description></item>
<item><title>No link at all</title><description>Nothing to point at.</description></item>
</channel></rss>`;
}

interface Sink {
  calls: { added: ChunkRow[]; removed: number[] }[];
  chunksChanged(change: { added: ChunkRow[]; removed: number[] }): Promise<void>;
}

describe('IngestService', () => {
  let web: FixtureServer;
  let hn: HnServer;
  let store: SqliteStore;
  let sink: Sink;
  let service: IngestService;

  beforeAll(async () => {
    web = await startFixtureServer({
      '/pier': { body: articlePage('Harbour council backs timber pier', PARAS) },
      '/story': { body: articlePage('A linked story', PARAS.slice(1)) },
      '/youtube.xml': { type: 'application/atom+xml', body: readFileSync(join(FEEDS, 'atom-customfields.atom')) },
      '/plain.xml': { type: 'application/rss+xml', body: readFileSync(join(FEEDS, 'heraldsun.rss')) },
      '/gone': { status: 404, body: 'gone' },
      '/not-a-feed': { body: '<html><body><p>hello</p></body></html>' },
      // As FeedBurner serves it: text/xml, with <?xml-stylesheet?> instructions before the root.
      '/feedburner': { type: 'text/xml; charset=UTF-8', body: readFileSync(join(FEEDS, 'feedburner.atom')) },
    });
    web.routes.set('/feed.xml', { type: 'application/rss+xml; charset=utf-8', body: rssFeed(web.origin) });
    // No XML declaration: only the Content-Type says windows-1251.
    web.routes.set('/cp1251.xml', {
      type: 'application/rss+xml; charset=windows-1251',
      body: Buffer.concat([
        Buffer.from('<rss><channel><title>t</title><item><title>'),
        CP1251_TITLE,
        Buffer.from(`</title><link>${web.origin}/pier</link></item></channel></rss>`),
      ]),
    });
    hn = await startHnServer(
      {
        7001: { by: 'poster', id: 7001, kids: [8001, 8004, 8002], time: 1700000000, title: 'Linked story', type: 'story', url: `${web.origin}/story` },
      },
      [8000, 121003, 9999],
    );
  });
  afterAll(async () => {
    await web.close();
    await hn.close();
  });

  function build(deps: IngestDeps = loopbackDeps()): IngestService {
    const pipeline = createItemPipeline({ store, bodyMaxChars: 200_000, chunk: { size: 300, overlap: 50 }, sink: () => sink });
    return new IngestService({ store, pipeline, deps, hn: { base: hn.base, commentLimit: 10, intervalMs: 0 }, bodyMaxChars: 200_000 });
  }

  beforeEach(() => {
    store = new SqliteStore({ filename: ':memory:' });
    sink = {
      calls: [],
      async chunksChanged(change) {
        this.calls.push(change);
      },
    };
    service = build();
  });
  afterEach(async () => {
    await service.close();
    await store.close();
  });

  it('drops the userinfo of a URL asked for: the item’s id and URL, and the job, are those of the URL without it', async () => {
    const job = await service.run({ url: `${web.origin.replace('//', '//alice:s3cret@')}/pier` });
    expect(job.itemIds).toEqual([idForUrl('news', `${web.origin}/pier`)]);
    expect(await store.getItem(job.itemIds[0])).toMatchObject({ url: `${web.origin}/pier` });
    expect(JSON.stringify(await store.getJob(job.id))).not.toMatch(/alice|s3cret/);
  });

  it('ingests an article URL into an item with chunks, and tells the sink', async () => {
    const url = `${web.origin}/pier`;
    const job = await service.run({ url });
    expect(job).toMatchObject({ status: 'done', total: 1, done: 1, failed: 0, failures: [], itemIds: [idForUrl('news', url)] });
    const item = (await store.getItem(job.itemIds[0]))!;
    expect(item).toMatchObject({ kind: 'news', title: 'Harbour council backs timber pier', url, source: 'url', siteName: 'Fixture Times' });
    expect(item.body).toContain('herring season');
    const chunks = await store.chunksOfItem(item.id);
    expect(chunks.length).toBeGreaterThan(1);
    expect(sink.calls).toHaveLength(1);
    expect(sink.calls[0].added.map((c) => c.rowId)).toEqual(chunks.map((c) => c.rowId));
    expect((await store.getJob(job.id))?.status).toBe('done');
  });

  it('updates instead of duplicating when the same URL comes again', async () => {
    const url = `${web.origin}/pier`;
    await service.run({ url });
    await service.run({ url: `${url}#fragment` });
    expect(await store.countItems()).toBe(1);
    expect(sink.calls).toHaveLength(1);
  });

  it('records a failed fetch as a failed job with the typed code', async () => {
    const job = await service.run({ url: `${web.origin}/gone` });
    expect(job.status).toBe('failed');
    expect(job.failures).toEqual([expect.objectContaining({ ref: `${web.origin}/gone`, code: 'ERR_FETCH_HTTP_STATUS' })]);
    expect(await store.countItems()).toBe(0);
  });

  it('ingests a feed: article when reachable, feed text when not, a failure for an entry without link', async () => {
    const job = await service.run({ feed: `${web.origin}/feed.xml` });
    expect(job).toMatchObject({ status: 'done', total: 3, done: 2, failed: 1 });
    expect(job.failures.map((f) => [f.ref, f.code])).toEqual([
      [`${web.origin}/gone`, 'ERR_FETCH_HTTP_STATUS'],
      ['No link at all', 'ERR_INVALID_CONTENT'],
    ]);
    const pier = (await store.getItem(idForUrl('news', `${web.origin}/pier`)))!;
    expect(pier).toMatchObject({ source: 'feed', category: 'Local', description: 'Short pier summary.', publishedAt: '2024-01-02T10:00:00.000Z' });
    expect(pier.body).toContain('herring season');
    const gone = (await store.getItem(idForUrl('news', `${web.origin}/gone`)))!;
    expect(gone.body).toBe("The feed's own text about the gone story.");
  });

  it('decodes a feed by the charset its Content-Type names, as a feed and as a URL that serves one', async () => {
    for (const request of [{ feed: `${web.origin}/cp1251.xml` }, { url: `${web.origin}/cp1251.xml` }]) {
      expect(await service.run(request)).toMatchObject({ status: 'done', done: 1 });
      expect((await store.getItem(idForUrl('news', `${web.origin}/pier`)))!.title).toBe('Привет');
    }
  });

  it('treats a URL that serves a feed as that feed', async () => {
    const job = await service.run({ url: `${web.origin}/plain.xml` });
    expect(job).toMatchObject({ status: 'done', total: 2, done: 2 });
  });

  it('treats a URL that serves a feed as text/xml after stylesheet instructions as that feed', async () => {
    const job = await service.run({ url: `${web.origin}/feedburner`, limit: 2 });
    expect(job).toMatchObject({ status: 'done', total: 2, done: 2 });
  });

  it('ingests a YouTube channel feed as videos, and refuses other feeds as one', async () => {
    const job = await service.run({ youtubeFeed: `${web.origin}/youtube.xml`, limit: 5 });
    expect(job).toMatchObject({ status: 'done', total: 5, done: 5, failed: 0 });
    expect(job.itemIds[0]).toBe('video_lR-w1h5ONOY');
    expect(await store.countItems('video')).toBe(5);
    const wrong = await service.run({ youtubeFeed: `${web.origin}/plain.xml` });
    expect(wrong.status).toBe('failed');
    expect(wrong.failures[0].code).toBe('ERR_FEED_PARSE');
    const notFeed = await service.run({ feed: `${web.origin}/not-a-feed` });
    expect(notFeed.failures[0]).toMatchObject({ code: 'ERR_FEED_PARSE', ref: `${web.origin}/not-a-feed` });
  });

  it('ingests an HN story with its linked article and comments', async () => {
    const job = await service.run({ hn: 7001 });
    expect(job).toMatchObject({ status: 'done', done: 1, itemIds: ['news_hn7001'], failures: [] });
    const item = (await store.getItem('news_hn7001'))!;
    expect(item.body).toContain('sixty years');
    expect(item.comments.map((c) => c.by)).toEqual(['alice', 'bob']);
    const commentChunks = (await store.chunksOfItem('news_hn7001')).filter((c) => c.part === 'comment');
    expect(commentChunks.map((c) => [c.commentBy, c.text])).toEqual([
      ['alice', 'First top-level reply'],
      ['bob', 'Second top-level reply'],
    ]);
  });

  it('keeps an HN story whose article cannot be fetched, recording why', async () => {
    const job = await service.run({ hn: 8863 });
    expect(job).toMatchObject({ status: 'done', done: 1, failed: 0 });
    expect(job.failures).toEqual([expect.objectContaining({ ref: 'http://www.getdropbox.com/u/2/screencast.html', code: 'ERR_FETCH_BLOCKED_ADDRESS' })]);
    const item = (await store.getItem('news_hn8863'))!;
    expect(item.title).toBe('My YC app: Dropbox - Throw away your USB drive');
    expect(item.comments.length).toBe(1); // only 8952 of its kids is recorded in the corpus
  });

  it('ingests HN top stories, failing the dead one', async () => {
    const job = await service.run({ hn: 'top', limit: 3 });
    expect(job).toMatchObject({ status: 'done', total: 3, done: 2, failed: 1 });
    expect(job.itemIds).toEqual(['news_hn8000', 'news_hn121003']);
    expect(job.failures.find((f) => f.ref === 'hn:9999')?.code).toBe('ERR_CONTENT_NOT_FOUND');
  });

  it('runs submitted jobs in the background and reports them', async () => {
    const queued = await service.submit({ url: `${web.origin}/pier` });
    expect(queued.status).toBe('queued');
    expect((await store.getJob(queued.id))?.status).toBeDefined();
    await service.idle();
    expect(await service.getJob(queued.id)).toMatchObject({ status: 'done', done: 1 });
    await expect(service.getJob('job_nope')).rejects.toMatchObject({ code: 'ERR_JOB_NOT_FOUND' });
    await expect(service.submit({ file: ['/etc/passwd'] })).rejects.toMatchObject({ code: 'ERR_BAD_REQUEST' });
  });

  it('stops running jobs on close, marking them cancelled', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: IngestDeps = {
      ...loopbackDeps(),
      async fetchPage(url, signal) {
        await new Promise<void>((resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
          void gate.then(resolve);
        });
        return loopbackDeps().fetchPage(url, signal);
      },
    };
    await service.close();
    service = build(slow);
    const job = await service.submit({ url: `${web.origin}/pier` });
    await new Promise((r) => setTimeout(r, 20));
    await service.close();
    release();
    expect(await store.getJob(job.id)).toMatchObject({ status: 'failed', failures: [expect.objectContaining({ code: 'ERR_JOB_CANCELLED' })] });
    await expect(service.submit({ url: `${web.origin}/pier` })).rejects.toMatchObject({ code: 'ERR_NOT_READY' });
  });

  it('ingests local files: a posts folder, a video JSON, a feed file; a missing file fails alone', async () => {
    const { dir, cleanup } = tempDir();
    try {
      mkdirSync(join(dir, 'posts'));
      writeFileSync(join(dir, 'posts', 'one.md'), '---\ntitle: One\n---\nFirst post body.');
      writeFileSync(join(dir, 'posts', 'two.md'), '---\ntitle: Two\nauthor: B\n---\nSecond post body.');
      writeFileSync(
        join(dir, 'videos.json'),
        JSON.stringify([{ id: 'v1', title: 'Video one', description: 'About things.', url: 'https://youtu.be/abcdEFGH123' }]),
      );
      const job = await service.run({ file: [join(dir, 'posts'), join(dir, 'videos.json'), join(FEEDS, 'heraldsun.rss'), join(dir, 'missing.md')] });
      expect(job).toMatchObject({ status: 'done', total: 6, done: 5, failed: 1 });
      expect(job.itemIds.slice(0, 3)).toEqual(['post_one', 'post_two', 'video_v1']);
      // the feed's articles live on the internet: noted, and the feed text kept
      expect(job.failures.map((f) => f.code)).toEqual(['ERR_FETCH_BLOCKED_ADDRESS', 'ERR_FETCH_BLOCKED_ADDRESS', 'ERR_INVALID_CONTENT']);
      expect(job.failures[2]).toMatchObject({ ref: join(dir, 'missing.md'), message: expect.stringContaining('does not exist') });
    } finally {
      cleanup();
    }
  });
});

describe('local files that are not files, or too large', () => {
  it('fails a device, a pipe or an oversized file by name without reading it, and goes on with the rest', async () => {
    const { dir, cleanup } = tempDir();
    const store = new SqliteStore({ filename: ':memory:' });
    const service = new IngestService({
      store,
      pipeline: createItemPipeline({ store, bodyMaxChars: 200_000, chunk: { size: 300, overlap: 50 } }),
      deps: loopbackDeps(),
      hn: { base: 'http://127.0.0.1:9', commentLimit: 10, intervalMs: 0 },
      bodyMaxChars: 200_000,
    });
    try {
      // Named as a feed and a post, each endless: read whole, either never ended.
      symlinkSync('/dev/zero', join(dir, 'zero.xml'));
      symlinkSync('/dev/zero', join(dir, 'zero.md'));
      writeFileSync(join(dir, 'huge.json'), '');
      truncateSync(join(dir, 'huge.json'), LOCAL_FILE_MAX_BYTES + 1);
      writeFileSync(join(dir, 'fine.md'), '---\ntitle: Fine\n---\nA post that reads.');
      const job = await service.run({ file: ['zero.xml', 'zero.md', 'huge.json', 'fine.md'].map((f) => join(dir, f)) });
      expect(job).toMatchObject({ status: 'done', done: 1, failed: 3 });
      expect(job.itemIds).toEqual(['post_fine']);
      expect(job.failures.map((f) => [f.code, f.message.replace(dir, 'DIR')])).toEqual([
        ['ERR_INVALID_CONTENT', expect.stringContaining('it is not a regular file')],
        ['ERR_INVALID_CONTENT', expect.stringContaining('it is not a regular file')],
        ['ERR_INVALID_CONTENT', expect.stringContaining('it is larger than 32 MiB')],
      ]);
    } finally {
      await service.close();
      await store.close();
      cleanup();
    }
  });
});

describe('validateIngestRequest', () => {
  it('accepts exactly one source with an optional limit', () => {
    expect(validateIngestRequest({ url: ' https://example.com/a ' })).toEqual({ url: 'https://example.com/a' });
    expect(validateIngestRequest({ feed: 'https://alice:s3cret@example.com/rss' })).toEqual({ feed: 'https://example.com/rss' });
    expect(validateIngestRequest({ hn: '42' })).toEqual({ hn: 42 });
    expect(validateIngestRequest({ hn: 'top', limit: 5 })).toEqual({ hn: 'top', limit: 5 });
  });

  it('refuses everything else with ERR_BAD_REQUEST or ERR_FETCH_BAD_URL', () => {
    for (const bad of [
      {},
      { url: 'https://a.test', feed: 'https://b.test' },
      { hn: 0 },
      { hn: 'best' },
      { url: 'https://a.test', limit: 0 },
      { feed: 42 },
      null,
      [],
    ]) {
      expect(() => validateIngestRequest(bad), JSON.stringify(bad)).toThrow(expect.objectContaining({ code: 'ERR_BAD_REQUEST' }));
    }
    expect(() => validateIngestRequest({ url: 'file:///etc/passwd' })).toThrow(expect.objectContaining({ code: 'ERR_FETCH_BAD_URL' }));
  });
});

describe('item pipeline', () => {
  it('validates before writing, reports chunk changes and skips unchanged items', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const calls: { added: number; removed: number }[] = [];
    const pipeline = createItemPipeline({
      store,
      bodyMaxChars: 1000,
      chunk: { size: 100, overlap: 20 },
      sink: () => ({
        async chunksChanged(c) {
          calls.push({ added: c.added.length, removed: c.removed.length });
        },
      }),
    });
    const base = { id: 'post_a', kind: 'post', title: 'T', body: 'One. '.repeat(60), source: 'api' };
    await expect(pipeline.put({ ...base, title: '' })).rejects.toMatchObject({ code: 'ERR_INVALID_CONTENT', message: expect.stringContaining('title') });
    await expect(pipeline.put({ ...base, id: 'video_a', kind: 'post' })).rejects.toMatchObject({ code: 'ERR_INVALID_CONTENT' });
    await expect(pipeline.put({ ...base, url: 'ftp://x' })).rejects.toMatchObject({ code: 'ERR_INVALID_CONTENT' });
    await expect(pipeline.put({ ...base, comments: [{ by: 'x', text: 'y', time: -1 }] })).rejects.toMatchObject({
      message: expect.stringContaining('comments[0].time'),
    });
    expect(await store.countItems()).toBe(0);

    expect((await pipeline.put(base)).status).toBe('created');
    expect((await pipeline.put(base)).status).toBe('unchanged');
    const updated = await pipeline.put({ ...base, body: 'Two. '.repeat(60) });
    expect(updated.status).toBe('updated');
    expect(calls.length).toBe(2);
    expect(calls[1].removed).toBeGreaterThan(0);
    expect(calls[1].added).toBe(updated.chunks.added);

    const long = await pipeline.put({ ...base, id: 'post_b', body: 'x'.repeat(5000), title: 'a\u0000b\u0007c' });
    const stored = (await store.getItem(long.id))!;
    expect(stored.body.length).toBeLessThanOrEqual(1000);
    expect(stored.title).toBe('abc');
    await store.close();
  });

  it('puts a batch in one go: one sink call, and rows an item given twice removed are never indexed', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    const changes: { added: ChunkRow[]; removed: number[] }[] = [];
    const pipeline = createItemPipeline({
      store,
      bodyMaxChars: 1000,
      chunk: { size: 100, overlap: 20 },
      sink: () => ({
        async chunksChanged(c) {
          changes.push(c);
        },
      }),
    });
    const base = { id: 'post_a', kind: 'post', title: 'T', body: 'One. '.repeat(10), source: 'api' };
    const results = await pipeline.putMany([base, { ...base, id: 'post_b' }, { ...base, body: 'Two. '.repeat(10) }]);
    expect(results.map((r) => r.status)).toEqual(['created', 'created', 'updated']);
    expect(changes).toHaveLength(1);
    const live = new Set([...(await store.chunksOfItem('post_a')), ...(await store.chunksOfItem('post_b'))].map((c) => c.rowId));
    expect(changes[0].added.map((c) => c.rowId).sort()).toEqual([...live].sort());
    expect(changes[0].removed).toEqual([]);
    await expect(
      pipeline.putMany([
        { ...base, id: 'post_c' },
        { ...base, title: '' },
      ]),
    ).rejects.toMatchObject({ code: 'ERR_INVALID_CONTENT' });
    expect(await store.getItem('post_c')).toBeNull();
    await store.close();
  });
});

describe('salon ingest (CLI)', () => {
  function capture(): NodeJS.WriteStream & { text: () => string } {
    const chunks: string[] = [];
    return Object.assign({ isTTY: false, write: (s: string) => (chunks.push(s), true) }, { text: () => chunks.join('') }) as unknown as NodeJS.WriteStream & {
      text: () => string;
    };
  }

  it('ingests files into DATA_DIR, prints ids and a summary line, exit 0', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(join(dir, 'a.md'), '---\ntitle: A post\n---\nWords.');
      writeFileSync(join(dir, 'v.json'), JSON.stringify({ id: 'v9', title: 'A video', url: 'https://youtu.be/abcdEFGH123' }));
      const out = capture();
      const err = capture();
      const code = await ingestCommand(['--file', join(dir, 'a.md'), join(dir, 'v.json')], testConfig({ DATA_DIR: join(dir, 'data') }), out, err);
      expect(code).toBe(0);
      expect(out.text()).toBe('post_a\nvideo_v9\n');
      expect(err.text()).toMatch(/^ingest: 2 done, 0 failed of 2 in [\d.]+s\s*\n$/);
      const store = new SqliteStore({ filename: join(dir, 'data', 'salon.db') });
      expect(await store.countItems()).toBe(2);
      await store.close();
    } finally {
      cleanup();
    }
  });

  it('exits non-zero when an item fails, and 2 on bad usage', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const config = testConfig({ DATA_DIR: dir });
      const err = capture();
      expect(await ingestCommand(['--file', join(dir, 'missing.md')], config, capture(), err)).toBe(1);
      console.log(JSON.stringify(err.text()));
      expect(err.text()).toContain('ERR_INVALID_CONTENT');
      for (const args of [[], ['--hn', 'best'], ['https://a.test', '--feed', 'https://b.test'], ['--limit', 'x', 'https://a.test'], ['--bogus', 'x']]) {
        expect(await ingestCommand(args, config, capture(), capture()), args.join(' ')).toBe(2);
      }
      expect(await ingestCommand(['not a url'], config, capture(), capture())).toBe(1);
    } finally {
      cleanup();
    }
  });

  it('prints what it could not fetch with its control characters escaped, not sent to the terminal', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const err = capture();
      // An address pasted from a hostile page: the failure echoes it.
      expect(await ingestCommand(['http://exa mple.test/\u001b]0;pwned\u0007\u001b[2J\u202e'], testConfig({ DATA_DIR: dir }), capture(), err)).toBe(1);
      expect(err.text()).toContain('ERR_FETCH_BAD_URL');
      expect(err.text()).toContain('\\x1b]0;pwned\\x07\\x1b[2J\\u202e');
      expect(err.text()).not.toMatch(/[\u0007\u001b\u202e]/);
    } finally {
      cleanup();
    }
  });

  it('ingests an HN story through the real fetcher', async () => {
    const hn = await startHnServer();
    const { dir, cleanup } = tempDir();
    try {
      const out = capture();
      const code = await ingestCommand(
        ['--hn', '121003'],
        testConfig({ DATA_DIR: dir, HN_API_BASE: hn.base, FETCH_ALLOW_HOSTS: '127.0.0.1', HN_REQUEST_INTERVAL_MS: '0' }),
        out,
        capture(),
      );
      expect(code).toBe(0);
      expect(out.text()).toBe('news_hn121003\n');
    } finally {
      await hn.close();
      cleanup();
    }
  });
});
