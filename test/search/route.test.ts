// GET /api/v1/search through the whole app: content posted through the pipeline, found by the index.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import type { ContentItem } from '../../src/content/types.js';
import { HnswGraph } from '../../src/search/graph/hnsw-graph.js';
import type { SearchIndex } from '../../src/search/search-index.js';
import { ADMIN, testApp } from '../helpers.js';
import { FlakyEmbedder, itemOf, paragraphs } from './corpus.js';

const input = (item: ContentItem) => {
  const { source: _source, ...rest } = item;
  return rest;
};

describe('GET /api/v1/search', () => {
  const embedder = new FlakyEmbedder(new LocalEmbedder({ dimensions: 256 }));
  const corpus = paragraphs(24);
  let t: Awaited<ReturnType<typeof testApp>>;

  beforeAll(async () => {
    t = await testApp({}, { embedder });
    const items = corpus.map((p, i) => input(itemOf(p, i % 2 ? 'post' : 'news')));
    const r = await t.app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: { items } });
    expect(r.statusCode).toBe(200);
  });
  afterAll(async () => t.close());

  const get = (qs: string) => t.app.inject({ method: 'GET', url: `/api/v1/search?${qs}` });

  it('returns the matching items with id, kind, title, url, score, snippet, date, category and site', async () => {
    const p = corpus[6];
    const r = await get(`q=${encodeURIComponent(p.questions[0])}&k=3`);
    expect(r.statusCode).toBe(200);
    const { hits } = r.json();
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(3);
    expect(hits.map((h: { id: string }) => h.id)).toContain(`news_${p.id}`);
    expect(hits[0]).toEqual({
      id: expect.any(String),
      kind: expect.stringMatching(/^(news|post)$/),
      title: expect.any(String),
      url: expect.stringMatching(/^https:/),
      score: expect.any(Number),
      snippet: expect.any(String),
      publishedAt: expect.any(String),
      category: expect.any(String),
      site: 'example.test',
    });
  });

  describe('source=', () => {
    const phrase = 'quokka lantern festival on the marram dunes';
    const sites: [string, string][] = [
      ['news_site_a', 'https://www.Alpha.example/quokka'],
      ['news_site_b', 'https://news.alpha.example/lantern'],
      ['post_site_c', 'https://beta.example/alpha.example/dunes'],
      ['post_site_d', 'https://notalpha.example/marram'],
    ];
    beforeAll(async () => {
      const items = sites.map(([id, url], i) => ({
        ...input(
          itemOf(
            { id: id.replace(/^(news|post)_/, ''), topic: 'Dunes', context: `${phrase}, report ${i}.`, questions: [] },
            id.startsWith('post') ? 'post' : 'news',
          ),
        ),
        url,
      }));
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: { items } });
      expect(r.statusCode).toBe(200);
    });
    const ids = async (qs: string) => {
      const r = await get(`q=${encodeURIComponent(phrase)}&k=20&${qs}`);
      expect(r.statusCode).toBe(200);
      return (r.json().hits as { id: string; site: string }[]).map((h) => `${h.id}@${h.site}`).sort();
    };

    it('keeps the items on that site and its subdomains, www. and case aside', async () => {
      const onAlpha = ['news_site_a@alpha.example', 'news_site_b@news.alpha.example'];
      expect(await ids('source=alpha.example')).toEqual(onAlpha);
      expect(await ids('source=WWW.Alpha.Example')).toEqual(onAlpha);
      expect(await ids('source=alpha.example.')).toEqual(onAlpha);
      expect(await ids('source=news.alpha.example')).toEqual(['news_site_b@news.alpha.example']);
      // A path naming the site is not the site; a host ending in the same letters is another site.
      expect(await ids('source=beta.example')).toEqual(['post_site_c@beta.example']);
      expect(await ids('source=nowhere.example')).toEqual([]);
    });

    it('combines with kind', async () => {
      expect(await ids('source=alpha.example&kind=post')).toEqual([]);
      expect(await ids('source=notalpha.example&kind=post')).toEqual(['post_site_d@notalpha.example']);
    });
  });

  it('defaults k to 10 and filters by kind', async () => {
    const all = (await get('q=Panthers%20Broncos%20Super%20Bowl%20game')).json().hits;
    expect(all.length).toBeGreaterThan(3);
    expect(all.length).toBeLessThanOrEqual(10);
    const posts = (await get(`q=${encodeURIComponent(corpus[1].questions[0])}&kind=post`)).json().hits;
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((h: { kind: string }) => h.kind === 'post')).toBe(true);
  });

  const bad: [string, string][] = [
    ['no q', 'k=3'],
    ['an empty q', 'q='],
    ['a blank q', 'q=%20%20'],
    ['a q over 500 characters', `q=${'a'.repeat(501)}`],
    ['k = 0', 'q=x&k=0'],
    ['k = 51', 'q=x&k=51'],
    ['a k that is not a number', 'q=x&k=ten'],
    ['an unknown kind', 'q=x&kind=podcast'],
    ['a since that is not a date', 'q=x&since=yesterday-ish'],
    ['an unknown parameter', 'q=x&sort=new'],
    ['an empty source', 'q=x&source='],
    ['a source that is a URL', `q=x&source=${encodeURIComponent('https://example.com/')}`],
    ['a source with a space', 'q=x&source=exa%20mple.com'],
    ['a source with a port', 'q=x&source=example.com:8080'],
    ['a source over 253 characters', `q=x&source=${'a.'.repeat(127)}com`],
  ];
  for (const [name, qs] of bad) {
    it(`answers 400 ERR_BAD_REQUEST for ${name}`, async () => {
      const r = await get(qs);
      expect(r.statusCode).toBe(400);
      expect(r.json().error.code).toBe('ERR_BAD_REQUEST');
    });
  }

  it('still answers, by text, while the embedder is down', async () => {
    embedder.down = true;
    try {
      const p = corpus[3];
      const r = await get(`q=${encodeURIComponent(p.questions[0])}&k=5`);
      expect(r.statusCode).toBe(200);
      expect(r.json().hits.map((h: { id: string }) => h.id)).toContain(`post_${p.id}`);
    } finally {
      embedder.down = false;
    }
  });

  it('reports the index in /readyz', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/readyz', headers: ADMIN });
    expect(r.json().checks.search).toEqual({ ok: true, detail: expect.stringMatching(/^\d+ vectors, flat/) });
  });
});

describe('GET /api/v1/search over an HNSW graph left in its worker', () => {
  const corpus = paragraphs(24);
  let t: Awaited<ReturnType<typeof testApp>>;

  beforeAll(async () => {
    // The move to the main thread fails: the graph is searched in its worker.
    const move = vi.spyOn(HnswGraph.prototype, 'moveToMainThread').mockRejectedValue(new Error('no room for the file'));
    try {
      t = await testApp({ HNSW_THRESHOLD: '20' }, { embedder: new LocalEmbedder({ dimensions: 256 }) });
      const items = corpus.map((p) => input(itemOf(p)));
      const r = await t.app.inject({ method: 'POST', url: '/api/v1/content', headers: ADMIN, payload: { items } });
      expect(r.statusCode).toBe(200);
      await (t.app.salon.searchStack.index as SearchIndex).settled();
    } finally {
      move.mockRestore();
    }
  });
  afterAll(async () => t.close());

  /** `salon_search_graph_failed{index="documents"}` as /metrics gives it. */
  async function graphFailedGauge(): Promise<number | undefined> {
    const body = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = body.split('\n').find((l) => l.startsWith('salon_search_graph_failed{index="documents"}'));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  }

  it('answers by exact scan, not 500, once the worker has died, and /readyz and /metrics say so (still ready) until the graph is rebuilt', async () => {
    const index = (t.app.salon.searchStack.index as SearchIndex).current!;
    expect(index.mode).toBe('hnsw');
    expect(index.graphOnMainThread).toBe(false);
    const ready = await t.app.inject({ method: 'GET', url: '/readyz', headers: ADMIN });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().checks.search.detail).not.toMatch(/failed/);
    expect(await graphFailedGauge()).toBe(0);
    const p = corpus[6];
    const url = `/api/v1/search?q=${encodeURIComponent(p.questions[0])}&k=3`;
    const before = await t.app.inject({ method: 'GET', url });
    expect(before.statusCode).toBe(200);
    // The rebuild waits at its start, so the state between the death and the new graph is seen.
    const init = HnswGraph.prototype.init;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = vi.spyOn(HnswGraph.prototype, 'init').mockImplementation(async function (this: HnswGraph, capacity: number) {
      await gate;
      return init.call(this, capacity);
    });
    try {
      const worker = (index as unknown as { graph: { graph: { worker: { terminate(): Promise<number> } } } }).graph.graph.worker;
      await worker.terminate();
      // Noticed when the worker died, not at the next search.
      // Still ready: exact scans answer, and taking every node out while graphs rebuild would stop search.
      const down = await t.app.inject({ method: 'GET', url: '/readyz', headers: ADMIN });
      expect(down.statusCode).toBe(200);
      expect(down.json().checks.search).toEqual({
        ok: true,
        detail: expect.stringMatching(/; documents: the HNSW graph failed .*worker exited.*; rebuilding it, exact scans meanwhile; memory: flat$/),
      });
      const stranger = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(stranger.json().checks.search).toEqual({ ok: true });
      expect(await graphFailedGauge()).toBe(1);
      const flat = index.searches.flat;
      const r = await t.app.inject({ method: 'GET', url });
      expect(r.statusCode).toBe(200);
      expect(r.json().hits.map((h: { id: string }) => h.id)).toContain(`news_${p.id}`);
      expect(index.searches.flat).toBeGreaterThan(flat);
    } finally {
      held.mockRestore();
      release();
    }
    await index.settled();
    const again = await t.app.inject({ method: 'GET', url: '/readyz', headers: ADMIN });
    expect(again.statusCode).toBe(200);
    expect(again.json().checks.search.detail).not.toMatch(/failed/);
    expect(await graphFailedGauge()).toBe(0);
  });
});
