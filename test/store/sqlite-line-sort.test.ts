/**
 * The memory's line search sorts its matches in SQLite up to LINES_SORTED_BY_SQLITE lines and in
 * FTS5 (`rank`) past them (SqliteStore.searchMemoryLines): both ways give the same hits, in the same
 * order, ties and scopes included, and each size takes its way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { NewMemoryChunk } from '../../src/memory/types.js';
import { privateScope } from '../../src/memory/scopes.js';
import { LINES_SORTED_BY_SQLITE, SqliteStore } from '../../src/store/sqlite.js';
import { preparedStatements, storesOnOneFile } from '../helpers.js';
import { annsWindow } from './memory-chunk.js';

const AT = '2026-11-01T10:00:00.000Z';

function chunk(threadId: string, text: string, owner: string | null = null): NewMemoryChunk {
  return annsWindow({ threadId, text, messageId: `m_${threadId}_${text.length}`, at: AT, owner });
}

/** Which sort the store's line searches so far were written with (its statement cache, read for the test). */
function sorts(store: SqliteStore): { sqlite: number; fts5: number } {
  const statements = preparedStatements(store);
  return {
    sqlite: statements.filter((sql) => sql.includes('ORDER BY hit.score')).length,
    fts5: statements.filter((sql) => sql.includes('ORDER BY memory_lines.rank')).length,
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Stores on one file: one always sorting in SQLite, one always in FTS5, one as configured by default. */
function stores(): { bySqlite: SqliteStore; byFts5: SqliteStore; byDefault: SqliteStore } {
  const { stores, close } = storesOnOneFile({ bySqlite: { linesSortedBySqlite: Infinity }, byFts5: { linesSortedBySqlite: -1 }, byDefault: {} });
  cleanups.push(close);
  return stores;
}

describe('the line search sorted in SQLite or in FTS5', () => {
  it('gives the same hits both ways, ties, scopes and limits included, and takes FTS5 past LINES_SORTED_BY_SQLITE lines', async () => {
    const { bySqlite, byFts5, byDefault } = stores();
    await bySqlite.applyThreadChange({ at: AT, expect: [], createThreads: ['t1', 't2'].map((id) => ({ id, roomId: 'news_1', title: id })) });
    // Lines said word for word in several chunks (ties in bm25), lines of other lengths, private
    // lines, another thread's lines with the same words.
    for (let i = 0; i < 12; i++) {
      await bySqlite.addMemoryChunk(
        chunk('t1', `Ann: the heron nests by the weir\nBo: window ${i} of the ferry talk\nCy: the ferry was late ${i % 3} times`),
        AT,
      );
      await bySqlite.addMemoryChunk(chunk('t2', `Di: the heron nests by the weir\nEd: ferry ${i}`), AT);
    }
    await bySqlite.addMemoryChunk(chunk('t1', 'Cy: my heron count is private, the weir too', 'u_cy'), AT);
    await bySqlite.addMemoryChunk(chunk('t1', 'Fa: a heron, a heron, a heron by the weir'), AT);
    // A word on more lines than LINES_SORTED_BY_SQLITE: fifteen lines a chunk.
    const pierChunks = Math.ceil((LINES_SORTED_BY_SQLITE + 1) / 15);
    for (let i = 0; i < pierChunks; i++) {
      const lines = Array.from({ length: 15 }, (_, j) => `Gu: the pier ${j % 4 ? 'again' : 'and the heron'} ${i}`);
      await bySqlite.addMemoryChunk(chunk('t1', lines.join('\n')), AT);
    }
    const queries: [string, string[]][] = [
      ['heron weir', ['t1']],
      ['heron weir', ['t2']],
      ['heron count', ['t1', privateScope('t1', 'u_cy')]],
      ['heron count', ['t1']],
      ['ferry late', ['t1', 't2']],
      ['pier heron', ['t1']],
      ['pier', ['t1']],
    ];
    for (const [query, scopes] of queries) {
      for (const limit of [1, 3, 10, 50]) {
        const hits = await bySqlite.searchMemoryLines(query, scopes, limit);
        expect(await byFts5.searchMemoryLines(query, scopes, limit)).toEqual(hits);
        expect(await byDefault.searchMemoryLines(query, scopes, limit)).toEqual(hits);
      }
    }
    expect((await bySqlite.searchMemoryLines('heron weir', ['t1'], 50)).length).toBeGreaterThan(10);
    expect((await bySqlite.searchMemoryLines('heron count', ['t1'], 50)).some((h) => h.line.includes('private'))).toBe(false);
    expect(sorts(bySqlite)).toEqual({ sqlite: 2, fts5: 0 });
    expect(sorts(byFts5)).toEqual({ sqlite: 0, fts5: 2 });
    // By default the searches of a few lines sorted in SQLite (one statement for one scope, one for
    // two), those with `pier` (over the line, one scope) in FTS5.
    expect(sorts(byDefault)).toEqual({ sqlite: 2, fts5: 1 });
  });
});
