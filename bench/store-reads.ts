/**
 * The SQLite store's reads on the ask and content paths, over items the size of real articles
 * (bench:rag's synthetic items are ~1 KB with no comments, which a page holds whole):
 * `--items N` items, each with a body of `--body-chars` characters, `--comments C` comments of
 * ~450 characters and 20 chunks. Prints `{items, body_chars, comments, chunks, …_us}`, the p50 and
 * p95 in µs of
 * - `get_chunks`: 30 random chunks with their items' heads (Store.getChunks, as an ask reads the
 *   candidates it keeps);
 * - `get_items`: 8 random whole items (Store.getItems, as an ask reads the items of the commenters
 *   it cites), and `get_items_without_comments` the same without their comments
 *   (Store.getItemsWithoutComments, as it reads the other items it cites);
 * - `item_summaries`: a page of 100 item summaries (Store.listItemSummaries, `GET /api/v1/content`).
 *
 *   npm run bench:store-reads -- [--items N] [--body-chars B] [--comments C] [--reads R]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContentItem } from '../src/content/types.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { benchOptions, runBench } from './args.js';
import { percentile } from './local-app.js';

const USAGE = 'npm run bench:store-reads -- [--items N] [--body-chars B] [--comments C] [--reads R]';
const CHUNKS_PER_ITEM = 20;
const CHUNKS_READ = 30;
const ITEMS_READ = 8;
const SUMMARY_PAGE = 100;
const WARMUP_READS = 200;
const SENTENCE = 'The council approved the new harbour pier after a long debate about what it would cost. ';
const COMMENT = 'I think the pier is a good idea, but the ferry timetable matters more to most of us here. ';

function options() {
  return benchOptions(USAGE, { items: 'string', 'body-chars': 'string', comments: 'string', reads: 'string' }, (a) => ({
    items: a.number('items', 5_000, { integer: true, min: 1 }),
    bodyChars: a.number('body-chars', 16_000, { integer: true, min: 1 }),
    comments: a.number('comments', 40, { integer: true, min: 0 }),
    reads: a.number('reads', 3_000, { integer: true, min: 1 }),
  }));
}

function article(i: number, bodyChars: number, comments: number): ContentItem {
  return {
    id: `news_read${i}`,
    kind: 'news',
    title: `The pier, part ${i}`,
    url: `https://example.com/pier/${i}`,
    description: 'What the council decided about the pier.',
    body: SENTENCE.repeat(Math.ceil(bodyChars / SENTENCE.length)).slice(0, bodyChars),
    comments: Array.from({ length: comments }, (_, k) => ({ by: `reader${k}`, text: COMMENT.repeat(5), time: 1_764_000_000 + k })),
    category: 'Local',
    publishedAt: '2026-11-01T10:00:00.000Z',
    image: null,
    author: 'Ada',
    channel: null,
    thumbnail: null,
    siteName: 'Example',
    source: 'rss',
  };
}

/** p50 and p95 in µs of `reads` calls of `read(i)`, after a warm-up. */
async function timed(reads: number, read: (i: number) => Promise<unknown>): Promise<{ p50_us: number; p95_us: number }> {
  for (let i = 0; i < WARMUP_READS; i++) await read(i);
  const took: number[] = [];
  for (let i = 0; i < reads; i++) {
    const t = performance.now();
    await read(i);
    took.push((performance.now() - t) * 1000);
  }
  took.sort((a, b) => a - b);
  return { p50_us: Math.round(percentile(took, 50)), p95_us: Math.round(percentile(took, 95)) };
}

async function main(): Promise<void> {
  const o = options();
  const dir = mkdtempSync(join(tmpdir(), 'salon-store-reads-'));
  const store = new SqliteStore({ filename: join(dir, 'salon.db') });
  try {
    const rowIds: number[] = [];
    for (let i = 0; i < o.items; i++) {
      const item = article(i, o.bodyChars, o.comments);
      await store.upsertItem(item);
      const chunks = Array.from({ length: CHUNKS_PER_ITEM }, (_, k) => ({
        ord: k,
        part: 'body' as const,
        text: `Part ${k} of item ${i}. ${SENTENCE.repeat(5)}`,
      }));
      for (const c of (await store.replaceChunks(item.id, chunks)).added) rowIds.push(c.rowId);
    }
    // Deterministic picks (Park and Miller's generator, exact in doubles): every run reads the same rows.
    let seed = 12_345;
    const pick = (n: number) => (seed = (seed * 48_271) % 2_147_483_647) % n;
    const total = o.reads + WARMUP_READS;
    const chunkSets = Array.from({ length: total }, () => Array.from({ length: CHUNKS_READ }, () => rowIds[pick(rowIds.length)]));
    const itemSets = Array.from({ length: total }, () => Array.from({ length: ITEMS_READ }, () => `news_read${pick(o.items)}`));
    const get_chunks = await timed(o.reads, (i) => store.getChunks(chunkSets[i]));
    const get_items = await timed(o.reads, (i) => store.getItems(itemSets[i]));
    const get_items_without_comments = await timed(o.reads, (i) => store.getItemsWithoutComments(itemSets[i]));
    const item_summaries = await timed(Math.max(1, Math.round(o.reads / 10)), () => store.listItemSummaries({ limit: SUMMARY_PAGE }));
    console.log(
      JSON.stringify({
        items: o.items,
        body_chars: o.bodyChars,
        comments: o.comments,
        chunks: rowIds.length,
        reads: o.reads,
        get_chunks,
        get_items,
        get_items_without_comments,
        item_summaries,
      }),
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
