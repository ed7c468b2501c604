/**
 * Videos from JSON: Salon's own shape `{id?, title, description, url, channel, publishedAt,
 * thumbnail, category?}` (one object, an array, or `{items: [...]}`), and YouTube Data API v3
 * `videos` answers (`youtube#videoListResponse` or single `youtube#video` resources).
 */
import { SalonError, errors } from '../../errors.js';
import { idForUrl, isIdSuffix, qualifyId } from '../ids.js';
import { decorationUrl } from '../items.js';
import { DESCRIPTION_CHARS, excerpt } from '../text.js';

/** One entry of a video document: the item to put, or why it cannot be one. */
export type VideoEntry = { ref: string; item: Record<string, unknown> } | { ref: string; error: SalonError };

const YOUTUBE_WATCH = 'https://www.youtube.com/watch?v=';
const THUMBNAIL_PREFERENCE = ['maxres', 'standard', 'high', 'medium', 'default'];
/** YouTube's standard video categories (videoCategories.list), by categoryId. */
const YOUTUBE_CATEGORIES: Record<string, string> = {
  '1': 'Film & Animation',
  '2': 'Autos & Vehicles',
  '10': 'Music',
  '15': 'Pets & Animals',
  '17': 'Sports',
  '19': 'Travel & Events',
  '20': 'Gaming',
  '22': 'People & Blogs',
  '23': 'Comedy',
  '24': 'Entertainment',
  '25': 'News & Politics',
  '26': 'Howto & Style',
  '27': 'Education',
  '28': 'Science & Technology',
  '29': 'Nonprofits & Activism',
};

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return Boolean(v) && typeof v === 'object' && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v : undefined;
}

/** The YouTube video id in a watch, short, embed or shorts URL; null for other URLs. */
export function youtubeIdFromUrl(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const host = u.hostname.replace(/^(www|m|music)\./, '');
  let id: string | null = null;
  if (host === 'youtu.be') id = u.pathname.slice(1).split('/')[0];
  else if (host === 'youtube.com' || host === 'youtube-nocookie.com') {
    id = u.pathname === '/watch' ? u.searchParams.get('v') : (/^\/(embed|shorts|v|live)\/([^/]+)/.exec(u.pathname)?.[2] ?? null);
  }
  return id && /^[A-Za-z0-9_-]{6,20}$/.test(id) ? id : null;
}

function bestThumbnail(thumbnails: unknown): string | null {
  if (!isObj(thumbnails)) return null;
  for (const size of THUMBNAIL_PREFERENCE) {
    const t = thumbnails[size];
    if (isObj(t) && str(t.url)) return t.url as string;
  }
  return null;
}

function fromYoutubeResource(r: Obj, source: string): Obj {
  const id = typeof r.id === 'string' ? r.id : isObj(r.id) ? str(r.id.videoId) : undefined;
  if (!id || !isIdSuffix(id)) throw new errors.ERR_INVALID_CONTENT('YouTube video resource has no usable id');
  if (!isObj(r.snippet)) throw new errors.ERR_INVALID_CONTENT(`YouTube video ${id} has no snippet (request part=snippet)`);
  const s = r.snippet;
  const description = typeof s.description === 'string' ? s.description : '';
  return {
    id: `video_${id}`,
    kind: 'video',
    title: s.title,
    url: `${YOUTUBE_WATCH}${id}`,
    description: excerpt(description, DESCRIPTION_CHARS),
    body: description,
    comments: [],
    category: (typeof s.categoryId === 'string' && Object.hasOwn(YOUTUBE_CATEGORIES, s.categoryId) && YOUTUBE_CATEGORIES[s.categoryId]) || null,
    publishedAt: s.publishedAt ?? null,
    image: null,
    author: null,
    channel: s.channelTitle ?? null,
    thumbnail: decorationUrl(bestThumbnail(s.thumbnails)),
    siteName: 'YouTube',
    source,
  };
}

function plainVideoId(v: Obj): string {
  if (str(v.id)) return qualifyId('video', (v.id as string).trim());
  const url = str(v.url);
  if (!url) throw new errors.ERR_INVALID_CONTENT('a video needs an id or a url');
  const yt = youtubeIdFromUrl(url);
  return yt ? `video_${yt}` : idForUrl('video', url);
}

function fromPlain(v: Obj, source: string): Obj {
  const id = plainVideoId(v);
  if (!str(v.title)) throw new errors.ERR_INVALID_CONTENT(`${id}: title must be a non-empty string`);
  if (v.description !== undefined && typeof v.description !== 'string') throw new errors.ERR_INVALID_CONTENT(`${id}: description must be a string`);
  const description = (v.description as string | undefined) ?? '';
  const body = typeof v.body === 'string' && v.body.trim() ? v.body : description;
  return {
    id,
    kind: 'video',
    title: v.title,
    url: v.url ?? null,
    description: excerpt(description, DESCRIPTION_CHARS),
    body,
    comments: [],
    category: v.category ?? null,
    publishedAt: v.publishedAt ?? null,
    image: v.image ?? null,
    author: v.author ?? null,
    channel: v.channel ?? null,
    thumbnail: v.thumbnail ?? null,
    siteName: v.siteName ?? (v.url && youtubeIdFromUrl(String(v.url)) ? 'YouTube' : null),
    source,
  };
}

function entries(doc: unknown): unknown[] {
  if (Array.isArray(doc)) return doc;
  if (isObj(doc) && Array.isArray(doc.items)) return doc.items;
  if (isObj(doc) && (doc.kind === 'youtube#video' || 'title' in doc || 'snippet' in doc)) return [doc];
  throw new errors.ERR_INVALID_CONTENT('expected a video object, an array of them, {items: [...]} or a YouTube videos answer');
}

function refOf(e: unknown, i: number): string {
  if (isObj(e) && typeof e.id === 'string') return e.id;
  if (isObj(e) && typeof e.url === 'string') return e.url;
  return `#${i}`;
}

/**
 * The video items (unvalidated; the pipeline validates) of a parsed JSON document, one result
 * per entry so a bad entry never hides the good ones. Throws ERR_INVALID_CONTENT when the
 * document as a whole has no recognisable shape.
 */
export function videoEntriesFromJson(doc: unknown, source = 'video-json'): VideoEntry[] {
  return entries(doc).map((e, i): VideoEntry => {
    const ref = refOf(e, i);
    try {
      if (!isObj(e)) throw new errors.ERR_INVALID_CONTENT(`entry ${i} is not an object`);
      const youtube = e.kind === 'youtube#video' || isObj(e.snippet);
      return { ref, item: youtube ? fromYoutubeResource(e, source) : fromPlain(e, source) };
    } catch (err) {
      if (err instanceof SalonError) return { ref, error: err };
      throw err;
    }
  });
}
