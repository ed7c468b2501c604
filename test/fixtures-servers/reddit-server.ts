/**
 * A loopback fake of Reddit's thread JSON: `GET /comments/<id>.json` answers
 * `[postListing, commentListing]` shaped as reddit.com does, for the threads given, with at most
 * `limit` comments when the query asks (and a `more` stub for the rest); any other thread answers
 * 404 as Reddit does for a missing one.
 */
import { startFixtureServer, type FixtureServer } from './http.js';

/** One thread of the fake: the post's fields and its first-level comments, best first. */
export interface FakeThread {
  id: string;
  title: string;
  /** The linked page; omitted for a text post (`is_self`). */
  url?: string;
  selftext?: string;
  author?: string;
  subreddit?: string;
  createdUtc?: number;
  comments: { author: string; body: string; createdUtc?: number; stickied?: boolean }[];
}

function listing(children: unknown[]): unknown {
  return { kind: 'Listing', data: { after: null, before: null, children } };
}

/** The JSON reddit.com serves for a thread. */
export function threadJson(t: FakeThread, limit = Infinity): string {
  const sub = t.subreddit ?? 'programming';
  const permalink = `/r/${sub}/comments/${t.id}/${t.title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 40)}/`;
  const post = {
    kind: 't3',
    data: {
      id: t.id,
      name: `t3_${t.id}`,
      title: t.title,
      author: t.author ?? 'poster',
      subreddit: sub,
      selftext: t.selftext ?? '',
      is_self: !t.url,
      url: t.url ?? `https://www.reddit.com${permalink}`,
      permalink,
      created_utc: t.createdUtc ?? 1_700_000_000,
      num_comments: t.comments.length,
    },
  };
  const comments = t.comments.slice(0, limit).map((c, i) => ({
    kind: 't1',
    data: { id: `c${i}`, author: c.author, body: c.body, created_utc: c.createdUtc ?? 1_700_000_100 + i, stickied: c.stickied ?? false, replies: '' },
  }));
  return JSON.stringify([listing([post]), listing([...comments, { kind: 'more', data: { count: 12, children: ['x1', 'x2'] } }])]);
}

export interface RedditServer extends FixtureServer {
  /** The REDDIT_API_BASE to use. */
  base: string;
  /** The query of each thread request, in order. */
  queries: URLSearchParams[];
}

export async function startRedditServer(threads: FakeThread[]): Promise<RedditServer> {
  const byId = new Map(threads.map((t) => [t.id, t]));
  const queries: URLSearchParams[] = [];
  const server = await startFixtureServer({}, (path, req) => {
    const query = new URL(req.url ?? '/', 'http://fake').searchParams;
    queries.push(query);
    const m = /^\/comments\/([a-z0-9]+)\.json$/.exec(path);
    const thread = m && byId.get(m[1]);
    if (!thread) return { status: 404, type: 'application/json; charset=UTF-8', body: '{"message": "Not Found", "error": 404}' };
    const limit = Number(query.get('limit') ?? Infinity);
    return { type: 'application/json; charset=UTF-8', body: threadJson(thread, Number.isFinite(limit) ? limit : Infinity) };
  });
  return Object.assign(server, { base: server.origin, queries });
}
