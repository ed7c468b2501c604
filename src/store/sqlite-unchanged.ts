/**
 * Rows the SQLite store reads on every ask, kept between reads while the tables they come from are
 * unchanged (SqliteStore: a room's item, its thread, the chunks and items a search keeps).
 * Every ask in a room resolves the same item and reads the same thread, and each such read is a
 * b-tree walk the models and the graph searches left cold (docs/benchmarks.md, thirty-sixth
 * session); served from here it is a map lookup.
 *
 * Whether a table changed is known exactly, without trusting every write path to say so:
 * - writes through this connection fire TEMP triggers on the watched tables (AFTER INSERT, UPDATE
 *   and DELETE, row by row: cascades and every method's own statements alike) that call back into
 *   JavaScript and bump the table's generation; a write rolled back bumps it too, which only
 *   drops rows sooner;
 * - writes through any other connection (a `salon` command beside the server) change SQLite's
 *   `data_version`, read before every lookup: then every cache is dropped.
 * A cache is dropped whole when a generation it depends on moved, so a row is never served from
 * before a committed change of its table. Nothing is kept or served inside a transaction (a row
 * read there could be rolled back). Rows are kept as SQLite returned them and converted at every
 * read, so no caller shares an object with another. PostgreSQL has no such caches: its tables
 * are written by every node.
 */
import type Database from 'better-sqlite3';
import type { Row } from './rows.js';

/** The SQL function the triggers call with their table's name. */
const CHANGED_FUNCTION = 'salon_table_changed';
/** The SQL function the row triggers call with their table's name and the row's key before and after. */
const ROW_CHANGED_FUNCTION = 'salon_row_changed';

/**
 * One cache of rows by key, valid while its tables' generations are those it was filled at. Bounded
 * by keys and by size: an item's body is up to BODY_MAX_CHARS (10 million at most), so a count of
 * rows alone would not bound the memory the cache holds. Full, it drops its oldest entries.
 */
export class RowCache<K> {
  readonly entries = new Map<K, { value: Row | Row[]; size: number }>();
  /** The entries' sizes added up (rowSize). */
  size = 0;
  /** Generations of `tables` when the entries were read. */
  filledAt: number[] = [];

  constructor(
    readonly tables: readonly string[],
    readonly max: number,
    /** Most the entries may weigh together (rowSize): a larger entry is read every time. */
    readonly maxSize: number,
  ) {}

  keep(key: K, value: Row | Row[]): void {
    const size = Array.isArray(value) ? value.reduce((sum, row) => sum + rowSize(row), 0) : rowSize(value);
    // A key kept again: its old rows and their weight go.
    const before = this.entries.get(key);
    if (before) {
      this.entries.delete(key);
      this.size -= before.size;
    }
    if (size > this.maxSize) return;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size < this.max && this.size + size <= this.maxSize) break;
      this.entries.delete(oldest);
      this.size -= entry.size;
    }
    this.entries.set(key, { value, size });
    this.size += size;
  }

  clear(): void {
    this.entries.clear();
    this.size = 0;
  }

  /** Drops `key`'s rows. */
  forget(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.size -= entry.size;
  }
}

/**
 * A RowCache of one table's rows by key, dropped row by row rather than whole: each entry goes when
 * its row is written through this connection, or the row it reads columns of beside its own
 * (`beside`: a memory chunk's copy reads its original's text). For a table written at nearly every
 * ask (the memory's chunks: an exchange filed, a repeat touched), where a generation would drop
 * every kept row each time.
 */
export class KeptRowsByKey extends RowCache<number> {
  /** Kept keys by the row each reads beside its own. */
  private readonly readers = new Map<number, Set<number>>();

  constructor(
    max: number,
    maxSize: number,
    private readonly beside: (row: Row) => number | null,
  ) {
    super([], max, maxSize);
  }

  override keep(key: number, value: Row | Row[]): void {
    super.keep(key, value);
    this.listReader(key, value);
    // Keys dropped since stay listed (dropping one again is harmless); bounded by a rebuild.
    if (this.readers.size > 4 * this.max) this.relist();
  }

  /** The row `key` was written: it goes, and every kept row that reads it beside its own. */
  written(key: number): void {
    this.forget(key);
    const keys = this.readers.get(key);
    if (!keys) return;
    this.readers.delete(key);
    for (const k of keys) this.forget(k);
  }

  override clear(): void {
    super.clear();
    this.readers.clear();
  }

  private relist(): void {
    this.readers.clear();
    for (const [key, { value }] of this.entries) this.listReader(key, value);
  }

  /** Lists `key` under the row its value reads beside its own, if any. */
  private listReader(key: number, value: Row | Row[]): void {
    const other = Array.isArray(value) ? null : this.beside(value);
    if (other === null) return;
    let keys = this.readers.get(other);
    if (!keys) this.readers.set(other, (keys = new Set()));
    keys.add(key);
  }
}

/** Roughly what a row holds, in bytes: its strings' characters, its blobs' bytes, 8 for anything else. */
export function rowSize(row: Row): number {
  let size = 0;
  for (const value of Object.values(row)) {
    if (typeof value === 'string') size += value.length;
    else if (value instanceof Uint8Array) size += value.byteLength;
    else size += 8;
  }
  return size;
}

export class UnchangedTables {
  private readonly generations = new Map<string, number>();
  private readonly caches: RowCache<unknown>[] = [];
  /** Caches dropped row by row, by their table. */
  private readonly byRow = new Map<string, KeptRowsByKey[]>();
  private version: unknown;
  private readonly dataVersion: Database.Statement;
  /** Lookups answered from a cache and read from the store (for tests and traces). */
  readonly counts = { hits: 0, misses: 0 };

  constructor(
    private readonly db: Database.Database,
    tables: readonly string[],
  ) {
    for (const table of tables) this.generations.set(table, 0);
    db.function(CHANGED_FUNCTION, { deterministic: false }, (table: unknown) => {
      const name = String(table);
      this.generations.set(name, (this.generations.get(name) ?? 0) + 1);
      return null;
    });
    for (const table of tables) {
      for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
        db.exec(
          `CREATE TEMP TRIGGER IF NOT EXISTS salon_${table}_${event.toLowerCase()}_seen AFTER ${event} ON main.${table} BEGIN SELECT ${CHANGED_FUNCTION}('${table}'); END`,
        );
      }
    }
    db.function(ROW_CHANGED_FUNCTION, { deterministic: false }, (table: unknown, before: unknown, after: unknown) => {
      for (const cache of this.byRow.get(String(table)) ?? []) {
        if (typeof before === 'number') cache.written(before);
        if (typeof after === 'number' && after !== before) cache.written(after);
      }
      return null;
    });
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
  }

  /**
   * A cache of `table`'s rows by their integer `key` column, each dropped when its row, or the row
   * it reads beside its own (`beside`), is inserted, updated or deleted through this connection
   * (TEMP triggers, row by row); every cache is dropped when another connection commits, as ever.
   */
  rowCache(table: string, key: string, max: number, maxSize: number, beside: (row: Row) => number | null): KeptRowsByKey {
    const cache = new KeptRowsByKey(max, maxSize, beside);
    if (!this.byRow.has(table)) {
      this.byRow.set(table, []);
      const keys = { insert: `NULL, NEW.${key}`, update: `OLD.${key}, NEW.${key}`, delete: `OLD.${key}, NULL` };
      for (const [event, args] of Object.entries(keys)) {
        this.db.exec(
          `CREATE TEMP TRIGGER IF NOT EXISTS salon_${table}_${event}_row_seen AFTER ${event.toUpperCase()} ON main.${table} BEGIN SELECT ${ROW_CHANGED_FUNCTION}('${table}', ${args}); END`,
        );
      }
    }
    this.byRow.get(table)!.push(cache);
    this.caches.push(cache as RowCache<unknown>);
    return cache;
  }

  /** A cache of rows of `tables`, at most `max` keys weighing `maxSize` together (rowSize). */
  cache<K>(tables: readonly string[], max: number, maxSize: number): RowCache<K> {
    for (const t of tables) if (!this.generations.has(t)) throw new Error(`UnchangedTables: ${t} is not watched`);
    const cache = new RowCache<K>(tables, max, maxSize);
    this.caches.push(cache as RowCache<unknown>);
    return cache;
  }

  /**
   * The rows of `keys` (one entry each: a row, or a key's rows), from `cache` where they are still
   * good and read by `read` for the others, which it returns keyed. Keys `read` finds nothing for
   * are answered undefined and not kept. Outside a transaction only; inside one, `read` reads all.
   */
  rows<K, V extends Row | Row[]>(cache: RowCache<K>, keys: readonly K[], read: (missing: K[]) => Map<K, V>): (V | undefined)[] {
    if (this.db.inTransaction) {
      const all = read([...keys]);
      return keys.map((k) => all.get(k));
    }
    this.check(cache);
    const out = new Array<V | undefined>(keys.length);
    const missing: K[] = [];
    keys.forEach((k, i) => {
      const hit = cache.entries.get(k)?.value as V | undefined;
      if (hit !== undefined) out[i] = hit;
      else missing.push(k);
    });
    this.counts.hits += keys.length - missing.length;
    this.counts.misses += missing.length;
    if (!missing.length) return out;
    const found = read(missing);
    keys.forEach((k, i) => {
      if (out[i] !== undefined) return;
      const v = found.get(k);
      out[i] = v;
      if (v === undefined) return;
      cache.keep(k, v);
    });
    return out;
  }

  /** How many rows of `table` this connection has written (its generation: the triggers' count). */
  generation(table: string): number {
    const g = this.generations.get(table);
    if (g === undefined) throw new Error(`UnchangedTables: ${table} is not watched`);
    return g;
  }

  /**
   * Brings `cache` up to date after a write of its own (outside a transaction, committed) that
   * changed `rows` rows of `table`, its generation `before` the write: when the cache was good at
   * `before` and nothing else wrote since (the generation moved by exactly `rows`, the cache's
   * other tables not at all), `update` is called to change its entries as the write changed the
   * table, and they are kept at the new generation. Otherwise nothing: the next lookup drops them.
   * Another connection's commit meanwhile is the next lookup's to see (`data_version`), as ever.
   */
  follow(cache: RowCache<unknown>, table: string, before: number, rows: number, update: () => void): void {
    if (this.db.inTransaction || this.generation(table) !== before + rows) return;
    const then = cache.tables.map((t) => (t === table ? before : this.generations.get(t)!));
    if (then.some((g, i) => g !== cache.filledAt[i])) return;
    update();
    cache.filledAt = cache.tables.map((t) => this.generations.get(t)!);
  }

  /** Drops `cache`'s rows if its tables changed since they were read (every cache's, if another connection wrote). */
  private check(cache: RowCache<unknown>): void {
    const version = this.dataVersion.get();
    if (version !== this.version) {
      for (const c of this.caches) c.clear();
      this.version = version;
    }
    const now = cache.tables.map((t) => this.generations.get(t)!);
    if (now.some((g, i) => g !== cache.filledAt[i])) {
      cache.clear();
      cache.filledAt = now;
    }
  }
}
