/** A topic room's digest: a line and a link per recent item, within the room context, and what the room sees of it. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { DIGEST_ITEMS, digestEntry, entryText, itemLine, leadFrom, sentences } from '../../src/rag/topic-digest.js';
import { TOPIC_SUMMARY_MAX_CHARS, TopicSummaries } from '../../src/rag/topics.js';
import { itemPagePath } from '../../src/protocol/content.js';
import { storeResolver } from '../../src/rooms/resolver.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { tempStore } from '../helpers.js';
import { item } from '../store/contract.js';
import { ScriptedChat } from './fakes.js';

describe('sentences', () => {
  const patternWay = (text: string, min = 30) => {
    const out: string[] = [];
    let pending = '';
    for (const piece of text
      .replace(/\s+/g, ' ')
      .trim()
      .match(/\S.*?(?:[.!?…]+(?=\s|$)|$)/g) ?? []) {
      pending = pending ? `${pending} ${piece.trim()}` : piece.trim();
      if (pending.length >= min) {
        out.push(pending);
        pending = '';
      }
    }
    if (pending) out.push(pending);
    return out;
  };

  it('splits as the sentence pattern did, on every mix of the pieces involved', () => {
    const pieces = [' ', '  ', '\n', 'a', 'Word', '.', '!', '?', '…', '3.5', 'example.com', '. ', '?!', '\u00a0'];
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 3_000; n++) {
      const text = Array.from({ length: next() % 16 }, () => pieces[next() % pieces.length]).join('');
      for (const min of [0, 5]) expect(sentences(text, min), JSON.stringify(text)).toEqual(patternWay(text, min));
    }
  });

  it('splits 300,000 dots in linear time (the pattern tried each against the rest of the run: minutes of the event loop)', () => {
    expect(sentences(`A${'.'.repeat(300_000)}b end.`, 0)).toEqual([`A${'.'.repeat(300_000)}b end.`]);
  });
});

describe('item lines', () => {
  it('take the first sentence that is not the title, keeping numbers and hosts whole', () => {
    expect(sentences('It runs at 3.5 GHz on example.com today. Second one here, long enough to stand.')).toEqual([
      'It runs at 3.5 GHz on example.com today.',
      'Second one here, long enough to stand.',
    ]);
    expect(sentences('Dr. Ruth Amsel led the pilot at both hospitals. It ran nine months.')[0]).toBe('Dr. Ruth Amsel led the pilot at both hospitals.');
    expect(
      itemLine({ title: 'Bitcoin passes 100,000 dollars', description: 'Bitcoin passes 100,000 dollars. Markets rallied on the news all week.', body: '' }),
    ).toBe('Markets rallied on the news all week.');
    expect(itemLine({ title: 'T', description: '  ', body: 'From the body when there is no description, first sentence. Then more.' })).toBe(
      'From the body when there is no description, first sentence.',
    );
    expect(itemLine({ title: 'T', description: 'word '.repeat(200), body: '' }).length).toBeLessThanOrEqual(160);
    expect(itemLine({ title: 'T', description: '', body: '' })).toBe('');
  });

  it('link to the original only when it is a web address', () => {
    expect(digestEntry({ ...item('news_1'), url: 'javascript:alert(1)' } as never).url).toBeNull();
    expect(digestEntry({ ...item('news_1'), url: 'https://a.example/x' } as never).url).toBe('https://a.example/x');
    // Too long for the room context: the item's page links to it whole, rather than a cut address to another page.
    const long = digestEntry({ ...item('news_1'), url: `https://a.example/${'x'.repeat(200)}` } as never);
    expect(long.url).toBeNull();
    expect(entryText(long)).toContain(itemPagePath(long));
  });

  it('drop a lead that only repeats the lines (an extractive model) and keep one that says more', () => {
    const input = 'Bitcoin passes 100,000 dollars. Bitcoin hit a record as crypto markets rallied.\nEthereum upgrade ships. The upgrade lowers fees.';
    expect(leadFrom('Bitcoin hit a record as crypto markets rallied. The upgrade lowers fees.', input)).toBe('');
    expect(leadFrom('Crypto had a strong week: a record and cheaper fees.', input)).toBe('Crypto had a strong week: a record and cheaper fees.');
    expect(leadFrom('   ', input)).toBe('');
  });
});

describe('topic digests', () => {
  let store: SqliteStore;
  let closeStore: () => Promise<void>;

  beforeEach(async () => {
    const temp = tempStore();
    store = temp.store;
    closeStore = temp.close;
  });
  afterEach(async () => closeStore());

  it('list each recent item, newest first, with its date, a line and a link (the original, else its page here)', async () => {
    await store.upsertItem(
      item('news_old', {
        category: 'Space',
        title: 'Comet seen',
        description: 'A comet was seen over the bay on Monday night.',
        publishedAt: '2026-03-01T00:00:00Z',
      }),
    );
    await store.upsertItem(
      item('post_new', {
        category: 'Space',
        title: 'How to see the comet',
        url: null,
        description: 'Find a dark place and look north-west after sunset.',
        publishedAt: '2026-03-05T00:00:00Z',
      }),
    );
    const summary = (await new TopicSummaries({ store, chat: new LocalChatModel(), intervalMs: 60_000 }).refresh('Space'))!;
    expect(summary.summary).toBe(
      [
        'Recent in Space, newest first:',
        '- How to see the comet (5 Mar 2026): Find a dark place and look north-west after sunset. /post?id=post_new',
        '- Comet seen (1 Mar 2026): A comet was seen over the bay on Monday night. https://example.com/news_old',
      ].join('\n'),
    );
    expect(summary.itemIds).toEqual(['post_new', 'news_old']);
    expect(summary.digest).toEqual([
      {
        id: 'post_new',
        kind: 'post',
        title: 'How to see the comet',
        line: 'Find a dark place and look north-west after sunset.',
        url: null,
        publishedAt: '2026-03-05T00:00:00Z',
      },
      {
        id: 'news_old',
        kind: 'news',
        title: 'Comet seen',
        line: 'A comet was seen over the bay on Monday night.',
        url: 'https://example.com/news_old',
        publishedAt: '2026-03-01T00:00:00Z',
      },
    ]);

    // The room's context is the digest, and the room carries its entries for the page.
    const room = (await storeResolver(store)('topic_space'))!;
    expect(room.context).toBe(`Topic: Space\n\n${summary.summary}`);
    expect(room.digest).toEqual(summary.digest);
  });

  it('fits in the room context: as many items as fit, at most DIGEST_ITEMS, long fields cut', async () => {
    for (let i = 0; i < 20; i++) {
      await store.upsertItem(
        item(`news_${String(i).padStart(2, '0')}`, {
          category: 'Long',
          title: `Story ${i} ${'with a very long title '.repeat(20)}`,
          description: `${'A sentence that goes on and on '.repeat(30)}.`,
          url: `https://example.com/${'x'.repeat(500)}`,
          publishedAt: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
        }),
      );
    }
    const chat = new ScriptedChat({ summarize: async () => `An overview that says something new. ${'More words. '.repeat(100)}` });
    const summary = (await new TopicSummaries({ store, chat, intervalMs: 60_000 }).refresh('Long'))!;
    expect(summary.summary.length).toBeLessThanOrEqual(TOPIC_SUMMARY_MAX_CHARS);
    expect(summary.digest!.length).toBeGreaterThan(2);
    expect(summary.digest!.length).toBeLessThanOrEqual(DIGEST_ITEMS);
    expect(summary.itemIds).toEqual(summary.digest!.map((e) => e.id));
    expect(summary.itemIds[0]).toBe('news_19');
    for (const e of summary.digest!) expect(summary.summary).toContain(`- ${e.title}`);
    const room = (await storeResolver(store)('topic_long'))!;
    expect(room.context.length).toBeLessThanOrEqual(2000);
    expect(room.context).toContain('Recent in Long, newest first:');
  });

  it('is more than one sentence of one item with the built-in model', async () => {
    for (const [i, title] of ['Rover lands on Mars', 'Telescope finds water', 'Rocket reuse record'].entries()) {
      await store.upsertItem(item(`news_s${i}`, { category: 'Space', title, description: `${title} after years of work. Engineers celebrated.` }));
    }
    const summary = (await new TopicSummaries({ store, chat: new LocalChatModel(), intervalMs: 60_000 }).refresh('Space'))!;
    const lines = summary.summary.split('\n').filter((l) => l.startsWith('- '));
    expect(lines).toHaveLength(3);
    for (const title of ['Rover lands on Mars', 'Telescope finds water', 'Rocket reuse record']) expect(summary.summary).toContain(title);
    expect(lines.every((l) => /https:\/\/example\.com\/news_s\d$/.test(l))).toBe(true);
  });

  it('keeps markup in titles as text for the page to escape, on one line each', async () => {
    await store.upsertItem(
      item('news_x', {
        category: 'Web',
        title: '<script>alert(1)</script>\nSecond line',
        description: '<img src=x onerror=alert(1)> happened today, they say.',
      }),
    );
    const summary = (await new TopicSummaries({ store, chat: new LocalChatModel(), intervalMs: 60_000 }).refresh('Web'))!;
    expect(summary.digest![0].title).toBe('<script>alert(1)</script> Second line');
    expect(summary.summary.split('\n')).toHaveLength(2);
  });
});
