import { describe, expect, it } from 'vitest';
import { extractArticle } from '../../src/content/extract/index.js';
import { decodeDocument, sniffEncoding } from '../../src/content/extract/decode.js';
import { cleanTitle, isoDate } from '../../src/content/extract/metadata.js';
import { SalonError } from '../../src/errors.js';
import { FIELD_CAPS } from '../../src/content/limits.js';

const PROSE = [
  'The council met on Tuesday evening to discuss the new harbour plan, which has divided the town for years.',
  'Supporters say the plan will bring jobs, visitors and a steady income, while critics fear for the fishing fleet.',
  'After three hours of debate, the members agreed to hold a public consultation in the spring, with a final vote in June.',
];
const paragraphs = (texts: string[]) => texts.map((t) => `<p>${t}</p>`).join('\n');
const page = (body: string, head = '') => `<!doctype html><html lang="en"><head>${head}</head><body>${body}</body></html>`;

function errorCode(fn: () => unknown): string | null {
  try {
    fn();
  } catch (err) {
    return err instanceof SalonError ? err.code : String(err);
  }
  return null;
}

describe('extractArticle: where the body comes from', () => {
  it('prefers selectors in priority order', () => {
    const html = page(`
      <article><p>An article element that holds a decoy paragraph which is long enough to count on its own, more than two hundred and fifty characters, ${'padding words '.repeat(20)}</p></article>
      <div class="ArticleBody-articleBody">${paragraphs(PROSE)}</div>`);
    const { text } = extractArticle(html);
    expect(text).toContain(PROSE[0]);
    expect(text).not.toContain('decoy');
  });

  it('uses <article> before .entry-content', () => {
    const html =
      page(`<div class="entry-content">${paragraphs(['Entry content that is a teaser of another story, shown beside the article with enough words to matter.'.repeat(3)])}</div>
      <article>${paragraphs(PROSE)}</article>`);
    expect(extractArticle(html).text).toBe(PROSE.join('\n\n'));
  });

  it('skips a selector match that is a comment, and a listing of teasers', () => {
    const comment = `<article class="comment-body"><p>${'I disagree with this article entirely and here is why, at some length. '.repeat(6)}</p></article>`;
    const teasers = `<article class="related"><h3>More</h3>${[1, 2, 3, 4].map((i) => `<article><p>Teaser ${i}: ${'a short summary of another story that links elsewhere. '.repeat(3)}</p></article>`).join('')}</article>`;
    const html = page(`<article class="post">${paragraphs(PROSE)}</article>${teasers}<section id="comments">${comment}</section>`);
    const { text } = extractArticle(html);
    expect(text).toContain(PROSE[2]);
    expect(text).not.toContain('Teaser');
    expect(text).not.toContain('disagree');
  });

  it('falls back to scoring paragraph containers outside nav, footer and aside', () => {
    const links = Array.from({ length: 12 }, (_, i) => `<li><a href="/s/${i}">Another headline number ${i} that people clicked on today</a></li>`).join('');
    const html = page(`
      <nav><p>Home, News, Sport, Weather, and a long menu of sections that goes on for a while, with commas, commas.</p></nav>
      <div class="layout">
        <div class="most-read"><ul>${links}</ul></div>
        <div class="story">${paragraphs(PROSE)}</div>
        <div class="share">Share this story on social media, by email, or print it out for later reading, please.</div>
      </div>
      <aside><p>Sidebar prose that is long enough to be scored, with commas, more commas, and a full stop.</p></aside>
      <footer><p>Copyright, the publisher, all rights reserved, terms and conditions, privacy policy apply.</p></footer>`);
    const { text } = extractArticle(html);
    expect(text).toBe(PROSE.join('\n\n'));
  });

  it('gathers a body split into same-class sections around figures', () => {
    const html = page(`<div class="page">
      <div class="wrap"><div class="body-text">${paragraphs(PROSE.slice(0, 2))}</div></div>
      <figure><img src="a.jpg"><figcaption>A harbour at dusk.</figcaption></figure>
      <div class="wrap"><div class="body-text">${paragraphs([PROSE[2], PROSE[0].replace('Tuesday', 'Wednesday')])}</div></div>
    </div>`);
    const { text } = extractArticle(html);
    expect(text).toContain(PROSE[1]);
    expect(text).toContain(PROSE[2]);
    expect(text).not.toContain('harbour at dusk');
  });

  it('wraps loose text beside blocks into paragraphs', () => {
    const html = page(
      `<div class="col"><p class="title">Headline</p><small>05/10/2018</small><br>${PROSE[0]} ${PROSE[1]}<br><br>${PROSE[2]}<div class="row"><a href="/share">Facebook</a></div></div>`,
    );
    const { text } = extractArticle(html);
    expect(text).toContain(PROSE[1]);
    expect(text).toContain(PROSE[2]);
  });

  it('wraps any number of loose runs: the nesting ceiling counts the page’s parse, not the paragraphs added after it', () => {
    // 400 runs of text, each beside a block: flat markup, never more than 4 elements open at once.
    const runs = Array.from({ length: 400 }, (_, i) => `Line ${i}: ${PROSE[i % 3]}<div class="spacer"></div>`).join('');
    const { text } = extractArticle(page(`<div class="transcript">${runs}</div>`));
    expect(text.split('\n\n')).toHaveLength(400);
    expect(text).toContain(`Line 399: ${PROSE[0]}`);
  });
});

describe('extractArticle: cleaning', () => {
  it('removes scripts, hidden nodes and chrome inside the article', () => {
    const html = page(`<article>
      <h1>The headline</h1>
      <script>var tracking = "SCRIPT-TEXT";</script><style>.x{color:red} STYLE-TEXT</style>
      <noscript>NOSCRIPT-TEXT</noscript><template><p>TEMPLATE-TEXT</p></template>
      <iframe src="/ad">IFRAME-TEXT</iframe><svg><text>SVG-TEXT</text></svg>
      <p hidden>HIDDEN-ATTR</p><p aria-hidden="true">ARIA-HIDDEN</p><div style="color: red; display: none">DISPLAY-NONE</div>
      <div style="visibility:hidden">VISIBILITY-HIDDEN</div>
      <nav>NAV-TEXT</nav><aside>ASIDE-TEXT</aside><footer>FOOTER-TEXT</footer>
      ${paragraphs(PROSE)}
      <p>Advertisement</p>
      <div class="social-share"><a href="#">Share on Facebook</a></div>
    </article>`);
    const { text } = extractArticle(html);
    expect(text).toBe(PROSE.join('\n\n'));
  });

  it('keeps inline time elements inside sentences', () => {
    const html = page(
      `<article><time datetime="2020-01-01">Jan 1</time>${paragraphs(PROSE)}<p>The vote is on <time datetime="2020-06-01">June 1</time>, the council said.</p></article>`,
    );
    const { text } = extractArticle(html);
    expect(text).toContain('The vote is on June 1, the council said.');
    expect(text.startsWith('Jan 1')).toBe(false);
  });
});

describe('extractArticle: text layout', () => {
  it('separates blocks by a blank line, keeps <br> as a line break and decodes entities', () => {
    const html = page(`<article><p>Fish &amp; chips &eacute;t&eacute; &#8217;quoted&#8217; &nbsp; text, with   lots
      of   whitespace, in a long enough paragraph of words.</p><p>Line one<br>line two</p><ul><li>First item of the list, with words.</li><li>Second item.</li></ul>
      <p>${PROSE[0]}</p></article>`);
    const { text } = extractArticle(html);
    expect(text).toBe(
      `Fish & chips été ’quoted’ text, with lots of whitespace, in a long enough paragraph of words.\n\nLine one\nline two\n\nFirst item of the list, with words.\n\nSecond item.\n\n${PROSE[0]}`,
    );
  });

  it('caps the body at maxChars on a word boundary', () => {
    const html = page(`<article>${paragraphs(Array.from({ length: 50 }, () => PROSE[1]))}</article>`);
    const full = extractArticle(html).text;
    const capped = extractArticle(html, { maxChars: 500 }).text;
    expect(full.length).toBeGreaterThan(5000);
    expect(capped.length).toBeLessThanOrEqual(500);
    expect(capped.length).toBeGreaterThan(450);
    expect(full.startsWith(capped)).toBe(true);
    expect(() => extractArticle(html, { maxChars: 0 })).toThrow(/maxChars/);
  });

  it('keeps the whole body by default (200,000 characters)', () => {
    const html = page(`<article>${paragraphs(Array.from({ length: 400 }, () => PROSE[2]))}</article>`);
    expect(extractArticle(html).text.length).toBeGreaterThan(40_000);
  });

  it('throws ERR_EXTRACTION_FAILED when there is no usable body', () => {
    expect(errorCode(() => extractArticle(''))).toBe('ERR_EXTRACTION_FAILED');
    expect(errorCode(() => extractArticle(page('<nav><a href="/">Home</a></nav><p>Hi.</p>')))).toBe('ERR_EXTRACTION_FAILED');
    expect(errorCode(() => extractArticle(page('<script>only a script, nothing else at all, not a single word of prose here.</script>')))).toBe(
      'ERR_EXTRACTION_FAILED',
    );
  });

  it('refuses pathologically deep markup quickly with ERR_EXTRACTION_FAILED', () => {
    const deep = `${'<div>'.repeat(50_000)}${PROSE[0]}${'</div>'.repeat(50_000)}`;
    expect(errorCode(() => extractArticle(page(deep)))).toBe('ERR_EXTRACTION_FAILED');
  });

  it('still reads an article below deep but tolerable nesting', () => {
    const html = page(`<article>${paragraphs(PROSE)}</article>${'<div>'.repeat(200)}deep junk${'</div>'.repeat(200)}`);
    expect(extractArticle(html).text).toBe(PROSE.join('\n\n'));
  });
});

describe('extractArticle: metadata', () => {
  const head = `
    <title>Harbour plan goes to consultation | The Coast Gazette</title>
    <meta property="og:title" content="Harbour plan goes to consultation">
    <meta property="og:site_name" content="The Coast Gazette">
    <meta property="og:image" content="/img/harbour.jpg">
    <meta name="description" content="The council will ask residents about the harbour plan.">
    <script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"WebSite","name":"Gazette"},
      {"@type":"NewsArticle","headline":"Harbour plan","datePublished":"2019-11-19T08:03:00-05:00",
       "author":[{"@type":"Person","name":"Ann Reporter"},{"@type":"Person","name":"Bo Writer"}],"publisher":{"@type":"Organization","name":"Coast Gazette Ltd"}}]}</script>`;

  it('cuts the description, site name and image URL a page gives before anything reads them', () => {
    const marks = `a${'\u0301'.repeat(16)}`.repeat(20_000);
    const image = `https://cdn.example/i.jpg?sig=${'a'.repeat(20_000)}`;
    const tags = `<meta name="description" content="${marks}"><meta property="og:site_name" content="${marks}"><meta property="og:image" content="${image}">`;
    const a = extractArticle(page(`<article>${paragraphs(PROSE)}</article>`, tags), { url: 'https://gazette.example/a' });
    expect(a.excerpt.length).toBeLessThanOrEqual(FIELD_CAPS.description);
    expect(a.excerpt.startsWith(marks.slice(0, 100))).toBe(true);
    expect(a.siteName!.length).toBeLessThanOrEqual(FIELD_CAPS.siteName);
    expect(a.image!.length).toBeLessThanOrEqual(FIELD_CAPS.link);
  });

  it('reads title, byline, time, site, image, excerpt and language', () => {
    const a = extractArticle(page(`<article>${paragraphs(PROSE)}</article>`, head), { url: 'https://gazette.example/news/harbour' });
    expect(a).toMatchObject({
      title: 'Harbour plan goes to consultation',
      byline: 'Ann Reporter, Bo Writer',
      publishedTime: '2019-11-19T13:03:00.000Z',
      siteName: 'The Coast Gazette',
      image: 'https://gazette.example/img/harbour.jpg',
      excerpt: 'The council will ask residents about the harbour plan.',
      lang: 'en',
    });
  });

  it('falls back to markup: h1, rel=author, time[datetime], host name, first paragraph', () => {
    const body = `<article><h1>Fallback headline</h1><a rel="author" href="/staff/cy">By Cy Columnist</a><time datetime="2021-03-04">4 March</time>${paragraphs(PROSE)}</article>`;
    const a = extractArticle(`<html><body>${body}</body></html>`, { url: 'https://www.local-news.example/a' });
    expect(a.title).toBe('Fallback headline');
    expect(a.byline).toBe('Cy Columnist');
    expect(a.publishedTime).toBe('2021-03-04T00:00:00.000Z');
    expect(a.siteName).toBe('local-news.example');
    expect(a.excerpt).toBe(PROSE[0]);
    expect(a.image).toBeNull();
    expect(a.lang).toBeNull();
    expect(a.text).not.toContain('Fallback headline');
  });

  it('cleans the site name off <title>', () => {
    expect(extractArticle(page(`<article>${paragraphs(PROSE)}</article>`, '<title>Storm closes the harbour - Daily Tide</title>')).title).toBe(
      'Storm closes the harbour',
    );
    expect(cleanTitle('Storm closes the harbour | Daily Tide')).toBe('Storm closes the harbour');
    expect(cleanTitle('Daily Tide: Storm closes the harbour', 'Daily Tide')).toBe('Storm closes the harbour');
    expect(cleanTitle('Storm closes the harbour — The Daily Tide', 'The Daily Tide')).toBe('Storm closes the harbour');
    expect(cleanTitle('Rock - Paper - Scissors')).toBe('Rock - Paper - Scissors');
    expect(cleanTitle('A plain title')).toBe('A plain title');
  });

  it('normalises dates to ISO and drops junk', () => {
    expect(isoDate('2019-11-19T08:03:00-05:00')).toBe('2019-11-19T13:03:00.000Z');
    expect(isoDate('Tue, 19 Nov 2019 13:03:00 GMT')).toBe('2019-11-19T13:03:00.000Z');
    expect(isoDate('1574168580')).toBe('2019-11-19T13:03:00.000Z');
    expect(isoDate('yesterday')).toBeNull();
    // Six-digit years parse, but their signed ISO strings would not sort as dates among the others.
    expect(isoDate('-271821-04-20')).toBeNull();
    expect(isoDate('+275760-09-13T00:00:00Z')).toBeNull();
  });

  it('skips JSON-LD nested deeper than any real block, whatever field holds the nesting', () => {
    const deep = `${'['.repeat(10_000)}"Ada"${']'.repeat(10_000)}`;
    for (const field of ['author', 'headline', 'image', 'publisher']) {
      const ld = `<script type="application/ld+json">{"@type":"NewsArticle","${field}":${deep}}</script>`;
      const html = page(`<article><h1>Harbour plan</h1>${paragraphs(PROSE)}</article>`, ld);
      expect(extractArticle(html), field).toMatchObject({ title: 'Harbour plan', text: PROSE.join('\n\n') });
    }
  });

  it('survives malformed JSON-LD', () => {
    const a = extractArticle(
      page(`<article>${paragraphs(PROSE)}</article>`, '<script type="application/ld+json">{"@type": "NewsArticle", </script><title>Only title</title>'),
    );
    expect(a.title).toBe('Only title');
    expect(a.byline).toBeNull();
  });
});

describe('extractArticle: charsets from bytes', () => {
  const latin = (s: string) => Buffer.from(s, 'latin1');
  it('decodes a windows-1252 page named by <meta charset>', () => {
    const bytes = latin(
      `<html><head><meta charset="windows-1252"></head><body><article><p>\x93Caf\xe9s\x94 charge \x805 for cr\xe8me br\xfbl\xe9e \x96 a price, says the owner, that is fair.</p><p>${PROSE[0]}</p></article></body></html>`,
    );
    expect(extractArticle(bytes).text).toContain('“Cafés” charge €5 for crème brûlée – a price');
  });
  it('honours a <meta charset> past the first 4 KB when the bytes are not UTF-8, and only then', () => {
    const head = (charset: string) => `<script>var config = "${'x'.repeat(6000)}";</script><meta charset="${charset}"><title>News</title>`;
    const body = (title: Buffer) =>
      Buffer.concat([Buffer.from('<body><article><h1>'), title, Buffer.from(`</h1>${paragraphs(PROSE)}</article></body></html>`)]);
    const shiftJis = Buffer.from([0x93, 0xfa, 0x96, 0x7b]); // 日本
    expect(extractArticle(Buffer.concat([Buffer.from(`<html><head>${head('shift_jis')}</head>`), body(shiftJis)])).title).toBe('日本');
    // Valid UTF-8 stays UTF-8 whatever a late tag claims.
    expect(extractArticle(Buffer.concat([Buffer.from(`<html><head>${head('windows-1251')}</head>`), body(Buffer.from('日本'))])).title).toBe('日本');
  });

  it('decodes UTF-8 with a BOM and without any declaration', () => {
    const utf8 = `<article><p>Zoë’s naïve café — ${PROSE[0]}</p></article>`;
    expect(extractArticle(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(utf8)])).text).toContain('Zoë’s naïve café —');
    expect(extractArticle(Buffer.from(utf8)).text).toContain('Zoë’s naïve café —');
  });
  it('sniffs http-equiv, XML declarations and invalid UTF-8', () => {
    expect(sniffEncoding(latin('<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-2">'))).toBe('iso-8859-2');
    expect(sniffEncoding(latin('<?xml version="1.0" encoding="koi8-r"?><rss/>'))).toBe('koi8-r');
    expect(sniffEncoding(latin('<p>caf\xe9</p>'))).toBe('windows-1252');
    expect(sniffEncoding(latin('<meta charset="utf-8">'), 'text/html; charset=shift_jis')).toBe('shift_jis');
    expect(decodeDocument(latin('<p>\xa1</p>'), 'text/html; charset=iso-8859-2')).toBe('<p>Ą</p>');
  });
  it('reads a charset from the meta tags as they are written, however many are left open', () => {
    const tail = '<p>caf\xe9</p>';
    expect(sniffEncoding(latin(`<META CHARSET="KOI8-R">${tail}`))).toBe('koi8-r');
    // A tag runs to the first `>`: a second `<meta` inside it is part of it.
    expect(sniffEncoding(latin(`<meta name="x" <meta charset="iso-8859-2">${tail}`))).toBe('iso-8859-2');
    // `<metadata>` is not a meta tag; the meta tag after it is read.
    expect(sniffEncoding(latin(`<metadata charset="koi8-r"><meta charset="iso-8859-5">${tail}`))).toBe('iso-8859-5');
    // Thousands of `<meta` that never close: no declaration, so the bytes decide.
    expect(sniffEncoding(latin(`${'<meta '.repeat(20_000)}${tail}`))).toBe('windows-1252');
    expect(sniffEncoding(latin(`<meta charset="iso-8859-2">${'<meta '.repeat(20_000)}${tail}`))).toBe('iso-8859-2');
  });
});
