/** Where an answer's source leads (`<salon-source-list>`). */
import { itemPagePath } from '../../../src/protocol/content.js';
import type { Source } from '../../../src/protocol/messages.js';
import { safeHttpUrl } from './format.js';

/**
 * A source's link: its original URL (external when another site's), else the item's own page
 * here, as every other link to an item goes (a post's is /post, a video's /watch); comments and
 * the room's own discussion have none.
 */
export function sourceLink(source: Source, origin: string): { href: string; external: boolean } | null {
  const url = safeHttpUrl(source.url);
  if (url) return { href: url, external: new URL(url).origin !== origin };
  if (source.kind === 'news' || source.kind === 'post' || source.kind === 'video')
    return { href: itemPagePath({ id: source.id, kind: source.kind }), external: false };
  return null;
}
