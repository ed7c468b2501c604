/**
 * One poll of a source, run as an ingest job: read the feed (conditionally: a 304 ends the poll
 * before any parse; a poll in which an entry failed, other than by being no item at all, keeps no
 * validators, so the next reads the feed whole and tries the entry again) or the HN list, and put
 * only the entries that are new or changed since the source last stored them — each entry is
 * known by its key (guid, else link, else title; `hn:<id>` for a story) and a hash of what the
 * feed says about it, kept per source in the store. An entry the list has not shown for
 * SOURCE_ENTRY_KEPT_MS is forgotten: each poll that read the list marks the entries listed as
 * seen and deletes the rest past that age.
 */
import { createHash } from 'node:crypto';
import { errors } from '../../errors.js';
import type { SourceRecord, Store } from '../../store/types.js';
import { hnStoryIdOf } from '../ids.js';
import { ingestFeedEntry, ingestStory, readFeed, type IngestContext } from '../ingest/ingest-sources.js';
import { entryUrl } from '../sources/feed-items.js';
import type { FeedEntry } from '../sources/feeds.js';
import type { HnItem } from '../sources/hn.js';

/**
 * How long an entry no poll has found listed is remembered: a month, four polls of the slowest
 * source (MAX_EVERY_MINUTES, a week). One that comes back later is fetched and stored again.
 */
export const SOURCE_ENTRY_KEPT_MS = 30 * 86_400_000;

/** What one poll found. */
export interface PollOutcome {
  /** The feed answered 304: nothing was parsed. */
  notModified: boolean;
  etag: string | null;
  lastModified: string | null;
  /** Entries stored for the first time, and entries stored again because they changed. */
  added: number;
  changed: number;
  /** Entries deleted because the list had not shown them for SOURCE_ENTRY_KEPT_MS. */
  forgotten?: number;
  /** The source was deleted while it was polled: the poll stopped at the first entry it could not record. */
  gone?: boolean;
}

const sha = (parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

/** An entry's key within its source: guid, else its resolved link, else its title. */
export function entryKey(entry: FeedEntry, feedUrl: string): string {
  return entry.guid || entryUrl(entry, feedUrl) || `title:${entry.title}`;
}

/** What the feed says about an entry; a change of any of it stores the entry again. */
export function entryHash(entry: FeedEntry): string {
  return sha([entry.title, entry.link, entry.summaryHtml, entry.contentHtml, entry.published, entry.comments, entry.video?.videoId ?? null]);
}

/** What the HN API says about a story that matters to its item: title, link, text and first comments. */
function storyHash(story: HnItem): string {
  return sha([story.title, story.url, story.text, story.kids?.slice(0, 40) ?? [], story.dead, story.deleted]);
}

/** Polls `source` within an ingest job's context; throws (a typed error) when the source itself fails. */
export async function pollSource(ctx: IngestContext, store: Store, source: SourceRecord, now: () => string): Promise<PollOutcome> {
  if (source.kind === 'hn') return pollHn(ctx, store, source, now);
  return pollFeed(ctx, store, source, now);
}

async function pollFeed(ctx: IngestContext, store: Store, source: SourceRecord, now: () => string): Promise<PollOutcome> {
  const url = source.url!;
  const page = await ctx.deps.fetchPage(url, ctx.signal, { etag: source.etag, lastModified: source.lastModified });
  const validators = { etag: page.etag ?? null, lastModified: page.lastModified ?? null };
  if (page.status === 304)
    return { notModified: true, etag: validators.etag ?? source.etag, lastModified: validators.lastModified ?? source.lastModified, added: 0, changed: 0 };
  const feed = await readFeed(ctx, page.body, url, page.contentType);
  if (source.kind === 'youtube' && !feed.youtube) throw new errors.ERR_FEED_PARSE(`${url} is a feed but not a YouTube channel feed (no yt:videoId entries)`);
  const seen = new Set<string>();
  const entries = feed.entries
    .slice(0, source.limit)
    .map((entry) => ({ entry, key: entryKey(entry, page.url), hash: entryHash(entry) }))
    .filter((e) => !seen.has(e.key) && seen.add(e.key));
  const known = await store.sourceEntryHashes(
    source.id,
    entries.map((e) => e.key),
  );
  const due = entries.filter((e) => known.get(e.key) !== e.hash);
  ctx.tracker.addTotal(due.length);
  const outcome: PollOutcome = { notModified: false, ...validators, added: 0, changed: 0 };
  let failed = false;
  for (const e of due) {
    const itemId = await ingestFeedEntry(ctx, e.entry, feed, page.url);
    if (!itemId) {
      // Not recorded, so the next poll tries it again. An entry that can never make an item (no
      // http(s) link: ERR_INVALID_CONTENT) does not count: the feed would never be a 304 again.
      if (ctx.tracker.lastItemFailure?.code !== 'ERR_INVALID_CONTENT') failed = true;
      continue;
    }
    if (!(await store.putSourceEntry(source.id, e.key, e.hash, itemId, now()))) return { ...outcome, gone: true };
    if (known.has(e.key)) outcome.changed++;
    else outcome.added++;
  }
  // Validators kept after an entry failed made the next poll a 304 while the feed stayed as it was,
  // so the entry was not tried again until the feed changed (an HN API down for a minute lost it for days).
  if (failed) Object.assign(outcome, { etag: null, lastModified: null });
  return forget(
    store,
    source,
    entries.map((e) => e.key),
    now,
    outcome,
  );
}

/**
 * Story `id` as the HN API answers it, or null. Of a list, a story the API fails on is a failure
 * of the job, as a feed entry's is: the poll goes on with the others, and the next one tries it
 * again (a failed story ended the whole poll, left the rest of the list unread and backed the
 * source off). A source that is one story fails with it.
 */
async function listedStory(ctx: IngestContext, source: SourceRecord, id: number): Promise<HnItem | null> {
  try {
    return await ctx.hn.item(id, ctx.signal);
  } catch (err) {
    if (!source.list || ctx.signal.aborted) throw err;
    ctx.tracker.addTotal(1);
    ctx.tracker.itemFailed(`hn:${id}`, err);
    return null;
  }
}

async function pollHn(ctx: IngestContext, store: Store, source: SourceRecord, now: () => string): Promise<PollOutcome> {
  const ids = source.list ? await ctx.hn.storyIds(source.list, source.limit, ctx.signal) : [hnStoryIdOf(source.url!)!];
  const known = await store.sourceEntryHashes(
    source.id,
    ids.map((id) => `hn:${id}`),
  );
  const outcome: PollOutcome = { notModified: false, etag: null, lastModified: null, added: 0, changed: 0 };
  for (const id of ids) {
    const key = `hn:${id}`;
    const story = await listedStory(ctx, source, id);
    if (!story) continue;
    const hash = storyHash(story);
    if (known.get(key) === hash) continue;
    ctx.tracker.addTotal(1);
    const itemId = await ingestStory(ctx, id, story);
    if (!itemId) continue;
    if (!(await store.putSourceEntry(source.id, key, hash, itemId, now()))) return { ...outcome, gone: true };
    if (known.has(key)) outcome.changed++;
    else outcome.added++;
  }
  return forget(
    store,
    source,
    ids.map((id) => `hn:${id}`),
    now,
    outcome,
  );
}

/** Marks the entries `listed` as seen and forgets the source's entries unlisted for SOURCE_ENTRY_KEPT_MS. */
async function forget(store: Store, source: SourceRecord, listed: string[], now: () => string, outcome: PollOutcome): Promise<PollOutcome> {
  const at = now();
  const forgetBefore = new Date(Date.parse(at) - SOURCE_ENTRY_KEPT_MS).toISOString();
  const forgotten = await store.sweepSourceEntries(source.id, listed, at, forgetBefore);
  return forgotten ? { ...outcome, forgotten } : outcome;
}
