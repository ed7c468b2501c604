/** Topic room summaries: a digest of each category's recent items under the ChatModel's lead, stored, refreshed, read by the resolver. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { TopicSummaries } from '../../src/rag/topics.js';
import { storeResolver } from '../../src/rooms/resolver.js';
import { topicSummaryKey, type TopicSummary } from '../../src/rooms/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { countingStore, tempStore } from '../helpers.js';
import { item } from '../store/contract.js';
import { ScriptedChat } from './fakes.js';
import { silentLogger } from '../../src/logger.js';

let store: SqliteStore;
let closeStore: () => Promise<void>;

beforeEach(async () => {
  const temp = tempStore();
  store = temp.store;
  closeStore = temp.close;
  await store.upsertItem(
    item('news_1', { category: 'Crypto', title: 'Bitcoin passes 100,000 dollars', description: 'Bitcoin hit a record as crypto markets rallied.' }),
  );
  await store.upsertItem(item('news_2', { category: 'Crypto', title: 'Ethereum upgrade ships', description: 'The upgrade lowers fees for crypto users.' }));
  await store.upsertItem(item('news_3', { category: 'World News', title: 'Elections in Spain', description: 'Voters went to the polls.' }));
});

afterEach(async () => {
  await closeStore();
});

async function stored(slug: string): Promise<TopicSummary | null> {
  const raw = await store.getMeta(topicSummaryKey(slug));
  return raw ? (JSON.parse(raw) as TopicSummary) : null;
}

describe('topic summaries', () => {
  it('summarises each category from its recent titles and descriptions and stores JSON', async () => {
    const chat = new ScriptedChat({ summarize: async (text) => `SUMMARY(${text.split('\n').length})` });
    const topics = new TopicSummaries({ store, chat, intervalMs: 60_000 });
    const out = await topics.refreshAll();
    expect(out.map((s) => s.category).sort()).toEqual(['Crypto', 'World News']);
    expect(chat.summarized.find((t) => t.includes('Bitcoin passes 100,000 dollars. Bitcoin hit a record'))).toBeDefined();
    const crypto = await stored('crypto');
    expect(crypto).toMatchObject({ category: 'Crypto' });
    expect(crypto!.summary).toMatch(/^SUMMARY\(2\)\n\nRecent in Crypto, newest first:\n- /);
    expect(crypto!.itemIds.sort()).toEqual(['news_1', 'news_2']);
    expect(Number.isNaN(Date.parse(crypto!.updatedAt))).toBe(false);
    expect(await stored('world-news')).toMatchObject({ category: 'World News' });
  });

  it('reads the items it digests without their comments', async () => {
    const comments = Array.from({ length: 3 }, (_, i) => ({ by: `user${i}`, text: `Comment ${i}`, time: i + 1 }));
    await store.upsertItem(
      item('news_4', { category: 'Crypto', title: 'Stablecoins under review', description: '', body: 'Regulators asked for reports.', comments }),
    );
    const { store: counted, called } = countingStore(store);
    const topics = new TopicSummaries({ store: counted, chat: new ScriptedChat({ summarize: async () => 'lead' }), intervalMs: 60_000 });
    const crypto = await topics.refresh('Crypto');
    // The digest still has what it needs of each item: a body's head where the description is empty.
    expect(crypto!.digest!.find((e) => e.id === 'news_4')).toMatchObject({ title: 'Stablecoins under review', line: 'Regulators asked for reports.' });
    expect([...called].filter((m) => ['listItems', 'getItem', 'getItems'].includes(m))).toEqual([]);
  });

  it('generates only missing summaries at start, regenerates on its timer, and stops on close', async () => {
    await store.setMeta(topicSummaryKey('crypto'), JSON.stringify({ category: 'Crypto', summary: 'kept', itemIds: [], updatedAt: '2020-01-01T00:00:00.000Z' }));
    const chat = new ScriptedChat({ summarize: async () => `fresh ${chat.summarized.length}` });
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const topics = new TopicSummaries({ store, chat, intervalMs: 1000 });
      topics.start();
      await topics.idle();
      expect((await stored('crypto'))!.summary).toBe('kept');
      expect((await stored('world-news'))!.summary).toMatch(/^fresh 1\n/);
      vi.advanceTimersByTime(1000);
      await topics.idle();
      expect((await stored('crypto'))!.summary).not.toBe('kept');
      await topics.close();
      const calls = chat.summarized.length;
      vi.advanceTimersByTime(5000);
      await topics.idle();
      expect(chat.summarized.length).toBe(calls);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops a summary under way when it closes, and asks for no more (a shutdown waited for the model, topic after topic)', async () => {
    let asked = 0;
    let called!: () => void;
    const summarizing = new Promise<void>((resolve) => (called = resolve));
    class SlowChat extends ScriptedChat {
      override summarize(_text: string, _query?: string, signal?: AbortSignal): Promise<string> {
        asked++;
        called();
        return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
      }
    }
    const topics = new TopicSummaries({ store, chat: new SlowChat(), intervalMs: 60_000 });
    topics.start();
    await summarizing;
    await topics.close();
    expect(asked).toBe(1);
    expect(await stored('crypto')).toBeNull();
    expect(await stored('world-news')).toBeNull();
  });

  it('stores the digest without a lead when the model fails for one topic', async () => {
    const chat = new ScriptedChat({ summarize: async (text) => (text.includes('Bitcoin') ? Promise.reject(new Error('down')) : 'An overview.') });
    const warnings: string[] = [];
    const log = { ...silentLogger, warn: (_d: unknown, m?: string) => void warnings.push(m ?? '') };
    const out = await new TopicSummaries({ store, chat, intervalMs: 60_000, log }).refreshAll();
    expect(out.map((s) => s.category).sort()).toEqual(['Crypto', 'World News']);
    expect((await stored('crypto'))!.summary).toMatch(/^Recent in Crypto, newest first:\n- /);
    expect((await stored('world-news'))!.summary).toMatch(/^An overview\.\n\nRecent in World News/);
    expect(warnings).toEqual([expect.stringMatching(/lead failed/)]);
  });

  it('becomes the topic room context with the local model', async () => {
    await new TopicSummaries({ store, chat: new LocalChatModel(), intervalMs: 60_000 }).refreshAll();
    const room = await storeResolver(store)('topic_crypto');
    expect(room).toMatchObject({ id: 'topic_crypto', kind: 'topic' });
    expect(room!.context).toMatch(/Bitcoin|Ethereum/);
    expect(room!.context.length).toBeLessThanOrEqual(2000);
  });

  it('validates its options by name', () => {
    expect(() => new TopicSummaries({ store, chat: new ScriptedChat(), intervalMs: 10 })).toThrow(/intervalMs/);
    expect(() => new TopicSummaries({ store, chat: new ScriptedChat(), intervalMs: 1000, itemsPerTopic: 0 })).toThrow(/itemsPerTopic/);
  });
});
