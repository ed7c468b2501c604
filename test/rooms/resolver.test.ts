/** The store-backed RoomResolver: content rooms, topic rooms, and what is not a room. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CloseCode } from '../../src/protocol/close-codes.js';
import { RoomHub } from '../../src/rooms/hub.js';
import { Identity } from '../../src/rooms/identity.js';
import { InProcessBus } from '../../src/rooms/in-process-bus.js';
import { TOPIC_CATEGORIES_FRESH_MS, TopicCategories, storeResolver } from '../../src/rooms/resolver.js';
import type { Connection } from '../../src/rooms/types.js';
import { topicSummaryKey } from '../../src/rooms/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { countingStore as counting, tempStore } from '../helpers.js';
import { item } from '../store/contract.js';
import { until } from './helpers.js';

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

  it('describes a content room without reading its comments', async () => {
    const comments = Array.from({ length: 3 }, (_, i) => ({ by: `user${i}`, text: `Comment ${i}`, time: i + 1 }));
    await store.upsertItem(item('news_3', { title: 'Discussed', description: 'What it is about.', comments }));
    const counted = counting(store);
    const info = await storeResolver(counted.store)('news_3');
    expect(info).toMatchObject({ id: 'news_3', kind: 'news', title: 'Discussed', context: 'Discussed\n\nWhat it is about.' });
    // The room's view shows none of the comments: a thread's hundreds of them are not read for it.
    expect([...counted.called].filter((m) => ['getItem', 'getItems'].includes(m))).toEqual([]);
    expect(await storeResolver(store)('news_missing')).toBeNull();
  });

  it('describes a topic room by its slug, from recent titles until a summary exists', async () => {
    const counted = counting(store);
    const resolve = storeResolver(counted.store, 2000);
    expect(await resolve('topic_tech-science')).toEqual({
      id: 'topic_tech-science',
      kind: 'topic',
      title: 'Topic: Tech & Science',
      url: null,
      context: 'Topic: Tech & Science\n\nRecent in Tech & Science: First; Second',
    });
    // The titles come from the items' summaries: no body or comments is read for them.
    expect([...counted.called].filter((m) => ['listItems', 'getItem', 'getItems'].includes(m))).toEqual([]);
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

describe('topic lookups read the categories once per freshness window', () => {
  let store: SqliteStore;
  let closeStore: () => Promise<void>;
  beforeEach(async () => {
    // Only the clock is fake: the store and the hub keep their own timers.
    vi.useFakeTimers({ toFake: ['Date'] });
    const temp = tempStore();
    store = temp.store;
    closeStore = temp.close;
    await store.upsertItem(item('news_1', { title: 'First', category: 'Tech & Science' }));
  });
  afterEach(async () => {
    vi.useRealTimers();
    await closeStore();
  });

  it('answers many unknown topics, at once and one after another, from one read', async () => {
    const { store: counted, reads } = counting(store);
    const resolve = storeResolver(counted);
    const together = await Promise.all(Array.from({ length: 50 }, (_, i) => resolve(`topic_nope-${i}`)));
    expect(together.every((r) => r === null)).toBe(true);
    for (let i = 0; i < 200; i++) expect(await resolve(`topic_other-${i}`)).toBeNull();
    expect((await resolve('topic_tech-science'))?.title).toBe('Topic: Tech & Science');
    expect(reads()).toBe(1);
  });

  it('finds a new category once the window has passed, and reads again only then', async () => {
    const { store: counted, reads } = counting(store);
    const resolve = storeResolver(counted);
    expect(await resolve('topic_gardening')).toBeNull();
    await store.upsertItem(item('post_9', { title: 'Tomatoes', category: 'Gardening' }));
    vi.advanceTimersByTime(TOPIC_CATEGORIES_FRESH_MS - 1);
    expect(await resolve('topic_gardening')).toBeNull();
    expect(reads()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await resolve('topic_gardening')).toMatchObject({ id: 'topic_gardening', title: 'Topic: Gardening' });
    expect(reads()).toBe(2);
  });

  it('keeps no failed read: the next lookup reads again', async () => {
    let fail = true;
    const categories = new TopicCategories({
      listCategories: async () => {
        if (fail) throw new Error('store down');
        return [{ category: 'Tech', count: 1 }];
      },
    });
    await expect(Promise.all([categories.category('tech'), categories.category('x')])).rejects.toThrow('store down');
    fail = false;
    expect(await categories.category('tech')).toBe('Tech');
  });

  it('costs one read for a flood of hellos to unknown topic rooms, each closed with 4404', async () => {
    const { store: counted, reads } = counting(store);
    const hub = new RoomHub({
      store: counted,
      identity: new Identity(Buffer.alloc(32, 7)),
      bus: new InProcessBus(),
      options: { maxConnectionsPerIp: 100_000 },
    });
    const conns: (Connection & { closedWith: number | null })[] = [];
    for (let i = 0; i < 40; i++) {
      const conn = {
        id: `c${i}`,
        bufferedAmount: 0,
        closedWith: null as number | null,
        send() {},
        close(code: number) {
          conn.closedWith = code;
        },
      };
      conns.push(conn);
      hub.connect(conn, { roomId: `topic_missing-${i}`, ip: `10.1.0.${i}` })!.receive(JSON.stringify({ type: 'hello', name: `m${i}` }));
    }
    await until(() => conns.every((c) => c.closedWith !== null));
    expect(conns.every((c) => c.closedWith === CloseCode.ROOM_NOT_FOUND)).toBe(true);
    expect(reads()).toBe(1);
    await hub.close();
  });
});
