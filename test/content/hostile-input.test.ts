/**
 * Linear work on untrusted text (issue: hostile pages froze every room). Each input below is the
 * shape that made a regex or a recursion blow up; a quadratic scan of it takes minutes and a
 * recursive walk overflows the stack, so finishing with the right answer is the check. The pages
 * of hundreds of thousands of elements take seconds on an idle core and ten times that on a busy
 * one: their timeout only stops a runaway, and extract-linear.test.ts counts the work of the same
 * shapes at two sizes. No figure here depends on the machine's speed.
 */

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExtractPool } from '../../src/content/extract/extract-pool.js';
import { extractArticle } from '../../src/content/extract/index.js';
import { MAX_ATTRIBUTES, MAX_OPEN_ELEMENTS, MAX_OPEN_XML_ELEMENTS, NestingTooDeepError, loadDocument } from '../../src/content/extract/nesting.js';
import { cleanTitle } from '../../src/content/extract/metadata.js';
import { toPlainFeed } from '../../src/content/sources/feed-items.js';
import { FeedPool } from '../../src/content/sources/feed-pool.js';
import { FEED_MAX_ENTRIES, parseFeed } from '../../src/content/sources/feeds.js';
import { MAX_INGEST_LIMIT } from '../../src/content/ingest/ingest.js';
import { MAX_SOURCE_LIMIT } from '../../src/content/refresh/source-spec.js';
import { htmlToText, looksLikeHtml } from '../../src/content/extract/html-text.js';
import { FIELD_CAPS } from '../../src/content/limits.js';
import { splitSentences } from '../../src/ai/local/extractive-text.js';
import { withoutReasoning } from '../../src/ai/reasoning.js';
import { SalonError } from '../../src/errors.js';

/** Extracting a page of hundreds of thousands of elements: only a runaway takes this long. */
const LARGE_PAGE_TIMEOUT_MS = 180_000;

describe('hostile markup costs linear time', () => {
  it('tells markup from text without rescanning unclosed tags', () => {
    expect(looksLikeHtml('<a '.repeat(300_000))).toBe(false);
    expect(looksLikeHtml('&lt;a '.repeat(300_000))).toBe(true);
    expect(looksLikeHtml(`${'<a '.repeat(300_000)}>`)).toBe(true);
    expect(looksLikeHtml('&'.repeat(500_000) + 'amp')).toBe(false);
    expect(looksLikeHtml('plain words, 3 < 4 and 5 > 2')).toBe(false);
    expect(looksLikeHtml('caf&eacute;')).toBe(true);
  });

  it('refuses a page nested past the parse ceiling, however the nesting is spelled', () => {
    const article = `<article><p>${'Real article text goes here. '.repeat(30)}</p></article>`;
    // `<div/>` is no self-closing tag in HTML, `</b>` closes nothing, `</span>` stops at the `<div>`
    // above it, and `/>` inside a quoted attribute ends nothing: each nests 40,000 deep.
    for (const unit of ['<div/>', '<div></b>', '<span><div></span></div>', '<div title="/>">']) {
      const err = (() => {
        try {
          return extractArticle(`<html><body>${article}${unit.repeat(40_000)}</body></html>`, { url: 'https://hostile.example/' });
        } catch (e) {
          return e;
        }
      })();
      expect(err, unit).toMatchObject({ code: 'ERR_EXTRACTION_FAILED' });
      expect((err as Error).message, unit).toContain(`nests deeper than ${MAX_OPEN_ELEMENTS} elements`);
    }
  });

  it('counts nesting on the parser’s own stack, so void, self-closed foreign and implicitly closed elements never count', () => {
    expect(() =>
      loadDocument(`<svg>${'<g/>'.repeat(20_000)}</svg>${'<br/>'.repeat(20_000)}${'<p>x'.repeat(20_000)}<ul>${'<li>x'.repeat(20_000)}`),
    ).not.toThrow();
    // <html> and <body> are open too.
    expect(() => loadDocument('<div>'.repeat(MAX_OPEN_ELEMENTS - 2))).not.toThrow();
    expect(() => loadDocument('<div>'.repeat(MAX_OPEN_ELEMENTS - 1))).toThrow(NestingTooDeepError);
  });

  it('keeps an element’s first MAX_ATTRIBUTES attributes, so the tokenizer’s duplicate check never scans more', () => {
    // parse5 compares each new attribute with every one before it in the tag: one tag of 100,000
    // (690 KB) held the extraction worker past its time limit. Past the cap they go as duplicates do.
    const names = Array.from({ length: 3 * MAX_ATTRIBUTES }, (_, i) => `data-a${i}`);
    const $ = loadDocument(`<div id="x" ${names.join(' ')} data-a0="again"><p class=a class=b>${'Text of the page. '.repeat(20)}</p></div>`);
    const attribs = $('#x')[0].attribs;
    expect(Object.keys(attribs)).toEqual(['id', ...names.slice(0, MAX_ATTRIBUTES - 1)]);
    expect(attribs['data-a0']).toBe('');
    expect($('p').attr('class')).toBe('a');
    expect($('p').text()).toContain('Text of the page.');
  });

  it(
    'wraps 200,000 runs of loose text beside blocks without splicing the container once per run',
    () => {
      const article = `<article><p>${'Real article text goes here. '.repeat(30)}</p></article>`;
      const runs = `<div>${'Fish and chips.<hr>'.repeat(200_000)}</div>`;
      expect(extractArticle(`<html><body>${article}${runs}</body></html>`).text).toContain('Real article text goes here.');
      const images = `<div><p>${'Real article text goes here. '.repeat(30)}</p>${'<img src="a.png">'.repeat(300_000)}</div>`;
      expect(extractArticle(`<html><body>${images}</body></html>`).text).toContain('Real article text goes here.');
    },
    LARGE_PAGE_TIMEOUT_MS,
  );

  it(
    'drops 400,000 boilerplate blocks of an article without splicing their parent once per block',
    () => {
      const text = 'Real article text goes here. '.repeat(30).trim();
      const html = `<html><body><article><p>${text}</p>${'<header>x</header>'.repeat(400_000)}<div>Advertisement<span class="share">Share</span></div></article></body></html>`;
      expect(extractArticle(html).text).toBe(text);
    },
    LARGE_PAGE_TIMEOUT_MS,
  );

  it(
    'fosters the text of 400,000 open tables out of them without rescanning their parent',
    () => {
      const text = 'Real article text goes here. '.repeat(30).trim();
      expect(extractArticle(`<html><body><article><p>${text}</p>${'<table>x'.repeat(400_000)}</article></body></html>`).text).toContain(text);
    },
    LARGE_PAGE_TIMEOUT_MS,
  );

  it('turns deeply nested fragments into text without recursion', () => {
    const nested = `${'<b>'.repeat(60_000)}deep${'</b>'.repeat(60_000)}`;
    expect(htmlToText(nested)).toBe('deep');
    const nestedLinks = `${'<span><a href="https://x.example/">'.repeat(20_000)}link`;
    expect(htmlToText(nestedLinks, { links: 'text+href' })).toContain('link');
  });

  it('keeps the text of a fragment nested past the parse ceiling, structure dropped', () => {
    // ~2 MB, what a feed entry's content may hold: htmlparser2 shifts its whole stack on every push.
    expect(htmlToText(`${'<div></b>'.repeat(220_000)}Fish &amp; <i>chips</i>`)).toBe('Fish & chips');
    const strayBrackets = '< '.repeat(300_000);
    expect(htmlToText(`${'<b>'.repeat(MAX_OPEN_ELEMENTS + 1)}a ${strayBrackets}>b`)).toBe(`a ${strayBrackets}>b`);
  });

  it('trims long runs of spaces in preformatted text without rescanning them', () => {
    const text = htmlToText(`<pre>a${' '.repeat(300_000)}b${' '.repeat(300_000)}\nc</pre>`);
    expect(text).toBe(`a${' '.repeat(300_000)}b\nc`);
  });

  it('cuts a hostile title before it is cleaned', () => {
    const title = cleanTitle(`${' '.repeat(500_000)}x`, 'Site');
    expect(title.length).toBeLessThanOrEqual(FIELD_CAPS.title);
  });

  it('splits sentences of a long run of punctuation without rescanning it', () => {
    const dots = `Start${'.'.repeat(300_000)} end`;
    expect(splitSentences(dots).map((s) => s.text)).toEqual([dots]);
    expect(splitSentences('One... Two! Three').map((s) => s.text)).toEqual(['One...', 'Two!', 'Three']);
  });

  it('drops reasoning blocks in one pass, an unclosed one to the end', () => {
    const unclosed = '<think>'.repeat(200_000);
    expect(withoutReasoning(`1,3${unclosed}`)).toBe('1,3');
    expect(withoutReasoning('<THINK>a</think>1,3<think>b</think>5', ' ')).toBe(' 1,3 5');
  });

  it('caps every feed field before turning it into text', () => {
    const entities = '&amp;lt;'.repeat(500_000 / 9);
    const xml = `<?xml version="1.0"?><rss><channel><title>T</title><item><title>${'&amp;'.repeat(200_000)}</title><link>https://x.example/a</link><description>${entities}</description>${'<category>c</category>'.repeat(500)}</item></channel></rss>`;
    const parsed = parseFeed(xml, 'hostile');
    const [entry] = parsed.entries;
    expect(entry.title.length).toBeLessThanOrEqual(FIELD_CAPS.title);
    expect(entry.summaryHtml.length).toBeLessThanOrEqual(FIELD_CAPS.summary);
    expect(entry.categories).toHaveLength(FIELD_CAPS.categories);
    const plain = toPlainFeed(parsed);
    expect(plain.plainText).toBe(true);
    expect(plain.entries[0].summaryHtml.startsWith('<<<<')).toBe(true);
    expect(toPlainFeed(plain)).toBe(plain);
  });

  it('caps Atom links and image attributes like every other link', () => {
    const long = `https://x.example/${'a'.repeat(100_000)}`;
    const xml = `<feed><title>T</title><entry><title>e</title><link href="${long}"/><link rel="replies" href="${long}"/><media:thumbnail url="${long}"/></entry></feed>`;
    const [entry] = parseFeed(xml, 'long links').entries;
    for (const url of [entry.link, entry.comments, entry.image]) expect(url!.length).toBeLessThanOrEqual(FIELD_CAPS.link);
  });

  it('parses a feed nested 60,000 elements deep', () => {
    const xml = `<rss><channel><item><title>t</title><link>https://x.example/</link><description>${'<x>'.repeat(60_000)}deep${'</x>'.repeat(60_000)}</description></item></channel></rss>`;
    expect(parseFeed(xml, 'deep').entries[0].summaryHtml).toBe('deep');
  });

  it('finds an entry’s image under media:groups nested 60,000 deep, without recursion', () => {
    const groups = `${'<media:group>'.repeat(60_000)}<media:thumbnail url="https://x.example/t.jpg"/>${'</media:group>'.repeat(60_000)}`;
    const xml = `<rss><channel><item><title>a</title><link>https://x.example/a</link>${groups}</item><item><title>b</title></item></channel></rss>`;
    expect(parseFeed(xml, 'groups').entries.map((e) => [e.title, e.image])).toEqual([
      ['a', 'https://x.example/t.jpg'],
      ['b', null],
    ]);
  });

  it('refuses a feed nested past its ceiling with ERR_FEED_PARSE before the parse grows quadratic', () => {
    const xml = `<feed><entry><title>t</title><link href="/a"/><content type="xhtml"><div>${'<b>'.repeat(830_000)}x</div></content></entry></feed>`;
    const err = (() => {
      try {
        return parseFeed(xml, 'deep atom');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toMatchObject({ code: 'ERR_FEED_PARSE' });
    expect((err as Error).message).toContain(`deep atom: the markup nests deeper than ${MAX_OPEN_XML_ELEMENTS} elements`);
  });

  it('reads only the entries a caller can use of a feed with enormous item counts, in every format', () => {
    expect(FEED_MAX_ENTRIES).toBeGreaterThanOrEqual(Math.max(MAX_INGEST_LIMIT, MAX_SOURCE_LIMIT));
    const n = FEED_MAX_ENTRIES * 4;
    const items = (tag: string) => Array.from({ length: n }, (_, i) => `<${tag}><title>e${i}</title></${tag}>`).join('');
    for (const xml of [`<rss><channel>${items('item')}</channel></rss>`, `<rdf:RDF><channel/>${items('item')}</rdf:RDF>`, `<feed>${items('entry')}</feed>`]) {
      const { entries } = parseFeed(xml, 'many');
      expect(entries).toHaveLength(FEED_MAX_ENTRIES);
      expect(entries.at(-1)!.title).toBe(`e${FEED_MAX_ENTRIES - 1}`);
    }
  });
});

describe('worker time limits', () => {
  it('fails a stuck extraction with ERR_PROCESSING_TIMEOUT and replaces its worker', async () => {
    // Long enough for a busy machine to pass a page to a worker and back, short for a test.
    const pool = new ExtractPool({ filename: fileURLToPath(new URL('./fixtures/stuck-worker.mjs', import.meta.url)), maxThreads: 1, taskTimeoutMs: 3_000 });
    try {
      const err = await pool.extract('spin', { url: 'https://hostile.example/' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SalonError);
      expect((err as SalonError).code).toBe('ERR_PROCESSING_TIMEOUT');
      expect((err as SalonError).message).toContain('https://hostile.example/');
      // One thread: had the stuck worker stayed, this page would wait behind it forever.
      expect((await pool.extract('fine')).title).toBe('fine');
    } finally {
      await pool.close();
    }
  });

  it('counts a page’s time limit from when its worker starts it, not while it waits behind others', async () => {
    // One thread, two pages ahead that each take 60% of the limit: the third waits longer than the
    // limit before it runs, and runs at once.
    const pool = new ExtractPool({ filename: fileURLToPath(new URL('./fixtures/stuck-worker.mjs', import.meta.url)), maxThreads: 1, taskTimeoutMs: 2_500 });
    try {
      const pages = await Promise.all(['busy:1500', 'busy:1500', 'waited'].map((page) => pool.extract(page).then((a) => a.title)));
      expect(pages).toEqual(['busy:1500', 'busy:1500', 'waited']);
    } finally {
      await pool.close();
    }
  });

  it('rethrows the caller’s own abort reason, not a timeout', async () => {
    const pool = new ExtractPool({ filename: fileURLToPath(new URL('./fixtures/stuck-worker.mjs', import.meta.url)), maxThreads: 1, taskTimeoutMs: 60_000 });
    try {
      const controller = new AbortController();
      const pending = pool.extract('spin', {}, controller.signal).catch((e: unknown) => e);
      controller.abort(new Error('job cancelled'));
      expect(((await pending) as Error).message).toBe('job cancelled');
      expect((await pool.extract('after')).title).toBe('after');
    } finally {
      await pool.close();
    }
  });

  // Keeping ~100 bytes of statistics on every `<p>` needed ~300 MB for 800,000; without them it fits in 240.
  it.each([
    { paragraphs: 600_000, heapMb: 384, why: 'the tree no longer ~1 KB an element' },
    { paragraphs: 800_000, heapMb: 272, why: 'no text statistics kept on the leaves' },
  ])(
    'extracts a page of $paragraphs paragraphs in a worker of $heapMb MB, $why (needs the build)',
    async ({ paragraphs, heapMb }) => {
      const extract = new ExtractPool({ maxThreads: 1, heapMb, taskTimeoutMs: 120_000 });
      try {
        const article = await extract.extract(`<html><body><article>${'<p>x'.repeat(paragraphs)}</article></body></html>`);
        expect(article.text.startsWith('x\n\nx\n\nx')).toBe(true);
      } finally {
        await extract.close();
      }
    },
    LARGE_PAGE_TIMEOUT_MS,
  );

  it('fails a page or feed whose parse outgrows the worker heap with ERR_PROCESSING_TOO_LARGE, and replaces the worker (needs the build)', async () => {
    // ~1 KB of heap an element: 2 MB of `<br/>` (400,000 elements) cannot fit in 64 MB.
    const extract = new ExtractPool({ maxThreads: 1, heapMb: 64, taskTimeoutMs: 60_000 });
    const feeds = new FeedPool({ heapMb: 64, taskTimeoutMs: 60_000 });
    try {
      const page = await extract.extract(`<html><body>${'<br/>'.repeat(400_000)}</body></html>`, { url: 'https://hostile.example/' }).catch((e: unknown) => e);
      expect(page).toMatchObject({ code: 'ERR_PROCESSING_TOO_LARGE' });
      expect((page as SalonError).message).toContain('https://hostile.example/');
      const fine = `<html><head><title>Fine</title></head><body><article><p>${'A sentence of a real article. '.repeat(40)}</p></article></body></html>`;
      expect((await extract.extract(fine)).title).toBe('Fine');

      const feed = await feeds.parse(Buffer.from(`<rss><channel>${'<x/>'.repeat(500_000)}</channel></rss>`), 'hostile feed').catch((e: unknown) => e);
      expect(feed).toMatchObject({ code: 'ERR_PROCESSING_TOO_LARGE' });
      expect((await feeds.parse(Buffer.from('<rss><channel><title>T</title><item><title>e</title></item></channel></rss>'), 'fine')).entries).toHaveLength(1);
    } finally {
      await extract.close();
      await feeds.close();
    }
  });
});
