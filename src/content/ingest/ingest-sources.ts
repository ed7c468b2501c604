/**
 * The work of an ingest job, per kind of request: a URL (an article, or a feed if that is what
 * the URL serves), a feed, a YouTube channel feed, Hacker News stories, local files. Every item
 * goes through the item pipeline; a failing item is recorded and the rest go on.
 */
import { stat } from 'node:fs/promises';
import { readLocalFile } from '../../local-files.js';
import { extname } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { SalonError, errors } from '../../errors.js';
import { articleOfPage, fetchArticle, newsItemFromArticle, type ArticleFields, type IngestDeps } from '../sources/article.js';
import { findThread, type CommentSource } from '../sources/comment-source.js';
import { entryRef, entryUrl, newsItemFromEntry, videoItemFromEntry } from '../sources/feed-items.js';
import { parseFeed, type FeedEntry, type ParsedFeed } from '../sources/feeds.js';
import { looksLikeFeed } from '../sources/feed-sniff.js';
import { HnComments, type HnClient, type HnItem } from '../sources/hn.js';
import type { Logger } from '../../logger.js';
import type { JobTracker } from './ingest-job.js';
import type { ItemPipeline } from './pipeline.js';
import { MARKDOWN_EXTENSIONS, markdownFiles, readPostFile } from '../sources/posts.js';
import { videoEntriesFromJson } from '../sources/videos.js';

/** Everything a job's work needs. */
export interface IngestContext {
  deps: IngestDeps;
  pipeline: ItemPipeline;
  hn: HnClient;
  /** Sites whose thread URLs are read through their API, with their comments (HN, Reddit). */
  comments: readonly CommentSource[];
  tracker: JobTracker;
  signal: AbortSignal;
  /** BODY_MAX_CHARS, passed to extraction. */
  bodyMaxChars: number;
  /** Where `Indexing article: …` and `Fetched comments for …` go. */
  log?: Logger;
}

const FEED_EXTENSIONS = ['.xml', '.rss', '.atom', '.rdf'];

function checkAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof SalonError ? signal.reason : new errors.ERR_JOB_CANCELLED('the job was cancelled');
}

/** Parses a feed through the deps (a worker for large ones) or in-process; `contentType` as it was fetched. */
export function readFeed(ctx: IngestContext, bytes: Buffer, ref: string, contentType?: string): Promise<ParsedFeed> {
  return ctx.deps.parseFeed ? ctx.deps.parseFeed(bytes, ref, ctx.signal, contentType) : Promise.resolve().then(() => parseFeed(bytes, ref, contentType));
}

/**
 * Makes and puts one item; a failure is recorded against `ref` and does not throw. Resolves with
 * the stored item's id, or null when it failed.
 */
async function putOne(ctx: IngestContext, ref: string, make: () => Promise<unknown> | unknown): Promise<string | null> {
  checkAborted(ctx.signal);
  let id: string | null = null;
  try {
    const input = await make();
    const put = await ctx.pipeline.put(input);
    id = put.id;
    const title = (input as { title?: unknown }).title;
    if (put.status !== 'unchanged') ctx.log?.info({ id, status: put.status, chunks: put.chunks }, `Indexing article: ${String(title)}`);
    ctx.tracker.itemDone(id);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.tracker.itemFailed(ref, err);
  }
  // Long jobs give the event loop a turn between items.
  await yieldToLoop();
  return id;
}

/** One discussion thread (HN story, Reddit thread): its linked article as the body, its top comments attached. */
export function ingestDiscussion(ctx: IngestContext, source: CommentSource, thread: string, ref: string): Promise<string | null> {
  return putOne(ctx, ref, async () => {
    const discussion = await source.discussion(thread, ctx.signal);
    ctx.log?.info({ source: source.name, thread, comments: discussion.commentCount }, `Fetched comments for ${discussion.label}`);
    for (const { ref, err } of discussion.unread ?? []) ctx.tracker.note(ref, err);
    const article = discussion.link ? await tryArticle(ctx, discussion.link) : null;
    return discussion.toItem(article);
  });
}

/** The linked article of a feed entry or story, or null (with a note) when it cannot be had. */
async function tryArticle(ctx: IngestContext, url: string): Promise<ArticleFields | null> {
  try {
    return await fetchArticle(ctx.deps, url, ctx.bodyMaxChars, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.tracker.note(url, err);
    return null;
  }
}

/**
 * Puts one feed entry: a video, a discussion thread (its link, or its `<comments>` link, names an
 * HN story or a Reddit thread), else a news item with its linked article. Resolves with the item id,
 * or null when it failed (recorded in the job).
 */
export function ingestFeedEntry(ctx: IngestContext, entry: FeedEntry, feed: ParsedFeed, feedUrl: string | undefined): Promise<string | null> {
  const ref = entryRef(entry, feedUrl);
  if (entry.video) return putOne(ctx, ref, () => videoItemFromEntry(entry, feed));
  const url = entryUrl(entry, feedUrl);
  const found = findThread(ctx.comments, url) ?? findThread(ctx.comments, entry.comments);
  if (found) return ingestDiscussion(ctx, found.source, found.thread, ref);
  return putOne(ctx, ref, async () => {
    const article = url ? await tryArticle(ctx, url) : null;
    return newsItemFromEntry(entry, feed, article, feedUrl);
  });
}

/** Puts the entries of a parsed feed (at most `limit`). */
export async function ingestFeedDocument(ctx: IngestContext, feed: ParsedFeed, feedUrl: string | undefined, limit: number): Promise<void> {
  const entries = feed.entries.slice(0, limit);
  ctx.tracker.addTotal(entries.length);
  for (const entry of entries) await ingestFeedEntry(ctx, entry, feed, feedUrl);
}

async function fetchFeed(ctx: IngestContext, url: string): Promise<{ feed: ParsedFeed; url: string }> {
  const page = await ctx.deps.fetchPage(url, ctx.signal);
  return { feed: await readFeed(ctx, page.body, url, page.contentType), url: page.url };
}

/** A feed URL; with `youtubeOnly`, a feed that is not a YouTube channel feed is refused. */
export async function ingestFeedUrl(ctx: IngestContext, url: string, limit: number, youtubeOnly = false): Promise<void> {
  const { feed, url: finalUrl } = await fetchFeed(ctx, url);
  if (youtubeOnly && !feed.youtube) throw new errors.ERR_FEED_PARSE(`${url} is a feed but not a YouTube channel feed (no yt:videoId entries)`);
  await ingestFeedDocument(ctx, feed, finalUrl, limit);
}

/** A page URL: a discussion thread (HN, Reddit) through its API, else its article, or the entries of the feed it turns out to be. */
export async function ingestUrl(ctx: IngestContext, url: string, limit: number): Promise<void> {
  const found = findThread(ctx.comments, url);
  if (found) {
    ctx.tracker.addTotal(1);
    await ingestDiscussion(ctx, found.source, found.thread, url);
    return;
  }
  const page = await ctx.deps.fetchPage(url, ctx.signal);
  if (looksLikeFeed(page.contentType, page.body)) {
    await ingestFeedDocument(ctx, await readFeed(ctx, page.body, url, page.contentType), page.url, limit);
    return;
  }
  ctx.tracker.addTotal(1);
  await putOne(ctx, url, async () => newsItemFromArticle(url, await articleOfPage(ctx.deps, page, ctx.bodyMaxChars, ctx.signal)));
}

/**
 * One Hacker News story with its linked article and comments; resolves with its item id, or null
 * when it failed. `read`: the story's item when the caller has just read it.
 */
export function ingestStory(ctx: IngestContext, id: number, read?: HnItem): Promise<string | null> {
  return ingestDiscussion(ctx, new HnComments(ctx.hn, read ? new Map([[id, read]]) : undefined), String(id), `hn:${id}`);
}

/** One Hacker News story, or the first `limit` top stories. */
export async function ingestHn(ctx: IngestContext, hn: number | 'top', limit: number): Promise<void> {
  const ids = hn === 'top' ? await ctx.hn.topStoryIds(limit, ctx.signal) : [hn];
  ctx.tracker.addTotal(ids.length);
  for (const id of ids) await ingestStory(ctx, id);
}

async function ingestMarkdown(ctx: IngestContext, paths: string[]): Promise<void> {
  ctx.tracker.addTotal(paths.length);
  for (const path of paths) {
    const entry = await readPostFile(path);
    await putOne(ctx, path, () => {
      if ('error' in entry) throw entry.error;
      return entry.item;
    });
  }
}

async function ingestVideoJson(ctx: IngestContext, path: string): Promise<void> {
  let doc: unknown;
  try {
    doc = JSON.parse((await readLocalFile(path)).toString('utf8'));
  } catch (err) {
    throw new errors.ERR_INVALID_CONTENT(`${path} is not readable JSON (${(err as Error).message})`);
  }
  const entries = videoEntriesFromJson(doc);
  ctx.tracker.addTotal(entries.length);
  for (const e of entries) {
    await putOne(ctx, `${path} ${e.ref}`, () => {
      if ('error' in e) throw e.error;
      return e.item;
    });
  }
}

/** A local file's bytes; one that cannot be read, or is too large, is ERR_INVALID_CONTENT naming it and why. */
async function readLocalFileAs(path: string): Promise<Buffer> {
  try {
    return await readLocalFile(path);
  } catch (err) {
    throw new errors.ERR_INVALID_CONTENT(`${path} cannot be read (${(err as Error).message})`);
  }
}

async function ingestFile(ctx: IngestContext, path: string, limit: number): Promise<void> {
  const info = await stat(path).catch(() => null);
  if (!info) throw new errors.ERR_INVALID_CONTENT(`${path} does not exist`);
  const ext = extname(path).toLowerCase();
  if (info.isDirectory()) return ingestMarkdown(ctx, await markdownFiles(path));
  if (MARKDOWN_EXTENSIONS.includes(ext)) return ingestMarkdown(ctx, [path]);
  if (ext === '.json') return ingestVideoJson(ctx, path);
  if (FEED_EXTENSIONS.includes(ext)) return ingestFeedDocument(ctx, await readFeed(ctx, await readLocalFileAs(path), path), undefined, limit);
  throw new errors.ERR_INVALID_CONTENT(`${path}: expected a folder of posts, a .md post, a .json video file or a .xml/.rss/.atom feed`);
}

/** Local files and folders; a file that cannot be read at all is one failure and the rest go on. */
export async function ingestFiles(ctx: IngestContext, paths: string[], limit: number): Promise<void> {
  for (const path of paths) {
    checkAborted(ctx.signal);
    try {
      await ingestFile(ctx, path, limit);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      ctx.tracker.addTotal(1);
      ctx.tracker.itemFailed(path, err);
    }
  }
}
