/**
 * A page of one category in the PostgreSQL store is read from an index in its order: with only an
 * index on the category, every page of a category sorted all of its rows first, and any caller of
 * GET /api/v1/content names a category.
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { blankItem } from '../../src/content/types.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { POSTGRES_URL, describePostgres, dropSchema, schemaName, urlWithSchema } from './postgres-harness.js';

describePostgres('PostgreSQL store: pages of a category', () => {
  let schema = '';
  let store: PostgresStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    if (schema) await dropSchema(schema);
  });

  it('reads them from an index in page order, without sorting the category, and pages through ties in order', async () => {
    schema = schemaName();
    store = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
    await store.putItems(
      Array.from({ length: 30 }, (_, i) => ({
        item: blankItem(`news_${String(i).padStart(2, '0')}`, {
          category: i % 2 ? 'Tech' : 'World',
          publishedAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 4) * 60_000).toISOString(),
        }),
        chunks: [],
      })),
    );
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listItemSummaries({ category: 'TECH', limit: 4, cursor });
      ids.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(ids).toEqual(Array.from({ length: 15 }, (_, i) => `news_${String(29 - 2 * i).padStart(2, '0')}`));

    // The plan of the store's page statement, with scans of the whole table ruled out as a large
    // table would rule them out (30 rows make a sequential scan cheapest whatever the indexes).
    const client = new pg.Client({ connectionString: urlWithSchema(schema) });
    await client.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query(
        `EXPLAIN SELECT id FROM items WHERE lower(category) = lower($1 COLLATE "C") ORDER BY sort_key DESC, id DESC LIMIT $2`,
        ['Tech', 5],
      );
      const plan = rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      expect(plan).toContain('items_category_sort');
      expect(plan).not.toMatch(/\bSort\b/);
    } finally {
      await client.end();
    }
  });
});
