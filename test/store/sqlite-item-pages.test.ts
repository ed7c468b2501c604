/**
 * Pages of items in the SQLite store (listItems, listItemSummaries) are read by seeking an index,
 * never by walking the items from the newest: a page far down the list, or of a category few or no
 * items have (any caller of GET /api/v1/content names one), cost a walk of the whole table.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { blankItem } from '../../src/content/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { ListItemsQuery } from '../../src/store/types.js';
import { preparedStatements, tempStore } from '../helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A store of 60 items in three categories, a pair of them sharing each publication time (ties broken by id). */
async function storeOfItems(): Promise<SqliteStore> {
  const { store, close } = tempStore();
  closers.push(close);
  const categories = ['Tech', 'science', 'WORLD'];
  await store.putItems(
    Array.from({ length: 60 }, (_, i) => ({
      item: blankItem(`news_${String(i).padStart(2, '0')}`, {
        category: categories[i % 3],
        publishedAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 60_000).toISOString(),
      }),
      chunks: [],
    })),
  );
  return store;
}

/** Every page of `query`, followed by its cursors: the ids in the order read. */
async function allPages(store: SqliteStore, query: Omit<ListItemsQuery, 'limit' | 'cursor'>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listItemSummaries({ ...query, limit: 7, cursor });
    ids.push(...page.items.map((i) => i.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

/** How SQLite runs each statement the store prepared that reads a filtered page of items. */
function pagePlans(store: SqliteStore): { sql: string; plan: string[] }[] {
  return preparedStatements(store)
    .filter((sql) => /FROM items WHERE .* ORDER BY sort_key DESC, id DESC LIMIT \?$/.test(sql))
    .map((sql) => {
      const params = Array.from(sql.match(/\?/g) ?? [], () => 'x');
      const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
      return { sql, plan: plan.map((p) => p.detail) };
    });
}

describe('SqliteStore: pages of items', () => {
  it('reads a page after a cursor from the sort index at the cursor, not by walking every item before it', async () => {
    const store = await storeOfItems();
    const expected = Array.from({ length: 60 }, (_, i) => `news_${String(59 - i).padStart(2, '0')}`);
    expect(await allPages(store, {})).toEqual(expected);
    expect(await allPages(store, { kind: 'news' })).toEqual(expected);

    const plans = pagePlans(store);
    expect(plans.length).toBeGreaterThanOrEqual(2);
    for (const { sql, plan } of plans) expect(plan.join(' | '), sql).not.toMatch(/\bSCAN items\b/);
  });

  it('reads a category’s pages, in any case, from an index of the category (migration 31), also for a category no item has', async () => {
    const store = await storeOfItems();
    const ofCategory = (remainder: number) =>
      Array.from({ length: 60 }, (_, i) => 59 - i)
        .filter((i) => i % 3 === remainder)
        .map((i) => `news_${String(i).padStart(2, '0')}`);
    expect(await allPages(store, { category: 'tech' })).toEqual(ofCategory(0));
    expect(await allPages(store, { category: 'Science' })).toEqual(ofCategory(1));
    expect(await allPages(store, { category: 'world', kind: 'news' })).toEqual(ofCategory(2));
    expect(await allPages(store, { category: 'nothing here' })).toEqual([]);
    expect((await store.listItems({ category: 'TECH', limit: 3 })).items.map((i) => i.id)).toEqual(ofCategory(0).slice(0, 3));

    const plans = pagePlans(store).filter(({ sql }) => sql.includes('category = ?'));
    expect(plans.length).toBeGreaterThanOrEqual(3);
    for (const { sql, plan } of plans) expect(plan.join(' | '), sql).not.toMatch(/\bSCAN items\b/);
  });
});
