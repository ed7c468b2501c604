/**
 * The Store contract: every implementation runs this suite (SQLite now; PostgreSQL with the
 * scale-out work). `make` returns a fresh, empty store; `cleanup` disposes of it.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { summarizeItem } from '../../src/content/items.js';
import type { ContentItem } from '../../src/content/types.js';
import { privateScope } from '../../src/memory/scopes.js';
import type { MemoryChunk, NewMemoryChunk } from '../../src/memory/types.js';
import type { Message } from '../../src/protocol/messages.js';
import { ClaimedMessages, ForgottenExchange, MovedMessages, type IngestJob, type JobRunner, type Store, type Thread } from '../../src/store/types.js';
import { MAX_MERGE_HOPS } from '../../src/store/thread-survivor.js';
import { CHILD_IDS_LISTED } from '../../src/store/thread-rows.js';
import { source, sourcesContract } from './sources-contract.js';
import { createThread } from './new-thread.js';

export function item(id: string, over: Partial<ContentItem> = {}): ContentItem {
  const kind = id.split('_')[0] as ContentItem['kind'];
  return {
    id,
    kind,
    title: `Title of ${id}`,
    url: `https://example.com/${id}`,
    description: `About ${id}`,
    body: `Body of ${id}. `.repeat(20),
    comments: [],
    category: 'Tech',
    publishedAt: '2026-01-01T00:00:00.000Z',
    image: null,
    author: 'Ada',
    channel: null,
    thumbnail: null,
    siteName: 'Example',
    source: 'api',
    ...over,
  };
}

const user = (id: string) => ({ id, name: id, kind: 'user' as const });

export function storeContract(name: string, make: () => Promise<Store>, cleanup: (s: Store) => Promise<void>): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await make();
    });
    afterEach(async () => {
      await cleanup(store);
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    describe('items', () => {
      it('creates, then leaves an identical item unchanged, then updates on change', async () => {
        const a = item('news_1');
        expect((await store.upsertItem(a)).status).toBe('created');
        const first = await store.getItem('news_1');
        expect((await store.upsertItem(a)).status).toBe('unchanged');
        const changed = await store.upsertItem({ ...a, title: 'New title' });
        expect(changed.status).toBe('updated');
        expect(changed.item.title).toBe('New title');
        expect(changed.item.hash).not.toBe(first!.hash);
        expect(changed.item.createdAt).toBe(first!.createdAt);
        expect(await store.countItems()).toBe(1);
      });

      it('round-trips every field', async () => {
        const a = item('video_x', {
          comments: [{ by: 'pg', text: 'Nice & <b>', time: 1 }],
          channel: 'Chan',
          thumbnail: '/img/t.jpg',
          image: '/img/i.jpg',
          category: null,
          publishedAt: null,
          url: null,
        });
        await store.upsertItem(a);
        const got = await store.getItem('video_x');
        expect(got).toMatchObject(a);
        expect(got!.hash).toMatch(/^[0-9a-f]{64}$/);
      });

      it('returns null for a missing item', async () => {
        expect(await store.getItem('news_nope')).toBeNull();
      });

      it('reads several whole items at once, in the order asked, leaving out unknown ids', async () => {
        await store.upsertItem(item('news_w1', { title: 'One', body: 'First body.' }));
        await store.upsertItem(item('post_w2', { title: 'Two', comments: [{ by: 'pg', text: 'A comment.', time: 2 }] }));
        const got = await store.getItems(['post_w2', 'news_nope', 'news_w1']);
        expect(got.map((i) => i.id)).toEqual(['post_w2', 'news_w1']);
        expect(got[0]).toEqual(await store.getItem('post_w2'));
        expect(got[1].body).toBe('First body.');
        expect(await store.getItems([])).toEqual([]);
      });

      it('reads several items without their comments, in the order asked, leaving out unknown ids', async () => {
        await store.upsertItem(item('news_w1', { title: 'One', comments: [{ by: 'ann', text: 'First!', time: 1 }] }));
        await store.upsertItem(item('post_w2', { title: 'Two' }));
        const got = await store.getItemsWithoutComments(['post_w2', 'news_nope', 'news_w1']);
        expect(got.map((i) => i.id)).toEqual(['post_w2', 'news_w1']);
        const { comments, ...rest } = (await store.getItem('news_w1'))!;
        expect(comments).toHaveLength(1);
        expect(got[1]).toEqual(rest);
        expect(got[1]).not.toHaveProperty('comments');
        expect(await store.getItemsWithoutComments([])).toEqual([]);
      });

      it('pages newest first with a cursor, filtered by kind and category', async () => {
        for (let i = 0; i < 7; i++) {
          await store.upsertItem(item(`news_${i}`, { publishedAt: `2026-01-0${i + 1}T00:00:00.000Z`, category: i % 2 ? 'Tech' : 'Politics' }));
        }
        await store.upsertItem(item('post_a', { publishedAt: '2026-02-01T00:00:00.000Z' }));
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.listItems({ kind: 'news', limit: 3, cursor });
          seen.push(...page.items.map((i) => i.id));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        expect(seen).toEqual(['news_6', 'news_5', 'news_4', 'news_3', 'news_2', 'news_1', 'news_0']);
        const tech = await store.listItems({ category: 'tech', limit: 10 });
        expect(tech.items.map((i) => i.id)).toEqual(['post_a', 'news_5', 'news_3', 'news_1']);
        expect(await store.countItems('news')).toBe(7);
        expect(await store.listCategories()).toEqual([
          { category: 'Politics', count: 4 },
          { category: 'Tech', count: 4 },
        ]);
      });

      it('finds a category by its own name when it has a capital outside ASCII, folding ASCII letters only as SQLite’s NOCASE does', async () => {
        await store.upsertItem(item('news_eco', { category: 'ÉCONOMIE' }));
        await store.upsertItem(item('news_sci', { category: 'Наука' }));
        await store.upsertItem(item('news_tech', { category: 'Tech' }));
        const ids = async (category: string) => (await store.listItems({ category, limit: 10 })).items.map((i) => i.id);
        expect(await ids('ÉCONOMIE')).toEqual(['news_eco']);
        expect(await ids('ÉconoMIE')).toEqual(['news_eco']);
        expect(await ids('Наука')).toEqual(['news_sci']);
        expect(await ids('TECH')).toEqual(['news_tech']);
        // Both stores fold ASCII only: é and É, н and Н are different letters to them.
        expect(await ids('économie')).toEqual([]);
        expect(await ids('наука')).toEqual([]);
        expect((await store.listItemSummaries({ category: 'ÉCONOMIE', limit: 10 })).items.map((i) => i.id)).toEqual(['news_eco']);
      });

      it('stores an item whose url is longer than an index entry may be', async () => {
        // Random characters: PostgreSQL compresses a repetitive url enough to fit.
        const url = `https://example.com/${randomBytes(6_000).toString('base64url')}`;
        expect((await store.upsertItem(item('news_long_url', { url }))).status).toBe('created');
        expect((await store.getItem('news_long_url'))?.url).toBe(url);
      });

      it('keeps an undated item where it was listed when it is updated, and dates it when an update gives it a publication time', async () => {
        const tick = () => new Promise((r) => setTimeout(r, 5));
        for (const id of ['news_old', 'news_mid', 'news_new']) {
          await store.upsertItem(item(id, { publishedAt: null }));
          await tick();
        }
        const ids = async () => (await store.listItems({ limit: 10 })).items.map((i) => i.id);
        const page1 = await store.listItems({ limit: 1 });
        expect(await ids()).toEqual(['news_new', 'news_mid', 'news_old']);
        expect((await store.upsertItem(item('news_old', { publishedAt: null, title: 'Fixed typo' }))).status).toBe('updated');
        expect(await ids()).toEqual(['news_new', 'news_mid', 'news_old']);
        // A reader holding a cursor from before the update still meets it.
        expect((await store.listItems({ limit: 10, cursor: page1.nextCursor! })).items.map((i) => i.id)).toEqual(['news_mid', 'news_old']);
        await store.upsertItem(item('news_old', { publishedAt: '2030-01-01T00:00:00.000Z' }));
        expect(await ids()).toEqual(['news_old', 'news_new', 'news_mid']);
        await store.upsertItem(item('news_old', { publishedAt: null, title: 'Undated again' }));
        expect(await ids()).toEqual(['news_new', 'news_mid', 'news_old']);
      });

      it('rejects a forged cursor with ERR_INVALID_CURSOR', async () => {
        await expect(store.listItems({ limit: 5, cursor: 'garbage!' })).rejects.toMatchObject({ code: 'ERR_INVALID_CURSOR' });
        await expect(store.listItemSummaries({ limit: 5, cursor: 'garbage!' })).rejects.toMatchObject({ code: 'ERR_INVALID_CURSOR' });
      });

      it('lists the same pages as summaries, read without bodies, with the comments counted', async () => {
        const comments = [1, 2, 3].map((n) => ({ by: `c${n}`, text: `comment ${n}`, time: n }));
        for (let i = 0; i < 5; i++) {
          await store.upsertItem(
            item(`news_${i}`, { publishedAt: `2026-01-0${i + 1}T00:00:00.000Z`, category: i % 2 ? 'Tech' : 'Politics', comments: comments.slice(0, i % 4) }),
          );
        }
        for (const query of [{ limit: 2 }, { kind: 'news' as const, limit: 10 }, { category: 'tech', limit: 10 }]) {
          let cursor: string | undefined;
          do {
            const [whole, summaries] = await Promise.all([store.listItems({ ...query, cursor }), store.listItemSummaries({ ...query, cursor })]);
            expect(summaries).toEqual({ items: whole.items.map(summarizeItem), nextCursor: whole.nextCursor });
            cursor = whole.nextCursor ?? undefined;
          } while (cursor);
        }
        expect((await store.listItemSummaries({ limit: 10 })).items.map((s) => s.commentCount)).toEqual([0, 3, 2, 1, 0]);
      });
    });

    describe('deleting items', () => {
      it('deletes an item with its chunks, returning their row ids, and leaves the others', async () => {
        await store.putItems([
          {
            item: item('news_1'),
            chunks: [
              { ord: 0, part: 'title', text: 'one title' },
              { ord: 1, part: 'body', text: 'one body' },
            ],
          },
          { item: item('news_2'), chunks: [{ ord: 0, part: 'title', text: 'two title' }] },
        ]);
        const rows = (await store.chunksOfItem('news_1')).map((c) => c.rowId);
        expect(await store.deleteItem('news_1')).toEqual(rows);
        expect(await store.getItem('news_1')).toBeNull();
        expect(await store.getChunks(rows)).toEqual([]);
        expect(await store.searchText('one', 10)).toEqual([]);
        expect((await store.chunksOfItem('news_2')).length).toBe(1);
        expect(await store.deleteItem('news_1')).toBeNull();
      });
    });

    describe('putItems', () => {
      const chunks = (text: string) => [{ ord: 0, part: 'body' as const, text }];

      it('writes items and their chunks, reporting each status and chunk change', async () => {
        const first = await store.putItems([
          { item: item('news_p1'), chunks: chunks('one') },
          { item: item('news_p2'), chunks: chunks('two') },
        ]);
        expect(first.map((r) => [r.id, r.status, r.added.length, r.removed.length])).toEqual([
          ['news_p1', 'created', 1, 0],
          ['news_p2', 'created', 1, 0],
        ]);
        expect(first[0].added[0]).toMatchObject({ itemId: 'news_p1', text: 'one' });
        const again = await store.putItems([
          { item: item('news_p1'), chunks: chunks('one') },
          { item: item('news_p2', { title: 'Changed' }), chunks: chunks('two, changed') },
        ]);
        expect(again[0]).toMatchObject({ status: 'unchanged', added: [], removed: [] });
        expect(again[1]).toMatchObject({ status: 'updated', removed: [first[1].added[0].rowId] });
        expect((await store.chunksOfItem('news_p2')).map((c) => c.text)).toEqual(['two, changed']);
      });

      it('writes none of the items when one of them fails', async () => {
        await expect(
          store.putItems([
            { item: item('news_q1'), chunks: chunks('fine') },
            // NOT NULL text: the store refuses the second item's chunk.
            { item: item('news_q2'), chunks: [{ ord: 0, part: 'body', text: null as unknown as string }] },
          ]),
        ).rejects.toThrow();
        expect(await store.getItem('news_q1')).toBeNull();
        expect(await store.getItem('news_q2')).toBeNull();
        expect(await store.countChunks()).toBe(0);
      });
    });

    describe('chunks', () => {
      beforeEach(async () => {
        await store.upsertItem(item('news_c', { category: 'Science' }));
      });

      it('keeps unchanged chunks, replaces changed ones and reports both', async () => {
        const first = await store.replaceChunks('news_c', [
          { ord: 0, part: 'title', text: 'Title' },
          { ord: 1, part: 'body', text: 'alpha beta' },
          { ord: 2, part: 'comment', text: 'gamma', commentBy: 'pg' },
        ]);
        expect(first.added).toHaveLength(3);
        expect(first.removed).toEqual([]);
        expect(first.added[2]).toMatchObject({
          itemId: 'news_c',
          itemKind: 'news',
          category: 'Science',
          part: 'comment',
          commentBy: 'pg',
          sourceType: 'document',
        });
        const second = await store.replaceChunks('news_c', [
          { ord: 0, part: 'title', text: 'Title' },
          { ord: 1, part: 'body', text: 'alpha delta' },
        ]);
        expect(second.added.map((c) => c.text)).toEqual(['alpha delta']);
        expect(second.removed.sort()).toEqual([first.added[1].rowId, first.added[2].rowId].sort());
        const now = await store.chunksOfItem('news_c');
        expect(now.map((c) => c.text)).toEqual(['Title', 'alpha delta']);
        expect(now[0].rowId).toBe(first.added[0].rowId);
        expect(await store.countChunks()).toBe(2);
      });

      it("gives each chunk row its item's kind, title, url, date, source and category, as the item has them now", async () => {
        const [row] = (await store.replaceChunks('news_c', [{ ord: 0, part: 'body', text: 'alpha' }])).added;
        const stored = (await store.getItem('news_c'))!;
        expect(row).toMatchObject({
          itemKind: 'news',
          itemTitle: stored.title,
          itemUrl: stored.url,
          itemPublishedAt: stored.publishedAt,
          itemSource: stored.source,
          category: stored.category,
        });
        await store.upsertItem({
          ...stored,
          title: 'Renamed',
          url: 'https://example.com/renamed',
          publishedAt: '2027-02-03T00:00:00.000Z',
          category: 'Tech',
          source: 'reddit',
        });
        expect((await store.getChunks([row.rowId]))[0]).toMatchObject({
          itemTitle: 'Renamed',
          itemUrl: 'https://example.com/renamed',
          itemPublishedAt: '2027-02-03T00:00:00.000Z',
          itemSource: 'reddit',
          category: 'Tech',
          text: 'alpha',
        });
      });

      it('fails for an unknown item without writing anything', async () => {
        await expect(store.replaceChunks('news_missing', [{ ord: 0, part: 'body', text: 'x' }])).rejects.toMatchObject({ code: 'ERR_CONTENT_NOT_FOUND' });
        expect(await store.countChunks()).toBe(0);
      });

      it('gets chunks by row id in the order asked and scans in row order', async () => {
        const { added } = await store.replaceChunks('news_c', [
          { ord: 0, part: 'body', text: 'one' },
          { ord: 1, part: 'body', text: 'two' },
          { ord: 2, part: 'body', text: 'three' },
        ]);
        const ids = added.map((c) => c.rowId);
        expect((await store.getChunks([ids[2], ids[0]])).map((c) => c.text)).toEqual(['three', 'one']);
        expect((await store.scanChunks(ids[0], 10)).map((c) => c.text)).toEqual(['two', 'three']);
      });

      it('finds chunks by text, best first, optionally by kind', async () => {
        await store.upsertItem(item('post_p'));
        const a = await store.replaceChunks('news_c', [{ ord: 0, part: 'body', text: 'The quantum computer uses qubits and qubits again' }]);
        const b = await store.replaceChunks('post_p', [{ ord: 0, part: 'body', text: 'A note on qubits' }]);
        await store.replaceChunks('news_c', [
          { ord: 0, part: 'body', text: 'The quantum computer uses qubits and qubits again' },
          { ord: 1, part: 'body', text: 'Nothing related here' },
        ]);
        const hits = await store.searchText('qubits?', 10);
        expect(hits.map((h) => h.rowId)).toEqual([a.added[0].rowId, b.added[0].rowId]);
        const posts = await store.searchText('qubits', 10, ['post']);
        expect(posts.map((h) => h.rowId)).toEqual([b.added[0].rowId]);
        expect(await store.searchText('   ', 10)).toEqual([]);
      });

      it('finds a word whatever the case and accents of its letters, as SQLite’s unicode61 folds them (Москве, École, ÜBER)', async () => {
        const { added } = await store.replaceChunks('news_c', [{ ord: 0, part: 'body', text: 'Встреча в Москве. École publique, ÜBER alles.' }]);
        for (const query of ['москве', 'МОСКВЕ', 'ecole', 'école', 'uber', 'über']) {
          expect(
            (await store.searchText(query, 5)).map((h) => h.rowId),
            query,
          ).toEqual([added[0].rowId]);
        }
      });
    });

    describe('embedding cache', () => {
      it('stores vectors by model and text hash', async () => {
        const v = new Float32Array([0.5, -0.25, 1e-7]);
        await store.putEmbeddings('m1', [{ textHash: 'h1', vector: v }]);
        const got = await store.getEmbeddings('m1', ['h1', 'h2']);
        expect([...got.keys()]).toEqual(['h1']);
        expect(Array.from(got.get('h1')!)).toEqual(Array.from(v));
        expect((await store.getEmbeddings('m2', ['h1'])).size).toBe(0);
        expect(await store.embeddingModels()).toEqual([{ model: 'm1', dimensions: 3, count: 1 }]);
      });
    });

    describe('messages', () => {
      it('returns a message with a NUL in its text or author name as it gives it back later, U+FFFD for the NUL', async () => {
        const t = await store.ensureMainThread('news_1');
        const { message } = await store.appendMessage({
          roomId: 'news_1',
          threadId: t.id,
          author: { id: 'u', name: 'N\u0000', kind: 'user' },
          text: 'a\u0000b',
        });
        expect(message).toMatchObject({ text: 'a\uFFFDb', author: { name: 'N\uFFFD' } });
        expect((await store.messagesAfter('news_1', 0, 1))[0]).toEqual(message);
        const [imported] = await store.appendMessages([{ roomId: 'news_1', threadId: t.id, author: { id: 'u', name: 'N', kind: 'user' }, text: '\u0000' }]);
        expect(imported.message.text).toBe('\uFFFD');
        expect((await store.messagesAfter('news_1', 1, 1))[0]).toEqual(imported.message);
      });

      it('numbers messages per room and keeps clientIds idempotent', async () => {
        const t = await store.ensureMainThread('news_1');
        const a = await store.appendMessage({ roomId: 'news_1', threadId: t.id, author: user('u1'), text: 'hi', clientId: 'c1' });
        const b = await store.appendMessage({ roomId: 'news_1', threadId: t.id, author: user('u2'), text: 'yo', clientId: 'c1' });
        const other = await store.appendMessage({ roomId: 'news_2', threadId: t.id, author: user('u1'), text: 'elsewhere' });
        const again = await store.appendMessage({ roomId: 'news_1', threadId: t.id, author: user('u1'), text: 'hi (resent)', clientId: 'c1' });
        expect([a.message.seq, b.message.seq, other.message.seq]).toEqual([1, 2, 1]);
        expect(again.duplicate).toBe(true);
        expect(again.message).toEqual(a.message);
        expect(await store.lastSeq('news_1')).toBe(2);
        expect(await store.lastSeq('news_none')).toBe(0);
        // Several at once: the stored ones are found again, the new ones numbered on.
        const batch = await store.appendMessages([
          { roomId: 'news_1', threadId: t.id, author: user('u1'), text: 'hi (in a batch)', clientId: 'c1' },
          { roomId: 'news_1', threadId: t.id, author: user('u1'), text: 'new', clientId: 'c2' },
          { roomId: 'news_1', threadId: t.id, author: user('u1'), text: 'new again', clientId: 'c2' },
        ]);
        expect(batch.map((m) => [m.duplicate, m.message.seq, m.message.text])).toEqual([
          [true, 1, 'hi'],
          [false, 3, 'new'],
          [true, 3, 'new'],
        ]);
        expect(await store.lastSeq('news_1')).toBe(3);
      });

      it('says which of an author’s clientIds a room holds, in the order asked', async () => {
        const t = await store.ensureMainThread('news_1');
        await store.appendMessage({ roomId: 'news_1', threadId: t.id, author: user('u1'), text: 'hi', clientId: 'c1' });
        await store.appendMessage({ roomId: 'news_1', threadId: t.id, author: user('u2'), text: 'no clientId' });
        const asked = [
          { authorId: 'u2', clientId: 'c1' },
          { authorId: 'u1', clientId: 'c1' },
          { authorId: 'u1', clientId: 'c2' },
        ];
        expect(await store.storedClientIds('news_1', asked)).toEqual([false, true, false]);
        expect(await store.storedClientIds('news_2', asked)).toEqual([false, false, false]);
        expect(await store.storedClientIds('news_1', [])).toEqual([]);
      });

      it('replays after a seq and returns the recent tail oldest first', async () => {
        const t = await store.ensureMainThread('r');
        for (let i = 1; i <= 30; i++) await store.appendMessage({ roomId: 'r', threadId: t.id, author: user('u'), text: `m${i}` });
        expect((await store.messagesAfter('r', 27, 100)).map((m) => m.text)).toEqual(['m28', 'm29', 'm30']);
        const recent = await store.recentMessages('r', 20);
        expect(recent).toHaveLength(20);
        expect(recent[0].text).toBe('m11');
        expect(recent[19].seq).toBe(30);
        expect((await store.messagesBefore('r', 11, 3)).map((m) => m.text)).toEqual(['m8', 'm9', 'm10']);
        expect((await store.messagesBefore('r', 3, 100)).map((m) => m.seq)).toEqual([1, 2]);
        expect(await store.messagesBefore('r', 1, 100)).toEqual([]);
      });

      it('reads a thread’s latest messages, before a seq when asked, without other threads’ or rooms’', async () => {
        const main = await store.ensureMainThread('r');
        const other = await store.ensureMainThread('r2');
        for (let i = 1; i <= 6; i++) {
          await store.appendMessage({ roomId: 'r', threadId: main.id, author: user('u'), text: `m${i}` });
          await store.appendMessage({ roomId: 'r2', threadId: other.id, author: user('u'), text: `o${i}` });
        }
        expect((await store.threadMessages(main.id, 3)).map((m) => m.text)).toEqual(['m4', 'm5', 'm6']);
        expect((await store.threadMessages(main.id, 2, 3)).map((m) => m.text)).toEqual(['m1', 'm2']);
        expect((await store.threadMessages(other.id, 100)).map((m) => m.text)).toEqual(['o1', 'o2', 'o3', 'o4', 'o5', 'o6']);
        expect(await store.threadMessages('thr_unknown', 10)).toEqual([]);
      });

      it('reads a thread’s chat as its messages without their sources', async () => {
        const t = await store.ensureMainThread('r');
        const sources = [{ n: 1, id: 'news_1', kind: 'news' as const, title: 'T', url: null, sourceType: 'document' as const, snippet: 's' }];
        await store.appendMessage({ roomId: 'r', threadId: t.id, author: user('u'), text: 'q', clientId: 'c1' });
        const answer = await store.appendMessage({ roomId: 'r', threadId: t.id, author: user('a'), text: 'a', replyTo: 'm_q', sources });
        await store.appendMessage({ roomId: 'r', threadId: t.id, author: user('u'), text: 'later' });
        const full = await store.threadMessages(t.id, 10, 3);
        expect(full[1].sources).toEqual(sources);
        const withoutSources = ({ sources: _, ...m }: Message) => m;
        const chat = await store.threadChat(t.id, 10, 3);
        expect(chat).toEqual(full.map(withoutSources));
        expect(chat[1]).toEqual(withoutSources(answer.message));
        expect((await store.threadChat(t.id, 1)).map((m) => m.text)).toEqual(['later']);
        expect(await store.threadChat('thr_unknown', 10)).toEqual([]);
      });

      it('keeps sources and replyTo', async () => {
        const t = await store.ensureMainThread('r');
        const sources = [{ n: 1, id: 'news_1', kind: 'news' as const, title: 'T', url: null, sourceType: 'document' as const, snippet: 's' }];
        const { message } = await store.appendMessage({
          roomId: 'r',
          threadId: t.id,
          author: { id: 'ai', name: 'Salon AI', kind: 'assistant' },
          text: 'answer [1]',
          sources,
          replyTo: 'x',
        });
        const [got] = await store.messagesAfter('r', 0, 1);
        expect(got).toEqual(message);
        expect(got.sources).toEqual(sources);
      });
    });

    describe('conversation memory', () => {
      const chunk = (threadId: string, text: string, over: Partial<NewMemoryChunk> = {}): NewMemoryChunk => ({
        threadId,
        roomId: 'news_1',
        kind: 'window',
        text,
        messageIds: ['m1', 'm2'],
        authors: ['Ann', 'Cy'],
        firstTs: '2026-11-24T10:00:00.000Z',
        lastTs: '2026-11-24T10:05:00.000Z',
        privileged: false,
        owner: null,
        ...over,
      });
      const at = (day: number) => new Date(Date.UTC(2026, 10, day)).toISOString();
      /** A chunk as the store reads it back when it was stored without a vector. */
      const unembedded = <C extends object>(c: C) => ({ ...c, vector: null, vectorModel: null });
      // A chunk is only stored in a thread that exists.
      beforeEach(async () => {
        await store.applyThreadChange({
          at: at(1),
          expect: [],
          createThreads: ['t1', 't2'].map((id) => ({ id, roomId: 'news_1', title: id })),
        });
      });

      it('refuses a chunk of a thread that is gone, storing nothing', async () => {
        await expect(store.addMemoryChunk(chunk('thr_gone', 'too late'), at(1))).rejects.toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
        expect(await store.countMemoryChunks('thr_gone')).toBe(0);
        expect(await store.searchMemoryLines('late', ['thr_gone'], 5)).toEqual([]);
      });

      it('files a chunk of a merged thread under the thread that absorbed it, merges of merges followed, as a message', async () => {
        const main = await store.ensureMainThread('news_1');
        // t1 merged into t2, t2 into the main thread: a window embedded across both merges.
        await store.applyThreadChange({ at: at(2), expect: [], updateThreads: [{ id: 't1', status: 'archived', mergedInto: 't2' }] });
        await store.applyThreadChange({ at: at(2), expect: [], updateThreads: [{ id: 't2', status: 'archived', mergedInto: main.id }] });
        const v = Float32Array.from([0.6, 0.8, 0]);
        const stored = await store.addMemoryChunk(chunk('t1', 'the lighthouse keeper retired'), at(3), { vector: v, model: 'm@3' });
        expect(stored).toMatchObject({ threadId: main.id, roomId: 'news_1', text: 'the lighthouse keeper retired', createdAt: at(3) });
        expect((await store.getMemoryChunks([stored.id]))[0]).toMatchObject({ threadId: main.id, vectorModel: 'm@3' });
        expect([await store.countMemoryChunks('t1'), await store.countMemoryChunks('t2'), await store.countMemoryChunks(main.id)]).toEqual([0, 0, 1]);
        // Its lines are found in the survivor's scope (PostgreSQL's lines carry it), none in the shells'.
        expect((await store.searchMemoryLines('lighthouse', [main.id], 5)).map((h) => h.chunkId)).toEqual([stored.id]);
        expect(await store.searchMemoryLines('lighthouse', ['t1', 't2'], 5)).toEqual([]);
        expect((await store.scanThreadMemory(main.id, 0, 10)).map((c) => c.id)).toEqual([stored.id]);
      });

      it('files a chunk unless the thread it goes to holds one with its words the caller has not compared, looked up after the merges it follows', async () => {
        const main = await store.ensureMainThread('news_1');
        const v = Float32Array.from([0.6, 0.8, 0]);
        const held = await store.addMemoryChunk(chunk(main.id, 'The lighthouse keeper retired.'), at(2), { vector: v, model: 'm@3' });
        await store.applyThreadChange({ at: at(2), expect: [], updateThreads: [{ id: 't1', status: 'archived', mergedInto: main.id }] });
        const again = chunk('t1', 'the lighthouse keeper retired');
        // Found in the survivor, not in the merged thread it was asked for: nothing stored.
        const found = await store.fileMemoryChunk(again, at(3), { vector: v, model: 'm@3' }, []);
        expect(found).toEqual({ repeat: expect.objectContaining({ id: held.id, threadId: main.id, vectorModel: 'm@3' }) });
        expect(await store.countMemoryChunks(main.id)).toBe(1);
        // Another scope holds no repeat of it: a private exchange is stored.
        const secret = await store.fileMemoryChunk({ ...again, kind: 'exchange', privileged: true, owner: 'u_ann' }, at(3), undefined, []);
        expect(secret).toEqual({ stored: expect.objectContaining({ threadId: main.id, privileged: true, owner: 'u_ann' }) });
        // Compared and found no repeat (its vector far): stored beside it, the other left as it was.
        const beside = await store.fileMemoryChunk(again, at(3), undefined, [held.id]);
        expect(beside).toEqual({ stored: expect.objectContaining({ threadId: main.id, text: 'the lighthouse keeper retired', createdAt: at(3) }) });
        expect(await store.countMemoryChunks(main.id)).toBe(3);
        expect((await store.getMemoryChunks([held.id]))[0].updatedAt).toBe(at(2));
        await expect(store.fileMemoryChunk(chunk('thr_gone', 'too late'), at(3), undefined, [])).rejects.toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
      });

      it('files a live window only if no live window filed before holds one of its messages, claiming them; whichever way it is filed; other chunks claim nothing', async () => {
        const live = (ids: string[], text: string) => chunk('t1', text, { messageIds: ids, live: true });
        const v = { vector: Float32Array.from([0.6, 0.8, 0]), model: 'm@3' };
        expect(await store.fileMemoryChunk(live(['m1', 'm2', 'm3'], 'Ann: the ferry leaves at nine'), at(2), v, [])).toEqual({ stored: expect.any(Object) });
        // Another node's window over m3..m5: refused whole, naming what was filed, nothing stored.
        const refused = await store.fileMemoryChunk(live(['m3', 'm4', 'm5'], 'Bo: the ferry is late again'), at(2), v, []).catch((err: unknown) => err);
        expect(refused).toBeInstanceOf(ClaimedMessages);
        expect((refused as ClaimedMessages).claimed).toEqual(['m3']);
        await expect(store.addMemoryChunk(live(['m0', 'm1'], 'Cy: which ferry'), at(2))).rejects.toMatchObject({ claimed: ['m1'] });
        expect(await store.countMemoryChunks('t1')).toBe(1);
        // Its unclaimed messages were not claimed by the refusal: filed on their own, they are stored.
        const filed = await store.addMemoryChunk(live(['m4', 'm5'], 'Bo: the ferry is late again'), at(2));
        expect(filed).toMatchObject({ messageIds: ['m4', 'm5'] });
        // The chunk returned is the one stored: `live` asked the filing to claim, no row keeps it.
        expect(filed).not.toHaveProperty('live');
        // A thread operation's or an import's chunk of the same messages is no live window: stored.
        expect(await store.addMemoryChunk(chunk('t2', 'Ann: the ferry leaves at nine', { messageIds: ['m1', 'm2'] }), at(2))).toMatchObject({ threadId: 't2' });
        expect(await store.countMemoryChunks('t1')).toBe(2);
        const viaFiling = await store.fileMemoryChunk(live(['m6'], 'Cy: the ferry is here'), at(2), v, []);
        expect(viaFiling).toEqual({ stored: expect.objectContaining({ messageIds: ['m6'] }) });
        expect((viaFiling as { stored: object }).stored).not.toHaveProperty('live');
        // Claims older than the cut are forgotten, newer ones kept.
        await store.fileMemoryChunk(live(['m9'], 'Cy: later'), at(4), undefined, []);
        expect(await store.pruneMemoryClaims(at(3))).toBe(6);
        expect(await store.addMemoryChunk(live(['m1'], 'Ann: the ferry leaves at nine'), at(5))).toMatchObject({ messageIds: ['m1'] });
        await expect(store.addMemoryChunk(live(['m9'], 'Cy: later'), at(5))).rejects.toBeInstanceOf(ClaimedMessages);
      });

      it('refuses a live window some of whose messages a split moved to another thread, or an exchange whose question it moved, naming where they are, storing and claiming nothing', async () => {
        const main = await store.ensureMainThread('news_1');
        const said = await store.appendMessages(['a', 'b', 'c'].map((text) => ({ roomId: 'news_1', threadId: main.id, author: user('u'), text })));
        const ids = said.map((s) => s.message.id);
        await store.applyThreadChange({
          at: at(2),
          expect: [],
          createThreads: [{ id: 'thr_part', roomId: 'news_1', title: 'Part', origin: 'split', parentId: main.id }],
          moveMessages: [{ ids: ids.slice(1), threadId: 'thr_part' }],
        });
        const live = (threadId: string, messageIds: string[]) => ({ ...chunk(threadId, 'U: a b c'), messageIds, live: true as const });
        const v = { vector: Float32Array.from([0.6, 0.8, 0]), model: 'm@3' };
        // Before, both were stored in the main thread, citing there what is said in the split-off one.
        for (const filing of [() => store.addMemoryChunk(live(main.id, ids), at(3)), () => store.fileMemoryChunk(live(main.id, ids), at(3), v, [])]) {
          const refused = await filing().catch((err: unknown) => err);
          expect(refused).toBeInstanceOf(MovedMessages);
          expect([...(refused as MovedMessages).moved].sort((x, y) => x.id.localeCompare(y.id))).toEqual(
            ids
              .slice(1)
              .map((id) => ({ id, threadId: 'thr_part' }))
              .sort((x, y) => x.id.localeCompare(y.id)),
          );
        }
        expect(await store.countMemoryChunks(main.id)).toBe(0);
        // Nothing was claimed: each thread's part is filed there.
        expect(await store.addMemoryChunk(live(main.id, ids.slice(0, 1)), at(3))).toMatchObject({ threadId: main.id });
        expect(await store.fileMemoryChunk(live('thr_part', ids.slice(1)), at(3), v, [])).toEqual({
          stored: expect.objectContaining({ threadId: 'thr_part' }),
        });
        // A thread operation's or an import's chunk is no live window: not checked.
        expect(await store.addMemoryChunk(chunk(main.id, 'U: a b c', { messageIds: ids }), at(3))).toMatchObject({ threadId: main.id });
        // An exchange goes whole with its question: refused where its question is not, naming where it is; its answer does not count.
        const exchange = (messageIds: string[]) => chunk(main.id, 'Q: b?\nA: c', { kind: 'exchange', messageIds });
        await expect(store.addMemoryChunk(exchange([ids[1], ids[0]]), at(3))).rejects.toMatchObject({ moved: [{ id: ids[1], threadId: 'thr_part' }] });
        await expect(store.fileMemoryChunk(exchange([ids[1], ids[0]]), at(3), v, [])).rejects.toBeInstanceOf(MovedMessages);
        expect(await store.addMemoryChunk(exchange([ids[0], ids[1]]), at(3))).toMatchObject({ threadId: main.id });
      });

      it('refuses a private exchange asked before its asker last forgot their private asks in its room (its forget mark), storing nothing; marks are per member and room', async () => {
        const main = await store.ensureMainThread('news_1');
        const exchange = (forgetMark: number | null | undefined, over: Partial<NewMemoryChunk> = {}) =>
          chunk(main.id, 'Q: What is my locker code? A: Your locker code is 4417.', {
            kind: 'exchange',
            messageIds: [],
            privileged: true,
            owner: 'u_ann',
            forgetMark,
            ...over,
          });
        expect(await store.privateForgetMark('u_ann', 'news_1')).toBe(0);
        expect(await store.markPrivateForget('u_ann', 'news_1')).toBe(1);
        expect(await store.markPrivateForget('u_ann', 'news_1')).toBe(2);
        expect(await store.privateForgetMark('u_ann', 'news_1')).toBe(2);
        expect([await store.privateForgetMark('u_bo', 'news_1'), await store.privateForgetMark('u_ann', 'news_2')]).toEqual([0, 0]);
        // Asked under an older mark: refused by either write, wherever its thread leads.
        await expect(store.addMemoryChunk(exchange(1), at(3))).rejects.toBeInstanceOf(ForgottenExchange);
        await expect(store.fileMemoryChunk(exchange(0), at(3), undefined, [])).rejects.toBeInstanceOf(ForgottenExchange);
        await expect(
          store.fileMemoryChunk(exchange(1, { threadId: 't1' }), at(3), { vector: Float32Array.from([1, 0, 0]), model: 'm@3' }, []),
        ).rejects.toBeInstanceOf(ForgottenExchange);
        expect(await store.scanPrivateMemory('u_ann', 0, 10)).toEqual([]);
        expect(await store.searchMemoryLines('locker code 4417', [privateScope(main.id, 'u_ann'), privateScope('t1', 'u_ann')], 5)).toEqual([]);
        // A mark that could not be read as it was asked (null): nothing shows it came after the forget.
        await expect(store.addMemoryChunk(exchange(null), at(3))).rejects.toBeInstanceOf(ForgottenExchange);
        await expect(store.fileMemoryChunk(exchange(null), at(3), undefined, [])).rejects.toBeInstanceOf(ForgottenExchange);
        expect(await store.scanPrivateMemory('u_ann', 0, 10)).toEqual([]);
        // Asked under the current mark; another member's (who never forgot); one that carries no mark: stored.
        expect(await store.fileMemoryChunk(exchange(2), at(3), undefined, [])).toEqual({ stored: expect.objectContaining({ owner: 'u_ann' }) });
        expect((await store.addMemoryChunk(exchange(0, { owner: 'u_bo' }), at(3))).owner).toBe('u_bo');
        expect((await store.addMemoryChunk(exchange(undefined, { threadId: 't1' }), at(3))).threadId).toBe('t1');
        expect(await store.scanPrivateMemory('u_ann', 0, 10)).toHaveLength(2);
        // A public exchange (asked publicly where no thread kept it for its asker) is the room's: stored whatever its mark.
        const open = (forgetMark: number | null) =>
          exchange(forgetMark, { privileged: false, text: `Q: When did Rust 2.0 ship (${forgetMark})? A: On Tuesday.` });
        expect((await store.addMemoryChunk(open(0), at(3))).privileged).toBe(false);
        expect(await store.fileMemoryChunk(open(null), at(3), undefined, [])).toEqual({
          stored: expect.objectContaining({ privileged: false, owner: 'u_ann' }),
        });
      });

      it('reads a forget mark as moved by a move called before the read, though the move has not resolved yet', async () => {
        await store.ensureMainThread('news_1');
        // Called one after the other, nothing awaited between: what a forget and the ask sent next do.
        const moves = [store.markPrivateForget('u_ann', 'news_1'), store.markPrivateForget('u_ann', 'news_1')];
        const read = store.privateForgetMark('u_ann', 'news_1');
        const others = [store.privateForgetMark('u_bo', 'news_1'), store.privateForgetMark('u_ann', 'news_2')];
        expect(await read).toBe(2);
        expect((await Promise.all(moves)).sort()).toEqual([1, 2]);
        expect(await Promise.all(others)).toEqual([0, 0]);
      });

      it('refuses a chunk of a thread archived without a merge, or merged on past MAX_MERGE_HOPS, storing nothing', async () => {
        const main = await store.ensureMainThread('news_1');
        await store.applyThreadChange({ at: at(2), expect: [], updateThreads: [{ id: 't1', status: 'archived' }] });
        const chain = Array.from({ length: MAX_MERGE_HOPS + 1 }, (_, i) => `thr_h${i}`);
        await store.applyThreadChange({ at: at(2), expect: [], createThreads: chain.map((id) => ({ id, roomId: 'news_1', title: id })) });
        for (const [i, id] of chain.entries())
          await store.applyThreadChange({ at: at(2), expect: [], updateThreads: [{ id, status: 'archived', mergedInto: chain[i + 1] ?? main.id }] });
        await expect(store.addMemoryChunk(chunk('t1', 'into the shell'), at(3))).rejects.toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
        await expect(store.addMemoryChunk(chunk(chain[0], 'too far'), at(3))).rejects.toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
        // One merge fewer reaches the main thread.
        const near = await store.addMemoryChunk(chunk(chain[1], 'near enough'), at(3));
        expect(near.threadId).toBe(main.id);
        expect((await store.scanMemoryChunks(0, 10)).map((c) => [c.threadId, c.text])).toEqual([[main.id, 'near enough']]);
        expect(await store.searchMemoryLines('shell', ['t1'], 5)).toEqual([]);
      });

      it('finds a line’s word whatever the case and accents of its letters, as SQLite’s unicode61 folds them (Москве, École, ÜBER)', async () => {
        const stored = await store.addMemoryChunk(chunk('t1', 'Ann: Встреча в Москве\nCy: École publique, ÜBER alles'), at(1));
        for (const query of ['москве', 'МОСКВЕ', 'ecole', 'école', 'uber', 'über']) {
          expect(
            (await store.searchMemoryLines(query, ['t1'], 5)).map((h) => h.chunkId),
            query,
          ).toEqual([stored.id]);
        }
      });

      it('finds the words of an address, a URL or a number in a line or a chunk, as SQLite’s unicode61 cuts them', async () => {
        const text = 'Ann: mail ann@example.org about https://github.com/salon/app\nCy: pi is 3.14, v2.5 ships 2026-01-15';
        const stored = await store.addMemoryChunk(chunk('t1', text), at(1));
        await store.upsertItem(item('news_w'));
        const { added } = await store.replaceChunks('news_w', [{ ord: 0, part: 'body', text }]);
        for (const query of ['example', 'ann@example.org', 'github', 'salon', 'app', '14', '3.14', 'v2', '15', '2026-01-15']) {
          expect(
            (await store.searchMemoryLines(query, ['t1'], 5)).map((h) => h.chunkId),
            query,
          ).toEqual([stored.id]);
          expect(
            (await store.searchText(query, 5)).map((h) => h.rowId),
            query,
          ).toEqual([added[0].rowId]);
        }
      });

      it('stores chunks and reads them back by id, in the order asked, and by scan', async () => {
        const a = await store.addMemoryChunk(chunk('t1', 'first'), at(1));
        const b = await store.addMemoryChunk(chunk('t1', 'secret', { kind: 'exchange', privileged: true, owner: 'u_ann', messageIds: [] }), at(2));
        expect(a).toMatchObject({ text: 'first', createdAt: at(1), updatedAt: at(1), privileged: false, owner: null });
        expect(await store.getMemoryChunks([b.id, 999, a.id])).toEqual([b, a].map(unembedded));
        expect(await store.scanMemoryChunks(a.id, 10)).toEqual([unembedded(b)]);
        expect(await store.countMemoryChunks('t1')).toBe(2);
        expect(await store.touchMemoryChunk(a.id, at(3))).toBe(true);
        expect((await store.getMemoryChunks([a.id]))[0].updatedAt).toBe(at(3));
        expect(await store.touchMemoryChunk(999, at(3))).toBe(false);
        // Ids and audiences alone, in id order, a page at a time (what a fusion starts its graphs from).
        const c = await store.addMemoryChunk(chunk('t1', 'third'), at(4));
        await store.addMemoryChunk(chunk('t2', 'elsewhere'), at(4));
        expect(await store.scanThreadMemoryAudiences('t1', 0, 2)).toEqual([
          { id: a.id, privileged: false, owner: null },
          { id: b.id, privileged: true, owner: 'u_ann' },
        ]);
        expect(await store.scanThreadMemoryAudiences('t1', b.id, 2)).toEqual([{ id: c.id, privileged: false, owner: null }]);
        expect(await store.scanThreadMemoryAudiences('t1', c.id, 2)).toEqual([]);
      });

      it('keeps a chunk’s vector and the model that made it', async () => {
        const v = Float32Array.from([0.6, 0.8, 0]);
        const a = await store.addMemoryChunk(chunk('t1', 'with a vector'), at(1), { vector: v, model: 'm@3' });
        const [read] = await store.getMemoryChunks([a.id]);
        expect(read.vectorModel).toBe('m@3');
        expect([...read.vector!]).toEqual([...v]);
        // What an ask cites: the same chunk without its vector.
        const [text] = await store.getMemoryChunkTexts([a.id, 999]);
        expect(text).toEqual(a);
        expect(text).not.toHaveProperty('vector');
        expect(await store.getMemoryChunkTexts([])).toEqual([]);
        const b = await store.addMemoryChunk(chunk('t1', 'without'), at(1));
        await store.setMemoryVector(b.id, Float32Array.from([1, 0, 0]), 'n@3');
        expect((await store.scanThreadMemory('t1', a.id, 10)).map((c) => [c.id, c.vectorModel, [...c.vector!]])).toEqual([[b.id, 'n@3', [1, 0, 0]]]);
      });

      it('reads a copied chunk’s vector from the chunk it copies, and keeps it when that chunk is deleted', async () => {
        const v = Float32Array.from([0.6, 0.8, 0]);
        const source = await store.addMemoryChunk(chunk('t1', 'said once'), at(1), { vector: v, model: 'm@3' });
        const copy = { chunk: chunk('t_copy', 'said once'), vector: v, model: 'm@3', copyOf: source.id };
        const { addedMemoryIds } = await store.applyThreadChange({
          at: at(2),
          expect: [],
          createThreads: [{ id: 't_copy', roomId: 'news_1', title: 'Copies' }],
          // Two copies of it, a copy of a copy, and a copy of a chunk that is gone (which then stores its vector).
          addMemory: [copy, copy, { ...copy, copyOf: 999_999 }],
        });
        const second = await store.applyThreadChange({
          at: at(3),
          expect: [],
          createThreads: [{ id: 't_copy2', roomId: 'news_1', title: 'Copies of copies' }],
          addMemory: [{ ...copy, chunk: chunk('t_copy2', 'said once'), copyOf: addedMemoryIds[0] }],
        });
        const ids = [...addedMemoryIds, ...second.addedMemoryIds];
        const read = async () => (await store.getMemoryChunks(ids)).map((c) => [c.id, c.vectorModel, [...c.vector!].map((x) => Math.round(x * 10) / 10)]);
        const expected = ids.map((id) => [id, 'm@3', [0.6, 0.8, 0]]);
        expect(await read()).toEqual(expected);
        expect((await store.scanThreadMemory('t_copy', 0, 10)).map((c) => c.vectorModel)).toEqual(['m@3', 'm@3', 'm@3']);
        expect((await store.scanThreadMemory('t_copy', 0, 10, false)).map((c) => [c.text, c.vector, c.vectorModel])).toEqual(
          ids.slice(0, 3).map(() => ['said once', null, null]),
        );
        const found = async (scopes: string[]) => (await store.searchMemoryLines('said', scopes, 10)).map((h) => [h.chunkId, h.line]).sort();
        expect(await found(['t_copy'])).toEqual(addedMemoryIds.map((id) => [id, 'said once']).sort());
        expect(await found(['t_copy2'])).toEqual([[second.addedMemoryIds[0], 'said once']]);
        // A private copy is found in its owner's scope only.
        const secret = await store.applyThreadChange({
          at: at(2),
          expect: [],
          addMemory: [{ ...copy, chunk: chunk('t_copy', 'said once', { kind: 'exchange', privileged: true, owner: 'u_ann' }) }],
        });
        expect(await found(['t_copy'])).toHaveLength(3);
        expect(await found(['t_copy\u0000u_cy'])).toEqual([]);
        expect(await found(['t_copy\u0000u_ann'])).toEqual([[secret.addedMemoryIds[0], 'said once']]);
        // The source goes (retention), then the first copy: every other copy keeps the vector and the lines.
        expect(await store.pruneMemory(null, 100, at(2))).toEqual([source.id]);
        expect(await read()).toEqual(expected);
        expect(await found(['t_copy', 't_copy2'])).toEqual(ids.map((id) => [id, 'said once']).sort());
        expect(await found(['t1'])).toEqual([]);
        await store.applyThreadChange({ at: at(4), expect: [], deleteMemory: [addedMemoryIds[0]] });
        expect(await read()).toEqual(expected.slice(1));
        expect(await found(['t_copy', 't_copy2'])).toEqual(
          ids
            .slice(1)
            .map((id) => [id, 'said once'])
            .sort(),
        );
        expect(await found(['t_copy\u0000u_ann'])).toEqual([[secret.addedMemoryIds[0], 'said once']]);
        await store.setMemoryVector(addedMemoryIds[1], Float32Array.from([0, 0, 1]), 'n@3');
        expect((await store.getMemoryChunks([addedMemoryIds[1]]))[0]).toMatchObject({ vectorModel: 'n@3', vector: Float32Array.from([0, 0, 1]) });
        // (Copies that share its row in SQLite follow it: they have its text, so their embedding is the same.)
        expect((await read())[1]).toEqual(expected[2]);
      });

      it('finds the chunk a new one repeats among a thread’s copies too, and writes a copy that differs from its chunk in full', async () => {
        const v = Float32Array.from([0.6, 0.8, 0]);
        const said = 'Ann (24 Nov 2026, 10:00): The pier opens in May!';
        const source = await store.addMemoryChunk(chunk('t1', said), at(1), { vector: v, model: 'm@3' });
        const { addedMemoryIds } = await store.applyThreadChange({
          at: at(2),
          expect: [],
          createThreads: [{ id: 't_copy', roomId: 'news_1', title: 'Copies' }],
          addMemory: [
            {
              chunk: chunk('t_copy', said, { fusion: 'kept', lineage: { chunkIds: [source.id], threadIds: ['t1'] } }),
              vector: v,
              model: 'm@3',
              copyOf: source.id,
            },
            // Not the same chunk (other messages): written as its own.
            { chunk: chunk('t_copy', said, { messageIds: ['m9'] }), vector: v, model: 'm@3', copyOf: source.id },
          ],
        });
        const [copy, own] = await store.getMemoryChunks(addedMemoryIds);
        expect(copy).toMatchObject({
          threadId: 't_copy',
          text: said,
          messageIds: ['m1', 'm2'],
          fusion: 'kept',
          lineage: { chunkIds: [source.id], threadIds: ['t1'] },
        });
        expect(own.messageIds).toEqual(['m9']);
        const again = chunk('t_copy', 'ann (25 Nov 2026, 11:30): the pier opens in may');
        const file = (c: NewMemoryChunk) => store.fileMemoryChunk(c, at(3), undefined, []);
        expect(await file(again)).toEqual({ repeat: expect.objectContaining({ id: addedMemoryIds[0], threadId: 't_copy' }) });
        // No repeat in another scope: stored.
        expect(await file({ ...again, privileged: true, owner: 'u_ann' })).toEqual({
          stored: expect.objectContaining({ threadId: 't_copy', privileged: true, owner: 'u_ann' }),
        });
        // The original goes: the copy that takes its place is found on its own words.
        await store.applyThreadChange({ at: at(3), expect: [], deleteMemory: [source.id] });
        expect(await file(again)).toEqual({ repeat: expect.objectContaining({ id: addedMemoryIds[0], threadId: 't_copy' }) });
        // Nor in another thread (t1 held only the original); and a private chunk is no public one's repeat.
        expect(await file({ ...again, threadId: 't1', privileged: true, owner: 'u_ann' })).toEqual({
          stored: expect.objectContaining({ threadId: 't1', privileged: true }),
        });
        expect(await file({ ...again, threadId: 't1' })).toEqual({ stored: expect.objectContaining({ threadId: 't1', privileged: false }) });
      });

      it('finds the chunk a new one repeats: same words, times aside, in the same thread and scope only', async () => {
        const said = chunk('t1', 'Ann (24 Nov 2026, 10:00): The pier opens in May!\nCy (24 Nov 2026, 10:01): Great.');
        const stored = await store.addMemoryChunk(said, at(1));
        const again = chunk('t1', 'ann (25 Nov 2026, 11:30): the pier opens in may\nCy (25 Nov 2026, 11:31): great');
        // Where no chunk has its words and scope, the chunk is stored: that one is found from then on.
        const file = (c: NewMemoryChunk) => store.fileMemoryChunk(c, at(2), undefined, []);
        const storedAs = (c: NewMemoryChunk) => ({ stored: { ...c, id: expect.any(Number), createdAt: at(2), updatedAt: at(2) } });
        expect(await file(again)).toEqual({ repeat: unembedded(stored) });
        const june = { ...again, text: 'Ann (25 Nov 2026, 11:30): the pier opens in June' };
        expect(await file(june)).toEqual(storedAs(june));
        // Another thread holds no repeat; there, a public chunk Ann asked (its owner: only its asker) is no repeat of her private one.
        const askedThere = { ...again, threadId: 't2', owner: 'u_ann' };
        expect(await file(askedThere)).toEqual(storedAs(askedThere));
        expect(await file({ ...askedThere, privileged: true })).toEqual(storedAs({ ...askedThere, privileged: true }));
        const mine = { ...again, privileged: true, owner: 'u_ann' };
        const secret = await file(mine);
        expect(secret).toEqual(storedAs(mine));
        expect(await file(mine)).toEqual({ repeat: unembedded((secret as { stored: MemoryChunk }).stored) });
        expect(await file({ ...again, privileged: true, owner: 'u_cy' })).toEqual(storedAs({ ...again, privileged: true, owner: 'u_cy' }));
        // None of those is a repeat of the public chunk: it still finds the first.
        expect(await file(again)).toEqual({ repeat: unembedded(stored) });
      });

      it('keeps the newest chunks per thread and drops expired ones everywhere, oldest first', async () => {
        const ids: number[] = [];
        for (let day = 1; day <= 5; day++) ids.push((await store.addMemoryChunk(chunk('t1', `day ${day}`), at(day))).id);
        const other = await store.addMemoryChunk(chunk('t2', 'old elsewhere'), at(1));
        const fresh = await store.addMemoryChunk(chunk('t2', 'new elsewhere'), at(9));
        // Refreshed: day 1 is now the newest of t1.
        await store.touchMemoryChunk(ids[0], at(8));
        expect(await store.pruneMemory('t1', 3, at(2))).toEqual([other.id, ids[1], ids[2]]);
        expect((await store.scanMemoryChunks(0, 100)).map((c) => c.id)).toEqual([ids[0], ids[3], ids[4], fresh.id]);
        expect(await store.pruneMemory(null, 1, at(2))).toEqual([]);
      });

      it('prunes at most `limit` chunks a call, the expired first and then the oldest over the cap', async () => {
        const ids: number[] = [];
        for (let day = 1; day <= 6; day++) ids.push((await store.addMemoryChunk(chunk('t1', `day ${day}`), at(day))).id);
        // Days 1–2 expired; of days 3–6, the thread keeps its newest 2.
        expect(await store.pruneMemory('t1', 2, at(3), 3)).toEqual([ids[0], ids[1], ids[2]]);
        expect(await store.pruneMemory('t1', 2, at(3), 3)).toEqual([ids[3]]);
        expect(await store.pruneMemory('t1', 2, at(3), 3)).toEqual([]);
        expect((await store.scanMemoryChunks(0, 100)).map((c) => c.id)).toEqual([ids[4], ids[5]]);
      });

      it('gives every thread whose chunk expires a new version, so what read it before cannot commit; the cap changes none', async () => {
        await store.applyThreadChange({ at: at(1), expect: [], createThreads: [{ id: 't3', roomId: 'news_1', title: 't3' }] });
        const old = await store.addMemoryChunk(chunk('t1', 'an old window'), at(1));
        const secret = await store.addMemoryChunk(chunk('t2', 'an old secret', { kind: 'exchange', privileged: true, owner: 'u_ann', messageIds: [] }), at(1));
        await store.addMemoryChunk(chunk('t2', 'a new window'), at(5));
        const t3: number[] = [];
        for (let day = 5; day <= 7; day++) t3.push((await store.addMemoryChunk(chunk('t3', `day ${day} in t3`), at(day))).id);
        const version = async (id: string) => (await store.getThread(id))!.version;
        const before = await Promise.all(['t1', 't2', 't3'].map(version));
        expect(await store.pruneMemory(null, 100, at(2))).toEqual([old.id, secret.id]);
        expect(await Promise.all(['t1', 't2', 't3'].map(version))).toEqual([before[0] + 1, before[1] + 1, before[2]]);
        // What a thread at its cap drops changes no version: it drops one at every chunk it gains.
        expect(await store.pruneMemory('t3', 1, at(2))).toEqual([t3[0], t3[1]]);
        expect(await version('t3')).toBe(before[2]);
        await expect(
          store.applyThreadChange({ at: at(8), expect: [{ id: 't2', version: before[1] }], updateThreads: [{ id: 't2', title: 'late' }] }),
        ).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
        expect((await store.getThread('t2'))!.title).toBe('t2');
      });

      it('switches a thread’s memory and privileged flag as the app does, and deletes a thread with its messages and memory only', async () => {
        const t = await store.ensureMainThread('news_1');
        const keep = await store.ensureMainThread('news_2');
        expect(t).toMatchObject({ memoryEnabled: true, privileged: false });
        // As ThreadService.configure writes a config: one change, both fields or neither.
        const configure = (id: string, fields: { memoryEnabled?: boolean; privileged?: boolean }, expected: { id: string; version: number }[] = []) =>
          store.applyThreadChange({ at: at(1), expect: expected, updateThreads: [{ id, ...fields }] });
        await configure(t.id, { memoryEnabled: false, privileged: true });
        const switched = (await store.getThread(t.id))!;
        expect(switched).toMatchObject({ memoryEnabled: false, privileged: true });
        // A new version: a change that read the thread before the switch cannot write it back.
        expect(switched.version).toBe(t.version + 1);
        await expect(configure(t.id, { memoryEnabled: true }, [{ id: t.id, version: t.version }])).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
        expect((await store.getThread(t.id))!).toMatchObject({ memoryEnabled: false, privileged: true, version: switched.version });
        await expect(configure('thr_none', { memoryEnabled: false })).rejects.toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
        await configure(t.id, { memoryEnabled: true, privileged: false });
        expect((await store.getThread(t.id))!).toMatchObject({ memoryEnabled: true, privileged: false, version: switched.version + 1 });
        for (const thread of [t, keep]) await store.appendMessage({ roomId: thread.roomId, threadId: thread.id, author: user('u'), text: 'hello' });
        await store.appendMessage({ roomId: 'news_1', threadId: t.id, author: user('u'), text: 'again' });
        const gone = await store.addMemoryChunk(chunk(t.id, 'remembered'), at(1));
        const kept = await store.addMemoryChunk(chunk(keep.id, 'kept'), at(1));
        expect(await store.countThreadMessages(t.id)).toBe(2);
        expect(await store.deleteThread(t.id)).toEqual({ messages: 2, memoryIds: [gone.id] });
        expect(await store.getThread(t.id)).toBeNull();
        expect(await store.countThreadMessages(t.id)).toBe(0);
        expect(await store.getMemoryChunks([gone.id, kept.id])).toEqual([unembedded(kept)]);
        expect(await store.countThreadMessages(keep.id)).toBe(1);
        expect(await store.deleteThread(t.id)).toBeNull();
      });

      it('refuses a privileged chunk without an owner, writing nothing', async () => {
        const t = await store.ensureMainThread('news_1');
        await expect(store.addMemoryChunk(chunk(t.id, 'an ownerless secret', { privileged: true, owner: null }), at(1))).rejects.toThrow(/no owner/);
        expect(await store.countMemoryChunks(t.id)).toBe(0);
        expect(await store.searchMemoryLines('ownerless', [t.id], 5)).toEqual([]);
      });

      it('counts a thread’s memory in all, or only what any reader may see counted', async () => {
        const t = await store.ensureMainThread('news_1');
        await store.addMemoryChunk(chunk(t.id, 'public window'), at(1));
        await store.addMemoryChunk(chunk(t.id, 'a private exchange', { kind: 'exchange', privileged: true, owner: 'u_ann' }), at(2));
        await store.addMemoryChunk(chunk(t.id, 'a private fused pair', { privileged: true, owner: 'u_ann', fusion: 'fused' }), at(3));
        await store.addMemoryChunk(chunk(t.id, 'a public fused pair', { fusion: 'fused' }), at(4));
        expect(await store.countMemoryChunks(t.id)).toBe(4);
        expect(await store.countMemoryChunks(t.id, 'public')).toBe(2);
        expect(await store.countFusedMemory(t.id)).toEqual({ fused: 1, kept: 0 });
      });

      it('gives every thread whose memory a change deletes a new version, so what read it before cannot commit', async () => {
        const gone = await store.addMemoryChunk(chunk('t1', 'a window'), at(1));
        const secret = await store.addMemoryChunk(chunk('t2', 'a secret', { kind: 'exchange', privileged: true, owner: 'u_ann', messageIds: [] }), at(1));
        await store.addMemoryChunk(chunk('t1', 'kept'), at(1));
        await store.applyThreadChange({ at: at(2), expect: [], createThreads: [{ id: 't3', roomId: 'news_1', title: 't3' }] });
        const version = async (id: string) => (await store.getThread(id))!.version;
        const before = await Promise.all(['t1', 't2', 't3'].map(version));
        await store.applyThreadChange({ at: at(2), expect: [], deleteMemory: [gone.id, secret.id] });
        expect(await Promise.all(['t1', 't2', 't3'].map(version))).toEqual([before[0] + 1, before[1] + 1, before[2]]);
        await expect(
          store.applyThreadChange({ at: at(3), expect: [{ id: 't2', version: before[1] }], updateThreads: [{ id: 't2', title: 'late' }] }),
        ).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
        expect((await store.getThread('t2'))!.title).toBe('t2');
      });

      it('reads an owner’s private chunks in every thread, in id order, a page at a time', async () => {
        const mine = { kind: 'exchange' as const, privileged: true, owner: 'u_ann', messageIds: [] };
        const first = await store.addMemoryChunk(chunk('t1', 'mine in t1', mine), at(1));
        await store.addMemoryChunk(chunk('t1', 'another asker’s', { ...mine, owner: 'u_bo' }), at(1));
        // A public exchange keeps its asker as owner (a privileged thread's): not private memory.
        await store.addMemoryChunk(chunk('t2', 'asked in public', { kind: 'exchange', owner: 'u_ann' }), at(1));
        const second = await store.addMemoryChunk(chunk('t2', 'mine in t2', mine), at(2));
        expect((await store.scanPrivateMemory('u_ann', 0, 10)).map((c) => [c.id, c.threadId, c.text, c.privileged])).toEqual([
          [first.id, 't1', 'mine in t1', true],
          [second.id, 't2', 'mine in t2', true],
        ]);
        expect((await store.scanPrivateMemory('u_ann', 0, 1)).map((c) => c.id)).toEqual([first.id]);
        expect((await store.scanPrivateMemory('u_ann', first.id, 10)).map((c) => c.id)).toEqual([second.id]);
        expect(await store.scanPrivateMemory('u_cy', 0, 10)).toEqual([]);
      });

      it('leaves out of an owner’s private chunks those filed in a room under a forget mark or a later one (filedSince), and reads every other', async () => {
        const v = Float32Array.from([0.6, 0.8, 0]);
        await store.applyThreadChange({ at: at(1), expect: [], createThreads: [{ id: 't3', roomId: 'news_2', title: 't3' }] });
        const mine = (text: string, forgetMark: number | undefined, over: Partial<NewMemoryChunk> = {}) =>
          chunk('t1', text, { kind: 'exchange', privileged: true, owner: 'u_ann', messageIds: [], forgetMark, ...over });
        const before = await store.addMemoryChunk(mine('asked before the forget', 0), at(1));
        const unmarked = await store.addMemoryChunk(mine('filed with no mark', undefined), at(1));
        expect(await store.markPrivateForget('u_ann', 'news_1')).toBe(1);
        await store.markPrivateForget('u_ann', 'news_2');
        await store.markPrivateForget('u_ann', 'news_2');
        // Asked after the forget, filed by either write: each row keeps the mark it was filed under.
        const after = await store.addMemoryChunk(mine('asked after the forget', 1), at(2));
        const filed = await store.fileMemoryChunk(mine('asked after it too', 1, { threadId: 't2' }), at(2), { vector: v, model: 'm@3' }, []);
        const later = 'stored' in filed ? filed.stored : null;
        // Another room's, under a mark higher than this room's: marks are compared within their room only.
        const elsewhere = await store.addMemoryChunk(mine('asked in news_2', 2, { threadId: 't3', roomId: 'news_2' }), at(2));
        // A public exchange keeps no mark; a thread operation's copy of a marked row keeps none either.
        await store.addMemoryChunk(mine('asked in public', 1, { privileged: false }), at(2));
        const { addedMemoryIds } = await store.applyThreadChange({
          at: at(2),
          expect: [],
          addMemory: [{ chunk: mine('asked after the forget', 1), vector: v, model: 'm@3', copyOf: after.id }],
        });
        const scan = async (filedSince?: { roomId: string; mark: number }) => (await store.scanPrivateMemory('u_ann', 0, 10, filedSince)).map((c) => c.id);
        expect(await scan()).toEqual([before.id, unmarked.id, after.id, later!.id, elsewhere.id, addedMemoryIds[0]]);
        expect(await scan({ roomId: 'news_1', mark: 1 })).toEqual([before.id, unmarked.id, elsewhere.id, addedMemoryIds[0]]);
        // A later forget's mark takes them all; another room's leaves this room's alone.
        expect(await scan({ roomId: 'news_1', mark: 2 })).toEqual(await scan());
        expect(await scan({ roomId: 'news_2', mark: 2 })).toEqual([before.id, unmarked.id, after.id, later!.id, addedMemoryIds[0]]);
        // Paged as without it: a page of `limit` rows read after the ones left out.
        expect((await store.scanPrivateMemory('u_ann', before.id, 1, { roomId: 'news_1', mark: 1 })).map((c) => c.id)).toEqual([unmarked.id]);
        expect((await store.scanPrivateMemory('u_ann', unmarked.id, 1, { roomId: 'news_1', mark: 1 })).map((c) => c.id)).toEqual([elsewhere.id]);
        // A merge moves a row with its mark (within its room).
        await store.applyThreadChange({
          at: at(3),
          expect: [],
          updateThreads: [{ id: 't1' }, { id: 't2', status: 'archived', mergedInto: 't1' }],
          moveThreadMemory: [{ fromThreadId: 't2', threadId: 't1', roomId: 'news_1' }],
        });
        expect(await scan({ roomId: 'news_1', mark: 1 })).toEqual([before.id, unmarked.id, elsewhere.id, addedMemoryIds[0]]);
      });

      it('takes no row filed under an older forget mark for a repeat of a private exchange: a forget still deleting would take the repeat with it', async () => {
        const mine = (threadId: string, forgetMark: number | undefined) =>
          chunk(threadId, 'Q: What is my locker code? A: Your locker code is 4417.', {
            kind: 'exchange',
            privileged: true,
            owner: 'u_ann',
            messageIds: [],
            forgetMark,
          });
        const before = await store.addMemoryChunk(mine('t1', 0), at(1));
        const unmarked = await store.addMemoryChunk(mine('t2', undefined), at(1));
        expect(await store.fileMemoryChunk(mine('t1', 0), at(1), undefined, [])).toEqual({ repeat: expect.objectContaining({ id: before.id }) });
        await store.markPrivateForget('u_ann', 'news_1');
        const filed = await store.fileMemoryChunk(mine('t1', 1), at(2), undefined, []);
        expect(filed).toEqual({ stored: expect.objectContaining({ threadId: 't1', owner: 'u_ann' }) });
        const since = 'stored' in filed ? filed.stored.id : -1;
        expect(await store.fileMemoryChunk(mine('t1', 1), at(2), undefined, [])).toEqual({ repeat: expect.objectContaining({ id: since }) });
        // A row that keeps no mark cannot be told from one filed since (a thread operation's): a repeat as before.
        expect(await store.fileMemoryChunk(mine('t2', 1), at(2), undefined, [])).toEqual({ repeat: expect.objectContaining({ id: unmarked.id }) });
      });

      it('stores a message for a thread merged meanwhile in the thread that absorbed it, merges of merges followed', async () => {
        const main = await store.ensureMainThread('news_1');
        const mid = await createThread(store, { id: 'thr_mid', roomId: 'news_1', title: 'Mid' }, 'u_ann');
        const side = await createThread(store, { id: 'thr_side', roomId: 'news_1', title: 'Side' }, 'u_ann');
        const merge = (from: Thread, into: Thread) =>
          store.applyThreadChange({
            at: at(1),
            expect: [
              { id: from.id, version: from.version },
              { id: into.id, version: into.version },
            ],
            updateThreads: [{ id: from.id, status: 'archived', mergedInto: into.id }],
          });
        await merge(side, mid);
        await merge((await store.getThread(mid.id))!, main);
        // A say whose thread was resolved before the merges, an answer begun in the side thread.
        const { message } = await store.appendMessage({ roomId: 'news_1', threadId: side.id, author: user('u'), text: 'late say' });
        expect(message.threadId).toBe(main.id);
        const [batch] = await store.appendMessages([{ roomId: 'news_1', threadId: mid.id, author: user('u'), text: 'late batch' }]);
        expect(batch.message.threadId).toBe(main.id);
        expect((await store.threadMessages(main.id, 10)).map((m) => m.text)).toEqual(['late say', 'late batch']);
        expect(await store.threadMessages(side.id, 10)).toEqual([]);
        expect(await store.threadMessages(mid.id, 10)).toEqual([]);
      });

      it('refuses a message for a thread that no longer exists, writing nothing and taking no seq', async () => {
        const t = await store.ensureMainThread('news_1');
        const other = (
          await store.applyThreadChange({ at: at(1), expect: [], createThreads: [{ id: 'thr_side', roomId: 'news_1', title: 'Side', origin: 'original' }] })
        ).appended;
        expect(other).toEqual([]);
        await store.appendMessage({ roomId: 'news_1', threadId: 'thr_side', author: user('u'), text: 'said before the deletion' });
        expect(await store.deleteThread('thr_side')).toMatchObject({ messages: 1 });
        // An answer finished after its thread was deleted, a say in flight, an import: none is kept.
        await expect(store.appendMessage({ roomId: 'news_1', threadId: 'thr_side', author: user('a'), text: 'late answer' })).rejects.toMatchObject({
          code: 'ERR_THREAD_NOT_FOUND',
        });
        await expect(
          store.appendMessages([
            { roomId: 'news_1', threadId: t.id, author: user('u'), text: 'fine' },
            { roomId: 'news_1', threadId: 'thr_side', author: user('u'), text: 'late' },
          ]),
        ).rejects.toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
        expect(await store.lastSeq('news_1')).toBe(1);
        expect((await store.recentMessages('news_1', 10)).map((m) => m.text)).toEqual([]);
        const next = await store.appendMessage({ roomId: 'news_1', threadId: t.id, author: user('u'), text: 'next' });
        expect(next.message.seq).toBe(2);
      });

      it('answers a resent message with the one stored under its clientId, even once the thread it was sent to is gone (its message split away first)', async () => {
        await store.applyThreadChange({ at: at(1), expect: [], createThreads: ['thr_a', 'thr_b'].map((id) => ({ id, roomId: 'news_1', title: id })) });
        const sent = { roomId: 'news_1', threadId: 'thr_a', author: user('u'), text: 'kept', clientId: 'c1' };
        const first = await store.appendMessage(sent);
        await store.applyThreadChange({ at: at(2), expect: [], moveMessages: [{ ids: [first.message.id], threadId: 'thr_b' }] });
        await store.deleteThread('thr_a');
        const again = await store.appendMessage(sent);
        expect(again).toEqual({ message: { ...first.message, threadId: 'thr_b' }, duplicate: true });
        expect((await store.appendMessages([sent]))[0]).toEqual(again);
        // A message of the gone thread never stored is still refused, and no seq is taken.
        await expect(store.appendMessage({ ...sent, clientId: 'c2' })).rejects.toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
        expect(await store.lastSeq('news_1')).toBe(1);
      });

      it('stores a message through as many merges as MAX_MERGE_HOPS, and refuses one merged on past them, writing nothing', async () => {
        const main = await store.ensureMainThread('news_1');
        // thr_h0 merged into thr_h1, …, the last one into the main thread: MAX_MERGE_HOPS + 1 merges.
        const chain = Array.from({ length: MAX_MERGE_HOPS + 1 }, (_, i) => `thr_h${i}`);
        await store.applyThreadChange({ at: at(1), expect: [], createThreads: chain.map((id) => ({ id, roomId: 'news_1', title: id })) });
        for (const [i, id] of chain.entries())
          await store.applyThreadChange({ at: at(2), expect: [], updateThreads: [{ id, status: 'archived', mergedInto: chain[i + 1] ?? main.id }] });
        const near = await store.appendMessage({ roomId: 'news_1', threadId: chain[1], author: user('u'), text: 'near' });
        expect(near.message.threadId).toBe(main.id);
        const far = { roomId: 'news_1', threadId: chain[0], author: user('u'), text: 'far' };
        await expect(store.appendMessage(far)).rejects.toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
        await expect(store.appendMessages([far])).rejects.toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
        expect(await store.lastSeq('news_1')).toBe(1);
        expect((await store.recentMessages('news_1', 10)).map((m) => [m.threadId, m.text])).toEqual([[main.id, 'near']]);
      });

      it('refuses a message for a thread archived without a merge, writing nothing and taking no seq', async () => {
        const main = await store.ensureMainThread('news_1');
        await createThread(store, { id: 'thr_shut', roomId: 'news_1', title: 'Shut' }, 'u_ann');
        await store.appendMessage({ roomId: 'news_1', threadId: 'thr_shut', author: user('u'), text: 'said while it was active' });
        await store.applyThreadChange({ at: at(1), expect: [], updateThreads: [{ id: 'thr_shut', status: 'archived' }] });
        const late = { roomId: 'news_1', threadId: 'thr_shut', author: user('u'), text: 'late' };
        await expect(store.appendMessage({ ...late, clientId: 'c-late' })).rejects.toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
        await expect(store.appendMessages([{ ...late, threadId: main.id }, late])).rejects.toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
        await expect(store.applyThreadChange({ at: at(2), expect: [], appendMessages: [late] })).rejects.toMatchObject({ code: 'ERR_THREAD_ARCHIVED' });
        expect(await store.lastSeq('news_1')).toBe(1);
        expect((await store.recentMessages('news_1', 10)).map((m) => m.text)).toEqual(['said while it was active']);
      });
    });

    describe('change log of the vector indexes', () => {
      it('logs changes in increasing seqs and reads them back after a seq', async () => {
        expect(await store.lastIndexChange()).toBe(0);
        expect(await store.indexChangesAfter(0, 10)).toEqual([]);
        const a = await store.logIndexChange('documents', [3, 1, 2]);
        const b = await store.logIndexChange('memory', [7]);
        expect(b).toBeGreaterThan(a);
        expect(await store.lastIndexChange()).toBe(b);
        expect(await store.indexChangesAfter(0, 10)).toEqual([
          { seq: a, target: 'documents', ids: [3, 1, 2] },
          { seq: b, target: 'memory', ids: [7] },
        ]);
        expect(await store.indexChangesAfter(a, 10)).toEqual([{ seq: b, target: 'memory', ids: [7] }]);
        expect(await store.indexChangesAfter(0, 1)).toHaveLength(1);
      });

      it('reads back the entries under given seqs, oldest first, leaving out seqs it does not hold', async () => {
        const a = await store.logIndexChange('documents', [4]);
        const b = await store.logIndexChange('memory', [5, 6]);
        const c = await store.logIndexChange('documents', [7]);
        expect(await store.indexChangesAt([])).toEqual([]);
        expect(await store.indexChangesAt([c + 1_000, c, a, 2 ** 40])).toEqual([
          { seq: a, target: 'documents', ids: [4] },
          { seq: c, target: 'documents', ids: [7] },
        ]);
        expect(await store.indexChangesAt([b])).toEqual([{ seq: b, target: 'memory', ids: [5, 6] }]);
      });

      it('prunes entries logged longer ago than it is told to keep them', async () => {
        const a = await store.logIndexChange('documents', [1]);
        await new Promise((resolve) => setTimeout(resolve, 400));
        const beforeB = Date.now();
        const b = await store.logIndexChange('memory', [2]);
        expect(await store.pruneIndexChanges(60_000)).toBe(0);
        // The store's clock decides (for PostgreSQL the server's, on this machine). Kept: what is
        // younger than b's age now plus 200 ms, which a is not (it is 400 ms older), however long
        // the machine took to get here; only a prune call slower than 200 ms could take b too.
        expect(await store.pruneIndexChanges(Date.now() - beforeB + 200)).toBe(1);
        expect((await store.indexChangesAfter(0, 10)).map((c) => c.seq)).toEqual([b]);
        expect(await store.lastIndexChange()).toBe(b);
        expect(b).toBeGreaterThan(a);
      });

      it('keeps its newest entry however old, so that the seq a node starts from never goes back', async () => {
        const a = await store.logIndexChange('documents', [1]);
        const b = await store.logIndexChange('memory', [2]);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(await store.pruneIndexChanges(1)).toBe(1);
        expect((await store.indexChangesAfter(0, 10)).map((c) => c.seq)).toEqual([b]);
        expect(await store.lastIndexChange()).toBe(b);
        expect(b).toBeGreaterThan(a);
      });
    });

    describe('sources', () => sourcesContract(() => store));

    describe('threads, jobs, meta', () => {
      /** A memory window of one stored message, in its thread. */
      const windowOf = (m: Message, text: string): NewMemoryChunk => ({
        threadId: m.threadId,
        roomId: m.roomId,
        kind: 'window',
        text,
        messageIds: [m.id],
        authors: [m.author.name],
        firstTs: m.ts,
        lastTs: m.ts,
        privileged: false,
        owner: null,
      });

      it('creates the main thread once', async () => {
        const a = await store.ensureMainThread('news_1');
        const b = await store.ensureMainThread('news_1');
        expect(b).toEqual(a);
        expect(a.main).toBe(true);
        expect(await store.getThread(a.id)).toEqual(a);
        expect(await store.listThreads('news_1')).toEqual([a]);
      });

      it('gives a room’s last active-thread places to one of the changes racing for them, and refuses the rest whole', async () => {
        const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 10, minute)).toISOString();
        await store.ensureMainThread('news_1');
        await createThread(store, { id: 'thr_old', roomId: 'news_1', title: 'Old' }, 'u_ann');
        const create = (n: number) =>
          store.applyThreadChange({
            at: at(n),
            expect: [],
            createThreads: [{ id: `thr_race_${n}`, roomId: 'news_1', title: `Race ${n}` }],
            maxActiveThreads: 4,
            history: [{ threadId: `thr_race_${n}`, actor: 'u_ann', action: 'created', details: {} }],
            appendMessages: [
              { roomId: 'news_1', threadId: `thr_race_${n}`, author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' }, text: `hello ${n}` },
            ],
          });
        const results = await Promise.allSettled([1, 2, 3, 4, 5].map(create));
        const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i + 1] : []));
        expect(won).toHaveLength(2);
        for (const r of results)
          if (r.status === 'rejected')
            expect(r.reason).toMatchObject({ code: 'ERR_BAD_THREAD_OP', message: expect.stringMatching(/at most 4 active threads/) });
        const threads = await store.listThreads('news_1');
        expect(threads.filter((t) => t.status === 'active')).toHaveLength(4);
        // A refused change left nothing: no thread, no history, no message.
        for (const n of [1, 2, 3, 4, 5].filter((n) => !won.includes(n))) {
          expect(await store.getThread(`thr_race_${n}`)).toBeNull();
          expect(await store.threadHistory(`thr_race_${n}`, 5)).toEqual([]);
          expect(await store.threadMessages(`thr_race_${n}`, 5)).toEqual([]);
        }
        // Archiving in the same change makes room: a merge-like change that archives one and creates one passes.
        await store.applyThreadChange({
          at: at(9),
          expect: [],
          createThreads: [{ id: 'thr_next', roomId: 'news_1', title: 'Next' }],
          updateThreads: [{ id: 'thr_old', status: 'archived' }],
          maxActiveThreads: 4,
        });
        expect((await store.listThreads('news_1')).filter((t) => t.status === 'active').map((t) => t.id)).toContain('thr_next');
      });

      it('lists every active thread and only the newest archived ones asked for, children included, and counts the archived', async () => {
        const main = await store.ensureMainThread('news_1');
        for (let i = 1; i <= 6; i++) {
          await createThread(store, { id: `thr_t${i}`, roomId: 'news_1', title: `T${i}`, ...(i === 5 ? { parentId: 'thr_t2' } : {}) }, 'u_ann');
          // Distinct creation times: the listing's order is by age.
          await new Promise((r) => setTimeout(r, 2));
        }
        await store.applyThreadChange({
          at: new Date().toISOString(),
          expect: [],
          updateThreads: ['thr_t1', 'thr_t2', 'thr_t3'].map((id) => ({ id, status: 'archived' as const })),
        });
        const ids = (threads: { id: string }[]) => threads.map((t) => t.id);
        expect(ids(await store.listThreads('news_1'))).toEqual([main.id, 'thr_t1', 'thr_t2', 'thr_t3', 'thr_t4', 'thr_t5', 'thr_t6']);
        expect(ids(await store.listThreads('news_1', 2))).toEqual([main.id, 'thr_t2', 'thr_t3', 'thr_t4', 'thr_t5', 'thr_t6']);
        const none = await store.listThreads('news_1', 0);
        expect(ids(none)).toEqual([main.id, 'thr_t4', 'thr_t5', 'thr_t6']);
        // A child listed without its archived parent, a parent listed with its child.
        expect(none.find((t) => t.id === 'thr_t5')?.parentId).toBe('thr_t2');
        expect((await store.listThreads('news_1', 2)).find((t) => t.id === 'thr_t2')?.childIds).toEqual(['thr_t5']);
        expect(await store.countArchivedThreads('news_1')).toBe(3);
        expect(await store.countArchivedThreads('post_2')).toBe(0);
      });

      it('applies a thread change whole: threads, moves, memory, bridges, history and appended messages', async () => {
        const main = await store.ensureMainThread('news_1');
        const side = await createThread(store, { id: 'thr_side', roomId: 'news_1', title: 'Side', tags: ['a'] }, 'u_ann');
        expect(side).toMatchObject({ status: 'active', origin: 'original', weight: 1, tags: ['a'], splitLockedUntil: null, privileged: false, version: 0 });
        const m = await store.appendMessage({ roomId: 'news_1', threadId: side.id, author: user('u'), text: 'moving' });
        const chunk = await store.addMemoryChunk(windowOf(m.message, 'U (1 Nov 2026, 10:00): moving'), '2026-11-01T10:00:00.000Z');
        const result = await store.applyThreadChange({
          at: '2026-11-02T10:00:00.000Z',
          expect: [
            { id: main.id, version: main.version },
            { id: side.id, version: side.version },
          ],
          createThreads: [{ id: 'thr_child', roomId: 'news_1', title: 'Child', parentId: main.id, origin: 'split', splitLockedUntil: 'force', weight: 0.8 }],
          updateThreads: [{ id: side.id, status: 'archived', mergedInto: main.id }],
          moveMessages: [{ ids: [m.message.id], threadId: main.id }],
          moveMemory: [{ ids: [chunk.id], threadId: main.id, roomId: 'news_1' }],
          setBridges: [{ threadId: main.id, otherId: 'thr_child', weight: 0.8 }],
          history: [{ threadId: main.id, actor: 'admin', action: 'merge', details: { n: 1 } }],
          appendMessages: [{ roomId: 'news_1', threadId: 'thr_child', author: { id: 'assistant', name: 'Salon AI', kind: 'assistant' }, text: 'intro' }],
        });
        expect(result.appended.map((x) => [x.threadId, x.text])).toEqual([['thr_child', 'intro']]);
        expect(await store.getThread(side.id)).toMatchObject({ status: 'archived', mergedInto: main.id, version: 1 });
        expect((await store.getThread(main.id))!.childIds).toEqual(['thr_child']);
        expect(await store.getThread('thr_child')).toMatchObject({ parentId: main.id, splitLockedUntil: 'force', weight: 0.8 });
        expect((await store.threadMessages(main.id, 10)).map((x) => x.id)).toEqual([m.message.id]);
        expect((await store.scanThreadMemory(main.id, 0, 10)).map((c) => c.id)).toEqual([chunk.id]);
        expect(await store.searchMemoryLines('moving', [main.id], 5)).toHaveLength(1);
        expect(await store.searchMemoryLines('moving', [side.id], 5)).toHaveLength(0);
        expect(await store.threadBridges('thr_child')).toEqual([{ threadId: 'thr_child', otherId: main.id, weight: 0.8 }]);
        expect(await store.threadHistory(main.id, 10)).toEqual([
          { threadId: main.id, at: '2026-11-02T10:00:00.000Z', actor: 'admin', action: 'merge', details: { n: 1 } },
        ]);
        expect((await store.threadHistory(side.id, 10)).map((e) => e.action)).toEqual(['created']);
        expect((await store.threadMessagesAfter('thr_child', 0, 10)).map((x) => x.text)).toEqual(['intro']);
      });

      it('refuses a change moving messages or memory under a thread of another room, changing nothing', async () => {
        const main = await store.ensureMainThread('news_1');
        const far = await createThread(store, { id: 'thr_far', roomId: 'post_2', title: 'Far' }, 'u_ann');
        const m = await store.appendMessage({ roomId: 'post_2', threadId: far.id, author: user('u'), text: 'said in the other room' });
        const chunk = await store.addMemoryChunk(windowOf(m.message, 'U: said in the other room'), '2026-11-01T10:00:00.000Z');
        const change = { at: '2026-11-02T10:00:00.000Z', expect: [far, main].map(({ id, version }) => ({ id, version })) };
        // A merge of the other room's thread into this room's main thread, as the thread service builds one.
        const merge = store.applyThreadChange({
          ...change,
          updateThreads: [{ id: far.id, status: 'archived', mergedInto: main.id }],
          moveThreadMessages: [{ fromThreadId: far.id, threadId: main.id }],
          moveMemory: [{ ids: [chunk.id], threadId: main.id, roomId: 'news_1' }],
          moveThreadMemory: [{ fromThreadId: far.id, threadId: main.id, roomId: 'news_1' }],
        });
        await expect(merge).rejects.toMatchObject({
          code: 'ERR_BAD_THREAD_OP',
          message: expect.stringMatching(/thread thr_far is in room post_2 .* in room news_1/),
        });
        await expect(store.applyThreadChange({ ...change, moveMessages: [{ ids: [m.message.id], threadId: main.id }] })).rejects.toMatchObject({
          code: 'ERR_BAD_THREAD_OP',
          message: expect.stringMatching(new RegExp(`message ${m.message.id} is in room post_2`)),
        });
        await expect(store.applyThreadChange({ ...change, moveMemory: [{ ids: [chunk.id], threadId: main.id, roomId: 'post_2' }] })).rejects.toMatchObject({
          code: 'ERR_BAD_THREAD_OP',
          message: expect.stringMatching(/given room post_2, but the thread is in room news_1/),
        });
        expect(await store.getThread(far.id)).toMatchObject({ status: 'active', mergedInto: null, version: far.version });
        expect((await store.threadMessages(far.id, 10)).map((x) => [x.id, x.roomId])).toEqual([[m.message.id, 'post_2']]);
        expect(await store.threadMessages(main.id, 10)).toEqual([]);
        expect((await store.recentMessages('post_2', 10)).map((x) => x.id)).toEqual([m.message.id]);
        expect(await store.recentMessages('news_1', 10)).toEqual([]);
        expect((await store.scanThreadMemory(far.id, 0, 10, false)).map((c) => [c.id, c.roomId])).toEqual([[chunk.id, 'post_2']]);
        expect(await store.countMemoryChunks(main.id)).toBe(0);
      });

      it('writes no bridge of a thread gone or archived since it was read, and refuses a refresh whose threads moved', async () => {
        const main = await store.ensureMainThread('news_1');
        for (const id of ['thr_x', 'thr_y', 'thr_z']) await createThread(store, { id, roomId: 'news_1', title: id }, 'u_ann');
        const read = (await store.listThreads('news_1', 0)).map(({ id, version }) => ({ id, version }));
        // Merged away and deleted after a merge, a split or a refresh read them.
        await store.applyThreadChange({
          at: '2026-11-02T10:00:00.000Z',
          expect: [],
          updateThreads: [{ id: 'thr_y', status: 'archived', mergedInto: main.id }],
        });
        await store.deleteThread('thr_z');
        const pairs = ['thr_x', 'thr_y', 'thr_z'].map((otherId) => ({ threadId: main.id, otherId, weight: 0.7 }));
        await store.applyThreadChange({ at: '2026-11-02T10:00:00.000Z', expect: [], dropBridgesOf: [main.id], setBridges: pairs });
        expect(await store.threadBridges(main.id)).toEqual([{ threadId: main.id, otherId: 'thr_x', weight: 0.7 }]);
        expect(await store.threadBridges('thr_y')).toEqual([]);
        expect(await store.threadBridges('thr_z')).toEqual([]);
        const refresh = (bridgesRead: { id: string; version: number }[]) =>
          store.applyThreadChange({ at: '2026-11-02T10:00:00.000Z', expect: [], bridgesRead, dropBridgesOf: bridgesRead.map((r) => r.id), setBridges: [] });
        await expect(refresh(read)).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
        await expect(refresh(read.filter((r) => r.id !== 'thr_y'))).rejects.toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
        expect(await store.threadBridges(main.id)).toHaveLength(1);
        await refresh([main.id, 'thr_x'].map((id) => read.find((r) => r.id === id)!));
        expect(await store.threadBridges(main.id)).toEqual([]);
      });

      it("moves what is left of a thread's memory after the listed moves and deletes, public and private, and names it", async () => {
        const main = await store.ensureMainThread('news_1');
        const side = await createThread(store, { id: 'thr_side', roomId: 'news_1', title: 'Side' }, 'u_ann');
        const m = await store.appendMessage({ roomId: 'news_1', threadId: side.id, author: user('u'), text: 'x' });
        const listed = await store.addMemoryChunk(windowOf(m.message, 'U: listed herons'), '2026-11-01T10:00:00.000Z');
        const dropped = await store.addMemoryChunk(windowOf(m.message, 'U: dropped herons'), '2026-11-01T10:00:00.000Z');
        // Stored after the operation read the thread: in no list of the change.
        const late = await store.addMemoryChunk(windowOf(m.message, 'U: late herons'), '2026-11-01T10:01:00.000Z');
        const secret = await store.addMemoryChunk({ ...windowOf(m.message, 'U: secret herons'), privileged: true, owner: 'u_ann' }, '2026-11-01T10:02:00.000Z');
        const other = await store.addMemoryChunk({ ...windowOf(m.message, 'U: other herons'), threadId: main.id }, '2026-11-01T10:00:00.000Z');
        const result = await store.applyThreadChange({
          at: '2026-11-02T10:00:00.000Z',
          expect: [{ id: side.id, version: side.version }],
          updateThreads: [{ id: side.id, status: 'archived', mergedInto: main.id }],
          moveMemory: [{ ids: [listed.id], threadId: main.id, roomId: 'news_1' }],
          deleteMemory: [dropped.id],
          moveThreadMemory: [{ fromThreadId: side.id, threadId: main.id, roomId: 'news_1' }],
        });
        expect(result.movedMemoryIds).toEqual([late.id, secret.id]);
        expect(await store.countMemoryChunks(side.id)).toBe(0);
        expect((await store.scanThreadMemory(main.id, 0, 10)).map((c) => c.id).sort((x, y) => x - y)).toEqual(
          [listed.id, late.id, secret.id, other.id].sort((x, y) => x - y),
        );
        expect(await store.getMemoryChunks([dropped.id])).toEqual([]);
        const found = async (scopes: string[]) => (await store.searchMemoryLines('herons', scopes, 10)).map((h) => h.chunkId).sort((x, y) => x - y);
        expect(await found([main.id])).toEqual([listed.id, late.id, other.id].sort((x, y) => x - y));
        expect(await found([main.id, privateScope(main.id, 'u_ann')])).toEqual([listed.id, late.id, secret.id, other.id].sort((x, y) => x - y));
        expect(await found([side.id, privateScope(side.id, 'u_ann')])).toEqual([]);
        // Nothing left to move: nothing named.
        const again = await store.applyThreadChange({
          at: '2026-11-02T10:00:00.000Z',
          expect: [],
          moveThreadMemory: [{ fromThreadId: side.id, threadId: main.id, roomId: 'news_1' }],
        });
        expect(again.movedMemoryIds).toEqual([]);
      });

      it('sends memory filed in a split thread after the split read it where its messages went (memoryRead), and leaves the rest', async () => {
        const main = await store.ensureMainThread('news_1');
        const [a, b, c, d] = await store.appendMessages(['a', 'b', 'c', 'd'].map((text) => ({ roomId: 'news_1', threadId: main.id, author: user('u'), text })));
        const cite = (text: string, ms: Message[], kind: 'window' | 'exchange' = 'window') =>
          store.addMemoryChunk({ ...windowOf(ms[0], text), kind, messageIds: ms.map((m) => m.id) }, '2026-11-01T10:00:00.000Z');
        const read = await cite('U: herons read', [c.message, d.message]);
        // Filed after the split read the thread's memory: before, all three stayed in it, citing c and d there.
        const whole = await cite('U: herons whole', [c.message, d.message]);
        const parted = await cite('U: herons parted', [b.message, c.message]);
        const asked = await cite('Q: herons?\nA: yes', [c.message, a.message], 'exchange');
        const stays = await cite('U: herons stay', [a.message, b.message]);
        const result = await store.applyThreadChange({
          at: '2026-11-02T10:00:00.000Z',
          expect: [{ id: main.id, version: main.version }],
          createThreads: [{ id: 'thr_part', roomId: 'news_1', title: 'Part', origin: 'split', parentId: main.id }],
          updateThreads: [{ id: main.id }],
          moveMessages: [{ ids: [c.message.id, d.message.id], threadId: 'thr_part' }],
          moveMemory: [{ ids: [read.id], threadId: 'thr_part', roomId: 'news_1' }],
          memoryRead: { threadId: main.id, ids: [read.id] },
        });
        expect(result.movedMemoryIds.sort((x, y) => x - y)).toEqual([whole.id, asked.id]);
        expect(result.partedMemory).toEqual([{ id: parted.id, messageIds: [b.message.id, c.message.id] }]);
        expect((await store.scanThreadMemory(main.id, 0, 10)).map((m) => m.id)).toEqual([stays.id]);
        expect((await store.scanThreadMemory('thr_part', 0, 10)).map((m) => m.id)).toEqual([read.id, whole.id, asked.id]);
        expect(await store.getMemoryChunks([parted.id])).toEqual([]);
        const found = async (scope: string) => (await store.searchMemoryLines('herons', [scope], 10)).map((h) => h.chunkId).sort((x, y) => x - y);
        expect(await found('thr_part')).toEqual([read.id, whole.id, asked.id]);
        expect(await found(main.id)).toEqual([stays.id]);
      });

      it('names only the newest CHILD_IDS_LISTED children of a thread, read or listed, and counts them all', async () => {
        const main = await store.ensureMainThread('news_1');
        const n = CHILD_IDS_LISTED + 5;
        const ids = Array.from({ length: n }, (_, i) => `thr_c${String(i).padStart(3, '0')}`);
        // Split off and merged away, over and over: children stay children, and kept piling up in every read.
        await store.applyThreadChange({
          at: '2026-11-02T10:00:00.000Z',
          expect: [],
          createThreads: ids.map((id) => ({ id, roomId: 'news_1', title: id, parentId: main.id, origin: 'split' as const })),
          updateThreads: ids.map((id) => ({ id, status: 'archived' as const, mergedInto: main.id })),
        });
        const newest = ids.slice(-CHILD_IDS_LISTED);
        expect(await store.getThread(main.id)).toMatchObject({ childIds: newest, childCount: n });
        expect((await store.listThreads('news_1')).find((t) => t.id === main.id)).toMatchObject({ childIds: newest, childCount: n });
        expect(await store.getThread(ids[0])).toMatchObject({ childIds: [], childCount: 0 });
      });

      it("reads a thread's children oldest first, then by id, as listThreads does", async () => {
        const main = await store.ensureMainThread('news_1');
        const split = (id: string, at: string) =>
          store.applyThreadChange({
            at,
            expect: [],
            createThreads: [{ id, roomId: 'news_1', title: id, parentId: main.id, origin: 'split', splitLockedUntil: 'force', weight: 0.5 }],
          });
        await split('thr_z', '2026-11-02T10:00:00.000Z');
        await split('thr_b', '2026-11-03T10:00:00.000Z');
        await split('thr_a', '2026-11-03T10:00:00.000Z');
        const listed = (await store.listThreads('news_1')).find((t) => t.id === main.id)!.childIds;
        expect(listed).toEqual(['thr_z', 'thr_a', 'thr_b']);
        expect((await store.getThread(main.id))!.childIds).toEqual(listed);
        expect((await store.getThread('thr_a'))!.childIds).toEqual([]);
      });

      it('changes nothing when an expected version moved or any part fails', async () => {
        const t = await createThread(store, { id: 'thr_t', roomId: 'news_1', title: 'T' }, 'admin');
        const m = await store.appendMessage({ roomId: 'news_1', threadId: t.id, author: user('u'), text: 'stay' });
        await store.applyThreadChange({ at: '2026-11-02T10:00:00.000Z', expect: [], updateThreads: [{ id: t.id, title: 'T2' }] });
        await expect(
          store.applyThreadChange({ at: '2026-11-02T10:00:00.000Z', expect: [{ id: t.id, version: 0 }], updateThreads: [{ id: t.id, title: 'stale' }] }),
        ).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED' });
        await expect(
          store.applyThreadChange({
            at: '2026-11-02T10:00:00.000Z',
            expect: [],
            createThreads: [{ id: 'thr_new', roomId: 'news_1', title: 'New' }],
            moveMessages: [{ ids: [m.message.id, 'm_gone'], threadId: 'thr_new' }],
          }),
        ).rejects.toMatchObject({ code: 'ERR_BAD_THREAD_OP' });
        expect(await store.getThread('thr_new')).toBeNull();
        expect((await store.threadMessages(t.id, 10)).map((x) => x.id)).toEqual([m.message.id]);
        expect(await store.getThread(t.id)).toMatchObject({ title: 'T2', version: 1 });
        // A message or chunk gone since the operation read the thread (deleted, pruned): it changed
        // meanwhile, nothing is written and the operation may be tried again.
        const chunk = await store.addMemoryChunk(windowOf(m.message, 'U: stay'), '2026-11-02T10:00:00.000Z');
        for (const move of [
          { moveMessages: [{ ids: [m.message.id, 'm_gone'], threadId: 'thr_new' }] },
          { moveMemory: [{ ids: [chunk.id, chunk.id + 1000], threadId: 'thr_new', roomId: 'news_1' }] },
        ]) {
          await expect(
            store.applyThreadChange({
              at: '2026-11-02T10:00:00.000Z',
              expect: [{ id: t.id, version: 1 }],
              createThreads: [{ id: 'thr_new', roomId: 'news_1', title: 'New' }],
              updateThreads: [{ id: t.id, title: 'moved' }],
              ...move,
            }),
          ).rejects.toMatchObject({ code: 'ERR_THREAD_CHANGED', message: expect.stringContaining(t.id) });
          expect(await store.getThread('thr_new')).toBeNull();
          expect(await store.getThread(t.id)).toMatchObject({ title: 'T2', version: 1 });
          expect((await store.threadMessages(t.id, 10)).map((x) => x.id)).toEqual([m.message.id]);
          expect((await store.getMemoryChunks([chunk.id]))[0]?.threadId).toBe(t.id);
        }
        await expect(store.applyThreadChange({ at: '', expect: [{ id: 'thr_none', version: 0 }] })).rejects.toMatchObject({ code: 'ERR_THREAD_NOT_FOUND' });
      });

      /** A job of the jobs tests: running, one of two done, in news_1; `fields` replace any of that. */
      const jobOf = (id: string, fields: Partial<IngestJob> = {}): IngestJob => ({
        id,
        request: { url: id },
        status: 'running',
        total: 2,
        done: 1,
        failed: 0,
        itemIds: ['news_1'],
        failures: [],
        createdAt: 'a',
        updatedAt: 'b',
        ...fields,
      });

      it('saves and reads jobs', async () => {
        const job = jobOf('j1', { request: { url: 'x' } });
        await store.saveJob(job);
        await store.saveJob({ ...job, status: 'done', done: 2 });
        expect(await store.getJob('j1')).toMatchObject({ status: 'done', done: 2 });
        expect(await store.getJob('nope')).toBeNull();
      });

      it('fails the unfinished jobs of one runner, leaving finished jobs and the other runner alone', async () => {
        const job = (id: string, status: IngestJob['status'], runner?: JobRunner): IngestJob => jobOf(id, { status, total: 3, ...(runner ? { runner } : {}) });
        const jobs = [
          job('running', 'running', 'server'),
          job('queued', 'queued', 'server'),
          job('legacy', 'running'),
          job('done', 'done', 'server'),
          job('failed', 'failed', 'server'),
          job('cli', 'running', 'cli'),
        ];
        for (const j of jobs) await store.saveJob(j);
        const failure = { ref: 'restart', code: 'ERR_JOB_CANCELLED', message: 'Ingest stopped: the server stopped' };
        const marked = await store.failUnfinishedJobs('server', failure, '2030-01-01T00:00:00.000Z');
        expect(marked.sort()).toEqual(['legacy', 'queued', 'running']);
        for (const id of marked) {
          expect(await store.getJob(id)).toMatchObject({
            status: 'failed',
            done: 1,
            itemIds: ['news_1'],
            failures: [failure],
            updatedAt: '2030-01-01T00:00:00.000Z',
          });
        }
        for (const j of jobs.filter((x) => !marked.includes(x.id))) expect(await store.getJob(j.id)).toEqual(j);
        expect(await store.failUnfinishedJobs('server', failure, '2030-01-02T00:00:00.000Z')).toEqual([]);
        expect(await store.failUnfinishedJobs('cli', failure, '2030-01-02T00:00:00.000Z')).toEqual(['cli']);
      });

      it('leaves alone, when failing unfinished jobs, those of the node named and those saved or touched within silentForMs', async () => {
        const job = (id: string, node?: string): IngestJob => jobOf(id, { runner: 'server', ...(node ? { node } : {}), total: 1, done: 0, itemIds: [] });
        const failure = { ref: 'restart', code: 'ERR_JOB_CANCELLED', message: 'Ingest stopped: the server stopped' };
        for (const j of [job('j_a', 'n_a'), job('j_b', 'n_b'), job('j_legacy')]) await store.saveJob(j);
        // Another node, just saved: it may be running its job.
        expect(await store.failUnfinishedJobs('server', failure, 'c', { node: 'n_b', silentForMs: 60_000 })).toEqual([]);
        expect(await store.failUnfinishedJobs('server', failure, 'c', { node: 'n_b' })).toEqual(['j_a', 'j_legacy']);
        expect(await store.getJob('j_b')).toMatchObject({ status: 'running', node: 'n_b' });

        await store.saveJob(job('j_c', 'n_c'));
        await store.saveJob(job('j_d', 'n_d'));
        await new Promise((r) => setTimeout(r, 1_100));
        await store.touchJobs('n_c');
        // n_c showed life within the last second, n_d did not.
        expect(await store.failUnfinishedJobs('server', failure, 'c', { node: 'n_b', silentForMs: 1_000 })).toEqual(['j_d']);
        expect(await store.getJob('j_c')).toMatchObject({ status: 'running' });

        // A node known gone (a restarted node's predecessor): its job is failed at once, and the source lease it held is free.
        await store.saveJob(job('j_e', 'n_e'));
        await store.addSource(source('src_e'));
        expect(await store.leaseSource('src_e', 'n_e', 'j_e', '2026-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z')).toBe(true);
        expect(await store.failUnfinishedJobs('server', failure, 'c', { node: 'n_b', silentForMs: 60_000, gone: 'n_e' })).toEqual(['j_e']);
        expect(await store.getSource('src_e')).toMatchObject({ leaseOwner: null, leaseUntil: null, leaseJob: null });
        expect(await store.getJob('j_c')).toMatchObject({ status: 'running' });
      });

      it('settles each orphaned job once as told, queued again under another node or failed, freeing only an ended job’s lease', async () => {
        const job = (id: string): IngestJob => jobOf(id, { runner: 'server', node: 'n_gone' });
        const ids = Array.from({ length: 6 }, (_, i) => `j_${i}`);
        for (const id of ids) await store.saveJob(job(id));
        for (const id of ['j_0', 'j_1']) {
          await store.addSource(source(`src_${id}`));
          expect(await store.leaseSource(`src_${id}`, 'n_gone', id, '2026-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z')).toBe(true);
        }
        // Two live nodes sweep at once: each takes the jobs it finds, even ones queued again, and no job is taken twice.
        const takeOver =
          (node: string) =>
          (j: IngestJob): IngestJob =>
            j.id === 'j_0' ? { ...j, status: 'failed', updatedAt: 'c' } : { ...j, node, status: 'queued', attempts: 1, done: 0, itemIds: [], updatedAt: 'c' };
        const [x, y] = await Promise.all([
          store.settleUnfinishedJobs('server', { node: 'n_x', silentForMs: 60_000, gone: 'n_gone' }, takeOver('n_x')),
          store.settleUnfinishedJobs('server', { node: 'n_y', silentForMs: 60_000, gone: 'n_gone' }, takeOver('n_y')),
        ]);
        expect([...x, ...y].map((j) => j.id).sort()).toEqual(ids);
        for (const settled of [...x, ...y]) expect(await store.getJob(settled.id)).toEqual(settled);
        expect(await store.getJob('j_2')).toMatchObject({ status: 'queued', attempts: 1, done: 0 });
        expect(await store.getSource('src_j_0')).toMatchObject({ leaseOwner: null, leaseJob: null });
        // A job queued again keeps its lease (no poll is queued again; the lease is its holder's to end).
        expect(await store.getSource('src_j_1')).toMatchObject({ leaseOwner: 'n_gone', leaseJob: 'j_1' });
        // Saved just now under a live node, they are that node's: another sweep leaves them alone.
        expect(await store.settleUnfinishedJobs('server', { node: 'n_z', silentForMs: 60_000, gone: 'n_gone' }, (j) => j)).toEqual([]);
        // The node that fell silent comes back and saves its progress: refused, the taker's record stays.
        const taken = (await store.getJob('j_2'))!;
        expect(await store.saveJob({ ...job('j_2'), done: 2 })).toBe(false);
        expect(await store.getJob('j_2')).toEqual(taken);
        expect(await store.saveJob({ ...taken, status: 'running' })).toBe(true);
        expect(await store.getJob('j_2')).toMatchObject({ status: 'running', node: taken.node });
      });

      it('prunes the jobs that ended before a time, keeping unfinished and later ones', async () => {
        const job = (id: string, status: IngestJob['status'], updatedAt: string): IngestJob =>
          jobOf(id, { runner: 'server', status, total: 0, done: 0, itemIds: [], createdAt: updatedAt, updatedAt });
        const old = '2026-01-01T00:00:00.000Z';
        const recent = '2026-03-01T00:00:00.000Z';
        for (const j of [
          job('done', 'done', old),
          job('failed', 'failed', old),
          job('cancelled', 'cancelled', old),
          job('running', 'running', old),
          job('later', 'done', recent),
        ]) {
          await store.saveJob(j);
        }
        expect(await store.pruneJobs('2026-02-01T00:00:00.000Z')).toBe(3);
        for (const id of ['done', 'failed', 'cancelled']) expect(await store.getJob(id)).toBeNull();
        for (const id of ['running', 'later']) expect(await store.getJob(id)).not.toBeNull();
      });

      it('keeps a job whose failure quotes a NUL or half a surrogate pair, with U+FFFD for them, and still fails it at a restart', async () => {
        const quoted = 'bad\u0000id \ud800 \ud83d\ude86';
        await store.saveJob(
          jobOf('j_nul', {
            runner: 'server',
            request: { file: [quoted] },
            total: 1,
            done: 0,
            failed: 1,
            itemIds: [],
            failures: [{ ref: quoted, code: 'ERR_BAD_ITEM', message: `id "${quoted}" is not allowed` }],
          }),
        );
        const kept = 'bad\uFFFDid \uFFFD \ud83d\ude86';
        expect(await store.getJob('j_nul')).toMatchObject({ request: { file: [kept] }, failures: [{ ref: kept, message: `id "${kept}" is not allowed` }] });
        const failure = { ref: 'restart', code: 'ERR_JOB_CANCELLED', message: 'Ingest stopped: the server stopped' };
        expect(await store.failUnfinishedJobs('server', failure, '2030-01-01T00:00:00.000Z')).toEqual(['j_nul']);
        expect(await store.getJob('j_nul')).toMatchObject({ status: 'failed', failures: [{ ref: kept }, failure] });
      });

      it('claims a meta key once', async () => {
        expect(await store.claimMeta('seed', 'a')).toBe(true);
        expect(await store.claimMeta('seed', 'b')).toBe(false);
        expect(await store.getMeta('seed')).toBe('a');
        await store.setMeta('seed', 'c');
        expect(await store.getMeta('seed')).toBe('c');
        expect(await store.getMeta('none')).toBeNull();
      });
    });
  });
}
