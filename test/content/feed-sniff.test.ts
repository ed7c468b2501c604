import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { looksLikeFeed } from '../../src/content/sources/feed-sniff.js';
import { parseFeed } from '../../src/content/sources/feeds.js';
import { CORPORA } from '../helpers.js';

const FEEDS = join(CORPORA, 'feeds/rss-parser/test/input');
const PAGES = join(CORPORA, 'extraction/html');
const sniff = (text: string, type = 'text/xml') => looksLikeFeed(type, Buffer.from(text, 'latin1'));

describe('looksLikeFeed', () => {
  it('takes every corpus feed served as text/xml for a feed, FeedBurner stylesheets and all', () => {
    const feeds = readdirSync(FEEDS).filter((file) => {
      try {
        return parseFeed(readFileSync(join(FEEDS, file)), file).entries.length > 0;
      } catch {
        return false; // the corpus's non-feed
      }
    });
    expect(feeds.length).toBeGreaterThanOrEqual(30);
    expect(feeds).toContain('feedburner.atom');
    for (const file of feeds) expect(looksLikeFeed('text/xml; charset=UTF-8', readFileSync(join(FEEDS, file))), file).toBe(true);
  });

  it('takes no corpus page for a feed', () => {
    const pages = readdirSync(PAGES).filter((f) => f.endsWith('.html.gz'));
    expect(pages.length).toBeGreaterThan(100);
    for (const file of pages) expect(looksLikeFeed('text/html', gunzipSync(readFileSync(join(PAGES, file)))), file).toBe(false);
  });

  it('trusts a feed media type whatever the body', () => {
    expect(sniff('<html></html>', 'application/atom+xml')).toBe(true);
    expect(sniff('', 'application/rss+xml; charset=utf-8')).toBe(true);
  });

  it('walks a prolog of BOMs, declarations, processing instructions, comments and a DOCTYPE', () => {
    expect(sniff('\u00ef\u00bb\u00bf<?xml version="1.0"?>\n<rss version="2.0">')).toBe(true);
    expect(looksLikeFeed('text/xml', Buffer.from('\ufeff<feed xmlns="http://www.w3.org/2005/Atom">'))).toBe(true);
    expect(sniff('<?xml version="1.0"?><?xml-stylesheet href="a.xsl"?><!-- a > b --><rdf:RDF xmlns:rdf="x">')).toBe(true);
    expect(sniff('<!DOCTYPE rss [<!ENTITY t "a > b">]>\n<rss>')).toBe(true);
    expect(sniff('<!doctype rss PUBLIC "-//Netscape//DTD RSS 0.91//EN" "x.dtd"><rss/>')).toBe(true);
    expect(sniff('<!DOCTYPE html><html><body><rss></rss></body></html>')).toBe(false);
    expect(sniff('<?xml version="1.0"?><rssfeed>')).toBe(false);
    expect(sniff('<!-- never closed <rss>')).toBe(false);
    expect(sniff('<?xml never closed <rss>')).toBe(false);
  });

  it('gives up at once on a page of empty comments, where a backtracking pattern took seconds', () => {
    expect(sniff('<!---->'.repeat(27) + 'x<html><body><p>hello</p></body></html>', 'text/html')).toBe(false);
    expect(sniff('<!---->'.repeat(140) + '<rss version="2.0">')).toBe(true);
    // A prolog past the bytes looked at is not a feed's.
    expect(sniff('<!---->'.repeat(200) + '<rss version="2.0">')).toBe(false);
  });
});
