/**
 * What a reader knows of an item beside its text: who made it, where and when it was published.
 * The assistant is told them for the room's own item, so "who wrote this?" or "when was this
 * published?" is answered from them: the body rarely says its own byline.
 */
import type { ContentKind, ItemWithoutComments } from './types.js';
import { hostOf, squash } from '../text.js';
import { safeCut } from './text.js';

/** An item's byline, dateline and kind, each absent when the item does not say it. */
export interface ItemDetails {
  /** What a reader calls it: an article (news), a post, a video. */
  kind: 'article' | 'post' | 'video';
  author?: string;
  /** A video's channel. */
  channel?: string;
  /** The site or publication it came from (its siteName, else its address's host). */
  site?: string;
  /** When it was published, ISO-8601. */
  published?: string;
}

const KIND_NAMES: Record<ContentKind, ItemDetails['kind']> = { news: 'article', post: 'post', video: 'video' };

/** Each detail at most this long: a byline, not a paragraph. */
const DETAIL_MAX_CHARS = 200;

/** The details of `item`, each on one line (squash) and cut to DETAIL_MAX_CHARS. */
export function itemDetails(item: Pick<ItemWithoutComments, 'kind' | 'author' | 'channel' | 'siteName' | 'url' | 'publishedAt'>): ItemDetails {
  const details: ItemDetails = { kind: KIND_NAMES[item.kind] };
  const author = oneLine(item.author);
  const channel = oneLine(item.channel);
  const site = oneLine(item.siteName) ?? ((item.url && hostOf(item.url)) || undefined);
  const published = item.publishedAt && Number.isFinite(Date.parse(item.publishedAt)) ? item.publishedAt : undefined;
  if (author) details.author = author;
  if (channel) details.channel = channel;
  if (site) details.site = site;
  if (published) details.published = published;
  return details;
}

function oneLine(text: string | null | undefined): string | undefined {
  const squashed = text ? squash(text) : '';
  const line = squashed.slice(0, safeCut(squashed, DETAIL_MAX_CHARS)).trim();
  return line || undefined;
}
