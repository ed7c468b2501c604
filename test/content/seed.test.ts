import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createItemPipeline } from '../../src/content/ingest/pipeline.js';
import { DEMO_SEED_KEY, defaultDemoDir, demoEntries, putDemoEntries, seedDemo } from '../../src/content/ingest/seed.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { tempDir, testApp } from '../helpers.js';

function writeDemo(dir: string): void {
  mkdirSync(join(dir, 'posts'), { recursive: true });
  mkdirSync(join(dir, 'img'), { recursive: true });
  writeFileSync(join(dir, 'img', 'n1.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(
    join(dir, 'news.json'),
    JSON.stringify([
      {
        id: 'n1',
        title: 'Tram line opens',
        url: 'https://news.example/tram',
        description: 'The new tram line opened.',
        body: 'First paragraph.\n\nSecond paragraph.',
        comments: [{ by: 'rider', text: 'Finally!', time: 1700000000 }],
        category: 'City',
        publishedAt: '2025-01-02T08:00:00Z',
        image: '/demo/img/n1.svg',
        author: 'A. Writer',
        siteName: 'Example News',
      },
      { id: 'n2', title: 'Second story', body: 'Text.', category: 'City', publishedAt: '2025-01-03T08:00:00Z' },
      { id: 'bad id!', title: 'Broken' },
    ]),
  );
  writeFileSync(
    join(dir, 'videos.json'),
    JSON.stringify([
      {
        id: 'v1',
        title: 'How trams work',
        description: 'A short explainer.',
        url: 'https://www.youtube.com/watch?v=abcdEFGH123',
        channel: 'Rail Talk',
        publishedAt: '2025-01-04T08:00:00Z',
        thumbnail: '/demo/img/v1.svg',
        category: 'Science',
      },
    ]),
  );
  writeFileSync(
    join(dir, 'posts', 'p1.md'),
    '---\nid: p1\ntitle: Riding the tram\nauthor: Sam\ncategory: City\npublishedAt: 2025-01-05\n---\nIt was **quiet**.\n\nAnd fast.',
  );
  writeFileSync(join(dir, 'posts', 'p2.md'), '---\ntitle: [broken\n---\n');
}

describe('seedDemo', () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  let demo: string;
  const stores: SqliteStore[] = [];

  const open = () => {
    const s = new SqliteStore({ filename: file });
    stores.push(s);
    return s;
  };
  const pipelineFor = (store: SqliteStore) => createItemPipeline({ store, bodyMaxChars: 200_000, chunk: { size: 800, overlap: 160 } });

  beforeEach(() => {
    tmp = tempDir();
    file = join(tmp.dir, 'salon.db');
    demo = join(tmp.dir, 'demo');
    writeDemo(demo);
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    tmp.cleanup();
  });

  it('fills a fresh store through the importers, reporting bad entries', async () => {
    const store = open();
    const r = await seedDemo({ store, pipeline: pipelineFor(store), dir: demo });
    expect(r).toMatchObject({ seeded: true, created: 4, updated: 0, unchanged: 0 });
    expect(r.failures.map((f) => f.code)).toEqual(['ERR_INVALID_CONTENT', 'ERR_INVALID_CONTENT']);
    expect(await store.getItem('news_n1')).toMatchObject({
      source: 'demo',
      comments: [{ by: 'rider', text: 'Finally!', time: 1700000000 }],
      image: '/demo/img/n1.svg',
    });
    expect(await store.getItem('video_v1')).toMatchObject({ source: 'demo', channel: 'Rail Talk', siteName: 'YouTube' });
    // A post keeps its markdown; its chunks hold the text.
    expect(await store.getItem('post_p1')).toMatchObject({ source: 'demo', body: 'It was **quiet**.\n\nAnd fast.', author: 'Sam' });
    const postBody = (await store.chunksOfItem('post_p1')).filter((c) => c.part === 'body').map((c) => c.text);
    expect(postBody.join('\n')).toContain('It was quiet.');
    expect(postBody.join('\n')).not.toContain('**');
    expect((await store.chunksOfItem('news_n1')).map((c) => c.part)).toEqual(['title', 'body', 'comment']);
    expect(JSON.parse((await store.getMeta(DEMO_SEED_KEY))!).state).toBe('done');
  });

  it('does nothing the second time', async () => {
    const store = open();
    await seedDemo({ store, pipeline: pipelineFor(store), dir: demo });
    const again = await seedDemo({ store, pipeline: pipelineFor(store), dir: demo });
    expect(again).toMatchObject({ seeded: false, reason: 'already seeded' });
    expect(await store.countItems()).toBe(4);
  });

  it('lets only one of two seeders on the same SQLite file seed, without duplicates', async () => {
    const a = open();
    const b = open();
    const results = await Promise.all([
      seedDemo({ store: a, pipeline: pipelineFor(a), dir: demo }),
      seedDemo({ store: b, pipeline: pipelineFor(b), dir: demo }),
    ]);
    expect(results.filter((r) => r.seeded)).toHaveLength(1);
    expect(await a.countItems()).toBe(4);
    expect(await b.countChunks()).toBe(await a.countChunks());
  });

  it('does not duplicate even when two seeders both write (ids are fixed)', async () => {
    const a = open();
    const b = open();
    const [ea, eb] = await Promise.all([demoEntries(demo), demoEntries(demo)]);
    const [ra, rb] = await Promise.all([putDemoEntries(pipelineFor(a), ea), putDemoEntries(pipelineFor(b), eb)]);
    expect(ra.created + rb.created).toBe(4);
    expect(ra.created + ra.unchanged + ra.updated).toBe(4);
    expect(await a.countItems()).toBe(4);
    const chunks = await a.scanChunks(0, 1000);
    expect(new Set(chunks.map((c) => `${c.itemId}:${c.ord}`)).size).toBe(chunks.length);
  });

  it('leaves a store that already holds content alone', async () => {
    const store = open();
    await pipelineFor(store).put({ id: 'post_mine', kind: 'post', title: 'Mine', source: 'api' });
    expect(await seedDemo({ store, pipeline: pipelineFor(store), dir: demo })).toMatchObject({ seeded: false, reason: 'the store already holds content' });
    expect(await store.countItems()).toBe(1);
  });

  it('takes over a claim whose seeding never finished', async () => {
    const store = open();
    await store.setMeta(DEMO_SEED_KEY, JSON.stringify({ state: 'seeding', at: '2000-01-01T00:00:00Z' }));
    expect(await seedDemo({ store, pipeline: pipelineFor(store), dir: demo })).toMatchObject({ seeded: true, created: 4 });
    await store.setMeta(DEMO_SEED_KEY, JSON.stringify({ state: 'seeding', at: new Date().toISOString() }));
    expect(await seedDemo({ store, pipeline: pipelineFor(store), dir: demo })).toMatchObject({ seeded: false, reason: 'another process is seeding' });
  });

  it('seeds at app start when SEED_DEMO is on, and serves the demo images', async () => {
    const { app, close } = await testApp({ SEED_DEMO: 'true' }, { demoDir: demo });
    try {
      const list = (await app.inject('/api/v1/content?limit=100')).json();
      expect(list.items.map((i: { id: string }) => i.id).sort()).toEqual(['news_n1', 'news_n2', 'post_p1', 'video_v1']);
      expect((await app.inject('/demo/img/n1.svg')).statusCode).toBe(200);
    } finally {
      await close();
    }
  });
});

describe('the real demo content (fixtures/demo)', () => {
  it('is in place', () => {
    expect(existsSync(join(defaultDemoDir(), 'news.json'))).toBe(true);
  });

  it('gives a fresh DATA_DIR at least 40 items of all three kinds, with working images', async () => {
    const { app, close } = await testApp({ SEED_DEMO: 'true' });
    try {
      const res = await app.inject('/api/v1/content?limit=100');
      expect(res.statusCode).toBe(200);
      const items = res.json().items as { id: string; kind: string; image: string | null; thumbnail: string | null; commentCount: number }[];
      expect(items.length).toBeGreaterThanOrEqual(40);
      expect(new Set(items.map((i) => i.kind))).toEqual(new Set(['news', 'post', 'video']));
      expect(items.some((i) => i.kind === 'news' && i.commentCount > 0)).toBe(true);
      for (const path of items.flatMap((i) => [i.image, i.thumbnail]).filter((p): p is string => Boolean(p?.startsWith('/demo/img/')))) {
        expect((await app.inject(path)).statusCode, path).toBe(200);
      }
    } finally {
      await close();
    }
  });
});
