import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newsItemFromEntry, toPlainFeed, videoItemFromEntry } from '../../src/content/sources/feed-items.js';
import { FeedPool } from '../../src/content/sources/feed-pool.js';
import { FEED_MAX_ENTRIES, parseFeed } from '../../src/content/sources/feeds.js';
import { idForUrl } from '../../src/content/ids.js';
import { validateItem } from '../../src/content/items.js';
import { SalonError, errors } from '../../src/errors.js';
import { FAILURE_TEXT_MAX, toFailure } from '../../src/content/ingest/ingest-job.js';
import { decodeWindows1252 } from '../../src/content/extract/decode.js';
import { CORPORA } from '../helpers.js';

const FEEDS = join(CORPORA, 'feeds/rss-parser/test');
/** The end of a one-item RSS feed, after the item's title. */
const ITEM_END = Buffer.from('</title><link>https://e.example/a</link></item></channel></rss>');

/**
 * rss-parser decoded the two Latin-1 feeds as UTF-8, so its expected strings hold U+FFFD where
 * the real character was. Salon decodes them properly; a U+FFFD in the expectation matches any
 * one character that is not ASCII.
 */
function matcher(expected: string): RegExp {
  const parts = expected.split('\uFFFD').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^\\x00-\\x7F]')}$`, 'u');
}

describe('parseFeed over every rss-parser input', () => {
  const inputs = readdirSync(join(FEEDS, 'input')).sort();
  it('finds the corpus', () => expect(inputs.length).toBeGreaterThanOrEqual(30));

  for (const file of inputs) {
    it(file, () => {
      const bytes = readFileSync(join(FEEDS, 'input', file));
      const outFile = join(FEEDS, 'output', `${basename(file, extname(file))}.json`);
      if (!existsSync(outFile)) {
        // No expected parse: either a feed rss-parser was not asked about, or the non-feed.
        let feed;
        try {
          feed = parseFeed(bytes, file);
        } catch (err) {
          expect(err).toBeInstanceOf(SalonError);
          expect((err as SalonError).code).toBe('ERR_FEED_PARSE');
          expect((err as SalonError).message).toContain(file);
          return;
        }
        expect(feed.entries.length).toBeGreaterThan(0);
        for (const e of feed.entries) expect(e.title.trim() || e.link).toBeTruthy();
        return;
      }
      const expected = JSON.parse(readFileSync(outFile, 'utf8')).feed.items as { title?: string; link?: string }[];
      const feed = parseFeed(bytes, file);
      // A podcast feed of 730 episodes is read as far as any caller reads (FEED_MAX_ENTRIES).
      expect(feed.entries.length).toBe(Math.min(expected.length, FEED_MAX_ENTRIES));
      feed.entries.forEach((entry, i) => {
        expect(entry.title.trim(), `title of item ${i}`).toMatch(matcher((expected[i].title ?? '').trim()));
        expect((entry.link ?? '').trim(), `link of item ${i}`).toMatch(matcher((expected[i].link ?? '').trim()));
      });
    });
  }
});

describe('parseFeed details', () => {
  const read = (name: string) => readFileSync(join(FEEDS, 'input', name));

  it('decodes a Latin-1 feed by its XML declaration, and an undeclared one by detection', () => {
    expect(parseFeed(read('encoding.rss')).entries[0].title).toBe('Mãe de utente é a nova presidente da Raríssimas');
    expect(parseFeed(read('uolNoticias.rss')).entries[0].title).toContain('simulações de 2º turno');
  });

  it('decodes windows-1252 and the latin1 labels as browsers do, keeping curly quotes, dashes and the euro sign', () => {
    const title = Buffer.from([0x93, 0x48, 0x69, 0x94, 0x20, 0x96, 0x20, 0x80, 0x35]); // “Hi” – €5 in windows-1252
    for (const declaration of ['', ' encoding="windows-1252"', ' encoding="ISO-8859-1"', ' encoding="latin1"', ' encoding="us-ascii"']) {
      const xml = Buffer.concat([
        Buffer.from(`<?xml version="1.0"${declaration}?><rss><channel><title>t</title><item><title>`),
        title,
        Buffer.from('</title><link>https://e.example/a</link></item></channel></rss>'),
      ]);
      expect(parseFeed(xml).entries[0].title, declaration || 'undeclared').toBe('“Hi” – €5');
    }
  });

  it('decodes an undeclared feed that is not UTF-8 by the charset its Content-Type names, never over a declaration or valid UTF-8', () => {
    const title = (name: string, declaration: string, bytes: Buffer, contentType: string) =>
      parseFeed(
        Buffer.concat([Buffer.from(`<?xml version="1.0"${declaration}?><rss><channel><title>t</title><item><title>`), bytes, ITEM_END]),
        name,
        contentType,
      ).entries[0].title;
    const cyrillic = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]); // Привет in windows-1251
    const japanese = Buffer.from([0x93, 0xfa, 0x96, 0x7b]); // 日本 in Shift_JIS
    expect(title('ru', '', cyrillic, 'application/rss+xml; charset=windows-1251')).toBe('Привет');
    expect(title('jp', '', japanese, 'text/xml; charset="Shift_JIS"')).toBe('日本');
    // Servers name a default charset whatever the feed holds: a declaration and valid UTF-8 outrank it.
    expect(title('declared', ' encoding="windows-1251"', cyrillic, 'text/xml; charset=ISO-8859-1')).toBe('Привет');
    expect(title('utf-8', '', Buffer.from('Привет'), 'text/xml; charset=ISO-8859-1')).toBe('Привет');
    // A UTF-16 label without a byte-order mark is not believed, as in pages.
    expect(title('utf-16', '', cyrillic, 'text/xml; charset=utf-16')).toBe(decodeWindows1252(cyrillic));
  });

  it('reads a declaration of UTF-16 in single bytes as no declaration: the feed is what its bytes are', () => {
    // UTF-16 would put a NUL in every ASCII character of the declaration (XML 1.0, appendix F).
    const feed = (declared: string, bytes: Buffer, contentType?: string) =>
      parseFeed(
        Buffer.concat([Buffer.from(`<?xml version="1.0" encoding="${declared}"?><rss><channel><title>t</title><item><title>`), bytes, ITEM_END]),
        declared,
        contentType,
      ).entries[0].title;
    for (const declared of ['UTF-16', 'utf-16le', 'unicode']) {
      expect(feed(declared, Buffer.from('Café – 日本'))).toBe('Café – 日本');
      expect(feed(declared, Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]), 'text/xml; charset=windows-1251')).toBe('Привет');
    }
  });

  it('tells RSS 2.0, RDF and Atom apart', () => {
    expect(parseFeed(read('heraldsun.rss')).format).toBe('rss');
    expect(parseFeed(read('rss-1.rss')).format).toBe('rdf');
    expect(parseFeed(read('heise.atom')).format).toBe('atom');
    expect(parseFeed(read('heise.atom')).youtube).toBe(false);
  });

  it('reads YouTube channel feeds as videos with description, thumbnail and channel', () => {
    const feed = parseFeed(read('atom-customfields.atom'));
    expect(feed.youtube).toBe(true);
    const v = feed.entries[0].video!;
    expect(v.videoId).toBe('lR-w1h5ONOY');
    expect(v.thumbnail).toBe('https://i1.ytimg.com/vi/lR-w1h5ONOY/hqdefault.jpg');
    expect(v.channel).toBe('L2inc');
    expect(v.description).toMatch(/^Scott's Book "The Four"/);
    expect(feed.entries[0].published).toBe('2017-09-14T18:03:34.000Z');
  });

  it('keeps dates, authors and HTML content of RSS items', () => {
    const e = parseFeed(read('instant-article.rss')).entries[0];
    expect(e).toMatchObject({ published: '2016-05-04T06:53:45.000Z', author: 'tobi', contentHtml: '<b>Lorem</b> ipsum', summaryHtml: 'Lorem ipsum' });
  });

  it('refuses non-feeds and empty documents with ERR_FEED_PARSE', () => {
    expect(() => parseFeed('<html><body>hi</body></html>', 'page.html')).toThrow(/page\.html has a <html> root element/);
    expect(() => parseFeed('', 'empty')).toThrow(expect.objectContaining({ code: 'ERR_FEED_PARSE' }));
    expect(() => parseFeed('just text', 'text')).toThrow(expect.objectContaining({ code: 'ERR_FEED_PARSE' }));
  });

  it('keeps going through a batch when one feed is bad', () => {
    const results = readdirSync(join(FEEDS, 'input')).map((f) => {
      try {
        return parseFeed(readFileSync(join(FEEDS, 'input', f)), f).entries.length;
      } catch (err) {
        return (err as SalonError).code;
      }
    });
    expect(results.filter((r) => r === 'ERR_FEED_PARSE')).toHaveLength(1);
    expect(results.filter((r) => typeof r === 'number' && r > 0).length).toBe(results.length - 1);
  });
});

describe('feed entries to items', () => {
  const read = (name: string) => readFileSync(join(FEEDS, 'input', name));
  const opts = { bodyMaxChars: 200_000 };

  it('makes valid news items with the feed content as body when no article was fetched', () => {
    const feed = parseFeed(read('guardian.rss'));
    const items = feed.entries.map((e) => validateItem(newsItemFromEntry(e, feed, null, 'https://www.theguardian.com/feed'), opts));
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
    for (const item of items) {
      expect(item.id).toMatch(/^news_u[0-9a-f]{16}$/);
      expect(item.source).toBe('feed');
      expect(item.body).not.toMatch(/<[a-z]/i);
    }
    expect(items[0].id).toBe(idForUrl('news', feed.entries[0].link!));
  });

  it('reads an Atom text construct by its type: text verbatim, html as markup, xhtml as the markup inside its div', () => {
    const atom = `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title type="html">Caf&amp;eacute; &lt;b&gt;news&lt;/b&gt;</title>
      <entry><title type="text">Why &lt;div&gt; soup is bad &amp;amp; slow</title><link href="https://e.example/a"/><id>1</id>
        <summary type="text">Use the &lt;script&gt; tag and &amp;lt;b&amp;gt;</summary>
        <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>One &amp; <b>two</b></p><p>Three</p></div></content></entry>
      <entry><title>AT&amp;T &lt;3</title><link href="https://e.example/b"/><id>2</id><summary type="html">&lt;p&gt;Fish &amp;amp; chips&lt;/p&gt;</summary></entry></feed>`;
    const feed = parseFeed(Buffer.from(atom), 'atom');
    const plain = toPlainFeed(feed);
    expect(plain.title).toBe('Café news');
    expect(plain.entries.map((e) => [e.title, e.summaryHtml, e.contentHtml])).toEqual([
      ['Why <div> soup is bad &amp; slow', 'Use the <script> tag and &lt;b&gt;', 'One & two\n\nThree'],
      ['AT&T <3', 'Fish & chips', ''],
    ]);
    const item = validateItem(newsItemFromEntry(feed.entries[0], feed, null), opts);
    expect(item).toMatchObject({
      title: 'Why <div> soup is bad &amp; slow',
      description: 'Use the <script> tag and &lt;b&gt;',
      body: 'One & two\n\nThree',
      siteName: 'Café news',
    });
  });

  it('reads an RSS title as markup only when an element in it is closed, and decodes its character references either way', () => {
    const rss = (title: string) => `<rss><channel><title>t</title><item><title>${title}</title><link>https://e.example/a</link></item></channel></rss>`;
    for (const [xml, text] of [
      ['Why &lt;div&gt; soup is bad &amp;amp; slow', 'Why <div> soup is bad & slow'],
      ['&lt;b&gt;Bold&lt;/b&gt; move', 'Bold move'],
      ['<![CDATA[Tom &amp; <i>Jerry</i>]]>', 'Tom & Jerry'],
      ['x &lt; y and y &gt; z', 'x < y and y > z'],
    ]) {
      expect(toPlainFeed(parseFeed(rss(xml))).entries[0].title, xml).toBe(text);
    }
  });

  it('resolves relative links against the feed URL', () => {
    const feed = parseFeed(read('gulp-atom.atom'));
    const item = validateItem(newsItemFromEntry(feed.entries[0], feed, null, 'https://github.com/gulpjs/gulp/releases.atom'), opts);
    expect(item.url).toBe('https://github.com/gulpjs/gulp/releases/tag/v3.9.0');
  });

  it('prefers the fetched article for the body', () => {
    const feed = parseFeed(read('heraldsun.rss'));
    const item = validateItem(newsItemFromEntry(feed.entries[0], feed, { text: 'The full article.', siteName: 'Herald' }, undefined), opts);
    expect(item).toMatchObject({ body: 'The full article.', siteName: 'Herald' });
  });

  it('refuses an entry without a link with ERR_INVALID_CONTENT', () => {
    const feed = parseFeed(read('missing-fields.atom'));
    expect(() => newsItemFromEntry(feed.entries[0], feed, null)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_CONTENT' }));
  });

  it('makes YouTube entries video items', () => {
    const feed = parseFeed(read('atom-customfields.atom'));
    const items = feed.entries.map((e) => validateItem(videoItemFromEntry(e, feed), opts));
    expect(items).toHaveLength(15);
    expect(items[0]).toMatchObject({
      id: 'video_lR-w1h5ONOY',
      kind: 'video',
      title: 'Buy Now, Bitches*',
      url: 'https://www.youtube.com/watch?v=lR-w1h5ONOY',
      channel: 'L2inc',
      thumbnail: 'https://i1.ytimg.com/vi/lR-w1h5ONOY/hqdefault.jpg',
      siteName: 'YouTube',
    });
    expect(items[0].body.length).toBeGreaterThan(items[0].description.length);
  });
});

describe('FeedPool', () => {
  it('parses every feed on a worker into the plain-text entries the main thread would make (needs the build)', async () => {
    const pool = new FeedPool();
    try {
      for (const file of ['giantbomb-podcast.rss', 'heise.atom']) {
        const bytes = readFileSync(join(FEEDS, 'input', file));
        const viaWorker = await pool.parse(bytes, file);
        expect(viaWorker.plainText).toBe(true);
        expect(viaWorker).toEqual(toPlainFeed(parseFeed(bytes, file)));
      }
      const cp1251 = Buffer.concat([Buffer.from('<rss><channel><title>t</title><item><title>'), Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]), ITEM_END]);
      expect((await pool.parse(cp1251, 'cp1251', undefined, 'application/rss+xml; charset=windows-1251')).entries[0].title).toBe('Привет');
      await expect(pool.parse(readFileSync(join(FEEDS, 'input', 'unrecognized.rss')), 'unrecognized.rss')).rejects.toSatisfy(
        (e: unknown) => e instanceof SalonError && e.code === 'ERR_FEED_PARSE' && e.message.includes('unrecognized.rss'),
      );
    } finally {
      await pool.close();
    }
  });

  it('makes the same items from a worker-parsed feed as from a raw one', () => {
    const feed = parseFeed(readFileSync(join(FEEDS, 'input', 'heraldsun.rss')), 'heraldsun');
    const plain = toPlainFeed(feed);
    feed.entries.forEach((entry, i) => {
      expect(newsItemFromEntry(plain.entries[i], plain, null)).toEqual(newsItemFromEntry(entry, feed, null));
    });
  });

  it('refuses to start without the built worker', () => {
    expect(() => new FeedPool({ filename: '/nonexistent/feed.js' })).toThrow(/build/);
  });
});

describe('feed errors', () => {
  it('quotes at most a short piece of what was fetched, and a job or source keeps at most FAILURE_TEXT_MAX characters of any failure', () => {
    let caught: unknown;
    try {
      parseFeed(`<${'a'.repeat(100_000)}/>`, 'https://example.com/feed');
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'ERR_FEED_PARSE' });
    expect((caught as Error).message.length).toBeLessThan(200);
    const failure = toFailure(`https://example.com/${'x'.repeat(10_000)}`, new errors.ERR_FEED_PARSE('y'.repeat(10_000)));
    expect(failure.code).toBe('ERR_FEED_PARSE');
    expect(failure.ref.length).toBeLessThanOrEqual(FAILURE_TEXT_MAX);
    expect(failure.message.length).toBeLessThanOrEqual(FAILURE_TEXT_MAX);
    expect(toFailure('ref', new Error('secret detail'))).toEqual({ ref: 'ref', code: 'ERR_INTERNAL', message: 'Internal error' });
  });
});
