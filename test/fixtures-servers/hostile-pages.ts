/**
 * Hostile pages and feeds, generated, served by a loopback site: each is a shape that once made a
 * parser or a regex super-linear, or a recursion overflow (the faults suite ingests all of them
 * while it measures how long /healthz keeps clients waiting).
 */
import { startFixtureServer, type FixtureServer } from './http.js';

const TWO_MB = 2 * 1024 * 1024;
const HTML = 'text/html; charset=utf-8';
const RSS = 'application/rss+xml; charset=utf-8';

const rss = (items: string[]) =>
  `<?xml version="1.0"?><rss version="2.0"><channel><title>Hostile</title><link>http://127.0.0.1/</link>${items.join('')}</channel></rss>`;

/** Path → [what it is, content type, body]. */
export function hostilePages(origin: string): Record<string, [string, string, string]> {
  const entitiesItem = (i: number) =>
    `<item><title>Entities ${i}</title><link>${origin}/plain?${i}</link><description>${'&amp;lt;a &amp;amp; '.repeat(Math.floor(500_000 / 20))}</description></item>`;
  return {
    '/comments': ['2 MB of "<!--"', HTML, `<html><body>${'<!--'.repeat(TWO_MB / 4)}`],
    '/nested': ['60,000 nested elements', HTML, `<html><body>${'<div>'.repeat(60_000)}deep text</body></html>`],
    '/escaped-tags': ['300,000 "&lt;a "', HTML, `<html><body><p>${'&lt;a '.repeat(300_000)}</p></body></html>`],
    '/unclosed-tags': ['700,000 unclosed "<a "', HTML, `<html><body>${'<a '.repeat(700_000)}`],
    '/open-scripts': ['200,000 unclosed "<script>"', HTML, `<html><body><p>x</p>${'<script>'.repeat(200_000)}`],
    '/huge-attribute': ['one 1 MB attribute', HTML, `<html><body><p title="${'x'.repeat(1_000_000)}">A paragraph of text that says little.</p></body></html>`],
    '/huge-text': ['one 2 MB text node', HTML, `<html><body><article><p>${'word '.repeat(TWO_MB / 5)}</p></article></body></html>`],
    '/entities-feed': ['feed: descriptions of 500 KB of entities', RSS, rss(Array.from({ length: 5 }, (_, i) => entitiesItem(i)))],
    '/deep-feed': [
      'feed: 60,000 nested XML elements',
      RSS,
      rss([`<item><title>Deep</title><link>${origin}/plain?deep</link><description>${'<x>'.repeat(60_000)}deep</description></item>`]),
    ],
    '/unclosed-think-feed': [
      'feed: 1 MB of "<think>" and "<a "',
      RSS,
      rss([
        `<item><title>${'<think>'.repeat(1_000)}</title><link>${origin}/plain?think</link><description><![CDATA[${'<a <think>'.repeat(100_000)}]]></description></item>`,
      ]),
    ],
  };
}

/** A site serving every hostile page, and a plain page the feeds link to. */
export async function startHostileSite(): Promise<FixtureServer & { pages: { path: string; what: string }[] }> {
  const site = await startFixtureServer({
    '/plain': { type: HTML, body: '<html><body><article><p>An ordinary page that feeds link to, with a sentence or two of text.</p></article></body></html>' },
  });
  const pages = Object.entries(hostilePages(site.origin));
  for (const [path, [, type, body]] of pages) site.routes.set(path, { type, body });
  return Object.assign(site, { pages: pages.map(([path, [what]]) => ({ path, what })) });
}
