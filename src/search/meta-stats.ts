/**
 * Metadata bookkeeping of an index: scope interning, counts per kind/source/privilege/scope (to
 * estimate how selective a filter is), the rows of each scope (to scan only those), and an
 * order-independent checksum of the row ids (to tell whether a saved HNSW file matches).
 */
import { KIND_CODES, SOURCE_CODES, type EncodedFilter } from './flat/layout.js';
import type { VectorFilter, VectorMeta } from './types.js';

const NO_SCOPE = -1;
/** Scope ids are int32 words in a row's meta. */
const MAX_SCOPE_ID = 0x7fffffff;
/** A filter narrowed to at most this share of the rows is scanned as a list of those rows. */
export const SUBSET_SCAN_FRACTION = 0.25;
/**
 * ...and, for a filter by kind or source, to at most this many rows: the list is built on the
 * event loop (~0.3 µs a row: 100,000 rows of one kind held it 30 ms), where a scan of every row,
 * filtered in the scan threads, holds it not at all.
 */
export const SUBSET_SCAN_MAX_ROWS = 16_384;
const NONE: ReadonlySet<number> = new Set();

/** 32-bit mixers (murmur3 finaliser and a variant) so the checksum spreads sequential ids. */
function mix(x: number, seed: number): number {
  let h = (x ^ seed) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class MetaStats {
  private readonly scopeIds = new Map<string, number>();
  private readonly scopeNames = new Map<number, string>();
  /**
   * The next scope id. Ids are never reused: a filter encoded before a scope's last row went and
   * a new scope took its id would match the new scope's rows (another thread's, or a private one).
   */
  private nextScope = 0;
  private readonly kindRows = Object.keys(KIND_CODES).map(() => new Set<number>());
  private readonly sourceRows = Object.keys(SOURCE_CODES).map(() => new Set<number>());
  private privileged = 0;
  private total = 0;
  private readonly scopeRows = new Map<number, Set<number>>();
  private sum = 0;
  private xor = 0;

  /**
   * The interned id of a scope (null → −1), created on first use and forgotten with the scope's
   * last row: threads come and go, and each one's id and row set stayed for the process's life.
   */
  internScope(scope: string | null): number {
    if (scope === null) return NO_SCOPE;
    let id = this.scopeIds.get(scope);
    if (id === undefined) {
      if (this.nextScope > MAX_SCOPE_ID) throw new RangeError(`MetaStats: more than ${MAX_SCOPE_ID + 1} scopes in one process`);
      id = this.nextScope++;
      this.scopeIds.set(scope, id);
      this.scopeNames.set(id, scope);
      this.scopeRows.set(id, new Set());
    }
    return id;
  }

  /** Scopes that hold rows now. */
  get scopes(): number {
    return this.scopeIds.size;
  }

  add(rowId: number, meta: VectorMeta, scopeId: number): void {
    this.count(rowId, meta, scopeId, 1);
  }

  delete(rowId: number, meta: VectorMeta, scopeId: number): void {
    this.count(rowId, meta, scopeId, -1);
  }

  private count(rowId: number, meta: VectorMeta, scopeId: number, d: 1 | -1): void {
    this.total += d;
    const sets = [this.kindRows[KIND_CODES[meta.kind]], this.sourceRows[SOURCE_CODES[meta.sourceType]]];
    if (meta.privileged) this.privileged += d;
    const scopeRows = scopeId === NO_SCOPE ? undefined : this.scopeRows.get(scopeId);
    if (scopeRows) sets.push(scopeRows);
    for (const set of sets) {
      if (d > 0) set.add(rowId);
      else set.delete(rowId);
    }
    if (scopeRows?.size === 0) {
      this.scopeIds.delete(this.scopeNames.get(scopeId)!);
      this.scopeNames.delete(scopeId);
      this.scopeRows.delete(scopeId);
    }
    this.sum = (this.sum + d * mix(rowId, 0x9e3779b9)) >>> 0;
    this.xor = (this.xor ^ mix(rowId, 0x7f4a7c15)) >>> 0;
  }

  /** Order-independent fingerprint of the live row ids. */
  checksum(): string {
    return `${this.total}:${this.sum.toString(16)}:${this.xor.toString(16)}`;
  }

  /**
   * The rows a filter's matches must come from — the smallest of its scope, kind and source
   * groups — when that is a scope filter, or at most SUBSET_SCAN_FRACTION of the rows and at most
   * SUBSET_SCAN_MAX_ROWS; null when scanning everything is as good. The scan still applies the
   * whole filter to these rows.
   */
  candidates(f: EncodedFilter): number[] | null {
    const groups: ReadonlySet<number>[][] = [];
    if (f.scopes) groups.push(f.scopes.map((id) => this.scopeRows.get(id) ?? NONE));
    if (f.kindMask !== 0) groups.push(this.kindRows.filter((_, c) => f.kindMask & (1 << c)));
    if (f.source >= 0) groups.push([this.sourceRows[f.source]]);
    const size = (g: ReadonlySet<number>[]) => g.reduce((n, s) => n + s.size, 0);
    const best = groups.sort((a, b) => size(a) - size(b))[0];
    // A scope's list is kept whatever its size: scanning every row instead would read the whole
    // index for one thread's memory (MEMORY_MAX_CHUNKS_PER_THREAD bounds it, 5,000 by default).
    if (!best || (!f.scopes && (size(best) > SUBSET_SCAN_MAX_ROWS || size(best) > this.total * SUBSET_SCAN_FRACTION))) return null;
    const out: number[] = [];
    for (const set of best) for (const r of set) out.push(r);
    return out;
  }

  /** The filter in worker form; unknown scopes match nothing (an empty scope list). */
  encode(filter: VectorFilter = {}): EncodedFilter {
    let kindMask = 0;
    for (const k of filter.kinds ?? []) kindMask |= 1 << KIND_CODES[k];
    // Each scope once: a scope named twice gave each of its rows twice.
    const scopes = filter.scopes ? [...new Set(filter.scopes)].map((s) => this.scopeIds.get(s)).filter((id): id is number => id !== undefined) : null;
    return {
      kindMask,
      source: filter.sourceType ? SOURCE_CODES[filter.sourceType] : -1,
      includePrivileged: filter.includePrivileged === true,
      scopes,
    };
  }

  /**
   * Estimated fraction of rows passing `f`, treating the filter's parts as independent; exact
   * for scope filters alone. Used to choose an exact subset scan over a filtered HNSW search.
   */
  fraction(f: EncodedFilter): number {
    if (this.total <= 0) return 0;
    let frac = 1;
    if (f.kindMask !== 0) {
      let n = 0;
      this.kindRows.forEach((rows, c) => (n += f.kindMask & (1 << c) ? rows.size : 0));
      frac *= n / this.total;
    }
    if (f.source >= 0) frac *= this.sourceRows[f.source].size / this.total;
    if (!f.includePrivileged) frac *= (this.total - this.privileged) / this.total;
    if (f.scopes) {
      let n = 0;
      for (const id of f.scopes) n += this.scopeRows.get(id)?.size ?? 0;
      frac *= n / this.total;
    }
    return frac;
  }
}
