/**
 * Topic rooms (`topic_<slug>`, one per content category): their context is a digest of the
 * category's recent items — a line and a link for each, newest first (src/rag/topic-digest.ts) —
 * under a lead the ChatModel writes when it says more than the lines do. Stored as JSON at
 * `topicSummaryKey(slug)` and regenerated every TOPIC_SUMMARY_INTERVAL_MS; missing summaries are
 * generated at start. A model that fails costs the lead only: the digest is stored without it.
 */
import type { ChatModel } from '../ai/types.js';

import { topicRoomId, topicSlug } from '../protocol/room-ids.js';
import { topicSummaryKey, type TopicSummary } from '../rooms/types.js';
import type { Store } from '../store/types.js';

import { clip } from '../text.js';
import { digestEntry, digestText, leadFrom } from './topic-digest.js';
import { silentLogger, type Logger } from '../logger.js';
import { required, wholeNumber, numberWithin } from '../options.js';

/** Recent items a topic summary is made from (the lead reads them all; the digest lists the newest that fit). */
export const TOPIC_ITEMS = 20;
/** Room context is at most 2,000 chars including the category name. */
export const TOPIC_SUMMARY_MAX_CHARS = 1800;
const ITEM_LINE_CHARS = 300;
/** How often categories without a summary (new ones, or content seeded after start) are looked for. */
export const MISSING_CHECK_MS = 30_000;
/** After a failed summary the missing-summary check waits this long (or the interval, if shorter). */
export const FAILURE_BACKOFF_MS = 600_000;

export interface TopicSummariesOptions {
  store: Store;
  chat: ChatModel;
  intervalMs: number;
  log?: Logger;
  itemsPerTopic?: number;
}

export class TopicSummaries {
  private timers: NodeJS.Timeout[] = [];
  /** When a topic's summary last failed: the frequent missing-summary check leaves it alone for a while. */
  private readonly failedAt = new Map<string, number>();
  private running: Promise<unknown> = Promise.resolve();
  /**
   * Aborted by `close`: the model call under way ends, and no other topic is summarised. A shutdown
   * waited for them all, each up to AI_TIMEOUT_MS with a slow or hung model, well past its grace.
   */
  private readonly stopping = new AbortController();
  private readonly log: Logger;
  private readonly itemsPerTopic: number;

  constructor(private readonly options: TopicSummariesOptions) {
    required('TopicSummaries', 'store', options.store);
    required('TopicSummaries', 'chat', options.chat);
    numberWithin('TopicSummaries', 'intervalMs', options.intervalMs, 1000);
    this.itemsPerTopic = options.itemsPerTopic ?? TOPIC_ITEMS;
    wholeNumber('TopicSummaries', 'itemsPerTopic', this.itemsPerTopic, 1);
    this.log = options.log ?? silentLogger;
  }

  /** Generates missing summaries now (in the background) and schedules regeneration. */
  start(): void {
    if (this.timers.length) return;
    this.running = this.refreshAll({ onlyMissing: true });
    const every = (ms: number, onlyMissing: boolean) => {
      const timer = setInterval(() => {
        this.running = this.running.then(() => this.refreshAll({ onlyMissing }));
      }, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.options.intervalMs, false);
    every(Math.min(MISSING_CHECK_MS, this.options.intervalMs), true);
  }

  /** Resolves when the generation under way (if any) has finished. */
  async idle(): Promise<void> {
    await this.running.catch(() => {});
  }

  async close(): Promise<void> {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    this.stopping.abort(new Error('topic summaries closed'));
    await this.idle();
  }

  /** The stored summary of a topic, or null. */
  async get(slug: string): Promise<TopicSummary | null> {
    const raw = await this.options.store.getMeta(topicSummaryKey(slug));
    if (!raw) return null;
    try {
      return JSON.parse(raw) as TopicSummary;
    } catch {
      return null;
    }
  }

  /** Regenerates every category's summary (or only the missing ones). Failures are logged, not thrown. */
  async refreshAll(options: { onlyMissing?: boolean } = {}): Promise<TopicSummary[]> {
    const out: TopicSummary[] = [];
    try {
      for (const { category } of await this.options.store.listCategories()) {
        if (this.stopping.signal.aborted) break;
        const slug = topicSlug(category);
        if (!slug) continue;
        if (options.onlyMissing && ((await this.get(slug)) || this.recentlyFailed(slug))) continue;
        const summary = await this.refresh(category).catch((err: Error) => {
          if (this.stopping.signal.aborted) return null;
          this.failedAt.set(slug, Date.now());
          this.log.warn({ roomId: topicRoomId(category), err: err.message }, 'topic summary failed');
          return null;
        });
        if (summary) this.failedAt.delete(slug);
        if (summary) out.push(summary);
      }
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'topic summaries failed');
    }
    return out;
  }

  private recentlyFailed(slug: string): boolean {
    const at = this.failedAt.get(slug);
    return at !== undefined && Date.now() - at < Math.min(this.options.intervalMs, FAILURE_BACKOFF_MS);
  }

  /** Makes one category's digest (and lead) from its recent items and stores it; null when it has none. */
  async refresh(category: string): Promise<TopicSummary | null> {
    // The items without their comments: a digest reads titles, descriptions and a body's head, and
    // parsing a discussed story's hundreds of comments for it cost the event loop each refresh.
    const page = await this.options.store.listItemSummaries({ category, limit: this.itemsPerTopic });
    const items = await this.options.store.getItemsWithoutComments(page.items.map((i) => i.id));
    if (!items.length) return null;
    const entries = items.map(digestEntry);
    const lead = await this.lead(category, items);
    this.stopping.signal.throwIfAborted();
    const { text, listed } = digestText(category, entries, lead, TOPIC_SUMMARY_MAX_CHARS);
    const summary: TopicSummary = {
      category,
      summary: text,
      itemIds: listed.map((e) => e.id),
      digest: listed,
      updatedAt: new Date().toISOString(),
    };
    await this.options.store.setMeta(topicSummaryKey(topicSlug(category)), JSON.stringify(summary));
    this.log.info(
      { roomId: topicRoomId(category), items: summary.itemIds.length, lead: lead.length > 0, chars: summary.summary.length },
      'topic summary updated',
    );
    return summary;
  }

  /** The model's overview of the items, or '' when it fails or only repeats their lines. */
  private async lead(category: string, items: { title: string; description: string }[]): Promise<string> {
    const input = items.map((i) => clip(sentence(i.title) + (i.description.trim() ? ` ${sentence(i.description)}` : ''), ITEM_LINE_CHARS)).join('\n');
    try {
      return leadFrom(await this.options.chat.summarize(input, `${category} news`, this.stopping.signal), input);
    } catch (err) {
      if (this.stopping.signal.aborted) return '';
      this.log.warn({ roomId: topicRoomId(category), err: (err as Error).message }, 'topic summary lead failed; storing the digest without it');
      return '';
    }
  }
}

function sentence(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return /[.!?…]$/.test(t) ? t : `${t}.`;
}
