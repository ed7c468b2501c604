/** The store-backed RoomResolver: content rooms, topic rooms, and what is not a room. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeResolver } from '../../src/rooms/resolver.js';
import { topicSummaryKey } from '../../src/rooms/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { tempStore } from '../helpers.js';
import { item } from '../store/contract.js';

describe('storeResolver', () => {
  let store: SqliteStore;
  let closeStore: () => Promise<void>;
  beforeEach(async () => {
    const temp = tempStore();
    store = temp.store;
    closeStore = temp.close;
    await store.upsertItem(item('news_1', { title: 'First', category: 'Tech & Science', description: '', publishedAt: '2026-01-02T00:00:00.000Z' }));
    await store.upsertItem(item('video_2', { title: 'Second', category: 'Tech & Science' }));
  });
  afterEach(async () => {
    await closeStore();
  });

  it('describes a content room from the item, falling back to the body', async () => {
    const info = await storeResolver(store)('news_1');
    expect(info).toMatchObject({ id: 'news_1', kind: 'news', title: 'First', url: 'https://example.com/news_1' });
    expect(info!.context.startsWith('First\n\nBody of news_1.')).toBe(true);
  });

  it('describes a topic room by its slug, from recent titles until a summary exists', async () => {
    const resolve = storeResolver(store, 2000);
    expect(await resolve('topic_tech-science')).toEqual({
      id: 'topic_tech-science',
      kind: 'topic',
      title: 'Topic: Tech & Science',
      url: null,
      context: 'Topic: Tech & Science\n\nRecent in Tech & Science: First; Second',
    });
    await store.setMeta(
      topicSummaryKey('tech-science'),
      JSON.stringify({ category: 'Tech & Science', summary: 'Things happened.', itemIds: [], updatedAt: '' }),
    );
    expect((await resolve('topic_tech-science'))!.context).toBe('Topic: Tech & Science\n\nThings happened.');
    await store.setMeta(topicSummaryKey('tech-science'), 'not json');
    expect((await resolve('topic_tech-science'))!.context).toContain('Recent in Tech & Science');
  });

  it('knows nothing else', async () => {
    const resolve = storeResolver(store);
    for (const id of ['news_2', 'topic_', 'topic_Tech-Science', 'topic_tech', 'room_1', '', `news_${'x'.repeat(300)}`])
      expect(await resolve(id), id).toBeNull();
  });
});
