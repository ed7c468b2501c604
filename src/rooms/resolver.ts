/**
 * The store-backed RoomResolver: content rooms are stored items (`news_…`, `post_…`, `video_…`),
 * topic rooms are `topic_<slug>` of a category the store knows. The context is the title plus the
 * item's description (or the start of its body), or the topic's generated summary — a digest of
 * the category's recent items, also returned as `digest` entries — (or, until one exists, the
 * titles of the category's recent items), at most `contextChars` characters.
 */
import { readableBody } from '../content/sources/posts.js';
import { kindOfId } from '../content/types.js';
import type { DigestEntry, RoomInfo } from '../protocol/messages.js';
import type { Store } from '../store/types.js';
import { DEFAULT_CONTEXT_CHARS } from './options.js';
import { TOPIC_ROOM_PREFIX, topicSlug } from '../protocol/room-ids.js';
import { clip } from '../text.js';
import { topicSummaryKey, type RoomResolver, type TopicSummary } from './types.js';

/** Items whose titles make a topic's context before its summary exists. */
const TOPIC_FALLBACK_ITEMS = 10;
const MAX_ROOM_ID_CHARS = 200;

/** A RoomResolver over `store`. */
export function storeResolver(store: Store, contextChars = DEFAULT_CONTEXT_CHARS): RoomResolver {
  return async (roomId) => {
    if (roomId.length > MAX_ROOM_ID_CHARS) return null;
    if (kindOfId(roomId)) return contentRoom(store, roomId, contextChars);
    if (roomId.startsWith(TOPIC_ROOM_PREFIX)) return topicRoom(store, roomId.slice(TOPIC_ROOM_PREFIX.length), contextChars);
    return null;
  };
}

async function contentRoom(store: Store, roomId: string, contextChars: number): Promise<RoomInfo | null> {
  const item = await store.getItem(roomId);
  if (!item) return null;
  const about = item.description.trim() || readableBody(item).trim();
  const context = clip([item.title, about].filter(Boolean).join('\n\n'), contextChars);
  return { id: item.id, kind: item.kind, title: item.title, url: item.url, context };
}

async function topicSummary(store: Store, slug: string): Promise<{ summary: string; digest?: DigestEntry[] }> {
  const raw = await store.getMeta(topicSummaryKey(slug));
  if (!raw) return { summary: '' };
  try {
    const parsed = JSON.parse(raw) as TopicSummary;
    return {
      summary: typeof parsed.summary === 'string' ? parsed.summary.trim() : '',
      digest: Array.isArray(parsed.digest) ? parsed.digest : undefined,
    };
  } catch {
    return { summary: '' };
  }
}

async function topicRoom(store: Store, slug: string, contextChars: number): Promise<RoomInfo | null> {
  if (!slug) return null;
  const category = (await store.listCategories()).find((c) => topicSlug(c.category) === slug)?.category;
  if (!category) return null;
  const title = `Topic: ${category}`;
  const stored = await topicSummary(store, slug);
  let about = stored.summary;
  if (!about) {
    const { items } = await store.listItems({ category, limit: TOPIC_FALLBACK_ITEMS });
    about = items.length ? `Recent in ${category}: ${items.map((i) => i.title).join('; ')}` : '';
  }
  const context = clip([title, about].filter(Boolean).join('\n\n'), contextChars);
  const room: RoomInfo = { id: `${TOPIC_ROOM_PREFIX}${slug}`, kind: 'topic', title, url: null, context };
  if (stored.summary && stored.digest) room.digest = stored.digest;
  return room;
}
