import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { NewMemoryChunk } from '../../src/memory/types.js';
import { LineMerges, MERGE_DELAY_MS, MERGE_SLICE_MS } from '../../src/store/sqlite-line-merges.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { STAGE_MIN_CHUNKS } from '../../src/store/sqlite-staging.js';
import type { NewMemoryEntry } from '../../src/store/types.js';
import { tempDir } from '../helpers.js';

const AT = '2026-11-02T10:00:00.000Z';

/** A memory window of `lines` lines, each with words of its own (`n`) and words every window says. */
function window(threadId: string, n: number, lines = 4): NewMemoryChunk {
  const text = Array.from(
    { length: lines },
    (_, i) => `Ann (1 Nov 2026, 10:0${i % 10}): the harbour ferry w${n}x${i} and pier${n % 37} times ${n * 7 + i}`,
  ).join('\n');
  return {
    threadId,
    roomId: 'news_1',
    kind: 'window',
    text,
    messageIds: [`m${n}`],
    authors: ['Ann'],
    firstTs: '2026-11-01T10:00:00.000Z',
    lastTs: '2026-11-01T10:00:00.000Z',
    privileged: false,
    owner: null,
  };
}

/**
 * The full-text index's segments, by level, as FTS5 records them (its structure record, id 10 of
 * `memory_lines_data`: a 4-byte cookie, a version mark, then varints: levels, segments, the write
 * counter, and for each level the segments under merge and their count, for each segment its id
 * and first and last page, and five more in this version).
 */
function segments(db: Database.Database): { merging: number; segments: Map<number, string> }[] {
  const block = (db.prepare('SELECT block FROM memory_lines_data WHERE id = 10').get() as { block: Buffer }).block;
  if (block.length < 8) return [];
  let i = 4;
  const v2 = block.readUInt32BE(4) === 0xff000001;
  if (v2) i = 8;
  const varint = () => {
    let v = 0;
    for (let k = 0; k < 8; k++) {
      const b = block[i++];
      v = v * 128 + (b & 0x7f);
      if (!(b & 0x80)) return v;
    }
    return v * 256 + block[i++];
  };
  const levels = varint();
  varint();
  varint();
  return Array.from({ length: levels }, () => {
    const merging = varint();
    const n = varint();
    const segs = new Map<number, string>();
    for (let s = 0; s < n; s++) {
      const id = varint();
      segs.set(id, `${varint()}-${varint()}`);
      if (v2) for (let k = 0; k < 5; k++) varint();
    }
    return { merging, segments: segs };
  });
}

/** Every segment with its pages, whatever its level. */
const allSegments = (db: Database.Database) => new Map(segments(db).flatMap((l) => [...l.segments]));

/** Segments of `before` that `after` lost or holds with other pages: what a merge (or a segment's edit) did. */
function changed(before: Map<number, string>, after: Map<number, string>): number[] {
  return [...before].filter(([id, pages]) => after.get(id) !== pages).map(([id]) => id);
}

/** The merge slices' timer runs until they have merged everything there is to merge. */
async function mergeAll(): Promise<void> {
  await vi.runAllTimersAsync();
}

const automerge = (db: Database.Database) => db.prepare("SELECT v FROM memory_lines_config WHERE k = 'automerge'").pluck().get();

describe('SqliteStore: the full-text index merges in slices of its own (migration 28, sqlite-line-merges.ts)', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('writes lines without merging in the write, and its merge slices keep the segments as few as automerge did, the searches the same', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const store = new SqliteStore({ filename: ':memory:' });
    try {
      expect(automerge(store.db)).toBe(0);
      await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 'thr_a', roomId: 'news_1', title: 'A' }] });
      const merged: number[] = [];
      for (let n = 0; n < 300; n++) {
        const before = allSegments(store.db);
        await store.addMemoryChunk(window('thr_a', n), AT);
        const after = allSegments(store.db);
        // The write added its own segment and left every other as it was.
        merged.push(...changed(before, after));
        expect(after.size).toBe(before.size + 1);
        // The merges run between writes, by their timer.
        if (n % 10 === 9) await vi.advanceTimersByTimeAsync(MERGE_DELAY_MS);
      }
      expect(merged).toEqual([]);
      await mergeAll();
      // As automerge leaves it: fewer than `usermerge` (4) segments a level, and no merge half done.
      const levels = segments(store.db);
      expect(levels.every((l) => l.segments.size < 4 && l.merging === 0)).toBe(true);
      expect(levels.length).toBeGreaterThan(1);

      // The same hits as from the index merged into one segment.
      const search = async () =>
        Promise.all(['harbour ferry', 'pier5', 'w123x2', 'pier36 times', '2093'].map((q) => store.searchMemoryLines(q, ['thr_a'], 20)));
      const found = await search();
      expect(found[1].length).toBeGreaterThan(0);
      store.db.exec("INSERT INTO memory_lines (memory_lines) VALUES ('optimize')");
      expect(await search()).toEqual(found);
      store.db.exec("INSERT INTO memory_lines (memory_lines) VALUES ('integrity-check')");
    } finally {
      await store.close();
    }
  });

  it('deletes a fused source in slices none of whose statements merges the index, with merge slices between them', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    try {
      const create = async (threadId: string, addMemory: NewMemoryEntry[]) =>
        (await store.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: threadId, roomId: 'news_1', title: threadId }], addMemory })).addedMemoryIds;
      const vector = Float32Array.from([0, 1, 0]);
      const big = await create(
        'thr_big',
        Array.from({ length: STAGE_MIN_CHUNKS }, (_, n) => ({ chunk: window('thr_big', n, 12), vector, model: 'm@3' })),
      );
      // Every other chunk copied into a fused thread: each hands the copy its lines as it goes.
      await create(
        'thr_f',
        big.filter((_, i) => i % 2 === 0).map((id, k) => ({ chunk: window('thr_f', 2 * k, 12), vector, model: 'm@3', copyOf: id })),
      );
      await new Promise((resolve) => setTimeout(resolve, 2 * MERGE_DELAY_MS));

      const proto = Object.getPrototypeOf(store.db.prepare('SELECT 1')) as { run: (...args: unknown[]) => unknown };
      const run = proto.run;
      // FTS5's crisis merge of a level that reaches `crisismerge` segments (16) stays on, and a
      // slice writes a segment for every rowid below the last (heirs' lines go down), so how many a
      // slice writes, and whether they cross 16, depends on how many rows fit a slice on this
      // machine. It is not the merging this is about: raised out of reach here, every segment a
      // statement takes away is automerge's (or a merge step's).
      store.db.exec("INSERT INTO memory_lines (memory_lines, rank) VALUES ('crisismerge', 1000)");
      const statements: { source: string; merged: number[] }[] = [];
      vi.spyOn(proto, 'run').mockImplementation(function (this: { source: string }, ...args: unknown[]) {
        const before = allSegments(store.db);
        const out = run.apply(this, args);
        statements.push({ source: this.source, merged: changed(before, allSegments(store.db)) });
        return out;
      });
      await store.deleteThread('thr_big');
      const staged = () => store.db.prepare('SELECT count(*) FROM memory_staging').pluck().get() as number;
      for (let turn = 0; turn < 10_000 && staged() > 0; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(staged()).toBe(0);
      vi.restoreAllMocks();

      // Only the merge steps merged; every statement of the deletion, its commits included, left the segments there were as they were.
      const merges = statements.filter((s) => s.source.includes("'merge'"));
      const others = statements.filter((s) => !s.source.includes("'merge'"));
      expect(
        others
          .filter((s) => s.merged.length > 0)
          .map((s) => s.source)
          .join(' | '),
      ).toBe('');
      expect(merges.some((s) => s.merged.length > 0)).toBe(true);
      expect(await store.searchMemoryLines('w4x3', ['thr_f'], 5)).toHaveLength(1);
      expect(await store.searchMemoryLines('w5x3', ['thr_f', 'thr_big'], 5)).toHaveLength(0);
      store.db.exec("INSERT INTO memory_lines (memory_lines) VALUES ('integrity-check')");
    } finally {
      await store.close();
    }
  });

  it('turns automerge off in a database written before, keeping every line, and merges what it holds', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'salon.db');
      const old = new SqliteStore({ filename: file });
      await old.applyThreadChange({ at: AT, expect: [], createThreads: [{ id: 'thr_a', roomId: 'news_1', title: 'A' }] });
      for (let n = 0; n < 40; n++) await old.addMemoryChunk(window('thr_a', n), AT);
      await old.close();
      // As migration 27 left it: FTS5 merging as it writes (its default, 4), and segments it did not merge yet.
      const raw = new Database(file);
      raw.exec("INSERT INTO memory_lines (memory_lines, rank) VALUES ('automerge', 4)");
      // Nor what later migrations made: reopened at 27, each of them runs again.
      raw.exec('DROP TABLE private_forgets');
      raw.exec('ALTER TABLE memory_chunks DROP COLUMN forget_mark');
      raw.exec('DROP INDEX items_category_sort');
      raw.exec('DROP TABLE memory_claims');
      raw.exec('DROP TABLE unsettled_seqs');
      raw.pragma('user_version = 27');
      raw.close();

      const store = new SqliteStore({ filename: file });
      try {
        expect(automerge(store.db)).toBe(0);
        expect(await store.searchMemoryLines('w17x2', ['thr_a'], 5)).toHaveLength(1);
        await new Promise((resolve) => setTimeout(resolve, 4 * MERGE_DELAY_MS));
        expect(segments(store.db).every((l) => l.segments.size < 4 && l.merging === 0)).toBe(true);
        store.db.exec("INSERT INTO memory_lines (memory_lines) VALUES ('integrity-check')");
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });
});

describe('LineMerges: the steps of a slice on a fake clock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('begins a step only if one as long as the slice’s longest so far still fits its budget', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    // Every `merge` step merges something and costs 4 ms of the clock; commits cost nothing.
    const STEP_MS = 4;
    let changes = 0;
    let steps = 0;
    const db = {
      open: true,
      prepare: (sql: string) =>
        sql.includes("'merge'")
          ? {
              run: () => {
                vi.advanceTimersByTime(STEP_MS);
                changes += 2;
                steps++;
              },
            }
          : { pluck: () => ({ get: () => changes }) },
      transaction: (fn: () => boolean) => Object.assign(() => fn(), { immediate: () => fn() }),
    } as unknown as Database.Database;
    const merges = new LineMerges(db);
    const perSlice: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = steps;
      expect(merges.slice()).toBe(true);
      perSlice.push(steps - before);
    }
    merges.stop();
    // Before a commit is seen it is taken to cost as much as the steps: one step; then two (8 ms), never a third (12).
    expect(perSlice).toEqual([1, 2, 2, 2]);
    for (const n of perSlice) expect(n * STEP_MS).toBeLessThanOrEqual(MERGE_SLICE_MS);
  });
});
