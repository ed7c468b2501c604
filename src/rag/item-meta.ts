/**
 * A small cache of item titles and urls, so building 20 snippets reads no bodies and, mostly, no
 * rows. Entries live a minute at most; an entry whose item has a title chunk among the hits that
 * no longer starts with the cached title (the item was re-ingested with a new title) is read again
 * at once. The url and kind cannot change without the id changing (ids derive from them).
 */
import type { ChunkRow } from '../content/types.js';
import type { ItemHead, Store } from '../store/types.js';

export type ItemMeta = ItemHead;

const DEFAULT_CAPACITY = 4000;
const DEFAULT_TTL_MS = 60_000;

export interface ItemMetaCacheOptions {
  /** Items kept (about; the least recently used half is dropped when full). */
  capacity?: number;
  ttlMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

interface Entry {
  meta: ItemMeta;
  at: number;
}

/**
 * Item heads by id. Two generations instead of a strict LRU list: a hit in the old one moves the
 * entry to the young one, and when the young one is full it becomes the old one. (Evicting from
 * the front of one Map leaves holes every later eviction has to step over.)
 */
export class ItemMetaCache {
  private young = new Map<string, Entry>();
  private old = new Map<string, Entry>();
  private readonly half: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    options: ItemMetaCacheOptions = {},
  ) {
    const capacity = options.capacity ?? DEFAULT_CAPACITY;
    if (!Number.isInteger(capacity) || capacity < 2) throw new RangeError('ItemMetaCache: options.capacity must be an integer ≥ 2');
    this.half = capacity >> 1;
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    if (!(this.ttlMs >= 0)) throw new RangeError('ItemMetaCache: options.ttlMs must be ≥ 0');
    this.now = options.now ?? Date.now;
  }

  /** Metadata of the items of `chunks` (hits of a search), in one store read for those not cached; unknown items are left out. */
  async get(chunks: Pick<ChunkRow, 'itemId' | 'part' | 'text'>[]): Promise<Map<string, ItemMeta>> {
    const out = new Map<string, ItemMeta>();
    const now = this.now();
    const stale = new Set<string>();
    for (const c of chunks) {
      if (c.part !== 'title') continue;
      const e = this.peek(c.itemId);
      const title = e?.meta.title.trim();
      // A title longer than a chunk is cut in its chunk.
      if (title !== undefined && !c.text.startsWith(title) && !title.startsWith(c.text)) stale.add(c.itemId);
    }
    const missing: string[] = [];
    for (const c of chunks) {
      const id = c.itemId;
      if (out.has(id) || missing.includes(id)) continue;
      const e = stale.has(id) ? undefined : this.touch(id);
      if (e && now - e.at < this.ttlMs) out.set(id, e.meta);
      else missing.push(id);
    }
    if (missing.length) {
      for (const meta of await this.store.getItemHeads(missing)) {
        out.set(meta.id, meta);
        this.put(meta.id, { meta, at: now });
      }
    }
    return out;
  }

  /** Items held (tests). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  private peek(id: string): Entry | undefined {
    return this.young.get(id) ?? this.old.get(id);
  }

  private touch(id: string): Entry | undefined {
    const young = this.young.get(id);
    if (young) return young;
    const old = this.old.get(id);
    if (old) this.put(id, old);
    return old;
  }

  private put(id: string, e: Entry): void {
    this.old.delete(id);
    this.young.set(id, e);
    if (this.young.size >= this.half) {
      this.old = this.young;
      this.young = new Map();
    }
  }
}
