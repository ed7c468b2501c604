/** A small cache of item titles and urls, so building 20 snippets reads no bodies and, mostly, no rows. */
import type { ItemHead, Store } from '../store/types.js';

export type ItemMeta = ItemHead;

const DEFAULT_CAPACITY = 2000;
const DEFAULT_TTL_MS = 300_000;

/** LRU of item metadata with a short time to live (titles rarely change; a stale one costs little). */
export class ItemMetaCache {
  private readonly entries = new Map<string, { meta: ItemMeta; at: number }>();
  constructor(
    private readonly store: Store,
    private readonly capacity = DEFAULT_CAPACITY,
    private readonly ttlMs = DEFAULT_TTL_MS,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
  }

  /** Metadata of the given items; unknown ids are left out. */
  async get(ids: string[]): Promise<Map<string, ItemMeta>> {
    const out = new Map<string, ItemMeta>();
    const now = Date.now();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const e = this.entries.get(id);
      if (e && now - e.at < this.ttlMs) {
        this.entries.delete(id);
        this.entries.set(id, e);
        out.set(id, e.meta);
      } else missing.push(id);
    }
    for (const meta of missing.length ? await this.store.getItemHeads(missing) : []) {
      out.set(meta.id, meta);
      this.entries.set(meta.id, { meta, at: now });
    }
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return out;
  }
}
