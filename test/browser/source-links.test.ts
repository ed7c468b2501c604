/** Where an answer's source leads: its original, else the item's own page here, as every other link to an item. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sourceLink } from '../../public/src/lib/source-links.js';
import type { Source } from '../../src/protocol/messages.js';

const ORIGIN = 'https://salon.example';
const source = (over: Partial<Source>): Source => ({ n: 1, id: 'news_1', kind: 'news', title: 'T', url: null, sourceType: 'document', snippet: '', ...over });

describe('a source’s link', () => {
  // safeHttpUrl reads relative URLs against the page's address.
  beforeEach(() => vi.stubGlobal('location', { origin: ORIGIN }));
  afterEach(() => vi.unstubAllGlobals());

  it('is its original URL, external when another site’s', () => {
    expect(sourceLink(source({ url: 'https://news.example/a' }), ORIGIN)).toEqual({ href: 'https://news.example/a', external: true });
    expect(sourceLink(source({ url: `${ORIGIN}/post?id=post_1` }), ORIGIN)).toEqual({ href: `${ORIGIN}/post?id=post_1`, external: false });
  });
  it('is the item’s own page without one: a post’s is /post, a video’s /watch, an article’s its room', () => {
    expect(sourceLink(source({ id: 'post_a b', kind: 'post' }), ORIGIN)).toEqual({ href: '/post?id=post_a%20b', external: false });
    expect(sourceLink(source({ id: 'video_x', kind: 'video' }), ORIGIN)).toEqual({ href: '/watch?id=video_x', external: false });
    expect(sourceLink(source({ id: 'news_1', kind: 'news' }), ORIGIN)).toEqual({ href: '/chat?id=news_1', external: false });
  });
  it('is none for a link that is not http(s), a comment without one, or the room’s own discussion', () => {
    expect(sourceLink(source({ url: 'javascript:alert(1)', kind: 'comment' }), ORIGIN)).toBeNull();
    expect(sourceLink(source({ kind: 'thread', sourceType: 'conversation' }), ORIGIN)).toBeNull();
  });
});
