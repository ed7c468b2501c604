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
import { FreshReading } from './fresh-reading.js';
import { DEFAULT_CONTEXT_CHARS } from './options.js';
import { TOPIC_ROOM_PREFIX, topicRoomTitle, topicSlug } from '../protocol/room-ids.js';
import { clip } from '../text.js';
import { topicSummaryKey, type ResolvedRoom, type RoomResolver, type TopicSummary } from './types.js';
import { itemDetails } from '../content/item-details.js';

/** Items whose titles make a topic's context before its summary exists. */
const TOPIC_FALLBACK_ITEMS = 10;
const MAX_ROOM_ID_CHARS = 200;
/**
 * How long the categories read from the store answer topic lookups, a miss included: a category
 * new to the store becomes a topic room within this long, on every node alike.
 */
export const TOPIC_CATEGORIES_FRESH_MS = 5_000;

/**
 * Category names by topic slug, read from the store at most once per `freshMs`; lookups made
 * while a read is under way wait for that read. The read is a GROUP BY over every item's category
 * (~13 ms at 100K items, on the event loop with SQLite), and any client can name a `topic_…` room
 * that does not exist, so it must not run once per lookup. Misses are answered from the same map,
 * which keeps no per-slug state: the memory is the store's categories, whatever clients ask for.
 */
export class TopicCategories {
  private readonly bySlug: FreshReading<null, Map<string, string>>;

  constructor(store: Pick<Store, 'listCategories'>, freshMs = TOPIC_CATEGORIES_FRESH_MS) {
    this.bySlug = new FreshReading(freshMs, async () => {
      const bySlug = new Map<string, string>();
      // Busiest first: of two categories with one slug, the busier one is the topic.
      for (const { category } of await store.listCategories()) {
        const slug = topicSlug(category);
        if (slug && !bySlug.has(slug)) bySlug.set(slug, category);
      }
      return bySlug;
    });
  }

  /** The category whose topic slug is `slug`, or null when the store has none. */
  async category(slug: string): Promise<string | null> {
    return (await this.bySlug.get(null)).get(slug) ?? null;
  }
}

/** A RoomResolver over `store`. */
export function storeResolver(store: Store, contextChars = DEFAULT_CONTEXT_CHARS): RoomResolver {
  const categories = new TopicCategories(store);
  return async (roomId) => {
    if (roomId.length > MAX_ROOM_ID_CHARS) return null;
    if (kindOfId(roomId)) return contentRoom(store, roomId, contextChars);
    if (roomId.startsWith(TOPIC_ROOM_PREFIX)) return topicRoom(store, categories, roomId.slice(TOPIC_ROOM_PREFIX.length), contextChars);
    return null;
  };
}

async function contentRoom(store: Store, roomId: string, contextChars: number): Promise<ResolvedRoom | null> {
  // Without its comments: every join and every ask describes the room, and a Hacker News thread's
  // hundreds of comments took ~1 ms a read to parse, for a view that shows none of them.
  const [item] = await store.getItemsWithoutComments([roomId]);
  if (!item) return null;
  const about = item.description.trim() || readableBody(item).trim();
  const context = clip([item.title, about].filter(Boolean).join('\n\n'), contextChars);
  return { id: item.id, kind: item.kind, title: item.title, url: item.url, context, details: itemDetails(item) };
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

async function topicRoom(store: Store, categories: TopicCategories, slug: string, contextChars: number): Promise<RoomInfo | null> {
  if (!slug) return null;
  const category = await categories.category(slug);
  if (!category) return null;
  const title = topicRoomTitle(category);
  const stored = await topicSummary(store, slug);
  let about = stored.summary;
  if (!about) {
    // Summaries: ten bodies of up to BODY_MAX_CHARS and their comments were read for ten titles.
    const { items } = await store.listItemSummaries({ category, limit: TOPIC_FALLBACK_ITEMS });
    about = items.length ? `Recent in ${category}: ${items.map((i) => i.title).join('; ')}` : '';
  }
  const context = clip([title, about].filter(Boolean).join('\n\n'), contextChars);
  const room: RoomInfo = { id: `${TOPIC_ROOM_PREFIX}${slug}`, kind: 'topic', title, url: null, context };
  if (stored.summary && stored.digest) room.digest = stored.digest;
  return room;
}
